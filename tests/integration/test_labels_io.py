"""Label import/export on real files and a real store, through the library and the CLI."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.errors import InputError
from judgekit.io.labels import export_labels, import_labels
from judgekit.io.records import MAX_REPORTED_ERRORS
from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store
from judgekit.types import Item, Rubric
from tests.support.io_files import ORDINAL, rubric_file, write_jsonl

BINARY = """
name = "correct"
version = "1"
description = "Is it correct?"

[scale]
kind = "binary"

[scale.levels]
pass = "Correct."
fail = "Wrong."

[prompt]
system = "Grade."
user = "Q: {input}\\nA: {response}\\n{scale}"
"""


@pytest.fixture
def binary_path(tmp_path: Path) -> Path:
    return rubric_file(tmp_path, BINARY, "correct")


@pytest.fixture
def rubric(binary_path: Path) -> Rubric:
    return load_rubric(binary_path)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    with open_store(path) as store:
        items = [Item(id=f"i{n}", input=f"q{n}", response="r") for n in range(1, 5)]
        store.import_items("ds", items)
        store.import_items("other", [Item(id="o1", input="x", response="y")])
    return path


@pytest.fixture
def store(db_path: Path) -> Store:
    opened = open_store(db_path)
    yield opened  # type: ignore[misc]
    opened.close()


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit | InputError):
        raise result.exception
    message = result.output + (str(result.exception) if isinstance(result.exception, InputError)
                               else "")
    code = 2 if isinstance(result.exception, InputError) else result.exit_code
    return code, message


# -- good imports ------------------------------------------------------------------------


def test_cli_import_jsonl(tmp_path: Path, db_path: Path, binary_path: Path, rubric: Rubric) -> None:
    data = write_jsonl(tmp_path / "labels.jsonl", [
        {"item_id": "i1", "annotator": "ana", "label": "pass", "note": "clear"},
        {"item_id": "i2", "annotator": "ana", "label": "fail"},
        {"item_id": "i1", "annotator": "bo", "label": "fail", "dataset": "ds"},
    ])
    code, output = run_cli("labels", "import", str(data), "--rubric", str(binary_path),
                           "--db", str(db_path))
    assert code == 0, output
    assert "imported 3 label(s)" in output
    with open_store(db_path) as store:
        got = {(lb.item_id, lb.annotator): lb for lb in store.latest_labels(rubric.sha256)}
        assert {k: v.label for k, v in got.items()} == {
            ("i1", "ana"): "pass", ("i2", "ana"): "fail", ("i1", "bo"): "fail"}
        assert got[("i1", "ana")].note == "clear"
        assert {lb.source for lb in got.values()} == {"import"}
        assert store.get_rubric_text(rubric.sha256) == BINARY


def test_csv_import_with_quotes_and_blank_note(
    tmp_path: Path, store: Store, rubric: Rubric
) -> None:
    data = tmp_path / "labels.csv"
    data.write_text(
        "\ufeffitem_id,annotator,label,note\n"
        'i1,ana,pass,"good, and short"\n'
        "i2,ana,fail,\n"
        "\n"
        'i3,ana,pass,"two\nlines"\n',
        encoding="utf-8",
    )
    result = import_labels(store, data, rubric)
    assert result.added == 3 and result.annotators == ("ana",) and result.datasets == ("ds",)
    notes = {lb.item_id: lb.note for lb in store.latest_labels(rubric.sha256)}
    assert notes == {"i1": "good, and short", "i2": None, "i3": "two\nlines"}


def test_reimport_is_idempotent_and_changes_append(tmp_path: Path, store: Store,
                                                  rubric: Rubric) -> None:
    data = write_jsonl(tmp_path / "l.jsonl", [{"item_id": "i1", "annotator": "a", "label": "pass"}])
    assert import_labels(store, data, rubric).added == 1
    again = import_labels(store, data, rubric)
    assert (again.added, again.unchanged) == (0, 1)
    write_jsonl(data, [{"item_id": "i1", "annotator": "a", "label": "fail"}])
    assert import_labels(store, data, rubric).added == 1
    history = store.label_history(rubric.sha256, "ds", "i1", "a")
    assert [lb.label for lb in history] == ["pass", "fail"]


def test_ordinal_numbers_accepted_as_labels(tmp_path: Path, store: Store) -> None:
    ordinal = load_rubric(rubric_file(tmp_path, ORDINAL, "helpful"))
    data = write_jsonl(tmp_path / "l.jsonl", [
        {"item_id": "i1", "annotator": "a", "label": 4},
        {"item_id": "i2", "annotator": "a", "label": "2"},
    ])
    import_labels(store, data, ordinal)
    assert [lb.label for lb in store.latest_labels(ordinal.sha256)] == ["4", "2"]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"item_id": "i3", "annotator": "a", "label": 6}])
    with pytest.raises(InputError, match=r"bad\.jsonl:1: label '6' is not on the 'helpful' scale"):
        import_labels(store, bad, ordinal)


# -- errors -------------------------------------------------------------------------------


def test_every_error_is_reported_with_file_line_and_nothing_imported(
    tmp_path: Path, db_path: Path, binary_path: Path, rubric: Rubric
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(
        "\n".join([
            json.dumps({"item_id": "i1", "annotator": "a", "label": "pass"}),   # 1 ok
            '{"item_id": "i2", "annotator": ',                                 # 2 malformed
            json.dumps({"item_id": "nope", "annotator": "a", "label": "pass"}),  # 3 unknown id
            json.dumps({"item_id": "i3", "annotator": "a", "label": "passed"}),  # 4 off scale
            json.dumps({"item_id": "i4", "annotator": "a"}),                    # 5 missing
            json.dumps({"item_id": "i4", "annotator": "a", "label": "pass", "x": 1}),  # 6 field
            json.dumps(["a", "list"]),                                         # 7 not object
            json.dumps({"item_id": "i1", "annotator": "a", "label": "fail"}),   # 8 duplicate
            json.dumps({"item_id": "i2", "annotator": "a", "label": "pass",
                        "flagged": "maybe"}),                                  # 9 bad bool
        ]) + "\n",
        encoding="utf-8",
    )
    code, output = run_cli("labels", "import", str(data), "--rubric", str(binary_path),
                           "--db", str(db_path))
    assert code != 0
    assert "8 errors; nothing was imported" in output
    for line, fragment in [
        (2, "invalid JSON"),
        (3, "unknown item id 'nope'"),
        (4, "label 'passed' is not on the 'correct' scale (allowed: pass, fail)"),
        (5, "missing field 'label'"),
        (6, "unknown field 'x'"),
        (7, "expected a JSON object"),
        (8, "second label for item 'i1' by 'a' (first on line 1)"),
        (9, "'flagged' must be true or false"),
    ]:
        assert f"{data}:{line}: {fragment}" in output, (line, output)
    assert f"{data}:1:" not in output
    reported = [int(m.group(1)) for m in re.finditer(rf"^{re.escape(str(data))}:(\d+):", output,
                                                     re.MULTILINE)]
    assert len(reported) == 8
    assert reported == sorted(reported), "errors are listed in file order"
    with open_store(db_path) as store:
        assert store.all_labels(rubric.sha256) == []


def test_csv_errors(tmp_path: Path, store: Store, rubric: Rubric) -> None:
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("item_id,annotator,label\ni1,a,pass\ni2,a\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"ragged\.csv:3: 2 fields, but the header has 3"):
        import_labels(store, ragged, rubric)
    header = tmp_path / "header.csv"
    header.write_text("item,annotator,label\ni1,a,pass\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"header\.csv:1: unknown column 'item'"):
        import_labels(store, header, rubric)
    assert store.all_labels(rubric.sha256) == []


def test_error_list_is_capped(tmp_path: Path, store: Store, rubric: Rubric) -> None:
    rows = [{"item_id": f"missing{n}", "annotator": "a", "label": "pass"} for n in range(30)]
    data = write_jsonl(tmp_path / "many.jsonl", rows)
    with pytest.raises(InputError) as caught:
        import_labels(store, data, rubric)
    message = str(caught.value)
    assert "30 errors" in message
    assert message.count("unknown item id") == MAX_REPORTED_ERRORS
    assert f"... and {30 - MAX_REPORTED_ERRORS} more" in message


def test_empty_unreadable_and_wrong_type(tmp_path: Path, store: Store, rubric: Rubric) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no labels"):
        import_labels(store, empty, rubric)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(
        b'{"item_id": "i1", "annotator": "a", "label": "pass"}\n{"note": "caf\xe9"}\n'
    )
    with pytest.raises(InputError, match=r"latin\.jsonl:2: not valid UTF-8"):
        import_labels(store, latin, rubric)
    with pytest.raises(InputError, match="unsupported file type"):
        import_labels(store, tmp_path / "labels.txt", rubric)
    with pytest.raises(InputError, match=r"absent\.jsonl: no such file"):
        import_labels(store, tmp_path / "absent.jsonl", rubric)


def test_dataset_resolution(tmp_path: Path, store: Store, rubric: Rubric) -> None:
    store.import_items("copy", [Item(id="i1", input="q1", response="r")])
    data = write_jsonl(tmp_path / "l.jsonl", [{"item_id": "i1", "annotator": "a", "label": "pass"}])
    expected = r"l\.jsonl:1: item id 'i1' is in several datasets \(copy, ds\)"
    with pytest.raises(InputError, match=expected):
        import_labels(store, data, rubric)
    import_labels(store, data, rubric, dataset="copy")
    assert [lb.dataset for lb in store.latest_labels(rubric.sha256)] == ["copy"]
    other = write_jsonl(tmp_path / "o.jsonl",
                        [{"item_id": "o1", "annotator": "a", "label": "pass"}])
    with pytest.raises(InputError, match="unknown item id 'o1' in dataset 'ds'"):
        import_labels(store, other, rubric, dataset="ds")


# -- export -------------------------------------------------------------------------------


def test_export_round_trip_jsonl_and_csv(tmp_path: Path, store: Store, rubric: Rubric) -> None:
    data = write_jsonl(tmp_path / "l.jsonl", [
        {"item_id": "i1", "annotator": "a", "label": "pass", "note": "ok, \"quoted\""},
        {"item_id": "i2", "annotator": "a", "label": "fail", "flagged": True, "seconds": 2.5},
        {"item_id": "i1", "annotator": "b", "label": "fail", "blind": False},
    ])
    import_labels(store, data, rubric)
    for fmt, name in (("jsonl", "out.jsonl"), ("csv", "out.csv")):
        buffer = io.StringIO()
        assert export_labels(store, rubric.sha256, buffer, fmt=fmt) == 3  # type: ignore[arg-type]
        exported = tmp_path / name
        exported.write_text(buffer.getvalue(), encoding="utf-8")
        with open_store(tmp_path / f"copy-{fmt}.db") as copy:
            copy.import_items("ds", list(store.iter_items("ds")))
            assert import_labels(copy, exported, rubric).added == 3
            fields = [(lb.item_id, lb.annotator, lb.label, lb.note, lb.flagged, lb.blind,
                       lb.seconds) for lb in copy.latest_labels(rubric.sha256)]
            assert fields == [
                ("i1", "a", "pass", 'ok, "quoted"', False, True, None),
                ("i2", "a", "fail", None, True, True, 2.5),
                ("i1", "b", "fail", None, False, False, None),
            ]


def test_cli_export_stdout_and_file(tmp_path: Path, db_path: Path, binary_path: Path,
                                    rubric: Rubric) -> None:
    with open_store(db_path) as store:
        data = write_jsonl(tmp_path / "l.jsonl", [
            {"item_id": "i1", "annotator": "a", "label": "pass"},
            {"item_id": "i2", "annotator": "b", "label": "fail"},
        ])
        import_labels(store, data, rubric)
    runner = CliRunner()
    result = runner.invoke(cli, ["labels", "export", "--rubric", str(binary_path), "--db",
                                 str(db_path), "--annotator", "a"], catch_exceptions=False)
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["item_id"], r["label"]) for r in lines] == [("i1", "pass")]
    out = tmp_path / "sub" / "labels.csv"
    result = runner.invoke(cli, ["labels", "export", "--rubric", str(binary_path), "--db",
                                 str(db_path), "--format", "csv", "--out", str(out)],
                           catch_exceptions=False)
    assert result.exit_code == 0
    text = out.read_text(encoding="utf-8").splitlines()
    assert text[0].startswith("dataset,item_id,annotator,label,note")
    assert len(text) == 3


def test_labels_match_the_scale_ignoring_case(tmp_path: Path, store: Store) -> None:
    pairwise = load_rubric(rubric_file(tmp_path, """
name = "prefer"
version = "1"
[scale]
kind = "pairwise"
allow_tie = true
[prompt]
user = "{input} A: {response_a} B: {response_b} {scale}"
""", "prefer"))
    store.import_items("pairs", [Item(id=f"p{n}", input="q", response_a="x", response_b="y")
                                 for n in range(3)])
    data = write_jsonl(tmp_path / "p.jsonl", [
        {"item_id": "p0", "annotator": "a", "label": "a"},
        {"item_id": "p1", "annotator": "a", "label": "B"},
        {"item_id": "p2", "annotator": "a", "label": " TIE "},
    ])
    import_labels(store, data, pairwise)
    assert [lb.label for lb in store.latest_labels(pairwise.sha256)] == ["A", "B", "tie"]


def test_export_keeps_flags_notes_skips_and_adjudications(
    tmp_path: Path, store: Store, rubric: Rubric
) -> None:
    from judgekit.types import ADJUDICATED_SOURCE, Label

    store.save_rubric(rubric)
    store.add_labels([
        Label("ds", "i1", rubric.sha256, "a", None, note="unclear", flagged=True),  # note row
        Label("ds", "i2", rubric.sha256, "a", None, seconds=3.0),  # a skip
        Label("ds", "i3", rubric.sha256, "a", "pass"),
        Label("ds", "i3", rubric.sha256, "b", "fail"),
        Label("ds", "i3", rubric.sha256, "lead", "fail", source=ADJUDICATED_SOURCE),
    ])
    buffer = io.StringIO()
    assert export_labels(store, rubric.sha256, buffer) == 5
    records = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [(r["item_id"], r["label"], r["note"], r["flagged"], r["source"]) for r in records] == [
        ("i1", None, "unclear", True, "annotate"), ("i2", None, None, False, "annotate"),
        ("i3", "pass", None, False, "annotate"), ("i3", "fail", None, False, "annotate"),
        ("i3", "fail", None, False, ADJUDICATED_SOURCE),
    ]
    labeled = io.StringIO()
    assert export_labels(store, rubric.sha256, labeled, labeled_only=True) == 3
    for fmt in ("jsonl", "csv"):
        exported = tmp_path / f"all.{fmt}"
        out = io.StringIO()
        export_labels(store, rubric.sha256, out, fmt=fmt)  # type: ignore[arg-type]
        exported.write_text(out.getvalue(), encoding="utf-8")
        with open_store(tmp_path / f"copy-{fmt}.db") as copy:
            copy.import_items("ds", list(store.iter_items("ds")))
            assert import_labels(copy, exported, rubric).added == 5
            rows = copy.latest_labels(rubric.sha256, include_skips=True)
            assert [(r.item_id, r.label, r.note, r.flagged) for r in rows][:2] == [
                ("i1", None, "unclear", True), ("i2", None, None, False)]
            assert [(a.item_id, a.label, a.annotator) for a in
                    copy.adjudicated_labels(rubric.sha256)] == [("i3", "fail", "lead")]
            assert import_labels(copy, exported, rubric).added == 0  # idempotent
