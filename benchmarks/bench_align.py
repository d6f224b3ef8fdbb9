"""The winner's curse that ``judgekit align`` guards against, by seeded simulation.

Run: ``python benchmarks/bench_align.py [--quick] [--runs N] [--candidates K]
[--dev N] [--test N] [--resamples B] [--seed S] [--cluster-size M]``.

Each run draws a population design: human labels (pass with probability 0.6) and
``K`` candidate judges whose true accuracies are spread over 0.74..0.82 (independent
errors), plus a baseline at 0.72. The candidates are scored on a fresh dev sample,
the best by dev kappa is picked (as ``align`` does), and it and the baseline are
judged on a fresh test sample through ``align``'s own functions
(:func:`judgekit.align.evaluate.score_part` and :func:`paired_difference`, the
intervals the output prints). The table shows, over the runs:

- the bias of the chosen candidate's dev kappa and test kappa (estimate minus its
  true kappa): dev is biased upward (it was selected for being high), test is not;
- the coverage of the test intervals (kappa, agreement, the paired kappa difference)
  for the chosen candidate's true values, which should land in 93-97%.

``--cluster-size M`` groups items in clusters of M whose every judge's accuracy moves by a
shared shift (uniform in +/-0.15, mean 0): the intervals then resample whole clusters, as
``align`` does for items sharing a cluster or prompt. The shift has mean 0 and is independent
of the human label, so the true values below are unchanged.

True kappa of a judge with accuracy ``p`` on a prevalence ``pi`` (symmetric errors) is
``(p - pe) / (1 - pe)``, ``pe = pi q + (1 - pi)(1 - q)``, ``q = pi p + (1 - pi)(1 - p)``.
The default (2000 runs) takes about a minute; ``--quick`` (400) a few seconds.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.align.evaluate import paired_difference, score_part
from judgekit.report.model import Stat
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.types import Item, Scale, ScaleLevel

PREVALENCE = 0.6
BASELINE_ACCURACY = 0.72
SCALE = Scale("binary", (ScaleLevel("pass", "p"), ScaleLevel("fail", "f")))


def true_kappa(p: float, pi: float = PREVALENCE) -> float:
    q = pi * p + (1 - pi) * (1 - p)
    pe = pi * q + (1 - pi) * (1 - q)
    return (p - pe) / (1 - pe)


def kappa_of(judge: np.ndarray, human: np.ndarray) -> float:
    """Cohen's kappa of boolean pass arrays (rows: candidates), vectorised over the first axis."""
    po = (judge == human).mean(axis=-1)
    qj, qh = judge.mean(axis=-1), human.mean(axis=-1)
    pe = qj * qh + (1 - qj) * (1 - qh)
    return (po - pe) / (1 - pe)


def draw(rng: np.random.Generator, accuracies: np.ndarray, n: int,
         cluster_size: int = 1) -> tuple[np.ndarray, ...]:
    """Human labels and each judge's verdicts; with clusters, items of one cluster share a
    difficulty shift (uniform in +/-0.15, mean 0) of every judge's accuracy."""
    human = rng.random(n) < PREVALENCE
    shift = rng.uniform(-0.15, 0.15, -(-n // cluster_size)) if cluster_size > 1 else np.zeros(1)
    of_item = np.arange(n) // cluster_size if cluster_size > 1 else np.zeros(n, dtype=int)
    chance = np.clip(accuracies[:, None] + shift[of_item][None, :], 0, 1)
    right = rng.random((len(accuracies), n)) < chance
    return human, np.where(right, human, ~human)


def one_run(rng: np.random.Generator, accuracies: np.ndarray, n_dev: int, n_test: int,
            spec: IntervalSpec, cluster_size: int = 1) -> dict[str, float]:
    human, judged = draw(rng, accuracies, n_dev, cluster_size)
    dev = kappa_of(judged, human)
    best = int(np.nanargmax(dev))
    chosen = np.array([BASELINE_ACCURACY, accuracies[best]])
    human_t, judged_t = draw(rng, chosen, n_test, cluster_size)
    keys = [("sim", str(i)) for i in range(n_test)]
    items = {k: Item(k[1], f"q{k[1]}", cluster=f"c{i // cluster_size}" if cluster_size > 1
                     else None) for i, k in enumerate(keys)}
    label = {True: "pass", False: "fail"}
    reference = {k: label[bool(h)] for k, h in zip(keys, human_t, strict=True)}
    base = {k: label[bool(v)] for k, v in zip(keys, judged_t[0], strict=True)}
    cand = {k: label[bool(v)] for k, v in zip(keys, judged_t[1], strict=True)}
    score = score_part(cand, {}, reference, keys, items, SCALE, spec)
    diff = paired_difference(base, cand, reference, keys, items, SCALE, spec)
    kappa_true = true_kappa(float(accuracies[best]))
    diff_true = kappa_true - true_kappa(BASELINE_ACCURACY)

    def covers(stat: Stat, value: float) -> float:
        low, high = stat.ci_low, stat.ci_high
        return float(math.isfinite(low) and low <= value <= high)

    return {
        "dev_bias": float(dev[best]) - kappa_true,
        "test_bias": score.primary.statistic - kappa_true,
        "kappa_cover": covers(score.primary, kappa_true),
        "agreement_cover": covers(score.agreement, float(accuracies[best])),
        "difference_cover": covers(diff.difference, diff_true),
        "shown": float(diff.improvement_shown),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="400 runs (a smoke run)")
    parser.add_argument("--runs", type=int, default=None, help="runs [default: 2000]")
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--dev", type=int, default=100)
    parser.add_argument("--test", type=int, default=150)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--cluster-size", type=int, default=1,
                        help="items per cluster sharing a difficulty shift (1: independent)")
    args = parser.parse_args(argv)
    args.runs = args.runs or (400 if args.quick else 2000)
    rng = np.random.default_rng(args.seed)
    accuracies = np.linspace(0.74, 0.82, args.candidates)
    spec = IntervalSpec(n_resamples=args.resamples)
    started = time.perf_counter()
    rows = [one_run(rng, accuracies, args.dev, args.test, spec, args.cluster_size)
            for _ in range(args.runs)]
    elapsed = time.perf_counter() - started
    print(f"winner's curse: {args.runs} runs, {args.candidates} candidates (true accuracy "
          f"0.74..0.82, kappa {true_kappa(0.74):.3f}..{true_kappa(0.82):.3f}), dev n={args.dev}, "
          f"test n={args.test}, clusters of {args.cluster_size}, {args.resamples} resamples, "
          f"seed {args.seed} ({elapsed:.0f}s)")
    print(f"{'figure':<44} {'mean':>8} {'MC s.e.':>8}  target")
    targets = {"dev_bias": "> 0 (selected: optimistic)", "test_bias": "about 0",
               "kappa_cover": "0.93-0.97", "agreement_cover": "0.93-0.97",
               "difference_cover": "0.93-0.97", "shown": "(power)"}
    names = {"dev_bias": "dev kappa of the chosen - its true kappa",
             "test_bias": "test kappa of the chosen - its true kappa",
             "kappa_cover": "test kappa interval covers the true kappa",
             "agreement_cover": "test agreement interval covers the true one",
             "difference_cover": "test difference interval covers the true one",
             "shown": "improvement shown over the baseline"}
    for key, name in names.items():
        values = np.array([row[key] for row in rows])
        se = values.std(ddof=1) / math.sqrt(len(values))
        print(f"{name:<44} {values.mean():>8.3f} {se:>8.3f}  {targets[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
