"""Coverage of the per-group and system-level intervals (``judgekit.stats.levels``).

Run: ``python benchmarks/levels_coverage.py [--quick] [--reps N] [--resamples B]``.

A SummEval-shaped population: S systems with fixed qualities, documents drawn at random,
each with every system's summary; a document effect shared by all its summaries; the human
score is the mean of three experts' 1-5 ratings, the judge's score a noisier reading of the
same latent quality in half points. The population values are computed once on a large
draw of documents (``--population`` documents): the mean within-document Spearman over
documents where both sides vary, the Kendall tau-b of per-system means, and the pairwise
system accuracy. Each replication draws D documents, computes the figures with their
bootstrap-over-documents intervals, and counts whether the interval holds the population
value (and how often it was refused). Prints one row per figure and design.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats.levels import group_level, system_level


def draw(rng: np.random.Generator, n_docs: int, quality: np.ndarray, judge_noise: float,
         judge_bias: np.ndarray | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One sample of documents: judge score, human mean, system id and document id per item.

    ``judge_bias`` (one fixed shift per system) makes the judge favour some systems, so its
    system order differs from people's in the population too."""
    s = quality.size
    doc = np.repeat(np.arange(n_docs), s)
    system = np.tile(np.arange(s), n_docs)
    latent = 3.0 + quality[system] + rng.normal(0, 0.6, n_docs)[doc] + rng.normal(0, 0.7, doc.size)
    experts = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.6, (doc.size, 3))), 1, 5)
    shift = 0.0 if judge_bias is None else judge_bias[system]
    judge = np.clip(np.rint(2 * (latent + shift + rng.normal(0, judge_noise, doc.size))) / 2, 1, 5)
    return judge, experts.mean(axis=1), system, doc


def population(quality: np.ndarray, judge_noise: float, bias: np.ndarray, n_docs: int, seed: int
               ) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    judge, human, system, doc = draw(rng, n_docs, quality, judge_noise, bias)
    grouped = group_level(judge, human, doc.tolist(), n_resamples=2)
    levels = system_level(judge, human, [str(x) for x in system], doc.tolist(), n_resamples=2)
    return {
        "per-group spearman": grouped.figures["spearman"].statistic,
        "system kendall_tau": levels.figures["kendall_tau"].statistic,
        "system pairwise_accuracy": levels.figures["pairwise_accuracy"].statistic,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 replications: a smoke run")
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--population", type=int, default=20000)
    args = parser.parse_args()
    reps = 20 if args.quick else args.reps
    designs = [
        # (systems, spread of system quality, judge noise, sd of the judge's per-system bias,
        #  documents per sample); bias 0: the judge orders systems as people do
        (12, 1.0, 0.9, 0.0, 30),
        (12, 1.0, 0.9, 0.0, 100),
        (12, 1.0, 0.9, 0.3, 30),
        (12, 1.0, 0.9, 0.3, 100),
        (8, 0.4, 1.2, 0.2, 50),
        (8, 0.4, 1.2, 0.2, 200),
    ]
    print(f"{reps} replications, {args.resamples} resamples, population of {args.population} "
          "documents\n")
    print("| figure | systems | quality spread | judge noise | judge bias | documents | "
          "population | coverage | refused | mean width |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for s, spread, noise, bias_sd, n_docs in designs:
        quality = np.linspace(-spread, spread, s)
        bias = np.random.default_rng(99).normal(0, bias_sd, s)
        truth = population(quality, noise, bias, args.population, seed=1000 + s)
        hits = {k: 0 for k in truth}
        refused = {k: 0 for k in truth}
        widths: dict[str, list[float]] = {k: [] for k in truth}
        rng = np.random.default_rng(s * 7919 + n_docs)
        for rep in range(reps):
            judge, human, system, doc = draw(rng, n_docs, quality, noise, bias)
            grouped = group_level(judge, human, doc.tolist(), n_resamples=args.resamples,
                                  random_state=rep)
            levels = system_level(judge, human, [str(x) for x in system], doc.tolist(),
                                  n_resamples=args.resamples, random_state=rep)
            figures = {
                "per-group spearman": grouped.figures["spearman"],
                "system kendall_tau": levels.figures["kendall_tau"],
                "system pairwise_accuracy": levels.figures["pairwise_accuracy"],
            }
            for name, fig in figures.items():
                if not np.isfinite(fig.ci_low):
                    refused[name] += 1
                    continue
                hits[name] += fig.ci_low <= truth[name] <= fig.ci_high
                widths[name].append(fig.ci_high - fig.ci_low)
        for name in truth:
            shown = reps - refused[name]
            coverage = hits[name] / shown if shown else float("nan")
            width = float(np.mean(widths[name])) if widths[name] else float("nan")
            print(f"| {name} | {s} | {spread} | {noise} | {bias_sd} | {n_docs} | "
                  f"{truth[name]:.3f} | {coverage:.3f} | {refused[name] / reps:.3f} | "
                  f"{width:.3f} |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
