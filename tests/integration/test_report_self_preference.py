"""Self-preference and the probe gates in the real report: planted biases FAIL, fair judges
pass, absent probes say why in one line, and a probe asked for that cannot be computed is
an input error."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from test_report_scale_probes import _store_with

from judgekit.errors import InputError
from judgekit.report import ReportOptions, build_report, render
from judgekit.store import Store
from judgekit.types import Item, Label
from tests.support.annotate import judgment, record_judgments, rubric

OTHERS = ("llama-3.1-8b", "claude-3-5-sonnet", "qwen2.5-7b")


def _pairwise_store(store: Store, n: int, seed: int, own_bias: float,
                    judge_model: str = "gpt-4o-mini") -> None:
    """Pairs with one gpt response, humans' preference at random; the judge agrees with
    people except that with probability ``own_bias`` it picks the gpt response."""
    rng = np.random.default_rng(seed)
    rub = rubric("pairwise")
    items, judge, human = [], [], []
    for i in range(n):
        own_a = bool(rng.integers(0, 2))
        other = OTHERS[i % 3]
        items.append(Item(id=f"p{i:03d}", input=f"Question {i}?", response_a=f"A {i}",
                          response_b=f"B {i}", meta={"model_a": "gpt-4o" if own_a else other,
                                                     "model_b": other if own_a else "gpt-4o"}))
        h = str(rng.choice(["A", "B", "tie"], p=[0.45, 0.45, 0.1]))
        j = h if rng.uniform() < 0.85 else str(rng.choice(["A", "B"]))
        if rng.uniform() < own_bias:
            j = "A" if own_a else "B"
        human.append(h)
        judge.append(j)
    store.import_items("d", items)
    store.save_rubric(rub)
    record_judgments(store, rub, [judgment(rub, "d", it.id, j, model=judge_model)
                                  for it, j in zip(items, judge, strict=True)])
    store.add_labels([Label(dataset="d", item_id=it.id, rubric_hash=rub.sha256,
                            annotator="ana", label=h) for it, h in zip(items, human, strict=True)])


def _probe(report: object, name: str) -> dict[str, object]:
    data = json.loads(render(report, "json"))  # type: ignore[arg-type]
    found = [p for p in data["bias"]["probes"] if p["probe"] == name]
    assert len(found) == 1
    return found[0]  # type: ignore[no-any-return]


def _gate(report: object, name: str) -> dict[str, object]:
    data = json.loads(render(report, "json"))  # type: ignore[arg-type]
    return next(g for g in data["verdict"]["gates"] if g["name"] == name)  # type: ignore[no-any-return]


def test_a_planted_self_preference_fails_the_verdict(tmp_db: Store) -> None:
    _pairwise_store(tmp_db, 150, seed=1, own_bias=0.5)
    report = build_report(tmp_db, rubric("pairwise"), ReportOptions(n_resamples=500))
    stats = _probe(report, "self_preference")["statistics"]
    gap = stats["self_preference"]  # type: ignore[index]
    assert gap["n"] == 150 and gap["ci_low"] > 0.1
    assert gap["statistic"] == pytest.approx(stats["judge_own_win_rate"]["statistic"]  # type: ignore[index]
                                             - stats["human_own_win_rate"]["statistic"])  # type: ignore[index]
    assert report.verdict.decision == "FAIL" and report.verdict.exit_code == 1
    assert "own model family (gpt)" in report.verdict.reason
    assert "--max-self-preference 0.1" in report.verdict.reason
    assert _gate(report, "self_preference")["tripped"] is True
    for fmt in ("text", "md", "html"):
        out = render(report, fmt)
        if fmt == "html":  # the text formats print '<' and '>' as comparisons
            out = html.unescape(re.sub(r"<[^>]+>", "", out))
        out = out.replace("\\", "")
        out = " ".join(out.replace("**", "").split())  # wrapped text, Markdown bold
        assert "self_preference probe" in out and "judge's family 'gpt'" in out
        assert "self-preference: FAIL" in out
    # the gate reads the lower bound: a looser threshold, or off, leaves the agreement rule
    off = build_report(tmp_db, rubric("pairwise"),
                       ReportOptions(n_resamples=500, max_self_preference=1.0))
    assert "max-self-preference" not in off.verdict.reason
    assert "Warning: the judge favours its own model family (gpt)" in off.verdict.reason


def test_a_fair_judge_is_not_flagged_and_a_cross_family_judge_sees_no_own_outputs(
    tmp_db: Store,
) -> None:
    _pairwise_store(tmp_db, 150, seed=2, own_bias=0.0)
    report = build_report(tmp_db, rubric("pairwise"), ReportOptions(n_resamples=500))
    assert _gate(report, "self_preference")["tripped"] is False
    assert "own model family" not in report.verdict.reason
    # the same verdicts read as a mistral judge's: no response of its family
    other = build_report(tmp_db, rubric("pairwise"),
                         ReportOptions(n_resamples=200, judge_family="mistral"))
    data = json.loads(render(other, "json"))
    assert "self_preference" not in [p["probe"] for p in data["bias"]["probes"]]
    reason = data["bias"]["absent"]["self_preference"]
    assert "judge's family 'mistral'" in reason and "from --judge-family" in reason
    assert f"Self-preference not computed: {reason}" in " ".join(render(other, "text").split())
    with pytest.raises(InputError, match=r"^--judge-family: self preference cannot be computed"):
        build_report(tmp_db, rubric("pairwise"),
                     ReportOptions(judge_family="mistral",
                                   required={"self_preference": "--judge-family"}))


def test_pointwise_self_preference_counts_own_outputs_rated_above_people(
    tmp_db: Store,
) -> None:
    rng = np.random.default_rng(5)
    rub = rubric("ordinal")
    items, judge, human = [], [], []
    for i in range(160):
        model = "qwen2.5-7b" if i % 2 else "llama-3.1-70b"
        items.append(Item(id=f"i{i:03d}", input=f"Q{i}", response=f"R{i}", meta={"model": model}))
        h = int(rng.integers(1, 6))
        j = min(5, h + 1) if model.startswith("qwen") and rng.uniform() < 0.6 else h
        human.append(str(h))
        judge.append(str(j))
    tmp_db.import_items("d", items)
    tmp_db.save_rubric(rub)
    record_judgments(tmp_db, rub, [judgment(rub, "d", it.id, j, model="Qwen/Qwen2.5-72B")
                                   for it, j in zip(items, judge, strict=True)])
    tmp_db.add_labels([Label(dataset="d", item_id=it.id, rubric_hash=rub.sha256,
                             annotator="ana", label=h) for it, h in zip(items, human,
                                                                        strict=True)])
    report = build_report(tmp_db, rub, ReportOptions(n_resamples=500))
    entry = _probe(report, "self_preference")
    stats = entry["statistics"]
    own = [float(j) > float(h) for it, j, h in zip(items, judge, human, strict=True)
           if it.meta["model"].startswith("qwen")]
    other = [float(j) > float(h) for it, j, h in zip(items, judge, human, strict=True)
             if not it.meta["model"].startswith("qwen")]
    assert stats["own_rated_above_human"]["statistic"] == pytest.approx(np.mean(own))  # type: ignore[index]
    assert stats["other_rated_above_human"]["statistic"] == pytest.approx(np.mean(other))  # type: ignore[index]
    assert entry["details"]["judge_family"] == "qwen"  # type: ignore[index]
    assert report.verdict.decision == "FAIL" and "own model family (qwen)" in report.verdict.reason


def test_absent_probes_say_why_and_asking_for_them_is_an_error(tmp_db: Store) -> None:
    _pairwise_store(tmp_db, 30, seed=3, own_bias=0.0)
    report = build_report(tmp_db, rubric("pairwise"), ReportOptions(n_resamples=100))
    absent = json.loads(render(report, "json"))["bias"]["absent"]
    assert "scale_use" in absent and "this scale is pairwise" in absent["scale_use"]
    assert "carries a confidence" in absent["confidence_calibration"]
    text = render(report, "text")
    assert "Scale use not computed: needs an ordinal scale" in text
    assert "expected calibration error: not checked" in text
    for probe, option in (("scale_use", "--min-variance-ratio"),
                          ("confidence_calibration", "--max-ece")):
        with pytest.raises(InputError, match=rf"^{option}: "):
            build_report(tmp_db, rubric("pairwise"), ReportOptions(required={probe: option}))


def test_items_without_model_fields_leave_self_preference_out(tmp_db: Store) -> None:
    rub = rubric("binary")
    items = [Item(id=f"i{i}", input="q", response="r") for i in range(12)]
    tmp_db.import_items("d", items)
    tmp_db.save_rubric(rub)
    record_judgments(tmp_db, rub, [judgment(rub, "d", it.id, "pass", model="gpt-4o")
                                   for it in items])
    tmp_db.add_labels([Label(dataset="d", item_id=it.id, rubric_hash=rub.sha256,
                             annotator="ana", label="pass" if i % 3 else "fail")
                       for i, it in enumerate(items)])
    report = build_report(tmp_db, rub, ReportOptions(n_resamples=100))
    reason = report.bias.absent["self_preference"]
    assert reason.startswith("no compared item names the model of its response (fields model")
    with pytest.raises(InputError, match=r"^--max-self-preference: self preference"):
        build_report(tmp_db, rub, ReportOptions(
            required={"self_preference": "--max-self-preference"}))


def test_a_middle_only_judge_fails_the_scale_use_gate(tmp_db: Store) -> None:
    rng = np.random.default_rng(8)
    human = [str(x) for x in rng.integers(1, 6, size=120)]
    judge = [str(min(4, max(2, int(h)))) for h in human]  # 1 -> 2, 5 -> 4: the ends avoided
    _store_with(tmp_db, judge, human)
    report = build_report(tmp_db, rubric("ordinal"), ReportOptions(n_resamples=500))
    gate = _gate(report, "variance_ratio")
    assert gate["tripped"] is True and gate["bound"] == "upper"
    assert report.verdict.decision == "FAIL"
    assert "--min-variance-ratio 0.5" in report.verdict.reason
    assert "it never used 1 or 5" in report.verdict.reason
    assert "Warning: the judge uses the ends of the scale less than people" in (
        report.verdict.reason)


def test_an_overconfident_judge_fails_the_ece_gate(tmp_db: Store) -> None:
    rng = np.random.default_rng(9)
    human = [str(x) for x in rng.integers(1, 6, size=120)]
    judge = [h if rng.uniform() < 0.55 else str(int(h) % 5 + 1) for h in human]
    _store_with(tmp_db, judge, human, confidence=[0.99] * 120)
    report = build_report(tmp_db, rubric("ordinal"), ReportOptions(n_resamples=500))
    assert _gate(report, "expected_calibration_error")["tripped"] is True
    assert report.verdict.decision == "FAIL" and "--max-ece 0.15" in report.verdict.reason
    flat = " ".join(render(report, "text").split())
    assert re.search(r"expected calibration error: FAIL, [0-9.]+ \[[0-9., ]+\], n=120; lower "
                     r"bound [0-9.]+ > --max-ece 0.15", flat)


def test_a_calibrated_judge_passes_the_ece_gate(tmp_db: Store) -> None:
    rng = np.random.default_rng(10)
    human = [str(x) for x in rng.integers(1, 6, size=150)]
    conf = rng.uniform(0.5, 1.0, size=150)
    judge = [h if rng.uniform() < c else str(int(h) % 5 + 1) for h, c in zip(human, conf,
                                                                            strict=True)]
    _store_with(tmp_db, judge, human, confidence=list(conf))
    report = build_report(tmp_db, rubric("ordinal"), ReportOptions(n_resamples=500))
    gate = _gate(report, "expected_calibration_error")
    assert gate["tripped"] is False and gate["statistic"] is not None
    assert "--max-ece" not in report.verdict.reason
