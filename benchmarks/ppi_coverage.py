"""Coverage of the estimate's intervals: PPI++, labels only, judge only (and Rogan-Gladen).

For each configuration a population of N = 10,000 judged items is drawn once
(human outcome Y, judge verdict f), then labeled samples of n items are drawn
again and again; each replication runs the same batched numerics the CLI uses
(:mod:`judgekit.stats._ppi_core`) and checks whether the interval holds the
population's true mean of Y. A 95% interval should hold it 93-97% of the time
(the Monte Carlo standard error at 1,000 replications is 0.7 points).

Grid: judge quality (useless = a coin, poor, good, excellent), n in {50, 100,
200, 500}, binary (pass rate) and ordinal (mean score on 1-5), three labeling
designs:

- ``srs``: a simple random sample of items;
- ``clusters``: prompts of 5 items that share a prompt effect; whole prompts are
  labeled (n/5 of them), the estimate uses the cluster-robust variance; the
  column ``ppi_naive`` is PPI++ with the independent-items variance, to show why;
- ``queue``: a non-uniform queue that oversamples the judge's low verdicts 3:1
  (stratified, fixed size), weighted by 1/inclusion probability.

The width ratio PPI++ / labels only shows what the judge buys: about 1 for a
useless judge (never narrower beyond noise), well below 1 for a good one. On a 0/1
outcome PPI++'s interval is Wilson's at its effective sample size, as ``judgekit
estimate`` computes it; ``wald`` is PPI++'s own Wald interval on the same samples.

A second grid (``--grid pass-rates``) draws 0/1 outcomes at pass rates 0.5, 0.8, 0.9,
0.95 and 0.99 (a simple random sample) with judges that copy the human verdict with
probability 0.95 / 0.75 / 0.4 (else a coin), and a noisy judge that flips the human
verdict on 20% of items, and reports, besides coverage, the share of intervals lying
entirely above the truth (Wald's failure mode near 1).

Usage: ``python benchmarks/ppi_coverage.py [--quick] [--grid designs|pass-rates|all]
[--reps R] [--seed S]``. ``--quick`` runs a reduced grid (200 replications) in seconds,
for the smoke test.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats import _ppi_core as core
from judgekit.stats._resample import z_critical

N = 10_000
CLUSTER = 5
QUALITIES = {"useless": 0.0, "poor": 0.4, "good": 0.75, "excellent": 0.95}
LEVEL = 0.95


CHUNK = 100  # replications generated at once (each a fresh population of N items)


@dataclass(frozen=True)
class Populations:
    """``rows`` populations of N items: human outcome y and judge verdict f, (rows, N) each."""

    y: np.ndarray
    f: np.ndarray
    clusters: np.ndarray
    bounds: tuple[float, float]
    binary: bool


def populations(
    kind: str, quality: float, rows: int, rng: np.random.Generator, clustered: bool = False
) -> Populations:
    """Y from a prompt effect; f copies Y with probability ``quality``, else it is noise.

    Noise is a fair coin (binary) or a uniform level (ordinal), so quality 0 is a
    judge that knows nothing. ``clustered``: each prompt effect is shared by 5 items
    (one prompt, five answers); otherwise every item has its own, with the same
    distribution, so every design estimates the same mean.
    """
    shape = (rows, N)
    if clustered:
        prompt = np.repeat(rng.normal(size=(rows, N // CLUSTER)), CLUSTER, axis=1)
    else:
        prompt = rng.normal(size=shape)
    clusters = np.repeat(np.arange(N // CLUSTER), CLUSTER)
    if kind == "binary":
        y = (rng.random(shape) < 1 / (1 + np.exp(-(0.6 + 1.2 * prompt)))).astype(float)
        noise = (rng.random(shape) < 0.5).astype(float)
        bounds = (0.0, 1.0)
    else:
        latent = 3.2 + 1.0 * prompt + rng.normal(scale=0.8, size=shape)
        y = np.clip(np.rint(latent), 1, 5)
        noise = rng.integers(1, 6, size=shape).astype(float)
        bounds = (1.0, 5.0)
    f = np.where(rng.random(shape) < quality, y, noise)
    return Populations(y, f, clusters, bounds, kind == "binary")


def true_mean(kind: str, rng: np.random.Generator) -> float:
    """The mean of Y under the generating process (from 2 million items; MC error ~0.0003)."""
    return float(np.mean([populations(kind, 0.0, 20, rng).y.mean() for _ in range(10)]))


def draw(pop: Populations, design: str, n: int, rng: np.random.Generator):
    """Sampled item indices per population (rows, n) and their weights (None when uniform)."""
    rows = pop.y.shape[0]
    if design == "srs":
        return np.argsort(rng.random((rows, N)), axis=1)[:, :n], None
    if design == "clusters":
        picked = np.argsort(rng.random((rows, N // CLUSTER)), axis=1)[:, : n // CLUSTER]
        return (picked[:, :, None] * CLUSTER + np.arange(CLUSTER)).reshape(rows, -1), None
    # a queue that oversamples the judge's low verdicts 3:1, fixed size per stratum
    low = pop.f <= (0.0 if pop.binary else 2.0)
    n_low = low.sum(axis=1)
    share = 3.0 * n_low.mean() / (3.0 * n_low.mean() + (N - n_low.mean()))
    k_low = round(n * share)
    k_high = n - k_low
    order = np.argsort(np.where(low, 0.0, 1.0) + rng.random((rows, N)), axis=1)
    take_low = order[:, :k_low]
    take_high = np.take_along_axis(order, n_low[:, None] + np.arange(k_high), axis=1)
    weights = np.concatenate(
        [
            np.repeat((n_low / k_low)[:, None], k_low, 1),
            np.repeat(((N - n_low) / k_high)[:, None], k_high, 1),
        ],
        axis=1,
    )
    return np.concatenate([take_low, take_high], axis=1), weights


def covered(stat, var, truth, bounds, crit, wilson_n=None):
    """Whether each interval holds ``truth``, and its width (Wald, or Wilson at ``wilson_n``)."""
    if wilson_n is not None:
        low, high = core.wilson_bounds_array(stat, wilson_n, crit)
    else:
        half = crit * np.sqrt(var)
        low, high = np.maximum(stat - half, bounds[0]), np.minimum(stat + half, bounds[1])
    return (low <= truth) & (truth <= high), high - low


def run_chunk(pop: Populations, design: str, n: int, truth: float, rng) -> dict[str, np.ndarray]:
    """One chunk of replications, estimated as ``judgekit estimate`` does.

    t with (labeled clusters - 1) degrees of freedom for clusters, Wilson at the
    effective sample size for every estimate of a rate, Wald for the rest.
    """
    z = z_critical(LEVEL)
    idx, w = draw(pop, design, n, rng)
    y, f = np.take_along_axis(pop.y, idx, 1), np.take_along_axis(pop.f, idx, 1)
    clustered = design == "clusters"
    plain = core.Design(weights=w)
    crit: float | np.ndarray = z
    robust = plain
    if clustered:
        robust = core.Design(w, pop.clusters[idx], pop.clusters, N // CLUSTER)
        crit = student_t.ppf(0.5 + LEVEL / 2, core.labeled_clusters(robust, len(y)) - 1)
    out = core.ppi_arrays(y, f, pop.f, robust)
    ppi_n = None
    if pop.binary:
        floor = core.discordance_floor(y, f, pop.f, out.lam)
        ppi_n = core.ppi_wilson_n(out.classical, np.maximum(out.variance, floor), float(n))
    ppi_ok, ppi_w = covered(np.clip(out.statistic, *pop.bounds), out.variance, truth,
                            pop.bounds, crit, ppi_n)
    wald_ok, _ = covered(out.statistic, out.variance, truth, pop.bounds, crit)
    wilson_n = None
    if pop.binary:
        p = out.classical
        with np.errstate(divide="ignore", invalid="ignore"):
            wilson_n = np.where(out.classical_variance > 0, p * (1 - p) / out.classical_variance, n)
    lab_ok, lab_w = covered(
        out.classical, out.classical_variance, truth, pop.bounds, crit, wilson_n
    )
    judge_mean, judge_var = core.mean_arrays(pop.f, core.Design())
    judge_ok, _ = covered(judge_mean, judge_var, truth, pop.bounds, z)
    result = {
        "ppi": ppi_ok,
        "wald": wald_ok,
        "labels": lab_ok,
        "judge": judge_ok,
        "ppi_width": ppi_w,
        "labels_width": lab_w,
        "lam": out.lam,
    }
    if clustered:
        naive = core.ppi_arrays(y, f, pop.f, plain)
        result["ppi_naive"], _ = covered(naive.statistic, naive.variance, truth, pop.bounds, z)
    if pop.binary:
        rg = core.rogan_gladen_arrays(y, f, pop.f, robust)
        ok, _ = covered(np.clip(rg.statistic, 0.0, 1.0), rg.variance, truth, (0.0, 1.0), crit)
        shown = core.youden_lower_bound(rg.sensitivity, rg.specificity, rg.n_positive,
                                        rg.n_negative, z) > 0
        defined = np.isfinite(rg.statistic) & np.isfinite(rg.variance) & shown
        result["rogan_gladen"] = ok[defined]
    return result


def run_config(kind: str, quality: float, design: str, n: int, reps: int, truth: float, rng):
    parts: dict[str, list[np.ndarray]] = {}
    for start in range(0, reps, CHUNK):
        pop = populations(kind, quality, min(CHUNK, reps - start), rng, design == "clusters")
        for key, value in run_chunk(pop, design, n, truth, rng).items():
            parts.setdefault(key, []).append(np.asarray(value))
    out = {key: np.concatenate(values) for key, values in parts.items()}
    row = {key: float(out[key].mean()) for key in out
           if key.endswith(("ppi", "labels", "judge", "wald"))}
    row["width_ratio"] = float(out["ppi_width"].mean() / out["labels_width"].mean())
    row["lam"] = float(out["lam"].mean())
    for key in ("ppi_naive", "rogan_gladen"):
        if key in out and out[key].size:
            row[key] = float(out[key].mean())
    return row


#: Judges of the pass-rate grid: name -> (chance of copying the human verdict, flip share).
PASS_JUDGES = {"excellent": (0.95, 0.0), "good": (0.75, 0.0), "poor": (0.4, 0.0),
               "noisy 20%": (0.0, 0.2)}
PASS_RATES = (0.5, 0.8, 0.9, 0.95, 0.99)


def pass_rate_row(rate: float, judge: tuple[float, float], n: int, reps: int,
                  rng: np.random.Generator) -> dict[str, float]:
    """Coverage of PPI++ (Wilson at the effective n), its Wald interval and labels-only
    Wilson at one pass rate; also the share of each interval lying above the truth."""
    copy, flip = judge
    z = z_critical(LEVEL)
    hits: dict[str, list[np.ndarray]] = {}
    for start in range(0, reps, CHUNK):
        rows = min(CHUNK, reps - start)
        y_all = (rng.random((rows, N)) < rate).astype(float)
        coin = (rng.random((rows, N)) < 0.5).astype(float)
        f_all = np.where(rng.random((rows, N)) < copy, y_all, coin) if flip == 0 else (
            np.where(rng.random((rows, N)) < flip, 1 - y_all, y_all))
        y, f = y_all[:, :n], f_all[:, :n]  # the items are exchangeable: the first n are a SRS
        out = core.ppi_arrays(y, f, f_all, core.Design())
        floor = core.discordance_floor(y, f, f_all, out.lam)
        ppi_n = core.ppi_wilson_n(out.classical, np.maximum(out.variance, floor), float(n))
        wilson = core.wilson_bounds_array(np.clip(out.statistic, 0, 1), ppi_n, z)
        half = z * np.sqrt(out.variance)
        wald = (np.maximum(out.statistic - half, 0.0), np.minimum(out.statistic + half, 1.0))
        p = out.classical
        with np.errstate(divide="ignore", invalid="ignore"):
            lab_n = np.where(out.classical_variance > 0, p * (1 - p) / out.classical_variance, n)
        labels = core.wilson_bounds_array(p, lab_n, z)
        for name, (low, high) in (("ppi", wilson), ("wald", wald), ("labels", labels)):
            hits.setdefault(name, []).append((low <= rate) & (rate <= high))
            hits.setdefault(name + "_above", []).append(low > rate)
    return {k: float(np.concatenate(v).mean()) for k, v in hits.items()}


def pass_rate_grid(quick: bool, reps: int, rng: np.random.Generator) -> None:
    sizes = (50, 200) if quick else (50, 100, 200, 500)
    judges = ("excellent", "noisy 20%") if quick else tuple(PASS_JUDGES)
    print(f"\nPass rates: coverage of {LEVEL:.0%} intervals over {reps} replications "
          f"(a simple random sample of n from N = {N}); 'above' = interval entirely above the "
          "truth")
    header = (f"{'rate':>5} {'judge':<10}{'n':>5}  {'PPI++':>6} {'above':>6}  {'wald':>6} "
              f"{'above':>6}  {'labels':>6} {'above':>6}")
    print(header)
    print("-" * len(header))
    low_cells = []
    for rate in PASS_RATES:
        for judge in judges:
            for n in sizes:
                r = pass_rate_row(rate, PASS_JUDGES[judge], n, reps, rng)
                if not 0.93 <= r["ppi"] <= 0.97:
                    low_cells.append(f"{rate} {judge} n={n}: {100 * r['ppi']:.1f}")
                print(f"{rate:>5} {judge:<10}{n:>5}  {100 * r['ppi']:6.1f} "
                      f"{100 * r['ppi_above']:6.1f}  {100 * r['wald']:6.1f} "
                      f"{100 * r['wald_above']:6.1f}  {100 * r['labels']:6.1f} "
                      f"{100 * r['labels_above']:6.1f}")
    print("PPI++ cells outside 93-97%: " + ("; ".join(low_cells) if low_cells else "none"))


def win_share_grid(quick: bool, reps: int, rng: np.random.Generator) -> None:
    """Pairwise win shares (a tie counts half, 10% ties): PPI++ with Wilson at the effective
    n (the estimate's interval) against its Wald interval, judges copying the human verdict
    with probability 0.75 (else a uniform verdict)."""
    z = z_critical(LEVEL)
    print(f"\nWin shares with 10% ties: coverage over {reps} replications; 'above' = interval "
          "entirely above the truth")
    print(f"{'share':>5} {'n':>5}  {'PPI++':>6} {'above':>6}  {'wald':>6} {'above':>6}")
    for share in (0.5, 0.9, 0.95):
        truth = 0.1 * 0.5 + 0.9 * share
        for n in ((50, 200) if quick else (50, 100, 200)):
            hits: dict[str, list[np.ndarray]] = {}
            for start in range(0, reps, CHUNK):
                rows = min(CHUNK, reps - start)
                tie = rng.random((rows, N)) < 0.1
                y_all = np.where(tie, 0.5, (rng.random((rows, N)) < share).astype(float))
                other = rng.choice([0.0, 0.5, 1.0], size=(rows, N))
                f_all = np.where(rng.random((rows, N)) < 0.75, y_all, other)
                y, f = y_all[:, :n], f_all[:, :n]
                out = core.ppi_arrays(y, f, f_all, core.Design())
                ppi_n = core.ppi_wilson_n(out.classical, out.variance, float(n))
                wilson = core.wilson_bounds_array(np.clip(out.statistic, 0, 1), ppi_n, z)
                half = z * np.sqrt(out.variance)
                wald = (np.maximum(out.statistic - half, 0.0),
                        np.minimum(out.statistic + half, 1.0))
                for name, (low, high) in (("ppi", wilson), ("wald", wald)):
                    hits.setdefault(name, []).append((low <= truth) & (truth <= high))
                    hits.setdefault(name + "_above", []).append(low > truth)
            r = {k: float(np.concatenate(v).mean()) for k, v in hits.items()}
            print(f"{share:>5} {n:>5}  {100 * r['ppi']:6.1f} {100 * r['ppi_above']:6.1f}  "
                  f"{100 * r['wald']:6.1f} {100 * r['wald_above']:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small grid, 200 replications")
    parser.add_argument("--grid", choices=("designs", "pass-rates", "all"), default="all")
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20231103)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    reps = 200 if args.quick else args.reps
    if args.grid in ("pass-rates", "all"):
        pass_rate_grid(args.quick, reps, np.random.default_rng(args.seed + 1))
        win_share_grid(args.quick, reps, np.random.default_rng(args.seed + 2))
    if args.grid == "pass-rates":
        return
    sizes = (50, 200) if args.quick else (50, 100, 200, 500)
    qualities = ("useless", "excellent") if args.quick else tuple(QUALITIES)
    start = time.perf_counter()
    header = (
        f"{'kind':<8}{'design':<10}{'judge':<10}{'n':>5}  {'PPI++':>6} {'wald':>6} "
        f"{'labels':>6} {'judge':>6} {'RG':>6} {'naive':>6}  {'width':>6} {'lambda':>6}"
    )
    print(f"Coverage of {LEVEL:.0%} intervals over {reps} replications, N = {N}")
    print("(width = mean PPI++ width / mean labels-only width; naive = PPI++ ignoring clusters)")
    print(header)
    print("-" * len(header))
    worst = {"ppi": 1.0, "labels": 1.0}
    for kind in ("binary", "ordinal"):
        truth = true_mean(kind, rng)
        for design in ("srs", "clusters", "queue"):
            for quality in qualities:
                for n in sizes:
                    row = run_config(kind, QUALITIES[quality], design, n, reps, truth, rng)
                    worst = {k: min(worst[k], row[k]) for k in worst}

                    def pct(key: str, row: dict = row) -> str:
                        value = row.get(key)
                        return f"{100 * value:6.1f}" if value is not None else f"{'-':>6}"

                    print(
                        f"{kind:<8}{design:<10}{quality:<10}{n:>5}  {pct('ppi')} "
                        f"{pct('wald') if kind == 'binary' else f'{chr(45):>6}'} {pct('labels')} "
                        f"{pct('judge')} {pct('rogan_gladen')} {pct('ppi_naive')}  "
                        f"{row['width_ratio']:6.2f} {row['lam']:6.2f}"
                    )
    elapsed = time.perf_counter() - start
    print(
        f"\nlowest coverage: PPI++ {100 * worst['ppi']:.1f}%, labels only "
        f"{100 * worst['labels']:.1f}%; {elapsed:.1f} s"
    )


if __name__ == "__main__":
    main()
