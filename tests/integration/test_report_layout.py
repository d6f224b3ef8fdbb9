"""The decision a lead reads: decision first, one line per reason, 80 columns, true sentences.

Every shipped rubric kind is rendered from a real store (as test_report_formats
builds it) with a position probe stored the way `judgekit probe position` stores
it for that kind: pairs swapped for a pairwise rubric, the scale's levels
reversed for a pointwise one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_formats import rich_store
from test_report_support import create_run
from test_report_verdict import _perfect, _report, _rows

from judgekit.cli.main import cli
from judgekit.report import ReportOptions, build_report, render, render_text
from judgekit.report.model import Report
from judgekit.rubrics import load_rubric

BUNDLED = Path(__file__).resolve().parents[2] / "judgekit" / "bundled_rubrics"
SHIPPED = sorted(BUNDLED.glob("*.toml"))


def _with_position_probe(tmp_path: Path, path: Path, conflict: float = 0.575) -> Report:
    store, _ = rich_store(tmp_path, path)
    rub = load_rubric(path)
    mode = "pairwise" if rub.scale.kind == "pairwise" else "pointwise"
    create_run(store, rub, "probe-pos2", kind="probe:position")
    rate = {"statistic": conflict, "ci_low": conflict - 0.16, "ci_high": conflict + 0.15,
            "n": 40}
    store.save_probe_result("probe-pos2", "position", rub.sha256, {
        "probe": "position", "mode": mode,
        "position_consistency": {**rate, "statistic": 1 - conflict},
        "conflict_rate": rate,
        "first_slot_rate": {**rate, "statistic": 0.3},
        "second_slot_rate": {**rate, "statistic": 0.275},
        "position_fairness": {**rate, "statistic": -0.02},
    })
    return build_report(store, rub, ReportOptions(n_resamples=100))


def _words(text: str) -> set[str]:
    return set(text.split())


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_the_text_report_fits_80_columns_without_breaking_a_word(
    tmp_path: Path, path: Path
) -> None:
    report = _with_position_probe(tmp_path, path)
    text = render(report, "text")
    wide = [line for line in text.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)
    # every word of the wrapped report is a whole word of the unwrapped one
    assert _words(text) <= _words(render_text(report, width=10_000))
    sha = report.provenance.rubric_sha256
    assert f"sha256 {sha[:12]})" in text and sha not in text
    assert json.loads(render(report, "json"))["provenance"]["rubric_sha256"] == sha
    wider = render_text(report, width=120)
    assert max(len(line) for line in wider.splitlines()) <= 120
    assert len(wider.splitlines()) < len(text.splitlines())


def test_a_pointwise_position_gate_says_what_was_varied(tmp_path: Path) -> None:
    report = _with_position_probe(tmp_path, BUNDLED / "correctness.toml")
    verdict = report.verdict
    assert verdict.decision == "FAIL"
    text = render(report, "text")
    flat = " ".join(text.split())
    assert "swap places" not in flat and "of 40 pairs" not in flat
    assert ("The judge changes its verdict when the scale's levels are listed in reverse "
            "order on 0.575 [0.415, 0.725] of 40 items") in flat
    assert "Position fairness" not in text and "First-slot rate" not in text
    assert "Moved toward the level listed first" in text
    tail = text.split("VERDICT: FAIL\n", 1)[1].splitlines()
    # the decision, then one line per reason (agreement first), each with figure and threshold
    assert tail[0].startswith("  Cohen's kappa: ")
    assert "--min-agreement 0.6" in " ".join(tail[:3])
    gate_line = next(i for i, line in enumerate(tail)
                     if line.startswith("  level-order conflict rate: FAIL, 0.575"))
    assert "--max-position-conflict 0.3" in " ".join(tail[gate_line:gate_line + 2])
    assert tail.index("  Why:") > gate_line


def test_a_pairwise_position_gate_speaks_of_swapped_pairs(tmp_path: Path) -> None:
    report = _with_position_probe(tmp_path, BUNDLED / "preference.toml")
    flat = " ".join(render(report, "text").split())
    assert "when the two responses swap places on 0.575 [0.415, 0.725] of 40 pairs" in flat
    assert "position conflict rate: FAIL, 0.575 [0.415, 0.725], n=40" in flat
    assert "Position fairness" in flat


def test_every_format_leads_with_the_decision_and_its_reasons(tmp_path: Path) -> None:
    report = _with_position_probe(tmp_path, BUNDLED / "helpfulness.toml")
    md = render(report, "md")
    head = md.split("## Provenance")[0]
    assert "**Verdict: FAIL**" in head
    assert "- level-order conflict rate: **FAIL**, 0.575 [0.415, 0.725\\], n=40" in head
    assert "(Agreement:" not in md and "Also:" not in md
    html = render(report, "html")
    banner = html.split('id="verdict">', 1)[1].split("</div>", 1)[0]
    assert ('<li>level-order conflict rate: <span class="out-FAIL">FAIL</span>, 0.575'
            in banner)
    gates = html.split('id="gates"', 1)[1].split("</table>", 1)[0]
    rows = gates.split("<tr class=")[1:]
    outcomes = [row.split('"')[1] for row in rows]
    assert outcomes[0] == "gate-FAIL" and outcomes == sorted(
        outcomes, key=["gate-FAIL", "gate-ok", "gate-not"].index)
    data = json.loads(render(report, "json"))["verdict"]
    assert [r["outcome"] for r in data["reasons"]][1:] == ["FAIL"]
    assert data["reasons"][1]["label"] == "level-order conflict rate"
    assert len(data["explanations"]) == 2


def test_report_out_prints_the_decision_and_one_line_per_reason(tmp_path: Path) -> None:
    _with_position_probe(tmp_path, BUNDLED / "correctness.toml")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", "--db", str(tmp_path / "judgekit.db"),
                                      "--rubric", str(BUNDLED / "correctness.toml"),
                                      "--resamples", "100", "--out", str(out)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    first = lines.index("FAIL")
    reasons = lines[first + 1:]
    assert reasons[0].startswith("  Cohen's kappa: ")
    starts = [line for line in reasons if not line.startswith("    ")]  # wrapped: 4 spaces
    assert len(starts) == 2 and starts[1].startswith("  level-order conflict rate: FAIL, 0.575")
    assert all(len(line) <= 80 for line in lines[first:])


def test_insufficient_data_never_asks_for_more_labels_than_the_dataset_has(
    tmp_path: Path,
) -> None:
    """Every item labeled, the estimate above the threshold, the lower bound below it."""
    full = _report(tmp_path / "full", _perfect(12), spare=0).verdict
    assert full.decision == "INSUFFICIENT DATA"
    assert full.labels_needed == 4 and full.labels_available == 0
    # perfect agreement on 12 items: a reason of its own, and what is left to label
    assert "Every item of the dataset is labeled: more items, or a lower --min-agreement, " \
        "would decide." in " ".join(render_text(_report(tmp_path / "f2", _perfect(12),
                                                        spare=0)).split())
    rows16 = _rows([("pass", "pass")] * 13 + [("fail", "fail")] * 2 + [("pass", "fail")])
    lift = _report(tmp_path / "lift", rows16, spare=0, min_agreement=0.3).verdict
    assert lift.decision == "INSUFFICIENT DATA", lift.reason
    assert "every item is already labeled" in lift.reason
    assert "more item(s) than this dataset has" in lift.reason
    roomy = _report(tmp_path / "roomy", _perfect(12), spare=100).verdict
    assert roomy.labels_needed == 4 and roomy.labels_available == 100
    assert "this dataset" not in roomy.reason
    # agreement 0.75, kappa 0.5 on 16 items: the interval straddles 0.6 and is wide
    rows = _rows([("pass", "pass")] * 6 + [("fail", "fail")] * 6
                 + [("pass", "fail")] * 2 + [("fail", "pass")] * 2)
    straddle = _report(tmp_path / "straddle", rows, spare=5).verdict
    assert straddle.decision == "INSUFFICIENT DATA"
    assert straddle.labels_needed is not None and straddle.labels_needed > 5
    assert "only 5 more item(s) can be labeled" in straddle.reason
    assert "What would decide" in straddle.reason and "--half-width" in straddle.reason
    text = " ".join(render_text(_report(tmp_path / "again", rows16, spare=0,
                                        min_agreement=0.3)).split())
    assert "more labeled item(s)" not in text and "What would decide" in text
