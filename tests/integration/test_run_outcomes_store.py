"""``run_outcomes`` in the store: which row a report uses when several runs stand for one
call, rows only probes stand for, and stores written before the table existed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from sqlite_utils import Database

from judgekit.report import ReportOptions, build_report
from judgekit.store import open_store
from judgekit.store.schema import migrations
from judgekit.types import Item
from tests.integration.test_report_support import (
    BINARY,
    create_run,
    make_judgment,
    open_fresh,
    rubric,
)
from tests.support.cli import run_cli

N = 12


def _items() -> list[Item]:
    return [Item(id=f"i{k}", input=f"question {k}", response="a response") for k in range(N)]


def test_the_latest_row_any_judge_run_stands_for_is_the_one_reported(tmp_path: Path) -> None:
    rub = rubric(BINARY)
    store = open_fresh(tmp_path)
    store.save_rubric(rub)
    items = _items()
    store.import_items("ds", items)
    # a probe makes every call; judge run j1 stands for its answers
    create_run(store, rub, "probe", "ds", kind="probe:injection")
    made = [make_judgment(rub, "probe", "ds", item, "pass") for item in items]
    store.record_judgments(made)
    ids = [row_id for row_id, _ in store.latest_judgments_by_key(
        j.cache_key for j in made).values()]
    # before any judge run stands for them, the probe's rows are not the judge's
    assert build_report(store, rub, ReportOptions(n_resamples=20)).provenance.n_judgments == 0
    create_run(store, rub, "j1", "ds")
    assert store.stand_for("j1", ids) == N and store.stand_for("j1", ids) == 0  # idempotent
    first = build_report(store, rub, ReportOptions(n_resamples=20))
    assert first.provenance.n_judgments == N and first.provenance.run_ids == ("j1",)
    assert {j.run_id for j in store.judgments(run_id="j1")} == {"probe"}  # made by the probe
    # j2 re-judges (--force) with the other verdict: the latest row wins for every reader
    create_run(store, rub, "j2", "ds")
    store.record_judgments([replace(j, run_id="j2", label="fail", score=0.0) for j in made])
    again = build_report(store, rub, ReportOptions(n_resamples=20))
    assert again.provenance.run_ids == ("j2",)
    assert again.health.total == N
    counts = store.status_counts(one_per_item=True, **store.run_selection("j1").filters())
    assert counts == {"ok": N}
    labels = {j.label for j in store.judgments(**store.run_selection("j1").filters())}
    assert labels == {"fail"}  # j1 names its judge: the latest outcome, whoever made it
    held = store.run_outcome_counts("j1")
    assert (held.made, held.stood_for) == ({}, {"probe": {"ok": N}})
    store.close()


def test_a_store_from_before_run_outcomes_opens_and_its_reruns_still_stand_for_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    migrations.apply(db, stop_before="0007_run_outcomes")
    db.close()
    rub = rubric(BINARY)
    with open_store(path) as store:  # migrated on open
        assert "run_outcomes" in store.db.table_names()
        store.save_rubric(rub)
        store.import_items("ds", _items())
        create_run(store, rub, "run-1", "ds")
        store.record_judgments([make_judgment(rub, "run-1", "ds", item, "pass")
                                for item in _items()])
        # a cached rerun recorded before the table existed: a summary, no links
        create_run(store, rub, "rerun", "ds")
        store.finish_run("rerun", {"total": N, "cached": N, "judged": 0,
                                   "counts": {"ok": N}})
        report = build_report(store, rub, ReportOptions(n_resamples=20, judge_run="rerun"))
        assert report.provenance.n_judgments == N
        assert store.run_outcome_counts("rerun").n_stood_for == 0
    code, out, _ = run_cli("runs", "--db", str(path), "--format", "json")
    listed = {row["id"]: row for row in json.loads(out)}
    assert code == 0 and listed["rerun"]["counts"] == {"ok": N}  # its summary's, as before
    assert (listed["rerun"]["judged"], listed["rerun"]["cached"]) == (0, N)
