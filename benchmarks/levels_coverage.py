"""Coverage of the per-group and system-level intervals (``judgekit.stats.levels``).

Run: ``python benchmarks/levels_coverage.py [--quick] [--reps N] [--resamples B] [--seed S]``.

A SummEval-shaped population: S systems with fixed qualities, documents drawn at random,
each with every system's output; a document effect shared by all its outputs. Two scales:

- ``ordinal``: the human score is the mean of three experts' 1-5 ratings, the judge's score
  a reading of the same latent quality with its own noise, in half points (1-5);
- ``binary``: pass-rate style, the human label is the majority of three experts' pass/fail,
  the judge's a pass/fail of its own noisy reading.

Agreement designs: ``strong`` (little judge noise, no judge bias: the judge orders systems as
people do), ``weak`` (much judge noise and a fixed per-system judge bias, so its population
order differs from people's), ``near-equal`` (two pairs of systems 0.02 apart in quality, a
moderate judge with a small bias), and, for 16 systems, ``flat`` (systems close together and a
judge that barely separates them, though in people's order: the case that needs simultaneous
rather than marginal pairwise intervals).

**Targets.** System level: the figure (Kendall tau, Spearman, Pearson, pairwise accuracy) at
the systems' *population* mean scores, computed exactly from the model (normal integrals,
no sampling), for these fixed systems; the design asserts that no two population means tie.
Per group: the population mean of the within-document Spearman over documents where both
sides vary, estimated on ``--population`` documents (its Monte Carlo error is printed).

Each replication draws D documents, computes the figures with their intervals over documents,
and counts whether the interval holds the target. "basic" rows are the interval judgekit used
before (the basic bootstrap of the figure) and "marginal" rows the projection with marginal
instead of simultaneous pairwise intervals, both kept for comparison. Coverage is printed with its
Monte Carlo standard error; cells below 0.93 are marked with ``*``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats._resample import few_clusters_factor, percentile_interval, z_critical
from judgekit.stats.levels import _system_figures, group_level, system_level
from judgekit.stats.system_intervals import PairSigns, kendall_bounds, resampled_means

DOC_SD, ITEM_SD, EXPERT_SD = 0.6, 0.7, 0.6
#: (judge noise sd, sd of the judge's fixed per-system bias) of each agreement design
AGREEMENT = {"strong": (0.5, 0.0), "weak": (1.4, 0.35), "near-equal": (0.9, 0.1),
             "flat": (4.0, 0.0)}
FIGURES = ("kendall_tau", "spearman", "pearson", "pairwise_accuracy")


def qualities(n_sys: int, design: str) -> np.ndarray:
    quality = np.linspace(-1.0, 1.0, n_sys) * (0.3 if design == "flat" else 1.0)
    if design == "near-equal":  # two pairs of systems 0.02 apart
        quality[1] = quality[0] + 0.02
        quality[n_sys // 2 + 1] = quality[n_sys // 2] + 0.02
    return quality


def draw(rng: np.random.Generator, n_docs: int, quality: np.ndarray, bias: np.ndarray,
         noise: float, scale: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One sample of documents: judge score, human score, system id and document id per item."""
    s = quality.size
    doc = np.repeat(np.arange(n_docs), s)
    system = np.tile(np.arange(s), n_docs)
    latent = (3.0 + quality[system] + rng.normal(0, DOC_SD, n_docs)[doc]
              + rng.normal(0, ITEM_SD, doc.size))
    expert = latent[:, None] + rng.normal(0, EXPERT_SD, (doc.size, 3))
    reading = latent + bias[system] + rng.normal(0, noise, doc.size)
    if scale == "binary":
        human = ((expert > 3.0).sum(axis=1) >= 2).astype(float)
        judge = (reading > 3.0).astype(float)
    else:
        human = np.clip(np.rint(expert), 1, 5).mean(axis=1)
        judge = np.clip(np.rint(2 * reading) / 2, 1, 5)
    return judge, human, system, doc


def _rounded_mean(mu: np.ndarray, sd: float, step: float) -> np.ndarray:
    """E[clip(round(Z / step) * step, 1, 5)] for Z ~ N(mu, sd)."""
    levels = np.arange(1.0, 5.0 + step / 2, step)
    upper = np.r_[levels[:-1] + step / 2, np.inf]
    lower = np.r_[-np.inf, levels[1:] - step / 2]
    prob = sps.norm.cdf((upper[None, :] - mu[:, None]) / sd) - sps.norm.cdf(
        (lower[None, :] - mu[:, None]) / sd)
    return np.asarray(prob @ levels)


def population_means(quality: np.ndarray, bias: np.ndarray, noise: float, scale: str
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-system population means of the judge's and people's scores."""
    latent_sd = np.hypot(DOC_SD, ITEM_SD)
    judge_sd = np.hypot(latent_sd, noise)
    if scale == "binary":
        judge = sps.norm.cdf((quality + bias) / judge_sd)
        nodes, weights = np.polynomial.hermite_e.hermegauss(80)
        latent = quality[:, None] + latent_sd * nodes[None, :]  # latent - 3
        p = sps.norm.cdf(latent / EXPERT_SD)
        majority = p**3 + 3 * p**2 * (1 - p)
        human = majority @ weights / weights.sum()
        return np.asarray(judge), np.asarray(human)
    human = _rounded_mean(3.0 + quality, np.hypot(latent_sd, EXPERT_SD), 1.0)
    judge = _rounded_mean(3.0 + quality + bias, judge_sd, 0.5)
    return judge, human


def targets(quality: np.ndarray, bias: np.ndarray, noise: float, scale: str, n_pop: int,
            seed: int) -> tuple[dict[str, float], float]:
    """The population value of every figure, and the Monte Carlo SE of the per-group one."""
    mean_j, mean_h = population_means(quality, bias, noise, scale)
    for means in (mean_j, mean_h):
        gaps = np.abs(means[:, None] - means[None, :])[np.triu_indices(means.size, 1)]
        assert gaps.min() > 1e-6, "population means tie: the target would be ill-defined"
    figures = _system_figures(mean_j[None, :], mean_h[None, :])
    out = {name: float(figures[name][0]) for name in FIGURES}
    rng = np.random.default_rng(seed)
    judge, human, _, doc = draw(rng, n_pop, quality, bias, noise, scale)
    grouped = group_level(judge, human, doc.tolist(), n_resamples=2)
    values = grouped.per_group["spearman"]
    out["per-group spearman"] = float(values.mean())
    return out, float(values.std(ddof=1) / np.sqrt(values.size))


def comparisons(judge: np.ndarray, human: np.ndarray, system: np.ndarray, doc: np.ndarray,
                estimate: float, resamples: int, seed: int) -> dict[str, tuple[float, float]]:
    """Two intervals for Kendall's tau that judgekit does not use, for comparison: the basic
    bootstrap of tau over documents (the interval used before, clipped to [-1, 1]) and the
    projection with *marginal* instead of simultaneous pairwise intervals."""
    n_sys, n_docs = int(system.max()) + 1, int(doc.max()) + 1
    cell = doc * n_sys + system
    shape = (n_docs, n_sys)
    sum_j = np.bincount(cell, judge, n_docs * n_sys).reshape(shape)
    sum_h = np.bincount(cell, human, n_docs * n_sys).reshape(shape)
    count = np.bincount(cell, minlength=n_docs * n_sys).reshape(shape).astype(float)
    rep_j, rep_h = resampled_means(sum_j, sum_h, count, resamples, np.random.default_rng(seed))
    spread = percentile_interval(_system_figures(rep_j, rep_h)["kendall_tau"], 0.95)
    basic = ((float("nan"), float("nan")) if spread.reason  # the old code refused it
             else (max(-1.0, 2 * estimate - spread[1]), min(1.0, 2 * estimate - spread[0])))
    first, second = np.triu_indices(n_sys, 1)
    signs = []
    for means, reps in ((sum_j.sum(0) / count.sum(0), rep_j), (sum_h.sum(0) / count.sum(0), rep_h)):
        diff = np.round(means[first] - means[second], 9)
        sd = np.std(reps[:, first] - reps[:, second], axis=0, ddof=1)
        settled = np.abs(diff) > z_critical(0.95) * few_clusters_factor(n_docs, 0.95) * sd
        signs.append(np.where(settled, np.sign(diff), 0).astype(np.int64))
    marginal = kendall_bounds(PairSigns(signs[0], signs[1], float("nan"), 0, 1))
    return {"kendall (basic)": basic, "kendall (marginal)": marginal}


def designs(quick: bool) -> list[tuple[str, str, int, int]]:
    """(scale, agreement, systems, documents) cells."""
    sizes = [5, 12] if quick else [5, 8, 12, 16]
    docs = [20, 100] if quick else [20, 50, 100]
    agreements = ["strong", "near-equal"] if quick else ["strong", "weak", "near-equal"]
    scales = ["ordinal"] if quick else ["ordinal", "binary"]
    cells = [(sc, ag, s, d) for sc in scales for ag in agreements for s in sizes for d in docs]
    if not quick:  # close systems and a judge that barely separates them, in people's order
        cells += [(sc, "flat", 16, d) for sc in scales for d in (50, 100)]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 8 cells, 10 replications, 200 resamples")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--population", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--scale", choices=["ordinal", "binary"], action="append",
                        help="only these scales (repeatable)")
    parser.add_argument("--systems", type=int, action="append", help="only these system counts")
    parser.add_argument("--agreement", choices=list(AGREEMENT), action="append",
                        help="only these agreement designs (repeatable)")
    parser.add_argument("--no-basic", action="store_true", help="skip the old basic interval")
    args = parser.parse_args()
    reps = 10 if args.quick else args.reps
    resamples = 200 if args.quick else args.resamples
    n_pop = 2000 if args.quick else args.population
    print(f"{reps} replications, {resamples} resamples, seed {args.seed}; per-group target "
          f"from {n_pop} documents\n")
    print("| scale | agreement | systems | documents | figure | target | coverage | MC SE "
          "| refused | mean width |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    low_cells: list[str] = []
    summary: dict[str, list[tuple[float, float]]] = {}
    for cell_no, (scale, agreement, n_sys, n_docs) in enumerate(designs(args.quick)):
        if ((args.scale and scale not in args.scale)
                or (args.systems and n_sys not in args.systems)
                or (args.agreement and agreement not in args.agreement)):
            continue
        noise, bias_sd = AGREEMENT[agreement]
        quality = qualities(n_sys, agreement)
        bias = np.random.default_rng(args.seed + n_sys).normal(0, bias_sd, n_sys)
        truth, truth_se = targets(quality, bias, noise, scale, n_pop, args.seed + 7 * n_sys)
        names = [*FIGURES, "per-group spearman"] + (
            [] if args.no_basic else ["kendall (basic)", "kendall (marginal)"])
        truth["kendall (basic)"] = truth["kendall (marginal)"] = truth["kendall_tau"]
        hits = dict.fromkeys(names, 0)
        refused = dict.fromkeys(names, 0)
        widths: dict[str, list[float]] = {k: [] for k in names}
        rng = np.random.default_rng([args.seed, cell_no])
        for rep in range(reps):
            judge, human, system, doc = draw(rng, n_docs, quality, bias, noise, scale)
            grouped = group_level(judge, human, doc.tolist(), n_resamples=resamples,
                                  random_state=rep)
            levels = system_level(judge, human, [f"s{x:02d}" for x in system], doc.tolist(),
                                  n_resamples=resamples, random_state=rep)
            bounds = {k: (levels.figures[k].ci_low, levels.figures[k].ci_high) for k in FIGURES}
            bounds["per-group spearman"] = (grouped.figures["spearman"].ci_low,
                                            grouped.figures["spearman"].ci_high)
            if not args.no_basic:
                bounds.update(comparisons(
                    judge, human, system, doc, levels.figures["kendall_tau"].statistic,
                    resamples, rep))
            for name in names:
                low, high = bounds[name]
                if not (np.isfinite(low) and np.isfinite(high)):
                    refused[name] += 1
                    continue
                hits[name] += low - 1e-9 <= truth[name] <= high + 1e-9
                widths[name].append(high - low)
        for name in names:
            shown = reps - refused[name]
            cover = hits[name] / shown if shown else float("nan")
            se = np.sqrt(cover * (1 - cover) / shown) if shown else float("nan")
            width = float(np.mean(widths[name])) if widths[name] else float("nan")
            flag = "*" if cover < 0.93 else ""
            target = f"{truth[name]:.3f}" + (f" ±{truth_se:.3f}" if "group" in name else "")
            row = (f"| {scale} | {agreement} | {n_sys} | {n_docs} | {name} | {target} | "
                   f"{cover:.3f}{flag} | {se:.3f} | {refused[name] / reps:.3f} | {width:.3f} |")
            print(row, flush=True)
            summary.setdefault(name, []).append((cover, width))
            if flag and not name.startswith("kendall ("):
                low_cells.append(row)
    print("\n| figure | cells | lowest coverage | mean coverage | mean width |")
    print("|---|---|---|---|---|")
    for name, cells in summary.items():
        covers = [c for c, _ in cells if np.isfinite(c)]
        widths_all = [w for _, w in cells if np.isfinite(w)]
        print(f"| {name} | {len(cells)} | {min(covers):.3f} | {np.mean(covers):.3f} | "
              f"{np.mean(widths_all):.3f} |")
    print(f"\ncells below 0.93 (new intervals): {len(low_cells)}")
    for row in low_cells:
        print(row)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
