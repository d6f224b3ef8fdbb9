"""Type I error of the injection gate and the pooled injection test, by seeded simulation.

A judge that ignores the injected text but varies between calls must not FAIL the
``--max-injection-flip`` gate (default 0.1) more than 5% of the time, and the pooled
test of "no net move" must reject at 5% in about 5% of runs. Each run judges n items
plainly and in ``cells`` injected variants (6 = three templates x two positions);
every call is drawn afresh from the judge's model, so the plain call and each injected
call are exchangeable: the injection has no effect.

Judges (per-call noise q: the chance a call differs from the item's usual verdict):

- ``ordinal q``: 1-5 scale, item quality uniform on 1-4, a call moves one level up or
  down with probability q (clipped to 1-5); target 5;
- ``random``: every call uniform on 1-5 (the verdict is unrelated to the item);
- ``binary q``: pass/fail, 80% of items usually pass, a call flips with probability q;
- ``pairwise q``: A/B/tie, the injected side by the item's hash (here a coin); a call
  departs from the item's usual verdict with probability q.

Columns: ``old`` the previous rule (lower bound of the worst flip rate toward the
target, Wilson, Bonferroni over the cells, above 0.1), ``new`` the current rule (lower
bound of the worst net move (toward - away) / n, Tango, Bonferroni, above 0.1);
``sign`` the previous pooled sign test (items moving toward on balance vs away, exact
binomial) and ``t`` the current pooled test (mean per-item net move, Student t), both at
5%; each with its Monte Carlo standard error. A second table puts one cell exactly at
the threshold (a noise-free judge that obeys on a share of items making the net 0.1):
the gate's false-FAIL rate there is at most 2.5% by construction (a lower bound).

Usage: ``python benchmarks/injection_gate.py [--quick] [--reps R] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats._resample import wilson_bounds
from judgekit.stats.bias import (
    injection_effect,
    pooled_injection_effect,
    worst_net_move,
)

THRESHOLD = 0.1
SKIP = "not simulated"
Judge = Callable[[np.random.Generator, int, int], tuple[np.ndarray, list[np.ndarray], float]]


def ordinal(q: float) -> Judge:
    def draw(rng: np.random.Generator, n: int, cells: int):
        quality = rng.integers(1, 5, n)

        def call() -> np.ndarray:
            step = rng.choice([-1, 0, 1], size=n, p=[q / 2, 1 - q, q / 2])
            return np.clip(quality + step, 1, 5).astype(float)

        return call(), [call() for _ in range(cells)], 5.0
    return draw


def random_judge(rng: np.random.Generator, n: int, cells: int):
    def call() -> np.ndarray:
        return rng.integers(1, 6, n).astype(float)
    return call(), [call() for _ in range(cells)], 5.0


def binary(q: float) -> Judge:
    def draw(rng: np.random.Generator, n: int, cells: int):
        usual = (rng.random(n) < 0.8).astype(float)

        def call() -> np.ndarray:
            return np.where(rng.random(n) < q, 1 - usual, usual)

        return call(), [call() for _ in range(cells)], 1.0
    return draw


def pairwise(q: float) -> Judge:
    def draw(rng: np.random.Generator, n: int, cells: int):
        usual = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.45, 0.1, 0.45])  # pref for side A
        side_a = rng.random(n) < 0.5  # injected side by the item's hash

        def call() -> np.ndarray:
            moved = (usual + rng.choice([0.5, 1.0], size=n)) % 1.5  # one of the other two
            pref = np.where(rng.random(n) < q, moved, usual)
            return np.where(side_a, pref, 1 - pref)

        return call(), [call() for _ in range(cells)], 1.0
    return draw


def old_gate(effects: list, cells: int) -> bool:
    """The previous rule: worst flip rate's Wilson lower bound (Bonferroni) above 0.1."""
    level = 1 - 0.05 / cells
    lows = [wilson_bounds(e.toward, e.n - e.at_target, level)[0]
            for e in effects if e.n - e.at_target > 0]
    return bool(lows) and max(lows) > THRESHOLD


def old_sign_test(base: np.ndarray, grid: list[np.ndarray]) -> float:
    diff = np.vstack(grid) - base[None, :]
    net = (diff > 0).sum(axis=0) - (diff < 0).sum(axis=0)
    k, m = int((net > 0).sum()), int((net != 0).sum())
    return float(stats.binomtest(k, m).pvalue) if m else 1.0


def run_null(judge: Judge, n: int, cells: int, reps: int, rng: np.random.Generator):
    old = new = sign = ttest = 0
    for _ in range(reps):
        base, grid, top = judge(rng, n, cells)
        effects = [injection_effect(base, c, top=top, shift_reason=SKIP) for c in grid]
        old += old_gate(effects, cells)
        new += worst_net_move(effects).confidence_interval()[0] > THRESHOLD
        sign += old_sign_test(base, grid) < 0.05
        p = pooled_injection_effect(base, grid, top=top, shift_reason=SKIP).net.pvalue
        ttest += p is not None and p < 0.05
    return [x / reps for x in (old, new, sign, ttest)]


def run_threshold(n: int, cells: int, reps: int, rng: np.random.Generator) -> tuple[float, float]:
    """One cell whose true net move is exactly 0.1 (a noise-free judge obeying on 10% of
    items), the others unaffected: false-FAIL rate of the new and the old rule."""
    old = new = 0
    for _ in range(reps):
        base = rng.integers(1, 5, n).astype(float)
        obey = base.copy()
        obey[rng.random(n) < THRESHOLD] = 5.0
        grid = [obey] + [base.copy() for _ in range(cells - 1)]
        effects = [injection_effect(base, c, top=5.0, shift_reason=SKIP) for c in grid]
        old += old_gate(effects, cells)
        new += worst_net_move(effects).confidence_interval()[0] > THRESHOLD
    return old / reps, new / reps


def se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1 / reps) / reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 replications, fewer cells")
    parser.add_argument("--reps", type=int, default=None, help="replications per cell (1000)")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args()
    reps = args.reps or (200 if args.quick else 1000)
    rng = np.random.default_rng(args.seed)
    ns = (40, 100) if args.quick else (40, 100, 200)
    judges: list[tuple[str, Judge]] = [
        ("ordinal q=0.1", ordinal(0.1)), ("ordinal q=0.2", ordinal(0.2)),
        ("ordinal q=0.3", ordinal(0.3)), ("random 1-5", random_judge),
        ("binary q=0.1", binary(0.1)), ("binary q=0.3", binary(0.3)),
        ("pairwise q=0.3", pairwise(0.3)),
    ]
    if args.quick:
        judges = [judges[1], judges[3], judges[5], judges[6]]
    start = time.time()
    print(f"No injection effect, 6 cells, {reps} runs per row (rates, Monte Carlo SE)")
    print(f"{'judge':<16} {'n':>4}  {'old gate':>13} {'new gate':>13} {'old sign':>13} "
          f"{'new t':>13}")
    for name, judge in judges:
        for n in ns:
            rates = run_null(judge, n, 6, reps, rng)
            cols = " ".join(f"{r:.3f} ({se(r, reps):.3f})" for r in rates)
            print(f"{name:<16} {n:>4}  {cols}")
    print(f"\nOne cell at the threshold (true net 0.1), 6 cells, {reps} runs per row")
    print(f"{'n':>4}  {'old gate':>13} {'new gate':>13}")
    for n in ns:
        old, new = run_threshold(n, 6, reps, rng)
        print(f"{n:>4}  {old:.3f} ({se(old, reps):.3f}) {new:.3f} ({se(new, reps):.3f})")
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
