"""A probe's result moves the report: shown even without a judge run, and gating the verdict."""

from __future__ import annotations

from test_probes import pairs, pairwise_judge, spec_for

from judgekit.judging.probes import run_position_probe
from judgekit.report import ReportOptions, build_report, render_text
from judgekit.rubrics import load_rubric
from judgekit.store import Store
from tests.support.openai_server import OpenAIServer


def test_probe_then_report_shows_the_probe_and_fails_on_position_conflict(
    openai_server: OpenAIServer, tmp_db: Store
) -> None:
    preference = load_rubric("rubrics/preference.toml")
    openai_server.responder = pairwise_judge(first_slot_bias=0.6, noise=0.0, seed=3)
    items = pairs(80, seed=3)
    outcome = run_position_probe(
        tmp_db, preference, items, spec_for(openai_server), dataset="pairs", progress=False
    )
    conflict = outcome.result["conflict_rate"]
    assert conflict["ci_low"] > 0.3
    # no judge or import run in the store: the probe's run alone
    report = build_report(tmp_db, preference, ReportOptions(n_resamples=100))
    assert [p.run_id for p in report.bias.probes] == [outcome.summary.run_id]
    assert "Position consistency" in render_text(report)
    assert report.verdict.decision == "FAIL"
    assert "--max-position-conflict 0.3" in report.verdict.reason
    # turning the gate off leaves the agreement rule (no labels: insufficient data)
    off = build_report(
        tmp_db, preference, ReportOptions(n_resamples=100, max_position_conflict=1.0)
    )
    assert off.verdict.decision == "INSUFFICIENT DATA"
    assert "Warning: the judge prefers the response shown first" in off.verdict.reason
