"""The streamed exports write exactly what the list-based ones wrote, and never half a file.

``export``, ``labels export``, ``labels disagreements`` and ``labels export-tasks``
read the store a page at a time (:mod:`judgekit.store.exports`). Each output is
compared, byte for byte, with the same output made the old way: the store's
list queries (``Store.judgments``, ``latest_labels``, ``adjudicated_labels``), turned
into objects and formatted whole, as the commands did before they streamed. The
fixture store holds every kind of field: secrets the store redacted, unicode with
controls and bidi overrides, pairwise items, abstentions and failures, a re-judged
call (history), several annotators with skips, notes and flags, and adjudications.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.export import _csv_cell
from judgekit.cli.main import cli
from judgekit.io.labeling_tools import export_tasks, primary_verdicts
from judgekit.io.labels import LABEL_FIELDS, export_labels, label_record
from judgekit.report.pairing import reference_label
from judgekit.review import FLAGGED, NO_MAJORITY, SPLIT, as_json, as_text, review_items
from judgekit.rubrics import load_rubric
from judgekit.store import QueueEntry, RunRecord, Store, open_store
from judgekit.textsafe import json_safe, terminal_safe
from judgekit.types import ADJUDICATED_SOURCE, Item, Judgment, Label

RUBRIC = load_rubric("preference")
SECRET = "sk-live-streamed-7781"
#: Text with what an export must carry through unchanged (or escape): unicode, C1
#: controls, a bidi override, U+2028, quotes, commas and newlines.
ODD = 'naïve “quote”, 日本語 🙂\u0085\u202e\u2028 tab\tcomma, "q"\nline2'
N_ITEMS = 120
ANNOTATORS = ("ann1", "ann2", "ann3")


def _judgment(index: int, judge: str, run_id: str, **changes: object) -> Judgment:
    status = ("ok", "ok", "ok", "parse_error", "api_error", "refusal")[index % 6]
    fields: dict[str, object] = {
        "run_id": run_id, "dataset": "pairs", "item_id": f"p{index}", "sample_index": 0,
        "status": status, "label": ("A", "B", "tie")[index % 3] if status == "ok" else None,
        "score": None, "reasoning": ODD if index % 4 == 0 else "because",
        "raw_text": '{"verdict": "A"}' if status == "ok" else ODD,
        "model_requested": judge, "model_returned": f"{judge}-v1" if index % 5 else None,
        "base_url": f"https://user:{SECRET}@api.example.test/v1",
        "sampling": {"temperature": 0.0, "seed": index % 2, "stop": ["\n", "é"]},
        "rubric_name": RUBRIC.name, "rubric_version": RUBRIC.version,
        "rubric_hash": RUBRIC.sha256, "cache_key": f"{judge}-{index}",
        "prompt_tokens": 10 + index, "completion_tokens": None if index % 7 == 0 else 4,
        "latency_ms": 12.5 + index, "finish_reason": "stop" if status == "ok" else None,
        "error": "upstream said *** (redacted)" if status == "api_error" else None,
        "judgekit_version": "0.1.0", "created_at": f"2026-01-01T00:00:{index % 60:02d}Z",
        "item_hash": f"h{index}", "imported": index % 2 == 0,
        "confidence": 0.75 if index % 3 == 0 else None,
    }
    fields.update(changes)
    return Judgment(**fields)  # type: ignore[arg-type]


def _labels() -> Iterator[Label]:
    for index in range(N_ITEMS):
        for position, who in enumerate(ANNOTATORS):
            said = ("A", "B", "tie")[(index + position * (index % 3)) % 3]
            skip = index % 11 == position
            yield Label("pairs", f"p{index}", RUBRIC.sha256, who, None if skip else said,
                        note=ODD if (index + position) % 9 == 0 else None,
                        flagged=(index + position) % 13 == 0, blind=position != 2,
                        seconds=None if position == 1 else 3.5 + index,
                        created_at=f"2026-02-01T00:{index % 60:02d}:00Z", source="annotate")
    for index in range(0, N_ITEMS, 17):  # a relabel: the latest row wins
        yield Label("pairs", f"p{index}", RUBRIC.sha256, "ann1", "tie", note="changed my mind",
                    created_at="2026-03-01T00:00:00Z", source="import")
    for index in range(0, N_ITEMS, 10):  # adjudications, one replaced, one a skip
        yield Label("pairs", f"p{index}", RUBRIC.sha256, "lead", "B", note=ODD,
                    created_at="2026-04-01T00:00:00Z", source=ADJUDICATED_SOURCE)
    yield Label("pairs", "p0", RUBRIC.sha256, "lead2", "A", created_at="2026-04-02T00:00:00Z",
                source=ADJUDICATED_SOURCE)
    yield Label("pairs", "p20", RUBRIC.sha256, "lead2", None, note="unsure",
                created_at="2026-04-03T00:00:00Z", source=ADJUDICATED_SOURCE)


def _fill(store: Store) -> None:
    store.save_rubric(RUBRIC)
    store.import_items("pairs", [
        Item(f"p{i}", f"question {i} {ODD}", response_a=f"answer a {i}", response_b="b",
             reference="A" if i % 2 else None, slice=("math", "code", None)[i % 3])
        for i in range(N_ITEMS)
    ])
    store.import_items("single", [Item("s0", "q", response="r")])  # not a pair: no task
    for judge in ("judge-a", "judge-b"):
        run_id = f"run-{judge}"
        store.create_run(RunRecord(
            id=run_id, kind="judge", dataset="pairs", rubric_hash=RUBRIC.sha256, model=judge,
            base_url="https://api.example.test/v1", sampling={"temperature": 0.0},
            capabilities={}, judgekit_version="0.1.0", started_at="2026-01-01T00:00:00Z",
        ))
        store.record_judgments([_judgment(i, judge, run_id) for i in range(N_ITEMS)])
        # a re-judged call (history) and a variant of another
        store.record_judgments([
            _judgment(3, judge, run_id, status="ok", label="tie", raw_text="{}", error=None),
            _judgment(4, judge, run_id, variant="swapped", cache_key=f"{judge}-4-swapped"),
        ])
    store.add_labels(list(_labels()))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("streamed") / "store.db"
    with open_store(path) as store:
        _fill(store)
    return path


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


# -- the old way: whole lists, formatted at once ------------------------------------------


def _old_labels(store: Store, *, annotators: set[str] | None = None,
                labeled_only: bool = False) -> list[dict[str, object]]:
    labels = [*store.latest_labels(RUBRIC.sha256, include_skips=not labeled_only),
              *store.adjudicated_labels(RUBRIC.sha256, include_skips=not labeled_only)]
    return [label_record(lb) for lb in labels
            if annotators is None or lb.annotator in annotators]


def _old_labels_text(records: list[dict[str, object]], fmt: str) -> str:
    out = io.StringIO()
    if fmt == "jsonl":
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        writer = csv.DictWriter(out, fieldnames=list(LABEL_FIELDS), lineterminator="\n")
        writer.writeheader()
        for record in records:
            writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
    return out.getvalue()


def _old_review(store: Store) -> list[tuple[object, ...]]:
    """Items to review as plain tuples, found the old way (Label objects grouped in Python)."""
    by_item: dict[tuple[str, str], list[Label]] = {}
    for row in store.latest_labels(RUBRIC.sha256, include_skips=True):
        by_item.setdefault((row.dataset, row.item_id), []).append(row)
    adjudicated = {(r.dataset, r.item_id): r.label
                   for r in store.adjudicated_labels(RUBRIC.sha256)}
    out = []
    for key in sorted(by_item):
        rows = sorted(by_item[key], key=lambda r: r.annotator)
        labels = {r.annotator: r.label for r in rows
                  if r.label is not None and RUBRIC.scale.is_valid(r.label)}
        majority = reference_label(labels, RUBRIC.scale) if labels else None
        reasons = [NO_MAJORITY if majority is None else SPLIT] if len(set(labels.values())) > 1 \
            else []
        reasons += [FLAGGED] if any(r.flagged for r in rows) else []
        if reasons:
            out.append((*key, tuple(reasons), majority, adjudicated.get(key),
                        tuple((r.annotator, r.label, r.note, r.flagged, r.blind) for r in rows)))
    return out


def _old_render(judgments: list[Judgment], fmt: str) -> str:
    """``export``'s text as it was made from :class:`Judgment` objects, before it streamed."""

    def record(judgment: Judgment) -> dict[str, object]:
        out = dataclasses.asdict(judgment)
        out["sampling"] = dict(judgment.sampling)
        return out

    if fmt == "jsonl":
        return "".join(json_safe(json.dumps(record(j), ensure_ascii=False)) + "\n"
                       for j in judgments)
    columns = [f.name for f in dataclasses.fields(Judgment)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for judgment in judgments:
        fields = record(judgment)
        writer.writerow([_csv_cell(fields[column]) for column in columns])
    return buffer.getvalue()


# -- export ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("history", [False, True])
def test_export_is_the_old_rendering_of_every_judgment(
    db: Path, tmp_path: Path, fmt: str, history: bool
) -> None:
    with open_store(db) as store:
        expected = _old_render(
            store.judgments(rubric_hash=RUBRIC.sha256, latest_only=not history), fmt)
    assert expected.count("\n") > 2 * N_ITEMS  # every judgment, failures included
    flags = ["--history"] if history else []
    out = tmp_path / f"export.{fmt}"
    _invoke("export", "--rubric", "preference", "--db", str(db), "--format", fmt,
            "--out", str(out), *flags)
    assert out.read_text(encoding="utf-8") == expected
    assert _invoke("export", "--rubric", "preference", "--db", str(db), "--format", fmt,
                   *flags) == expected
    assert SECRET not in expected and "user:" not in expected


def test_export_of_a_judgment_is_its_dataclass_as_a_dict(db: Path) -> None:
    """The record is ``dataclasses.asdict`` of the judgment: every field, in order."""
    out = _invoke("export", "--rubric", "preference", "--db", str(db), "--dataset", "pairs")
    with open_store(db) as store:
        judgments = store.judgments(rubric_hash=RUBRIC.sha256, dataset="pairs")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows == [dataclasses.asdict(j) for j in judgments]
    assert list(rows[0]) == [f.name for f in dataclasses.fields(Judgment)]
    assert {row["status"] for row in rows} == {"ok", "parse_error", "api_error", "refusal"}


# -- labels export ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_labels_export_is_the_old_output(db: Path, tmp_path: Path, fmt: str) -> None:
    with open_store(db) as store:
        every = _old_labels_text(_old_labels(store), fmt)
        some = _old_labels_text(_old_labels(store, annotators={"ann2", "lead"},
                                            labeled_only=True), fmt)
    out = tmp_path / f"labels.{fmt}"
    base = ["labels", "export", "--rubric", "preference", "--db", str(db), "--format", fmt]
    _invoke(*base, "--out", str(out))
    assert out.read_text(encoding="utf-8") == every
    assert _invoke(*base) == every
    assert _invoke(*base, "--annotator", "ann2", "--annotator", "lead", "--labeled-only") == some
    assert '"source": "adjudicate"' in every or "adjudicate" in every


def test_labels_export_reads_one_snapshot_while_the_store_changes(db: Path, tmp_path: Path) -> None:
    """A label and an adjudication added mid-export (another connection) are not in it."""
    path = tmp_path / "changing.db"
    with open_store(db) as source, open_store(path) as copy:
        source._conn.backup(copy._conn)
    with open_store(path) as store, open_store(path) as writer:
        before = _old_labels_text(_old_labels(store), "jsonl")

        class ChangingOut(io.StringIO):
            def write(self, text: str) -> int:
                if not self.tell():  # after the first page of latest labels is read
                    writer.add_labels([
                        Label("pairs", "p1", RUBRIC.sha256, "late", "A"),
                        Label("pairs", "p1", RUBRIC.sha256, "late", "B",
                              source=ADJUDICATED_SOURCE),
                    ])
                return super().write(text)

        out = ChangingOut()
        count = export_labels(store, RUBRIC.sha256, out)
        assert out.getvalue() == before and count == before.count("\n")
        after = io.StringIO()
        export_labels(store, RUBRIC.sha256, after)
        assert after.getvalue().count('"annotator": "late"') == 2


def _limited_run(args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    """judgekit with files limited to ``limit`` bytes: a write past it fails (EFBIG)."""

    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "judgekit", *args], capture_output=True,
                          text=True, timeout=120, check=False, preexec_fn=limit_files,
                          env={**os.environ, "JUDGEKIT_PROGRESS": "0"})


@pytest.mark.parametrize("command", [["export"], ["labels", "export"]])
def test_an_out_file_failing_midway_is_an_error_and_the_old_file_stays(
    db: Path, tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "export.jsonl"
    target.write_text("the previous export\n", encoding="utf-8")
    # the store's -shm file (32 KiB) must fit; the export (well over 64 KiB) does not
    done = _limited_run([*command, "--rubric", "preference", "--db", str(db),
                         "--out", str(target)], 64 * 1024)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: cannot write --out {target}: File too large"]
    assert target.read_text(encoding="utf-8") == "the previous export\n"
    assert sorted(p.name for p in folder.iterdir()) == ["export.jsonl"]  # no temporary left
    new = folder / "new.jsonl"
    done = _limited_run([*command, "--rubric", "preference", "--db", str(db),
                         "--out", str(new)], 64 * 1024)
    assert done.returncode == 2 and not new.exists()
    assert sorted(p.name for p in folder.iterdir()) == ["export.jsonl"]


# -- labels disagreements ---------------------------------------------------------------


def test_disagreements_are_the_old_items_and_text(db: Path) -> None:
    with open_store(db) as store:
        expected = _old_review(store)
        items = review_items(store, RUBRIC)
    got = [(i.dataset, i.item_id, i.reasons, i.majority, i.adjudicated,
            tuple((o.annotator, o.label, o.note, o.flagged, o.blind) for o in i.opinions))
           for i in items]
    assert got == expected and len(got) > 20
    assert any(FLAGGED in i.reasons for i in items) and any(i.adjudicated for i in items)
    base = ["labels", "disagreements", "--rubric", "preference", "--db", str(db)]
    assert _invoke(*base) == terminal_safe(as_text(items))
    assert _invoke(*base, "--format", "json") == terminal_safe(as_json(items))
    text = as_text(items)
    assert text.endswith("with no majority and no adjudication (left out of reports until "
                         "adjudicated)\n") and "\n\n\n" not in text


def test_no_disagreement_says_so(tmp_path: Path) -> None:
    path = tmp_path / "calm.db"
    with open_store(path) as store:
        store.save_rubric(RUBRIC)
        store.import_items("pairs", [Item("p0", "q", response_a="a", response_b="b")])
        store.add_labels([Label("pairs", "p0", RUBRIC.sha256, who, "A") for who in ANNOTATORS])
    assert _invoke("labels", "disagreements", "--rubric", "preference", "--db", str(path)) \
        == "No item has disagreeing annotators or a flag.\n"
    assert _invoke("labels", "disagreements", "--rubric", "preference", "--db", str(path),
                   "--format", "json") == ""


# -- labels export-tasks ----------------------------------------------------------------


def test_export_tasks_reads_only_the_tasks_items_and_gives_the_old_tasks(db: Path) -> None:
    """Predictions come from the primary judge, chosen over the whole dataset, as before."""
    entries = [QueueEntry(position, "pairs", f"p{i}", 0.5, None)
               for position, i in enumerate((7, 3, 0, 12, 4, 5))]
    with open_store(db) as store:
        written = export_tasks(store, RUBRIC, "q", entries, predictions=True)
        verdicts = primary_verdicts(store.judgments(rubric_hash=RUBRIC.sha256, dataset="pairs"))
        items = store.items_by_ids("pairs", [e.item_id for e in entries])
    from judgekit.io import label_studio

    expected = [label_studio.task(items[e.item_id], "pairs", verdicts.get(("pairs", e.item_id)),
                                  {"queue": "q", "position": e.position,
                                   "inclusion_prob": e.inclusion_prob, "stratum": e.stratum})
                for e in entries]
    assert written.tasks_json == json.dumps(expected, ensure_ascii=False, indent=1) + "\n"
    assert 0 < written.predicted < len(entries)  # failures and refusals predict nothing
    assert all(t["predictions"][0]["model_version"] == "judge-a"
               for t in expected if "predictions" in t)  # a tie: the first by name


def test_export_tasks_draws_the_same_queue_from_lean_rows(db: Path, tmp_path: Path) -> None:
    from judgekit.sampling import Candidate, plan_queue

    path = tmp_path / "tasks.db"
    with open_store(db) as source, open_store(path) as copy:
        source._conn.backup(copy._conn)
    out = tmp_path / "tasks.json"
    _invoke("labels", "export-tasks", "--rubric", "preference", "--db", str(path),
            "--sample", "25", "--seed", "3", "--strategy", "stratified", "--out", str(out))
    with open_store(db) as store:
        candidates = [Candidate("pairs", item.id, item.slice) for item in store.iter_items("pairs")]
        plan = plan_queue(candidates, store.judgments(rubric_hash=RUBRIC.sha256, dataset="pairs"),
                          strategy="stratified", sample=25, seed=3)
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert [(t["data"]["item_id"], t["meta"]["stratum"], t["meta"]["inclusion_prob"])
            for t in tasks] == [(e.item_id, e.stratum, e.inclusion_prob) for e in plan.entries]
