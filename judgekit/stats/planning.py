"""How many human labels are needed for an interval of a given half-width.

Planning happens before labelling, so these use the simple large-sample
standard errors on purpose: they are easy to check by hand, and the worked
numbers in docs/statistics.md can be reproduced with a calculator. Use the
result as a floor; plan more per slice you want to report separately.
"""

from __future__ import annotations

import math

from judgekit.stats._resample import z_critical
from judgekit.stats._validate import check_confidence_level

__all__ = ["kappa_sample_size", "proportion_sample_size"]

#: Guards ceil() against 196.00000000001 from floating-point noise.
_ROUNDING_SLACK = 1e-9


def _check_half_width(half_width: float) -> float:
    d = float(half_width)
    if not (math.isfinite(d) and 0.0 < d < 1.0):
        raise ValueError(f"half_width must be between 0 and 1 (exclusive), got {half_width!r}")
    return d


def _check_probability(value: float, name: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and 0.0 <= v <= 1.0):
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    return v


def proportion_sample_size(
    *, half_width: float, p: float = 0.5, confidence_level: float = 0.95
) -> int:
    """n = z**2 p (1 - p) / d**2, rounded up (p = 0.5 is the worst case).

    At p = 0.8 and 95%: 62 for +/-0.10, 246 for +/-0.05.
    """
    d = _check_half_width(half_width)
    prob = _check_probability(p, "p")
    z = z_critical(check_confidence_level(confidence_level))
    n = z * z * prob * (1.0 - prob) / (d * d)
    return max(1, math.ceil(n - _ROUNDING_SLACK))


def kappa_sample_size(
    *,
    half_width: float,
    expected_kappa: float | None = None,
    p_observed: float | None = None,
    p_expected: float | None = None,
    confidence_level: float = 0.95,
) -> int:
    """Labels needed so a kappa interval has half-width d, from Cohen's approximate SE.

    SE(kappa) ~ sqrt(p_o (1 - p_o) / n) / (1 - p_e), hence
    n = z**2 p_o (1 - p_o) / (d**2 (1 - p_e)**2). Give any two of
    ``expected_kappa``, ``p_observed``, ``p_expected`` (kappa = (p_o - p_e) / (1 - p_e)
    fixes the third); all three must agree. Example: kappa 0.70 with p_o 0.85 and
    p_e 0.5 needs 196 labels for +/-0.10 and 88 for +/-0.15.
    """
    d = _check_half_width(half_width)
    z = z_critical(check_confidence_level(confidence_level))
    given = {
        name: value
        for name, value in (
            ("expected_kappa", expected_kappa),
            ("p_observed", p_observed),
            ("p_expected", p_expected),
        )
        if value is not None
    }
    if len(given) < 2:
        raise ValueError(
            "give two of expected_kappa, p_observed, p_expected "
            "(e.g. expected_kappa=0.7, p_expected=0.5 for a balanced binary scale)"
        )
    if expected_kappa is not None and not (
        math.isfinite(expected_kappa) and -1.0 <= expected_kappa < 1.0
    ):
        raise ValueError(f"expected_kappa must be in [-1, 1), got {expected_kappa!r}")
    po = None if p_observed is None else _check_probability(p_observed, "p_observed")
    pe = None if p_expected is None else _check_probability(p_expected, "p_expected")
    if pe is not None and pe >= 1.0:
        raise ValueError("p_expected must be below 1 (kappa is undefined at p_e = 1)")
    if po is None:
        assert expected_kappa is not None and pe is not None
        po = expected_kappa * (1.0 - pe) + pe
    elif pe is None:
        assert expected_kappa is not None
        pe = (po - expected_kappa) / (1.0 - expected_kappa)
        if not 0.0 <= pe < 1.0:
            raise ValueError(
                f"p_observed={po} and expected_kappa={expected_kappa} imply p_expected={pe:.3f},"
                " which is impossible"
            )
    elif expected_kappa is not None:
        implied = (po - pe) / (1.0 - pe)
        if abs(implied - expected_kappa) > 0.01:
            raise ValueError(
                f"inconsistent inputs: p_observed={po} and p_expected={pe} give "
                f"kappa={implied:.3f}, not {expected_kappa}"
            )
    if not 0.0 <= po <= 1.0:
        raise ValueError(f"the inputs imply p_observed={po:.3f}, outside [0, 1]")
    n = z * z * po * (1.0 - po) / (d * d * (1.0 - pe) ** 2)
    return max(1, math.ceil(n - _ROUNDING_SLACK))
