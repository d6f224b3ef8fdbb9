"""The vote's rule (judgekit.judging.voting), computed by hand: majorities, ties, means
exactly between two levels, and items whose samples failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.judging.voting import _tally, aggregate
from judgekit.rubrics import load_rubric
from judgekit.types import Judgment, Scale

RUBRICS = Path(__file__).resolve().parents[2] / "rubrics"


def scale(name: str) -> Scale:
    return load_rubric(RUBRICS / f"{name}.toml").scale


@pytest.mark.parametrize(("labels", "expected"), [
    (["fail", "pass", "fail"], "fail"),
    (["fail", "pass"], "pass"),                      # a tie: the first label on the scale
    (["fail", "fail", "pass", "pass"], "pass"),
    (["fail"], "fail"),
    ([], None),
])
def test_binary_majority(labels: list[str], expected: str | None) -> None:
    assert aggregate(labels, scale("correctness")) == expected


@pytest.mark.parametrize(("labels", "expected"), [
    (["1", "2", "4", "5"], "3"),                     # mean 3
    (["2", "3"], "2"),                               # 2.5: the lower level
    (["4", "5"], "4"),                               # 4.5: the lower level
    (["3", "4", "4"], "4"),                          # 3.67
    (["1", "1", "5"], "2"),                          # 2.33: the mean, not the mode
])
def test_ordinal_mean_rounded(labels: list[str], expected: str) -> None:
    assert aggregate(labels, scale("helpfulness")) == expected


def sample(status: str, label: str | None = None, model: str | None = "m-1") -> Judgment:
    return Judgment("r", "d", "i", 0, status, label, None, None, "{}", "m",  # type: ignore[arg-type]
                    model, "http://x", {}, "n", "1", "h", "k")


def test_failed_samples_are_left_out_and_counted() -> None:
    rows = list(enumerate([sample("ok", "pass"), sample("parse_error"), sample("ok", "fail"),
                           sample("ok", "fail"), sample("timeout")]))
    tally = _tally(rows, scale("correctness"), "majority")
    assert (tally.status, tally.label, tally.ok) == ("ok", "fail", 3)
    assert "vote of 3 of 5 samples ok" in tally.reason and tally.model_returned == "m-1"


def test_no_ok_sample_takes_the_commonest_failure_ties_in_status_order() -> None:
    correctness = scale("correctness")
    rows = list(enumerate([sample("timeout"), sample("refusal"), sample("timeout"),
                           sample("refusal")]))
    tied = _tally(rows, correctness, "majority")
    assert (tied.status, tied.label) == ("refusal", None)
    rows = list(enumerate([sample("api_error"), sample("truncated"), sample("api_error")]))
    tally = _tally(rows, correctness, "majority")
    assert (tally.status, tally.label) == ("api_error", None)
    assert tally.reason == "no sample of 3 answered ok (api_error 2, truncated 1)"
