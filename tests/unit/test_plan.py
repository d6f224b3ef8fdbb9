"""``judgekit plan`` reproduces the worked sample sizes in methods.md section 5."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.cli.plan import chance_agreement


def plan(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["plan", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("d", "n"), [("0.1", 196), ("0.15", 88)])
def test_kappa_070_balanced(d: str, n: int) -> None:
    out = plan(
        "--statistic", "kappa", "--half-width", d, "--expected", "0.7", "--prevalence", "0.5"
    )
    assert out["labels_needed"] == n
    assert out["p_observed"] == pytest.approx(0.85) and out["p_expected"] == pytest.approx(0.5)


@pytest.mark.parametrize(("d", "n"), [("0.1", 246), ("0.15", 110)])
def test_kappa_060_balanced(d: str, n: int) -> None:
    assert plan("--half-width", d, "--expected", "0.6")["labels_needed"] == n


# the Fleiss-Cohen-Everitt SE the analysis uses; Cohen's 1960 formula gives 338 / 151
@pytest.mark.parametrize(("d", "n"), [("0.1", 325), ("0.15", 145)])
def test_skewed_prevalence_from_observed_and_chance_agreement(d: str, n: int) -> None:
    out = plan("--half-width", d, "--observed-agreement", "0.9", "--chance-agreement", "0.68")
    assert out["labels_needed"] == n


def test_prevalence_sets_chance_agreement() -> None:
    assert chance_agreement(0.8) == pytest.approx(0.68)
    assert plan("--expected", "0.7", "--prevalence", "0.8")["p_expected"] == pytest.approx(0.68)


@pytest.mark.parametrize(("d", "n"), [("0.1", 62), ("0.05", 246)])
def test_proportion(d: str, n: int) -> None:
    assert (
        plan("--statistic", "proportion", "--expected", "0.8", "--half-width", d)["labels_needed"]
        == n
    )


def test_text_output_and_current() -> None:
    result = CliRunner().invoke(
        cli, ["plan", "--half-width", "0.1", "--expected", "0.7", "--current", "150"]
    )
    assert result.exit_code == 0
    assert result.output.startswith("196 labels") and "46 more needed" in result.output


def test_bad_half_width_is_a_clean_error() -> None:
    result = CliRunner().invoke(cli, ["plan", "--half-width", "1.5"])
    assert result.exit_code != 0 and "half_width" in str(result.exception)
