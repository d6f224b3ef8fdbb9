"""How often the human-parity sentence claims a difference for a judge that is one more annotator.

Four raters (the judge and three annotators) label each item alike: the true label with
probability 0.7, else a coin. The judge is then exchangeable with the annotators, so
"the judge agrees with people more closely / less well than they agree with each other"
is false. Columns, with Monte Carlo SE: ``bootstrap`` the share of percentile bootstrap
intervals of the agreement gap excluding 0 (the previous rule), ``randomization`` the
share of randomization-test p-values under 0.05 (which rater is the judge drawn per
item), ``sentence`` the share where the report now claims a difference (both).

Usage: ``python benchmarks/parity_gap.py [--quick] [--reps R] [--seed S]``.
"""

from __future__ import annotations

import time

import numpy as np
from _common import on_path, rate_cells, simulation_parser

on_path()

from judgekit.stats.parity import agreement_gap, agreement_gap_pvalue  # noqa: E402


def main() -> None:
    parser = simulation_parser(__doc__, "100 replications, n = 50", "replications per row (400)")
    args = parser.parse_args()
    reps = args.reps or (100 if args.quick else 400)
    rng = np.random.default_rng(args.seed)
    start = time.time()
    print(f"Exchangeable judge, {reps} runs per row (rate, Monte Carlo SE)")
    print(f"{'n':>4}  {'bootstrap':>13} {'randomization':>13} {'sentence':>13}")
    for n in ((50,) if args.quick else (30, 50, 100)):
        boot = perm = both = 0
        for r in range(reps):
            truth = rng.integers(0, 2, n)

            def rate(truth: np.ndarray = truth) -> list[int]:
                size = truth.size
                return np.where(rng.random(size) < 0.7, truth, rng.integers(0, 2, size)).tolist()

            judge, people = rate(), {f"h{i}": rate() for i in range(3)}
            gap = agreement_gap(judge, people, n_resamples=1000, random_state=r)
            p = agreement_gap_pvalue(judge, people, n_draws=1000, random_state=r)
            excludes = not gap.ci_low <= 0 <= gap.ci_high
            boot += excludes
            perm += p < 0.05
            both += excludes and p < 0.05
        rates = [x / reps for x in (boot, perm, both)]
        print(f"{n:>4}  " + rate_cells(rates, reps))
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
