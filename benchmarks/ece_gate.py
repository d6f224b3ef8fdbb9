"""The ECE gate's false-FAIL rate and the calibration interval's reach to 0, by simulation.

A judge states a confidence c uniform on [0.3, 1] and agrees with people with probability
c - delta: delta 0 is calibrated, delta is the true ECE (up to the clipping at 0, none here).
For each n the percentile bootstrap interval (B resamples) of the plug-in ECE (before) and
the report's interval of the debiased ECE (now, ``debiased_calibration_error``: the
percentile interval shifted down by the replicates' mean excess over the estimate); columns:
mean estimate, the share of intervals whose lower bound is at most 0 (calibrated rows:
the interval can cover the truth), and the share whose lower bound exceeds ``--max-ece``
0.15 (the gate's FAIL rate; at delta = 0.15 it is the false-FAIL rate at the threshold,
which a 95% interval's lower bound keeps near 2.5%). Monte Carlo SE in brackets.

Usage: ``python benchmarks/ece_gate.py [--quick] [--reps R] [--resamples B] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats import bootstrap_ci
from judgekit.stats._bias_scale import debiased_calibration_error, expected_calibration_error

THRESHOLD = 0.15


def se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1 / reps) / reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 replications, n 50 and 200")
    parser.add_argument("--reps", type=int, default=None, help="replications per row (400)")
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args()
    reps = args.reps or (100 if args.quick else 400)
    rng = np.random.default_rng(args.seed)
    start = time.time()
    print(f"{reps} runs per row, {args.resamples} bootstrap resamples (rate, Monte Carlo SE)")
    print(f"{'n':>4} {'delta':>5}  {'plug-in':>7} {'low<=0':>13} {'FAIL':>13}  {'debiased':>8} "
          f"{'low<=0':>13} {'FAIL':>13}")
    for n in ((50, 200) if args.quick else (50, 100, 200)):
        for delta in (0.0, 0.1, 0.15):
            sums = {"plug": [0.0, 0, 0], "debiased": [0.0, 0, 0]}
            for r in range(reps):
                conf = rng.uniform(0.3, 1.0, n)
                hit = (rng.random(n) < conf - delta).astype(float)
                low, _ = bootstrap_ci(expected_calibration_error, conf, hit,
                                      n_resamples=args.resamples, random_state=r,
                                      vectorized=True)
                sums["plug"][0] += float(expected_calibration_error(conf, hit))
                sums["plug"][1] += low <= 0
                sums["plug"][2] += low > THRESHOLD
                # the report's interval: percentile, shifted down by the replicates' excess
                estimate = float(debiased_calibration_error(conf, hit))
                idx = rng.integers(0, n, size=(args.resamples, n))
                replicates = debiased_calibration_error(conf[idx], hit[idx])
                low = float(np.quantile(replicates, 0.025)) - (replicates.mean() - estimate)
                sums["debiased"][0] += estimate
                sums["debiased"][1] += low <= 0
                sums["debiased"][2] += low > THRESHOLD
            cols = []
            for key in ("plug", "debiased"):
                mean, zero, fail = sums[key][0] / reps, sums[key][1] / reps, sums[key][2] / reps
                cols.append(f"{mean:>7.3f} {zero:.3f} ({se(zero, reps):.3f}) "
                            f"{fail:.3f} ({se(fail, reps):.3f})")
            print(f"{n:>4} {delta:>5}  " + "  ".join(cols))
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
