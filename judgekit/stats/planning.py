"""How many human labels are needed for an interval of a given half-width.

Kappa is planned with the standard error the analysis uses (Fleiss, Cohen &
Everitt 1969), on the confusion table the inputs imply, so the plan and the
report's interval agree; Cohen's (1960) simpler approximation, which the
published worked numbers use, is available as ``se="cohen-1960"`` (the two
coincide at balanced prevalence and differ at skewed prevalence: at 90/10 and
kappa 0.4, +/-0.1 needs 848 labels, not 1,143). Inputs that would plan for a
zero-width interval (p_o = 1, p = 0 or 1) are a ValueError, never "1 label".
Use the result as a floor; plan more per slice you want to report separately.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt

from judgekit.stats import _tables
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
    if prob in (0.0, 1.0):
        raise ValueError(
            f"p={prob:g} has variance 0 and would plan for a zero-width interval; "
            "give the proportion you expect (0.5 is the worst case)"
        )
    z = z_critical(check_confidence_level(confidence_level))
    n = z * z * prob * (1.0 - prob) / (d * d)
    return max(1, math.ceil(n - _ROUNDING_SLACK))


SE = Literal["analysis", "cohen-1960"]


def _unit_variance_of_table(table: npt.ArrayLike, weights: str | None) -> float:
    """n * Var(kappa) for an expected confusion table (counts or shares)."""
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 2:
        raise ValueError(f"table must be a square K x K table with K >= 2, got shape {t.shape}")
    if not np.isfinite(t).all() or (t < 0).any() or t.sum() <= 0:
        raise ValueError("table must hold non-negative finite counts or shares")
    t = t / t.sum()
    w = _tables.agreement_weights(t.shape[0], weights)
    se = _tables.cohen_analytic_se(t, w)  # the SE of a table of n = 1
    if not math.isfinite(se):
        raise ValueError("the table's chance agreement p_e is 1: kappa is undefined")
    return se * se


def _binary_table(p_o: float, p_e: float) -> npt.NDArray[np.float64] | None:
    """The 2x2 table with p_o and p_e and equal rater margins, or None if p_e < 0.5."""
    if p_e < 0.5:
        return None
    pi = (1.0 + math.sqrt(max(2.0 * p_e - 1.0, 0.0))) / 2.0
    off = (1.0 - p_o) / 2.0
    if pi - off < 0 or 1.0 - pi - off < 0:
        return None
    return np.array([[pi - off, off], [off, 1.0 - pi - off]])


def kappa_sample_size(
    *,
    half_width: float,
    expected_kappa: float | None = None,
    p_observed: float | None = None,
    p_expected: float | None = None,
    confidence_level: float = 0.95,
    table: npt.ArrayLike | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
    se: SE = "analysis",
) -> int:
    """Labels needed so a kappa interval has half-width d.

    n = z**2 v / d**2 with v = n Var(kappa). ``se="analysis"`` (default) takes v
    from the Fleiss-Cohen-Everitt SE that :func:`cohen_kappa` reports, on
    ``table`` (an expected K x K confusion table, e.g. the one observed so far;
    ``weights`` as in the analysis) or, without one, on the binary table with
    the given p_o and p_e and equal margins (p_e >= 0.5; a lower p_e has no
    binary table and Cohen's formula is used). ``se="cohen-1960"`` uses
    SE ~ sqrt(p_o (1 - p_o) / n) / (1 - p_e), the formula of the published worked
    examples. Without ``table`` give any two of ``expected_kappa``,
    ``p_observed``, ``p_expected`` (kappa = (p_o - p_e) / (1 - p_e) fixes the
    third). Example: kappa 0.70 with p_o 0.85 and p_e 0.5 needs 196 labels for
    +/-0.10 either way. p_o = 1 (or a table without disagreement) plans for a
    zero-width interval and is a ValueError.
    """
    d = _check_half_width(half_width)
    z = z_critical(check_confidence_level(confidence_level))
    if se not in ("analysis", "cohen-1960"):
        raise ValueError(f"se must be 'analysis' or 'cohen-1960'; got {se!r}")
    if table is not None:
        if any(v is not None for v in (expected_kappa, p_observed, p_expected)):
            raise ValueError("give either table= or the agreement rates, not both")
        variance = _unit_variance_of_table(table, weights)
        if variance <= 0:
            raise ValueError(
                "the table has no disagreement (or a constant rater), so its variance is 0 "
                "and it would plan for a zero-width interval"
            )
        return max(1, math.ceil(z * z * variance / (d * d) - _ROUNDING_SLACK))
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
    if po >= 1.0 or po <= 0.0:
        raise ValueError(
            f"p_observed={po:g} has variance 0 and would plan for a zero-width interval; "
            "plan with the agreement you expect below 1 (e.g. a Wilson lower bound)"
        )
    binary = _binary_table(po, pe) if se == "analysis" else None
    if binary is not None:
        variance = _unit_variance_of_table(binary, None)
    else:
        variance = po * (1.0 - po) / (1.0 - pe) ** 2
    if variance <= 0:
        raise ValueError("these inputs have variance 0 and would plan for a zero-width interval")
    n = z * z * variance / (d * d)
    return max(1, math.ceil(n - _ROUNDING_SLACK))
