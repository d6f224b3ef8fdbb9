"""The like-for-like ceiling scales with the annotators who can share items, not the crowd."""

from __future__ import annotations

import time

import pytest

from judgekit.report import ceiling_pairs
from judgekit.report.ceiling_pairs import pairwise_kappas
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.rubrics import rubric_from_text

BINARY = """
name = "b"
version = "1"
[scale]
kind = "binary"
[scale.levels]
pass = "right"
fail = "wrong"
[prompt]
user = "{input} {response} {scale}"
"""


def _spec(n: int) -> IntervalSpec:
    return IntervalSpec(confidence_level=0.95, n_resamples=50 + 0 * n, random_state=0)


def test_a_crowd_of_single_labels_builds_no_pairs_and_is_fast() -> None:
    scale = rubric_from_text(BINARY, path="b.toml").scale
    keys = [("d", f"i{i}") for i in range(25)]
    annotators = {key: {f"a{k}": ("pass" if (k * 7) % 3 else "fail")
                        for k in range(i, 20_000, 25)} for i, key in enumerate(keys)}
    started = time.perf_counter()
    out = pairwise_kappas(keys, annotators, None, scale, _spec(len(keys)), "cohen_kappa")
    assert time.perf_counter() - started < 30  # was minutes: 200 million candidate pairs
    assert not out["mean_pairwise_cohen_kappa"].defined
    assert "share 5 items" in (out["mean_pairwise_cohen_kappa"].reason or "")


def test_the_cap_keeps_the_annotators_with_most_labels_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ceiling_pairs, "MAX_PAIRED_ANNOTATORS", 4)
    scale = rubric_from_text(BINARY, path="b.toml").scale
    keys = [("d", f"i{i}") for i in range(8)]
    labels = ["pass", "fail"]
    annotators = {key: {f"a{k}": labels[(i + k) % 2] for k in range(6) if k < 5 or i < 6}
                  for i, key in enumerate(keys)}
    out = pairwise_kappas(keys, annotators, None, scale, _spec(len(keys)), "cohen_kappa")
    stat = out["mean_pairwise_cohen_kappa"]
    assert stat.defined
    assert stat.note is not None and "4 annotators with the most labels of 6" in stat.note
