"""Imports written in batches inside one transaction: a problem in a later batch stores nothing.

Batches are made tiny (``BATCH`` patched to 2 or 3) so that every file here spans
several; each test reads the real SQLite file back to check what was stored.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.errors import InputError
from judgekit.io import items as items_io
from judgekit.io import labels as labels_io
from judgekit.io import verdict_store
from judgekit.io.items import check_item_file, import_item_file, item_file_batches
from judgekit.io.judgments import ParsedVerdict
from judgekit.io.labels import import_labels
from judgekit.io.records import iter_records
from judgekit.io.streaming import batched
from judgekit.io.verdict_store import _values, import_judgments, imported_cache_key
from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store
from judgekit.store import rows as R
from judgekit.types import Item, Judgment, Rubric
from tests.support.io_files import write_jsonl

N_ITEMS = 7


@pytest.fixture
def rubric() -> Rubric:
    return load_rubric("preference")


@pytest.fixture
def db_path(tmp_path: Path, rubric: Rubric) -> Path:
    path = tmp_path / "b.db"
    with open_store(path) as store:
        store.import_items("d", [Item(id=f"p{n}", input="q", response_a="a", response_b="b")
                                 for n in range(N_ITEMS)])
    return path


@pytest.fixture
def store(db_path: Path) -> Store:
    opened = open_store(db_path)
    yield opened  # type: ignore[misc]
    opened.close()


@pytest.fixture(autouse=True)
def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(labels_io, "BATCH", 2)
    monkeypatch.setattr(verdict_store, "BATCH", 3)
    monkeypatch.setattr(items_io, "BATCH", 2)


def counts(db_path: Path) -> dict[str, int]:
    conn = sqlite3.connect(db_path)
    try:
        return {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("items", "runs", "judgments", "labels", "rubrics")}
    finally:
        conn.close()


def labels(n: int) -> list[dict[str, object]]:
    return [{"item_id": f"p{i}", "annotator": "ann", "label": "A"} for i in range(n)]


def verdicts(n: int) -> list[dict[str, object]]:
    return [{"item_id": f"p{i}", "judge": "j", "label": "B"} for i in range(n)]


def test_a_bad_label_after_several_batches_stores_nothing(
    tmp_path: Path, store: Store, db_path: Path, rubric: Rubric
) -> None:
    rows = labels(N_ITEMS)
    rows[6]["label"] = "maybe"  # line 7: batches 1-3 were already written
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    before = counts(db_path)
    with pytest.raises(InputError) as caught:
        import_labels(store, path, rubric)
    assert str(caught.value).splitlines()[1].startswith(f"{path}:7: label 'maybe'")
    assert counts(db_path) == before


def test_a_second_label_in_a_later_batch_is_reported_with_its_first_line(
    tmp_path: Path, store: Store, db_path: Path, rubric: Rubric
) -> None:
    rows = [*labels(5), {"item_id": "p0", "annotator": "ann", "label": "B"}]
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    before = counts(db_path)
    with pytest.raises(InputError, match=r"l\.jsonl:6: second label for item 'p0' by 'ann' "
                                         r"\(first on line 1\)"):
        import_labels(store, path, rubric)
    assert counts(db_path) == before


def test_labels_in_batches_import_once_and_reimport_as_unchanged(
    tmp_path: Path, store: Store, db_path: Path, rubric: Rubric
) -> None:
    path = write_jsonl(tmp_path / "l.jsonl", labels(N_ITEMS))
    first = import_labels(store, path, rubric)
    again = import_labels(store, path, rubric)
    assert (first.added, first.unchanged) == (N_ITEMS, 0)
    assert (again.added, again.unchanged) == (0, N_ITEMS)
    assert counts(db_path)["labels"] == N_ITEMS
    stamps = {lb.created_at for lb in store.latest_labels(rubric.sha256)}
    assert len(stamps) == 1  # one import, one time


def test_two_adjudications_of_one_item_in_different_batches_both_append(
    tmp_path: Path, store: Store, rubric: Rubric
) -> None:
    # Each is compared with the store before the import, as when the file was one batch.
    rows = [{"item_id": "p0", "annotator": "lead", "label": "A", "source": "adjudicate"},
            {"item_id": "p1", "annotator": "ann", "label": "A"},
            {"item_id": "p0", "annotator": "second", "label": "A", "source": "adjudicate"}]
    result = import_labels(store, write_jsonl(tmp_path / "a.jsonl", rows), rubric)
    assert (result.added, result.unchanged) == (3, 0)


def test_a_bad_verdict_after_several_batches_stores_no_run_and_no_judgment(
    tmp_path: Path, store: Store, db_path: Path, rubric: Rubric
) -> None:
    rows = verdicts(N_ITEMS)
    rows[5]["item_id"] = "nope"
    path = write_jsonl(tmp_path / "v.jsonl", rows)
    before = counts(db_path)
    with pytest.raises(InputError, match=r"v\.jsonl:6: unknown item id 'nope'"):
        import_judgments(store, path, rubric)
    assert counts(db_path) == before


def test_a_repeated_verdict_in_a_later_batch_is_found(
    tmp_path: Path, store: Store, db_path: Path, rubric: Rubric
) -> None:
    path = write_jsonl(tmp_path / "v.jsonl", [*verdicts(4), verdicts(1)[0]])
    before = counts(db_path)
    with pytest.raises(InputError, match=r"v\.jsonl:5: same verdict as line 1"):
        import_judgments(store, path, rubric)
    assert counts(db_path) == before


def test_verdicts_in_batches_make_one_run_per_judge_with_the_whole_count(
    tmp_path: Path, store: Store, db_path: Path, rubric: Rubric
) -> None:
    rows = verdicts(N_ITEMS) + [{**r, "judge": "k", "status": "timeout", "label": None}
                                for r in verdicts(N_ITEMS)]
    for row in rows:
        if row["label"] is None:
            del row["label"]
    path = write_jsonl(tmp_path / "v.jsonl", rows)
    result = import_judgments(store, path, rubric)
    assert (result.added, result.unchanged, len(result.runs)) == (2 * N_ITEMS, 0, 2)
    summaries = {run.model: run.summary for run in store.list_runs()}
    assert summaries["j"]["counts"] == {"ok": N_ITEMS} and summaries["j"]["imported"] == N_ITEMS
    assert summaries["k"]["counts"] == {"timeout": N_ITEMS}
    again = import_judgments(store, path, rubric)
    assert (again.added, again.unchanged, again.runs) == (0, 2 * N_ITEMS, ())
    assert counts(db_path)["judgments"] == 2 * N_ITEMS


def test_a_streamed_verdict_is_stored_as_the_equivalent_judgment_would_be(
    rubric: Rubric,
) -> None:
    row = ParsedVerdict(line=1, judge="j", dataset="d", item_id="p0", variant="swapped",
                        sample=2, status="ok", label="A", reasoning="why", score=None,
                        raw='{"x": 1}')
    key = imported_cache_key(rubric, row, "h" * 64)
    judgment = Judgment(
        run_id="r", dataset="d", item_id="p0", sample_index=2, status="ok", label="A",
        score=None, reasoning="why", raw_text='{"x": 1}', model_requested="j",
        model_returned=None, base_url="imported:f", sampling={}, rubric_name=rubric.name,
        rubric_version=rubric.version, rubric_hash=rubric.sha256, cache_key=key,
        variant="swapped", judgekit_version=verdict_store.__version__, created_at="now",
        item_hash="h" * 64, imported=True,
    )
    expected = R.judgment_to_row(judgment)
    values = _values(row, key, "r", rubric, "imported:f", "now", "h" * 64)
    assert dict(zip(R.JUDGMENT_COLUMNS, values, strict=True)) == expected


def test_items_in_batches_a_duplicate_id_in_a_later_batch_is_reported(tmp_path: Path) -> None:
    rows = [{"id": f"i{n}", "input": "q", "response": "r"} for n in range(5)]
    rows.append({"id": "i1", "input": "q", "response": "r"})
    path = write_jsonl(tmp_path / "items.jsonl", rows)
    with pytest.raises(InputError, match=r"items\.jsonl:6: duplicate id 'i1' \(first on line 2\)"):
        check_item_file(path)


def test_a_changed_item_in_a_later_batch_rolls_back_the_earlier_ones(
    tmp_path: Path, store: Store, db_path: Path
) -> None:
    rows = [{"id": f"new{n}", "input": "q", "response_a": "a", "response_b": "b"}
            for n in range(4)]
    rows.append({"id": "p0", "input": "changed", "response_a": "a", "response_b": "b"})
    path = write_jsonl(tmp_path / "items.jsonl", rows)
    assert check_item_file(path) == 5
    before = counts(db_path)
    with pytest.raises(InputError, match="item 'p0' already exists with different content"):
        store.import_item_batches("d", item_file_batches(path))
    assert counts(db_path) == before
    assert store.import_item_batches("d", item_file_batches(path), replace=True) == 5
    assert store.count_items("d") == N_ITEMS + 4


def test_the_cli_import_of_a_batched_file_reports_the_whole_count(
    tmp_path: Path, db_path: Path
) -> None:
    from click.testing import CliRunner

    from judgekit.cli.main import cli

    rows = [{"id": f"n{n}", "input": "q", "response_a": "a", "response_b": "b"}
            for n in range(5)]
    path = write_jsonl(tmp_path / "more.jsonl", rows)
    result = CliRunner().invoke(cli, ["import", str(path), "--name", "d", "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    assert "imported 5 item(s)" in result.output
    assert f"{N_ITEMS + 5} in the dataset" in result.output


def test_a_bad_item_line_never_creates_the_store(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "input": "q", "response": "r"}\n{"id": "b"}\n')
    missing = tmp_path / "new.db"
    done = subprocess.run([sys.executable, "-m", "judgekit", "import", str(path), "--db",
                           str(missing)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and f"{path}:2: missing field" in done.stderr
    assert not missing.exists()


def test_a_bad_byte_is_reported_before_earlier_problems_and_at_its_column(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    path.write_bytes(b'{"item_id": 1}\n' * 3 + b'{"item_id": "\xff"}\n')
    with pytest.raises(InputError, match=r"u\.jsonl:4: not valid UTF-8 \(byte 0xff at column 14\)"):
        list(iter_records(path, ("item_id",), on_error=lambda n, m: None))


def test_a_bom_and_crlf_are_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}')
    assert list(iter_records(path, ("a",))) == [(1, {"a": 1}), (3, {"a": 2})]
    csv = tmp_path / "b.csv"
    csv.write_bytes(b'\xef\xbb\xbfa\r\n1\r\n')
    assert list(iter_records(csv, ("a",))) == [(2, {"a": "1"})]


def test_batched_splits_and_keeps_the_remainder() -> None:
    assert list(batched(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(batched([], 3)) == []


def test_importing_the_store_does_not_import_pandas_or_numpy() -> None:
    code = ("import sys, judgekit.store, judgekit.io.verdict_store, judgekit.io.labels; "
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_a_bad_item_after_several_batches_leaves_an_existing_store_unchanged(
    tmp_path: Path, db_path: Path
) -> None:
    rows: list[object] = [{"id": f"n{n}", "input": "q", "response_a": "a", "response_b": "b"}
                          for n in range(5)]
    rows.append({"id": "n9", "input": 3, "response_a": "a", "response_b": "b"})
    path = write_jsonl(tmp_path / "more.jsonl", rows)
    before = counts(db_path)
    with pytest.raises(InputError, match=r"more\.jsonl:6: field 'input' must be a string"):
        import_item_file(db_path, path, "d")
    assert counts(db_path) == before
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match=r"empty\.jsonl: no items"):
        import_item_file(db_path, empty, "d")
    assert counts(db_path) == before


@pytest.mark.parametrize("line", ['{"a":', '{"a": 1', '{"a": 1}}', '{"a": tru', '{"a": "x\\u12"}'])
def test_a_json_error_names_the_column_in_the_line_as_written(tmp_path: Path, line: str) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"a": 1}\n' + line + "\n")
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        expected = f"{path}:2: invalid JSON: {exc.msg} (column {exc.colno})"
    with pytest.raises(InputError) as caught:
        list(iter_records(path, ("a",)))
    assert str(caught.value) == expected


def test_labels_from_a_tool_and_from_a_file_are_stored_alike(
    tmp_path: Path, store: Store, rubric: Rubric
) -> None:
    rows = [{"item_id": "p1", "annotator": "ann", "label": "tie", "note": "close",
             "flagged": True, "seconds": 3, "created_at": "2026-01-01T00:00:00+00:00"}]
    import_labels(store, write_jsonl(tmp_path / "l.jsonl", rows), rubric)
    (stored,) = store.latest_labels(rubric.sha256)
    assert labels_io.labels_from_records(
        iter_records(tmp_path / "l.jsonl", labels_io.LABEL_FIELDS), labels_io.ErrorList("x"),
        rubric, store) == [stored]
    assert labels_io.store_labels(store, [stored], rubric).unchanged == 1
