"""Which human labels a report rests on: blind only by default, adjudications win, gaps counted."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from test_report_support import BINARY, Row, open_fresh, populate, rubric

from judgekit.cli.main import cli
from judgekit.report import ReportOptions, build_report, render
from judgekit.report.reference import human_reference
from judgekit.types import ADJUDICATED_SOURCE, Label

FLIP = {"pass": "fail", "fail": "pass"}


def _store(tmp_path: Path):  # type: ignore[no-untyped-def]
    """40 items the judge labels pass/fail alternately; h1 agrees with the judge on all."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = [Row(f"i{i:03d}", "pass" if i % 2 else "fail",
                {"h1": "pass" if i % 2 else "fail"}) for i in range(40)]
    populate(store, rub, rows)
    return store, rub, rows


def _label(rub, item_id: str, annotator: str, label: str | None, **kw) -> Label:  # type: ignore[no-untyped-def]
    return Label("ds", item_id, rub.sha256, annotator, label, **kw)


def test_unblinded_labels_are_left_out_and_counted_unless_asked_for(tmp_path: Path) -> None:
    store, rub, rows = _store(tmp_path)
    # a second annotator saw the judge on 10 items and copied it; blind, they disagree on 10 others
    store.add_labels([_label(rub, r.item_id, "h2", r.judge, blind=False) for r in rows[:10]])
    store.add_labels([_label(rub, r.item_id, "h3", FLIP[r.judge]) for r in rows[10:20]])
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    counts = report.provenance.label_counts
    assert counts["unblinded_labels"] == 10
    assert report.provenance.unblinded_included is False
    assert report.provenance.n_labels == 50  # 40 of h1 + 10 of h3, none of h2
    assert report.provenance.n_annotators == 2
    assert any("left out of the reference" in n for n in report.provenance.notes)
    # h1 and h3 split on items 10..19 with no majority: left out, counted
    assert counts["no_majority_items"] == 10
    assert report.agreement is not None and report.agreement.n_items == 30

    pooled = build_report(store, rub, ReportOptions(n_resamples=100, include_unblinded=True))
    assert pooled.provenance.unblinded_included is True
    assert pooled.provenance.n_labels == 60
    assert any("pooled into the reference" in n for n in pooled.provenance.notes)
    for fmt in ("text", "md", "html"):
        assert "given with the judge shown" in render(report, fmt)
    data = json.loads(render(report, "json"))
    assert data["provenance"]["label_counts"] == {
        "unblinded_labels": 10, "adjudicated_items": 0, "no_majority_items": 10,
        "flagged_items": 0,
    }


def test_adjudicated_labels_are_the_reference(tmp_path: Path) -> None:
    store, rub, rows = _store(tmp_path)
    store.add_labels([_label(rub, r.item_id, "h2", FLIP[r.judge]) for r in rows[:6]])
    before = build_report(store, rub, ReportOptions(n_resamples=100))
    assert before.provenance.label_counts["no_majority_items"] == 6
    assert before.agreement is not None and before.agreement.n_items == 34
    # the lead adjudicates the six ties against the judge: they come back, as disagreements
    store.add_labels([
        _label(rub, r.item_id, "lead", FLIP[r.judge], source=ADJUDICATED_SOURCE) for r in rows[:6]
    ])
    after = build_report(store, rub, ReportOptions(n_resamples=100))
    assert after.provenance.label_counts["adjudicated_items"] == 6
    assert after.provenance.label_counts["no_majority_items"] == 0
    assert after.agreement is not None and after.agreement.n_items == 40
    assert after.agreement.stats["percent_agreement"].statistic == 34 / 40
    # the adjudicator is not an annotator: the ceiling still compares h1 with h2 only
    assert after.provenance.n_annotators == 2
    assert after.ceiling is not None and after.ceiling.n_annotators == 2
    # a later adjudication replaces the earlier one
    store.add_label(_label(rub, rows[0].item_id, "lead2", rows[0].judge,
                           source=ADJUDICATED_SOURCE))
    ref = human_reference(store, rub)
    assert ref.adjudicated[("ds", rows[0].item_id)] == rows[0].judge
    # the adjudicator's own annotator label is kept apart from their adjudication
    store.add_label(_label(rub, rows[1].item_id, "lead", rows[1].judge))
    ref = human_reference(store, rub)
    assert ref.by_item[("ds", rows[1].item_id)]["lead"] == rows[1].judge
    assert ref.adjudicated[("ds", rows[1].item_id)] == FLIP[rows[1].judge]


def test_flagged_items_are_counted_labeled_or_not(tmp_path: Path) -> None:
    store, rub, rows = _store(tmp_path)
    store.add_labels([
        _label(rub, rows[0].item_id, "h1", rows[0].judge, flagged=True),
        _label(rub, rows[1].item_id, "h2", None, flagged=True, note="unclear question"),
    ])
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    assert report.provenance.label_counts["flagged_items"] == 2
    assert "2 item(s) flagged" in " ".join(render(report, "text").split())


def test_cli_include_unblinded(tmp_path: Path) -> None:
    store, rub, rows = _store(tmp_path)
    store.add_labels([_label(rub, r.item_id, "h2", r.judge, blind=False) for r in rows])
    store.close()
    runner = CliRunner()
    args = ["report", "--rubric", str(BINARY), "--db", str(tmp_path / "judgekit.db"),
            "--format", "json", "--resamples", "100"]
    blind = json.loads(runner.invoke(cli, args).stdout)
    pooled = json.loads(runner.invoke(cli, [*args, "--include-unblinded"]).stdout)
    assert blind["provenance"]["n_labels"] == 40
    assert pooled["provenance"]["n_labels"] == 80
    assert pooled["provenance"]["unblinded_included"] is True
