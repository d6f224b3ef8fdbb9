"""Length slope: score change per doubling of length, with prompt fixed effects.

Public through :mod:`judgekit.stats.bias`. The rank correlations of
:mod:`judgekit.stats._bias_length` mix two things: longer answers may score
higher because they are better, or because the prompts that draw long answers
are easier. Comparing answers *to the same prompt* (fixed effects) removes the
second, and adding the human score as a covariate removes the first as far as
humans see it: what is left is the score the judge gives for length itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit.stats._bias_common import NAN, statistic_dict
from judgekit.stats._resample import (
    bootstrap_pvalue,
    percentile_interval,
    widen_for_few_clusters,
)
from judgekit.stats._validate import (
    FloatArray,
    as_1d,
    as_float_with_missing,
    check_confidence_level,
    check_n_resamples,
    check_same_length,
    cluster_codes,
    rng_from,
)

#: Resampled counts held in memory at once (rows x units), to bound memory for many prompts.
_CHUNK_CELLS = 2_000_000
#: A within-prompt sum of squares below this share of the raw one counts as zero.
_TOL = 1e-10


@dataclass(frozen=True)
class LengthSlopeResult:
    """OLS slope of score on log2(length) with prompt fixed effects; ``statistic`` is beta.

    ``statistic`` is the score change per doubling of length; ``n`` the items that
    inform it (in prompts with at least two scored items when grouped), ``n_groups``
    those prompts; ``human_coefficient`` the human-score coefficient when a human
    covariate was given. ``pvalue`` is the two-sided cluster-bootstrap p of beta = 0,
    None below ``MIN_BOOTSTRAP_P_UNITS`` prompts (or items when ungrouped).
    """

    statistic: float
    n: int
    n_groups: int
    human_coefficient: float | None = None
    pvalue: float | None = None
    reason: str | None = None
    _replicates: FloatArray | None = field(default=None, compare=False, repr=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        """Percentile interval of the cluster-bootstrap replicates (resampled prompts), widened
        for few prompts as in :func:`judgekit.stats._resample.widen_for_few_clusters`."""
        level = check_confidence_level(confidence_level)
        if self._replicates is None or not math.isfinite(self.statistic):
            return NAN, NAN
        interval = percentile_interval(self._replicates, level)
        grouped = self.n_groups if self.n_groups < self.n else None
        return widen_for_few_clusters(
            interval, self.statistic, grouped, level, (-math.inf, math.inf)
        )

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        """``{"statistic", "ci_low", "ci_high", "n"}`` (+ ``pvalue``, + ``reason``); NaN -> None."""
        return statistic_dict(
            self.statistic,
            self.confidence_interval(confidence_level),
            self.n,
            pvalue=self.pvalue,
            reason=self.reason,
        )


def _undefined(reason: str, n: int = 0, n_groups: int = 0) -> LengthSlopeResult:
    return LengthSlopeResult(NAN, n, n_groups, reason=reason)


def _solve(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray | None]:
    """First (and second) coefficient of a @ beta = b for stacked 1x1 or 2x2 systems.

    ``a`` has shape (..., k, k) and ``b`` (..., k); a singular system gives NaN.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if a.shape[-1] == 1:
            return np.asarray(b[..., 0] / a[..., 0, 0]), None
        det = a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
        first = (a[..., 1, 1] * b[..., 0] - a[..., 0, 1] * b[..., 1]) / det
        second = (a[..., 0, 0] * b[..., 1] - a[..., 1, 0] * b[..., 0]) / det
    return np.asarray(first), np.asarray(second)


def _unit_sums(z: FloatArray, y: FloatArray, codes: np.ndarray, n_units: int) -> dict[str, Any]:
    """Per-unit count and sums of z, y, z z^T and z y (z: items x k covariates)."""
    k = z.shape[1]
    zz = (z[:, :, None] * z[:, None, :]).reshape(len(y), k * k)

    def total(values: FloatArray) -> FloatArray:
        out = np.zeros((n_units, values.shape[1]))
        np.add.at(out, codes, values)
        return out

    return {
        "n": np.bincount(codes, minlength=n_units).astype(np.float64),
        "z": total(z),
        "y": np.bincount(codes, weights=y, minlength=n_units),
        "zz": total(zz).reshape(n_units, k, k),
        "zy": total(z * y[:, None]),
    }


def _within(s: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    """Per-unit centred cross-products (the unit's own mean removed): the FE contribution."""
    n = s["n"]
    a = s["zz"] - s["z"][:, :, None] * s["z"][:, None, :] / n[:, None, None]
    b = s["zy"] - s["z"] * (s["y"] / n)[:, None]
    return a, b


def _pooled(w: FloatArray, s: dict[str, Any]) -> tuple[FloatArray, FloatArray]:
    """Cross-products centred on the (weighted) overall mean: OLS with an intercept only."""
    k = s["z"].shape[1]
    n = np.asarray(w @ s["n"])
    sz = np.asarray(w @ s["z"])
    a = (w @ s["zz"].reshape(len(s["n"]), k * k)).reshape(*w.shape[:-1], k, k)
    a = a - sz[..., :, None] * sz[..., None, :] / n[..., None, None]
    b = w @ s["zy"] - sz * ((w @ s["y"]) / n)[..., None]
    return a, b


def _resample_counts(rng: np.random.Generator, rows: int, n_units: int) -> FloatArray:
    """How often each unit is drawn in each of ``rows`` resamples of ``n_units`` units."""
    draws = rng.integers(0, n_units, size=(rows, n_units))
    flat = (np.arange(rows)[:, None] * n_units + draws).ravel()
    return np.bincount(flat, minlength=rows * n_units).reshape(rows, n_units).astype(np.float64)


def length_slope(
    scores: Iterable[Any],
    lengths: Iterable[Any],
    *,
    groups: Iterable[Any] | None = None,
    human: Iterable[Any] | None = None,
    reference_lengths: Iterable[Any] | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    random_state: Any = 0,
) -> LengthSlopeResult:
    """OLS ``score ~ beta * log2(length) + prompt fixed effects (+ gamma * human)``.

    beta is the score change per doubling of length. ``groups`` (one prompt id per
    item) gives the fixed effects: every variable is demeaned within its prompt,
    so beta compares answers to the same prompt, and a prompt with one scored
    item contributes nothing. Without ``groups`` the model has a single
    intercept. With ``human`` (one human score per item, None/NaN = unlabelled)
    the human score is a covariate and only labelled items are used: beta is
    then the length effect beyond what humans see. With ``reference_lengths``
    the regressor is log2(length / reference) (for a pair: len(A) / len(B)).

    Items with a missing score or length, or a length of 0, are left out. The
    interval and p-value come from a seeded cluster bootstrap over prompts (over
    items without ``groups``): resampled prompts keep their own fixed effects,
    so each replicate is a ratio of resample-weighted per-prompt sums.
    """
    check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)
    y = as_float_with_missing(scores, "scores")
    length = as_float_with_missing(lengths, "lengths")
    named = [("scores", y), ("lengths", length)]
    if np.any(length[~np.isnan(length)] < 0):
        raise ValueError("lengths must be non-negative")
    ref = None
    if reference_lengths is not None:
        ref = as_float_with_missing(reference_lengths, "reference_lengths")
        if np.any(ref[~np.isnan(ref)] < 0):
            raise ValueError("reference_lengths must be non-negative")
        named.append(("reference_lengths", ref))
    h = None
    if human is not None:
        h = as_float_with_missing(human, "human")
        named.append(("human", h))
    codes = None
    if groups is not None:
        raw = as_1d(groups, "groups")
        named.append(("groups", raw.astype(object)))
        codes = cluster_codes(raw, len(raw), "groups")
    check_same_length(*named)

    with np.errstate(divide="ignore", invalid="ignore"):
        used = ~np.isnan(y) & (length > 0)
        if ref is not None:
            used &= ref > 0
        if h is not None:
            used &= ~np.isnan(h)
    if int(used.sum()) < 3:
        what = "a human score, " if h is not None else ""
        return _undefined(
            f"fewer than three items with {what}a score and a positive length", int(used.sum())
        )
    x = np.log2(length[used]) - (np.log2(ref[used]) if ref is not None else 0.0)
    z = x[:, None] if h is None else np.column_stack([x, h[used]])
    yy = y[used]
    # centring first changes no estimate (intercept or fixed effects absorb it) and keeps
    # the sums-of-squares arithmetic below accurate
    z, yy = z - z.mean(axis=0), yy - yy.mean()

    if codes is None:
        unit = np.arange(yy.size)
        n_units, n_items = yy.size, yy.size
    else:
        _, unit, sizes = np.unique(codes[used], return_inverse=True, return_counts=True)
        keep = sizes[unit] >= 2
        if not keep.any():
            return _undefined(
                "no prompt has two or more scored items; fixed effects compare "
                "answers to the same prompt",
                0,
                0,
            )
        _, unit = np.unique(unit[keep], return_inverse=True)
        z, yy = z[keep], yy[keep]
        n_units, n_items = int(unit.max()) + 1, int(keep.sum())
    if codes is not None and n_items < 3:
        return _undefined(
            "fewer than three items in prompts with two or more scored items", n_items, n_units
        )

    sums = _unit_sums(z, yy, unit, n_units)
    if codes is None:
        a, b = _pooled(np.ones(n_units), sums)
    else:
        unit_a, unit_b = _within(sums)
        a, b = unit_a.sum(axis=0), unit_b.sum(axis=0)
    scale = float(np.sum(z[:, 0] ** 2))
    where = "within any prompt" if codes is not None else "across items"
    if a[0, 0] <= _TOL * max(scale, 1.0):
        return _undefined(f"length does not vary {where}", n_items, n_units)
    if h is not None and a[0, 0] * a[1, 1] - a[0, 1] ** 2 <= _TOL * a[0, 0] * max(a[1, 1], 1e-300):
        return _undefined(
            f"human score does not vary {where} apart from length; the length "
            "slope cannot be separated from it",
            n_items,
            n_units,
        )
    beta, gamma = _solve(a, b)

    rng = rng_from(random_state)
    chunk = max(1, _CHUNK_CELLS // n_units)
    parts = []
    for start in range(0, n_resamples, chunk):
        w = _resample_counts(rng, min(chunk, n_resamples - start), n_units)
        if codes is None:
            ra, rb = _pooled(w, sums)
        else:
            k = z.shape[1]
            ra = (w @ unit_a.reshape(n_units, k * k)).reshape(len(w), k, k)
            rb = w @ unit_b
        parts.append(_solve(ra, rb)[0])
    replicates = np.concatenate(parts)
    pvalue = bootstrap_pvalue(replicates, n_units)
    return LengthSlopeResult(
        float(beta),
        n_items,
        n_units,
        None if gamma is None else float(gamma),
        pvalue,
        None,
        replicates,
    )


__all__ = ["LengthSlopeResult", "length_slope"]
