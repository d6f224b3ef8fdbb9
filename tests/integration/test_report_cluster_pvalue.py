"""Length correlations' p-values count prompts when items share one, in every format.

Items of one prompt are not independent evidence: Spearman's p-value over items is then
too often significant (benchmarks/correlation_pvalues.py). The report shows the p-value by
prompt (the delete-one-prompt jackknife on Fisher's z, t on G - 1 degrees of freedom),
named so, and the JSON keeps both. The clustered p is checked here against the formula
written out over scipy's ``spearmanr``.
"""

from __future__ import annotations

import html
import json
import math
import random
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from scipy import stats as sps
from test_report_support import BINARY, ORDINAL, Row, create_run, open_fresh, populate, rubric

from judgekit.report import ReportOptions, build_report, render
from judgekit.report._format import pvalue_text
from judgekit.report.bias_gate import adjusted_tests
from judgekit.stats import spearman
from judgekit.store import Store

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text()
)
PROMPTS, PER_PROMPT = 12, 5


def length_store(tmp_path: Path, shared: bool) -> tuple[Store, np.ndarray, np.ndarray,
                                                         np.ndarray]:
    """60 rated items (5 per prompt when ``shared``) and a stored length probe on them.

    Returns the store and, per item, its response length, its human score and its prompt.
    """
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    rng = random.Random(11)
    rows, lengths, scores, prompts = [], [], [], []
    for i in range(PROMPTS * PER_PROMPT):
        prompt = i // PER_PROMPT if shared else i
        effect = (prompt % 4) if shared else rng.randint(0, 3)
        length = 40 + 60 * effect + rng.randint(0, 80)
        score = min(5, max(1, 1 + effect + rng.choice([0, 0, 1])))
        rows.append(Row(f"r{i}", str(score), {"ann1": str(score)}, response="w" * length,
                        prompt=f"prompt {prompt}"))
        lengths.append(length)
        scores.append(score)
        prompts.append(prompt)
    populate(store, rub, rows)
    create_run(store, rub, "probe-len", kind="probe:length")
    stored = {"statistic": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": len(rows), "pvalue": 0.0001}
    store.save_probe_result("probe-len", "length", rub.sha256, {
        "probe": "length", "n_items": len(rows),
        "length_correlation": ({**stored, "cluster_pvalue": 0.2, "cluster_by": "prompt",
                                "n_clusters": PROMPTS} if shared else stored),
        "human_length_correlation": stored,
        "points": [[10, 1.0], [500, 4.0]],
    })
    return store, np.asarray(lengths, float), np.asarray(scores, float), np.asarray(prompts)


def jackknife_pvalue(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
    """Delete-one-group jackknife SE of Spearman's rho on Fisher's z, t on G - 1 df."""
    r = sps.spearmanr(x, y).statistic
    labels = np.unique(groups)
    leave = np.array([sps.spearmanr(x[groups != g], y[groups != g]).statistic for g in labels])
    g = labels.size
    se = math.sqrt((g - 1) / g * float(np.sum((leave - leave.mean()) ** 2)))
    t = math.atanh(r) * (1 - r * r) / se
    return float(2 * sps.t.sf(abs(t), g - 1))


def test_the_human_length_correlation_counts_prompts(tmp_path: Path) -> None:
    store, lengths, scores, prompts = length_store(tmp_path, shared=True)
    report = build_report(store, rubric(ORDINAL), ReportOptions(n_resamples=100))
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, SCHEMA)
    probe = next(p for p in data["bias"]["probes"] if p["probe"] == "length")
    human = probe["statistics"]["human_length_correlation"]
    expected = jackknife_pvalue(lengths, scores, prompts)
    assert human["cluster_pvalue"] == pytest.approx(expected, rel=1e-9)
    assert human["cluster_by"] == "prompt" and human["n_clusters"] == PROMPTS
    assert human["pvalue"] == pytest.approx(sps.spearmanr(lengths, scores).pvalue, rel=1e-9)
    assert human["cluster_pvalue"] > 10 * human["pvalue"]  # items are not independent here
    low, high = spearman(lengths, scores).confidence_interval(clusters=prompts)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx((low, high))  # by prompt too
    shown = f"{pvalue_text(expected)} (clustered by prompt, {PROMPTS} clusters)"
    assert f"p={shown}" in " ".join(render(report, "text").split())
    assert f"| {shown} |" in render(report, "md")
    assert f'<td class="num">{html.escape(shown)}</td>' in render(report, "html")
    frame = report.to_frame().set_index(["section", "name"])
    assert frame.loc[("probe:length", "human_length_correlation"), "cluster_pvalue"] == \
        pytest.approx(expected, rel=1e-9)
    # a stored figure's p-value by prompt is read back and shown the same way
    judge = probe["statistics"]["length_correlation"]
    assert (judge["pvalue"], judge["cluster_pvalue"], judge["n_clusters"]) == (0.0001, 0.2, 12)
    assert f"p=0.200 (clustered by prompt, {PROMPTS} clusters)" in " ".join(
        render(report, "text").split())
    # the Benjamini-Hochberg family of probe tests adjusts the p-values by prompt
    family = {key: stat.shown_pvalue for key, stat, _ in adjusted_tests(report.bias, 0.05)}
    assert family["length_correlation"] == 0.2
    assert family["human_length_correlation"] == pytest.approx(expected, rel=1e-9)


def test_without_shared_prompts_the_p_value_is_over_items(tmp_path: Path) -> None:
    store, lengths, scores, _ = length_store(tmp_path, shared=False)
    report = build_report(store, rubric(ORDINAL), ReportOptions(n_resamples=100))
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, SCHEMA)
    probe = next(p for p in data["bias"]["probes"] if p["probe"] == "length")
    human = probe["statistics"]["human_length_correlation"]
    assert "cluster_pvalue" not in human and "cluster_pvalue" not in probe["statistics"][
        "length_correlation"]
    assert human["pvalue"] == pytest.approx(sps.spearmanr(lengths, scores).pvalue, rel=1e-9)
    for fmt in ("text", "md", "html"):
        assert "clustered by" not in render(report, fmt)


def test_a_stored_cluster_by_that_is_not_a_plain_name_is_not_shown(tmp_path: Path) -> None:
    store, _, _, _ = length_store(tmp_path, shared=False)
    rub = rubric(ORDINAL)
    create_run(store, rub, "probe-len2", kind="probe:length")
    store.save_probe_result("probe-len2", "length", rub.sha256, {
        "probe": "length", "n_items": 0,
        "length_correlation": {"statistic": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": 60,
                               "pvalue": 0.01, "cluster_pvalue": 0.2,
                               "cluster_by": "<script>", "n_clusters": 3}})
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    assert "<script>" not in render(report, "html") and "p=0.010" in render(report, "text")


def test_an_undefined_clustered_p_says_why(tmp_path: Path) -> None:
    """Pass/fail against length: the jackknife by prompt does not apply to a two-valued
    score, so the p-value by prompt is n/a with the reason, never the one over items."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = [Row(f"r{i}", "pass", {"ann1": "pass" if (i // 5 + i) % 3 else "fail"},
                response="w" * (30 + 17 * i), prompt=f"prompt {i // 5}") for i in range(60)]
    populate(store, rub, rows)
    create_run(store, rub, "probe-len", kind="probe:length")
    stored = {"statistic": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": 60, "pvalue": 0.0001}
    store.save_probe_result("probe-len", "length", rub.sha256, {
        "probe": "length", "n_items": 60, "length_correlation": stored,
        "human_length_correlation": stored})
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, SCHEMA)
    probe = next(p for p in data["bias"]["probes"] if p["probe"] == "length")
    human = probe["statistics"]["human_length_correlation"]
    assert human["cluster_pvalue"] is None and human["pvalue"] is not None
    assert human["cluster_pvalue_reason"].startswith("one side takes (nearly) two values")
    text = " ".join(render(report, "text").split())
    assert "p=n/a (clustered by prompt, 12 clusters: one side takes (nearly) two values" in text
    family = {key for key, _, _ in adjusted_tests(report.bias, 0.05)}
    assert "human_length_correlation" not in family
