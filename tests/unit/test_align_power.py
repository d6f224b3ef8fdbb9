"""``plan --test-gain``: Connor's McNemar sample size, checked by simulating the exact test."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from judgekit import stats
from judgekit.align.power import labels_for_gain
from judgekit.cli.main import cli
from judgekit.errors import InputError
from tests.support.cli import run_cli


def test_hand_computed_value() -> None:
    # psi = 0.7*0.2 + 0.8*0.3 = 0.38; (1.95996*sqrt(.38) + 0.84162*sqrt(.37))^2 / 0.01 = 295.9
    assert labels_for_gain(0.7, 0.1).labels_needed == 296


@pytest.mark.parametrize(("baseline", "gain"), [(0.7, 0.1), (0.6, 0.15)])
def test_power_of_the_exact_test_at_that_n_is_about_80_percent(baseline: float,
                                                               gain: float) -> None:
    n = labels_for_gain(baseline, gain).labels_needed
    rng = np.random.default_rng(7)
    runs = 1500
    rejected = 0
    for _ in range(runs):
        base = rng.random(n) < baseline
        cand = rng.random(n) < baseline + gain
        rejected += stats.mcnemar(cand, base).pvalue < 0.05
    # the exact binomial test is a little conservative next to the normal approximation
    assert 0.74 <= rejected / runs <= 0.85


def test_cli_and_bad_input() -> None:
    result = CliRunner().invoke(cli, ["plan", "--test-gain", "0.1", "--baseline-agreement",
                                      "0.7"])
    assert result.exit_code == 0 and result.output.startswith("296 labels in the test split")
    with pytest.raises(InputError, match="--test-gain"):
        labels_for_gain(0.95, 0.1)
    code, _, err = run_cli("plan", "--test-gain", "0.5", "--baseline-agreement", "0.7")
    assert code == 2 and "--test-gain" in err
