"""How a judge uses its scale and how far its confidence can be believed.

Two failure modes that agreement figures hide:

- **Central tendency / range restriction.** A judge that answers 3 or 4 to
  everything can still reach a fair weighted kappa on a set where people mostly
  say 3 or 4, but it cannot tell the best and the worst apart. Measured against
  the humans on the same items: the normalised entropy of the labels (1 = every
  level equally used), the share of labels at the scale's two ends, and the ratio
  of the judge's score variance to the humans' (below 1: a compressed range).
- **Overconfidence.** Where the judge reports a probability for its verdict
  (from logprobs), the expected calibration error (ECE; Naeini, Cooper &
  Hauskrecht 2015, Guo et al. 2017: the share-weighted gap between mean confidence
  and accuracy over equal-width bins) and the Brier score (Brier 1950: mean squared
  gap between confidence and the 0/1 agreement with the human label).

Every kernel is vectorised over leading axes (a bootstrap's resamples) and pure.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: Equal-width confidence bins of the calibration error and the reliability diagram.
DEFAULT_BINS = 10


def normalized_entropy(codes: npt.NDArray[Any], k: int) -> FloatArray:
    """Shannon entropy of the level counts over the last axis, divided by log(k)."""
    if k < 2:
        raise ValueError(f"entropy of a scale needs at least 2 levels, got {k}")
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.stack([(codes == level).sum(axis=-1) for level in range(k)], axis=-1)
    p = counts / np.maximum(counts.sum(axis=-1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return np.asarray(terms.sum(axis=-1) / np.log(k), dtype=np.float64)


def extreme_share(values: npt.NDArray[Any], low: float, high: float) -> FloatArray:
    """Share of values at either end of the scale, over the last axis."""
    values = np.asarray(values, dtype=np.float64)
    return np.asarray(((values == low) | (values == high)).mean(axis=-1), dtype=np.float64)


def variance_ratio(judge: npt.NDArray[Any], human: npt.NDArray[Any]) -> FloatArray:
    """var(judge) / var(human) over the last axis; NaN where people gave one value only."""
    j = np.asarray(judge, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64)
    hv = h.var(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(hv > 0, j.var(axis=-1) / hv, np.nan), dtype=np.float64)


def _bin_index(confidence: FloatArray, n_bins: int) -> npt.NDArray[np.int64]:
    """Bin of each confidence in [0, 1]: (i/n, (i+1)/n], with 0 in the first bin."""
    return np.clip(np.ceil(confidence * n_bins).astype(np.int64) - 1, 0, n_bins - 1)


def check_confidences(confidence: npt.ArrayLike, correct: npt.ArrayLike) -> tuple[FloatArray,
                                                                                 FloatArray]:
    """Validated float arrays: confidences in [0, 1], correctness 0/1, same length."""
    conf = np.asarray(confidence, dtype=np.float64)
    hit = np.asarray(correct, dtype=np.float64)
    if conf.shape[-1:] != hit.shape[-1:]:
        raise ValueError("confidence and correct must have the same length")
    if conf.size and (not np.all(np.isfinite(conf)) or conf.min() < 0 or conf.max() > 1):
        raise ValueError("confidence must be finite probabilities in [0, 1]")
    if hit.size and not np.all((hit == 0) | (hit == 1)):
        raise ValueError("correct must be 0/1 (or booleans)")
    return conf, hit


def expected_calibration_error(confidence: npt.ArrayLike, correct: npt.ArrayLike,
                               n_bins: int = DEFAULT_BINS) -> FloatArray:
    """ECE over equal-width bins: sum_b (n_b / n) * |accuracy_b - mean confidence_b|."""
    conf, hit = check_confidences(confidence, correct)
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    bins = _bin_index(conf, n_bins)
    n = conf.shape[-1]
    total = np.zeros(conf.shape[:-1])
    for b in range(n_bins):
        inside = bins == b
        count = inside.sum(axis=-1)
        gap = np.abs(np.where(inside, hit, 0.0).sum(axis=-1)
                      - np.where(inside, conf, 0.0).sum(axis=-1))
        total = total + np.where(count > 0, gap, 0.0)
    return np.asarray(total / max(n, 1), dtype=np.float64)


def debiased_calibration_error(confidence: npt.ArrayLike, correct: npt.ArrayLike,
                               n_bins: int = DEFAULT_BINS) -> FloatArray:
    """ECE with its upward bias removed, bin by bin (Kumar, Liang & Ma 2019, "Verified
    Uncertainty Calibration", the debiased estimator, here for the absolute gap).

    A bin's gap g = accuracy - mean confidence is noisy, and |g| is biased upward: a
    perfectly calibrated judge showed ECE 0.12 at 50 items. If the judge were calibrated
    in the bin, its accuracy would be a mean of Bernoulli(c_i), with standard error
    s = sqrt(sum c_i (1 - c_i)) / n_b; E|N(g, s^2)| (the folded normal mean) is what |g|
    reads when the true gap is g, so 2|g| - E|N(g, s^2)| removes the excess to first
    order. The sum over bins, weighted by n_b / n, can fall a little below 0 for a
    calibrated judge, so its bootstrap interval can cover 0.
    """
    from scipy.special import ndtr  # the normal CDF, vectorised

    conf, hit = check_confidences(confidence, correct)
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    bins = _bin_index(conf, n_bins)
    n = conf.shape[-1]
    total = np.zeros(conf.shape[:-1])
    for b in range(n_bins):
        inside = bins == b
        count = inside.sum(axis=-1)
        gap = np.abs(np.where(inside, hit - conf, 0.0).sum(axis=-1))  # n_b |g|
        spread = np.sqrt(np.where(inside, conf * (1.0 - conf), 0.0).sum(axis=-1))  # n_b s
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(spread > 0, gap / spread, np.inf)
        folded = np.where(spread > 0, spread * np.sqrt(2 / np.pi) * np.exp(-ratio**2 / 2)
                          + gap * (1 - 2 * ndtr(-ratio)), gap)
        total = total + np.where(count > 0, 2 * gap - folded, 0.0)
    return np.asarray(total / max(n, 1), dtype=np.float64)


def brier_score(confidence: npt.ArrayLike, correct: npt.ArrayLike) -> FloatArray:
    """Mean squared gap between confidence and the 0/1 outcome, over the last axis."""
    conf, hit = check_confidences(confidence, correct)
    return np.asarray(((conf - hit) ** 2).mean(axis=-1), dtype=np.float64)


def reliability_bins(confidence: npt.ArrayLike, correct: npt.ArrayLike,
                     n_bins: int = DEFAULT_BINS) -> list[dict[str, float | int]]:
    """The reliability diagram: per non-empty bin its range, count, mean confidence, accuracy."""
    conf, hit = check_confidences(confidence, correct)
    bins = _bin_index(conf, n_bins)
    out: list[dict[str, float | int]] = []
    for b in range(n_bins):
        inside = bins == b
        if inside.any():
            out.append({"low": b / n_bins, "high": (b + 1) / n_bins, "n": int(inside.sum()),
                        "confidence": float(conf[inside].mean()),
                        "accuracy": float(hit[inside].mean())})
    return out


__all__ = [
    "DEFAULT_BINS",
    "brier_score",
    "check_confidences",
    "debiased_calibration_error",
    "expected_calibration_error",
    "extreme_share",
    "normalized_entropy",
    "reliability_bins",
    "variance_ratio",
]
