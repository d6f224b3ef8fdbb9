"""The alternative annotator test's skipped annotators: a count, 20 names, a reason per group.

A crowd of thousands of annotators with a label or two each is skipped by the test (it needs
30 shared items per annotator); the report JSON used to list every name.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
from test_report_support import BINARY, Row, open_fresh, populate, rubric

from judgekit.report import ReportOptions, build_report, render
from judgekit.stats.parity import alt_test

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text()
)
CROWD = 600  # annotators with one label each, on an item the experts labeled too


def test_skipped_annotators_are_counted_and_grouped(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(5)
    rows = []
    for i in range(60):  # three experts label every item: the test runs on them
        truth = rng.choice(["pass", "fail"])
        humans = {f"expert{k}": truth if rng.random() < 0.9 else "fail" for k in range(3)}
        rows.append(Row(f"r{i}", truth, humans))
    for k in range(CROWD):  # one label each on an item the experts labeled too
        rows[k % 60].humans = {**rows[k % 60].humans, f"crowd{k:04d}": rng.choice(["pass",
                                                                                    "fail"])}
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=50))
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, SCHEMA)
    test = data["human_ceiling"]["alt_test"]
    assert [a["annotator"] for a in test["annotators"]] == ["expert0", "expert1", "expert2"]
    assert test["n_skipped"] == CROWD
    assert test["skipped"] == [f"crowd{k:04d}" for k in range(20)]
    assert test["skipped_groups"] == [{
        "reason": "fewer than 30 items shared with the judge and another annotator",
        "count": CROWD, "annotators": [f"crowd{k:04d}" for k in range(20)]}]
    assert len(json.dumps(test)) < 3000  # not 600 names


def test_the_library_result_keeps_every_name() -> None:
    """``alt_test(...).to_dict()`` without a limit is unchanged (``agree`` prints it)."""
    judge = ["pass"] * 40
    annotators = {f"a{k}": ["pass"] * 40 for k in range(3)}
    annotators["late"] = [None] * 39 + ["pass"]
    judge.append("fail")  # an item only "ghost" labeled: it shares nothing with the others
    annotators = {name: [*labels, None] for name, labels in annotators.items()}
    annotators["ghost"] = [None] * 40 + ["fail"]
    full = alt_test(judge, annotators).to_dict()
    assert full["skipped"] == ["ghost", "late"] and "n_skipped" not in full
    short = alt_test(judge, annotators).to_dict(skipped_limit=1)
    assert short["skipped"] == ["ghost"] and short["n_skipped"] == 2
    assert short["skipped_groups"] == [
        {"reason": "labeled no item that the judge and another annotator also labeled",
         "count": 1, "annotators": ["ghost"]},
        {"reason": "fewer than 30 items shared with the judge and another annotator",
         "count": 1, "annotators": ["late"]}]
