"""Speed of judgekit.stats against the reference packages, measured in the same run.

Run: ``python benchmarks/bench_stats.py [--quick]``. Prints one table row per
case with judgekit's time, the baseline's time (when there is one) and their
ratio (judgekit / baseline; below 1 means judgekit is faster). judgekit and the baseline run in
turn, pair by pair; the times are the medians and the ratio is the median of the pairs' ratios
with its spread, so a busy machine moves both sides of a pair alike.

Targets (2 cores): Cohen's kappa + 2,000-resample bootstrap CI on 100,000 pairs
under 1 s (baseline: the textbook per-resample index bootstrap); Krippendorff's
alpha within 1.2x of the ``krippendorff`` package; Fleiss' kappa at least as fast
as statsmodels.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import krippendorff
import numpy as np
from _common import header, on_path, paired, ratio_line, ratio_text, table

on_path()

from judgekit.stats import cohen_kappa, fleiss_kappa, krippendorff_alpha  # noqa: E402

BASELINE_RESAMPLES = 200


def index_bootstrap_kappa(a: np.ndarray, b: np.ndarray, n_resamples: int) -> np.ndarray:
    """The textbook bootstrap: redraw item indices and recompute kappa, once per resample.

    This is the baseline judgekit's confusion-count resampling is measured against.
    """
    rng = np.random.default_rng(0)
    n = a.size
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        idx = rng.integers(0, n, n)
        table = np.bincount(a[idx] * 2 + b[idx], minlength=4).reshape(2, 2) / n
        p_o = np.trace(table)
        p_e = float(table.sum(axis=1) @ table.sum(axis=0))
        out[r] = (p_o - p_e) / (1 - p_e)
    return out


def kappa_case(
    n_pairs: int, rng: np.random.Generator
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    truth = rng.integers(0, 2, n_pairs)
    a = np.where(rng.random(n_pairs) < 0.9, truth, 1 - truth)
    b = np.where(rng.random(n_pairs) < 0.85, truth, 1 - truth)
    labels_a = np.where(a == 1, "pass", "fail")
    labels_b = np.where(b == 1, "pass", "fail")

    def run() -> Any:
        result = cohen_kappa(labels_a, labels_b)
        return result.confidence_interval(n_resamples=2000, random_state=0)

    def baseline() -> Any:
        # 200 resamples, scaled to 2,000 below: the loop's cost is linear in resamples.
        return index_bootstrap_kappa(a, b, BASELINE_RESAMPLES)

    return run, baseline


def alpha_case(
    level: str, n_raters: int, n_units: int, rng: np.random.Generator
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    truth = rng.integers(1, 6, n_units)
    noise = rng.integers(-1, 2, (n_raters, n_units))
    data = np.clip(truth + noise * (rng.random((n_raters, n_units)) < 0.3), 1, 5).astype(float)
    data[rng.random(data.shape) < 0.15] = np.nan

    def ours() -> Any:
        return krippendorff_alpha(data, level=level).statistic  # type: ignore[arg-type]

    def package() -> Any:
        return krippendorff.alpha(reliability_data=data, level_of_measurement=level)

    assert abs(ours() - package()) < 1e-9
    return ours, package


def fleiss_case(
    n_items: int, n_raters: int, rng: np.random.Generator
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    truth = rng.integers(0, 4, n_items)
    ratings = np.where(rng.random((n_raters, n_items)) < 0.7, truth, rng.integers(0, 4, n_items))
    ratings = ratings.T.copy()  # items x raters

    def ours() -> Any:
        return fleiss_kappa(ratings).statistic

    def statsmodels() -> Any:
        table, _ = aggregate_raters(ratings)
        return sm_fleiss(table)

    assert abs(ours() - statsmodels()) < 1e-9
    return ours, statsmodels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller inputs, 3 pairs")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    repeats = 3 if args.quick else 7
    rng = np.random.default_rng(20240601)
    n = 100_000 // scale
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any], str]] = [
        (
            f"cohen_kappa + bootstrap CI (B=2000), {n:,} pairs *",
            *kappa_case(n, rng),
            "< 1 s",
        ),
        (
            f"krippendorff_alpha nominal, 10 x {n:,}, 15% missing",
            *alpha_case("nominal", 10, n, rng),
            "<= 1.2x",
        ),
        (
            f"krippendorff_alpha interval, 10 x {n:,}, 15% missing",
            *alpha_case("interval", 10, n, rng),
            "<= 1.2x",
        ),
        (f"fleiss_kappa, {n:,} items x 5 raters", *fleiss_case(n, 5, rng), "<= 1.0x"),
    ]
    header("judgekit.stats against reference implementations, paired")
    rows = []
    lines = []
    for name, ours, baseline, target in cases:
        scale = 2000 / BASELINE_RESAMPLES if name.startswith("cohen_kappa") else 1.0
        pairs = paired(ours, baseline, repeats)
        # the kappa baseline's 200 index resamples, scaled to 2,000 (linear in resamples)
        ratios = [r / scale for r in pairs.ratios]
        rows.append((name, f"{pairs.candidate_median:.3f}s",
                     f"{pairs.baseline_median * scale:.3f}s", ratio_text(ratios), target))
        lines.append(ratio_line(f"judgekit / baseline (time), {name}", ratios))
    print(table(("case", "judgekit", "baseline", "ratio (spread)", "target"), rows))
    print(
        "* baseline: redraw item indices and recompute kappa once per resample "
        f"({BASELINE_RESAMPLES} resamples timed, scaled to 2,000)"
    )
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
