"""Type I error of the self-preference gate and its p-value at tiny n, by seeded simulation.

An unbiased judge (its own-family win on a pair is the people's verdict 60% of the time,
otherwise a coin) is probed on n pairs with one own-family response. Columns, each with its
Monte Carlo SE:

- ``old FAIL``: the previous gate, the bootstrap interval's lower bound above
  ``--max-self-preference`` 0.1 alone;
- ``new FAIL``: that and the figure's own exact sign-flip test significant at 5%;
- ``boot p<.05``: the previous p-value, the two-sided bootstrap p (floored at 2/(B+1));
- ``exact p<.05``: the current one, the sign-flip randomization test (exact to 16 non-zero
  pairs).

Usage: ``python benchmarks/small_n_tests.py [--quick] [--reps R] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats._bias_self import self_preference_pairwise
from judgekit.stats._resample import bootstrap_pvalue

THRESHOLD = 0.1
B = 1000


def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    human = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.45, 0.1, 0.45])
    judge = np.where(rng.random(n) < 0.6, human, rng.choice([0.0, 1.0], size=n))
    return judge, human


def old_pvalue(d: np.ndarray, rng: np.random.Generator) -> float:
    idx = rng.integers(0, d.size, size=(B, d.size))
    return bootstrap_pvalue(d[idx].mean(axis=1))


def se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1 / reps) / reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 replications")
    parser.add_argument("--reps", type=int, default=None, help="replications per row (2000)")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args()
    reps = args.reps or (300 if args.quick else 2000)
    rng = np.random.default_rng(args.seed)
    start = time.time()
    print(f"Unbiased judge, {reps} runs per row (rate, Monte Carlo SE)")
    print(f"{'pairs':>5}  {'old FAIL':>13} {'new FAIL':>13} {'boot p<.05':>13} "
          f"{'exact p<.05':>13}")
    for n in (5, 8, 12, 20, 40):
        old_fail = new_fail = old_sig = new_sig = 0
        for r in range(reps):
            judge, human = draw(rng, n)
            gap = self_preference_pairwise(judge, human, n_resamples=B,
                                           random_state=r)["self_preference"]
            crossed = math.isfinite(gap.ci_low) and gap.ci_low > THRESHOLD
            exact = gap.pvalue if gap.pvalue is not None else 1.0
            old_fail += crossed
            new_fail += crossed and exact < 0.05
            old_sig += old_pvalue(judge - human, rng) < 0.05
            new_sig += exact < 0.05
        rates = [x / reps for x in (old_fail, new_fail, old_sig, new_sig)]
        print(f"{n:>5}  " + " ".join(f"{x:.3f} ({se(x, reps):.3f})" for x in rates))
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
