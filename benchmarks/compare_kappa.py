"""How often `compare` claims a kappa difference between two exchangeable judges, by simulation.

Each item has a human 0/1 label; judges A and B each copy it with probability 0.75, else
toss a coin, independently: neither is better. Columns, with Monte Carlo SE: ``bootstrap``
the share of percentile bootstrap intervals of kappa(A) - kappa(B) excluding 0, ``swap``
the share of randomization p-values (A's and B's labels swapped at random per item) under
0.05, which ``compare`` now gives with the kappa difference.

Usage: ``python benchmarks/compare_kappa.py [--quick] [--reps R] [--seed S]``.
"""

from __future__ import annotations

import time

import numpy as np
from _common import on_path, rate_cells, simulation_parser

on_path()

from judgekit import stats  # noqa: E402
from judgekit.compare.judges import kappa_difference_fn, swap_pvalue  # noqa: E402


def main() -> None:
    parser = simulation_parser(__doc__, "100 replications, n = 50", "replications per row (1000)")
    args = parser.parse_args()
    reps = args.reps or (100 if args.quick else 1000)
    rng = np.random.default_rng(args.seed)
    fn = kappa_difference_fn(2, np.eye(2))
    start = time.time()
    print(f"Exchangeable judges, binary labels, {reps} runs per row (rate, Monte Carlo SE)")
    print(f"{'n':>4}  {'bootstrap':>13} {'swap':>13}")
    for n in ((50,) if args.quick else (30, 50, 100, 200)):
        boot = swap = 0
        for r in range(reps):
            human = rng.integers(0, 2, n)
            a, b = (np.where(rng.random(n) < 0.75, human, rng.integers(0, 2, n))
                    for _ in range(2))
            low, high = stats.bootstrap_ci(fn, (a * 2 + b) * 2 + human, n_resamples=1000,
                                           random_state=r, vectorized=True)
            boot += not low <= 0 <= high
            swap += swap_pvalue(fn, a, b, human, 2, r, 1000) < 0.05
        rates = [boot / reps, swap / reps]
        print(f"{n:>4}  " + rate_cells(rates, reps))
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
