"""Human parity in the report: the agreement gap, the alt-test and the one sentence."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
from test_report_support import BINARY, REPO, Row, open_fresh, populate, rubric

from judgekit.report import ReportOptions, build_report, render_json, render_markdown, render_text
from judgekit.stats.parity import agreement_gap, alt_test


def _rows(n: int, n_annotators: int, judge_accuracy: float, seed: int) -> list[Row]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        truth = rng.choice(["pass", "fail"])

        def rate(accuracy: float, truth: str = truth) -> str:
            return truth if rng.random() < accuracy else rng.choice(["pass", "fail"])

        humans = {f"h{j}": rate(0.8) for j in range(n_annotators)}
        rows.append(Row(f"x{i}", rate(judge_accuracy), humans))
    return rows


def _report(tmp_path: Path, rows: list[Row]):
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, rows)
    return build_report(store, rub, ReportOptions(n_resamples=300))


def test_report_states_parity_and_runs_the_alt_test(tmp_path: Path) -> None:
    rows = _rows(60, 3, 0.95, seed=1)
    report = _report(tmp_path, rows)
    ceiling = report.ceiling
    assert ceiling is not None and ceiling.parity is not None and ceiling.alt_test is not None
    # the same numbers as the stats functions on the per-annotator labels
    judge = [r.judge for r in rows]
    labels = {a: [r.humans[a] for r in rows] for a in ("h0", "h1", "h2")}
    gap = agreement_gap(judge, labels, n_resamples=300, random_state=0)
    stat = ceiling.stats["judge_minus_human_agreement"]
    assert (stat.statistic, stat.ci_low, stat.ci_high) == (gap.statistic, gap.ci_low, gap.ci_high)
    expected = alt_test(judge, labels, epsilon=0.2, min_items=30)
    assert ceiling.alt_test["winning_rate"] == expected.winning_rate
    assert ceiling.alt_test["passed"] == expected.passed
    verdict = "passes" if expected.passed else "fails"
    assert f"it {verdict} the alternative annotator test" in ceiling.parity
    # the sentence reads the interval: here it includes 0, so it decides nothing
    assert stat.ci_low < 0 < stat.ci_high
    assert ceiling.parity.startswith("The data cannot tell whether the judge agrees")
    text = render_text(report)
    assert ceiling.parity in " ".join(text.split())  # text is wrapped at 80 columns
    assert ceiling.parity in render_markdown(report)
    out = json.loads(render_json(report))
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text())
    jsonschema.validate(out, schema)
    assert out["human_ceiling"]["parity"] == ceiling.parity


def test_the_alt_test_margin_is_an_option_of_the_report(tmp_path: Path) -> None:
    """`report --epsilon` as `agree --epsilon`: it was fixed at 0.2 in the report."""
    rows = _rows(60, 3, 0.95, seed=1)
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=100, epsilon=0.05))
    judge = [r.judge for r in rows]
    labels = {a: [r.humans[a] for r in rows] for a in ("h0", "h1", "h2")}
    expected = alt_test(judge, labels, epsilon=0.05, min_items=30)
    assert report.ceiling is not None and report.ceiling.alt_test is not None
    assert report.ceiling.alt_test["winning_rate"] == expected.winning_rate


def test_two_annotators_get_the_gap_but_no_alt_test(tmp_path: Path) -> None:
    # a judge close to coin-flipping agrees with people less than they agree with each other
    report = _report(tmp_path, _rows(80, 2, 0.1, seed=2))
    ceiling = report.ceiling
    assert ceiling is not None and ceiling.alt_test is None
    assert ceiling.parity is not None and "alternative annotator" not in ceiling.parity
    assert ceiling.parity.startswith("The judge agrees with people less well")
    assert "judge_minus_human_agreement" in ceiling.stats
    # both alphas rest on under 100 units: the report says their intervals may be short
    notes = " ".join(report.provenance.notes)
    assert "Krippendorff's alpha of the annotators rests on 80 units" in notes
    assert report.agreement is not None
    paired = report.agreement.stats["krippendorff_alpha"].n
    assert 0 < paired < 80  # items whose annotators tie are left out of the reference
    assert f"Krippendorff's alpha of judge and humans rests on {paired} units" in notes


def test_items_sharing_prompts_are_clustered_by_prompt_and_few_clusters_warned(
    tmp_path: Path,
) -> None:
    rng = random.Random(5)
    rows = []
    for i in range(60):
        h = rng.choice(["pass", "fail"])
        rows.append(
            Row(f"x{i}", h if rng.random() < 0.8 else "pass", {"h": h}, prompt=f"p{i % 12}")
        )
    report = _report(tmp_path, rows)
    assert report.agreement is not None and report.agreement.cluster_by == "prompt"
    assert report.agreement.n_clusters == 12
    notes = " ".join(report.provenance.notes)
    assert "resample whole prompts" in notes and "Only 12 clusters (by prompt)" in notes
    # distinct prompts: no clustering, no warning
    plain = _report(tmp_path / "plain", [Row(r.item_id, r.judge, r.humans) for r in rows])
    assert plain.agreement is not None and plain.agreement.cluster_by is None
    assert "clusters" not in " ".join(plain.provenance.notes)


def test_an_interval_excluding_0_without_a_significant_test_claims_nothing() -> None:
    """The sentence needs the randomization test too (the bootstrap interval alone excluded
    0 for an exchangeable judge in 7.3% of samples)."""
    from judgekit.report.model import Stat
    from judgekit.report.parity import _sentence

    unproven = Stat(-0.08, -0.15, -0.01, 50, "bootstrap", pvalue=0.09)
    text = _sentence(unproven, 0.62, 0.70, None)
    assert text.startswith("The data cannot tell") and "p = 0.09" in text
    shown = Stat(-0.08, -0.15, -0.01, 50, "bootstrap", pvalue=0.01)
    assert _sentence(shown, 0.62, 0.70, None).startswith("The judge agrees with people less well")
