"""Scale use and confidence calibration in the report: planted biases found, fair judges not."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from judgekit.report import ReportOptions, build_report, render
from judgekit.report.pairing import Pairing
from judgekit.report.scale_probes import calibration_entry, scale_use_entry
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.store import Store
from judgekit.types import Label
from tests.support.annotate import judgment, record_judgments, rubric, seed_store

LEVELS = ["1", "2", "3", "4", "5"]


def _store_with(tmp_db: Store, judge: list[str], human: list[str],
                confidence: list[float] | None = None) -> None:
    rub, items = seed_store(tmp_db, "ordinal", len(judge))
    rows = [judgment(rub, "d", item.id, j) for item, j in zip(items, judge, strict=True)]
    if confidence is not None:
        rows = [replace(r, confidence=c) for r, c in zip(rows, confidence, strict=True)]
    record_judgments(tmp_db, rub, rows)
    tmp_db.add_labels([Label(dataset="d", item_id=item.id, rubric_hash=rub.sha256,
                             annotator="ana", label=h) for item, h in zip(items, human,
                                                                          strict=True)])


def _entry(report: object, probe: str) -> dict[str, object]:
    data = json.loads(render(report, "json"))  # type: ignore[arg-type]
    found = [p for p in data["bias"]["probes"] if p["probe"] == probe]
    assert len(found) == 1, [p["probe"] for p in data["bias"]["probes"]]
    return found[0]  # type: ignore[no-any-return]


def test_a_middle_only_judge_is_named(tmp_db: Store) -> None:
    rng = np.random.default_rng(3)
    human = [LEVELS[i] for i in rng.integers(0, 5, size=80)]
    judge = [LEVELS[i] for i in rng.integers(1, 4, size=80)]  # only 2, 3, 4
    _store_with(tmp_db, judge, human)
    report = build_report(tmp_db, rubric("ordinal"), ReportOptions(n_resamples=400))
    entry = _entry(report, "scale_use")
    stats = entry["statistics"]
    assert stats["entropy_difference"]["ci_high"] < 0  # type: ignore[index]
    assert stats["extreme_share_difference"]["ci_high"] < 0  # type: ignore[index]
    assert stats["variance_ratio"]["ci_high"] < 1  # type: ignore[index]
    assert entry["details"]["judge_never_uses"] == ["1", "5"]  # type: ignore[index]
    for fmt in ("text", "md", "html"):
        assert "the judge never used 1 or 5" in render(report, fmt)


def test_an_overconfident_judge_is_shown_miscalibrated(tmp_db: Store) -> None:
    rng = np.random.default_rng(4)
    human = [LEVELS[i] for i in rng.integers(0, 5, size=120)]
    judge = [h if rng.uniform() < 0.55 else LEVELS[(LEVELS.index(h) + 1) % 5] for h in human]
    _store_with(tmp_db, judge, human, confidence=[0.99] * 120)
    report = build_report(tmp_db, rubric("ordinal"), ReportOptions(n_resamples=400))
    stats = _entry(report, "confidence_calibration")["statistics"]
    assert stats["expected_calibration_error"]["ci_low"] > 0.25  # type: ignore[index]
    assert stats["brier_score"]["statistic"] > 0.3  # type: ignore[index]
    assert '<svg' in render(report, "html") and "Reliability diagram" in render(report, "html")


def test_no_calibration_entry_without_confidences(tmp_db: Store) -> None:
    human = ["1", "2", "3", "4", "5"] * 4
    _store_with(tmp_db, human, human)
    data = json.loads(render(build_report(tmp_db, rubric("ordinal"),
                                          ReportOptions(n_resamples=200)), "json"))
    assert "confidence_calibration" not in [p["probe"] for p in data["bias"]["probes"]]


def _pairing(judge: list[str], human: list[str]) -> Pairing:
    return Pairing(keys=[("d", f"i{i}") for i in range(len(judge))], judge=judge, human=human)


def test_fair_judges_are_not_flagged_at_the_5_percent_level() -> None:
    """A judge whose labels have the humans' distribution: the entropy and end-share
    intervals should exclude 0 in about 5% of seeded samples (here: at most 4 of 40)."""
    scale = rubric("ordinal").scale
    flagged = {"entropy_difference": 0, "extreme_share_difference": 0}
    calibrated_flagged = 0
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        p = [0.1, 0.2, 0.4, 0.2, 0.1]
        human = [LEVELS[i] for i in rng.choice(5, size=150, p=p)]
        judge = [LEVELS[i] for i in rng.choice(5, size=150, p=p)]
        spec = IntervalSpec(0.95, 400, seed)
        entry = scale_use_entry(_pairing(judge, human), scale, spec)
        assert entry is not None
        for name in flagged:
            stat = entry.stats[name]
            flagged[name] += not (stat.ci_low <= 0 <= stat.ci_high)
        # calibrated confidence: agreement happens with the stated probability
        conf = rng.uniform(0.5, 1.0, size=150)
        agree = rng.uniform(size=150) < conf
        j = [h if a else LEVELS[(LEVELS.index(h) + 1) % 5] for h, a in zip(human, agree,
                                                                          strict=True)]
        pairing = _pairing(j, human)
        rows = {key: replace(judgment(rubric("ordinal"), "d", key[1], lab), confidence=c)
                for key, lab, c in zip(pairing.keys, j, conf, strict=True)}
        cal = calibration_entry(pairing, rows, spec)
        assert cal is not None
        calibrated_flagged += cal.stats["expected_calibration_error"].ci_low > 0.1
    assert all(count <= 4 for count in flagged.values()), flagged
    assert calibrated_flagged <= 2
