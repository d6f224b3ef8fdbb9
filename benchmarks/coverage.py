"""Empirical coverage of every interval the report uses, over a grid of designs.

Run: ``python benchmarks/coverage.py [--quick] [--reps N] [--resamples B]
[--only TEXT] [--shard I/N] [--out FILE.csv]``, and
``python benchmarks/coverage.py --merge A.csv B.csv ...`` to print the table of
earlier runs (the last row of a cell wins). Prints, per interval and design
cell, the share of replications whose 95% interval contains the population
value, the share refused (NaN with a reason, which the report shows as "no
interval"), the share in which the report warns that the interval may be too
narrow, and whether the cell lands in 93-97%. Each cell has its own seed
(from its name), so a shard or a subset gives the same figures as the full
grid. Not a timed test: ``--quick`` (few replications) is the smoke run a test
invokes. The populations are described in ``coverage_designs.py``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage_designs import (
    Cell,
    Interval,
    ac1,
    agreement,
    alpha,
    human_length,
    kappa,
    rank,
    slope,
    unequal_clusters,
)

LEVEL = 0.95
LOW, HIGH = 0.93, 0.97
FIELDS = ["interval", "design", "reps", "resamples", "coverage", "refused", "warned", "width"]


def grid(quick: bool) -> list[tuple[str, Interval, list[Cell]]]:
    ns = (50, 200) if quick else (50, 200, 1000)
    agreements, prevalences = (0.4, 0.8), (0.5, 0.85)
    binary = [Cell(n, a, p, 2) for n in ns for a in agreements for p in prevalences]
    five = [Cell(n, a, p, 5) for n in ns for a in agreements for p in prevalences]
    gs = (10, 50) if quick else (10, 20, 50, 200)
    clustered = [Cell(5 * g, a, 0.5, 2, g) for g in gs for a in agreements]
    clustered_five = [Cell(5 * g, a, 0.5, 5, g) for g in gs for a in agreements]
    prompts = [Cell(5 * g, 0.0, 0.5, 2, g) for g in gs]
    # length against a 0/1 verdict: "kappa" holds the verdict's noise around the length split
    pass_length = [Cell(n, noise, p, 2) for n in ((31, 200) if quick else (31, 50, 100, 200))
                   for noise in (0.1, 0.25, 0.5) for p in (0.5, 0.85)]
    rare_levels = [Cell(n, a, p, k) for n, p, k in ((100, 0.95, 3), (150, 0.95, 3),
                                                     (100, 0.9, 5), (300, 0.95, 3))
                   for a in agreements]
    # 60 clusters of 300 items, three of them holding 60%: "G" counts them, sizes unequal
    unequal = [Cell(300, a, 0.5, 2, 60) for a in agreements]
    return [
        ("cohen_kappa (bootstrap)", kappa(None), binary + five),
        ("weighted_kappa quadratic (BCa)", kappa("quadratic"), five),
        ("gwet_ac1 (Wilson, Gwet SE)", ac1, binary),
        ("percent_agreement (Wilson)", agreement, binary),
        ("krippendorff_alpha nominal, 3 raters, 30% missing", alpha("nominal"), binary),
        ("krippendorff_alpha ordinal, 3 raters, 30% missing", alpha("ordinal"), five),
        ("spearman (default)", rank("spearman"), five),
        ("kendall_tau (default)", rank("kendall"), five),
        ("kendall_tau (bootstrap)", rank("kendall", "bootstrap"), five),
        ("cohen_kappa (cluster bootstrap)", kappa(None), clustered),
        ("weighted_kappa quadratic (cluster BCa)", kappa("quadratic"), clustered_five),
        ("percent_agreement (cluster bootstrap)", agreement, clustered),
        ("kendall_tau (default, clustered)", rank("kendall"), clustered_five),
        ("length_slope, true slope 0 (cluster bootstrap)", slope, prompts),
        ("spearman (bootstrap)", rank("spearman", "bootstrap"), five),
        ("spearman (default, clustered)", rank("spearman"), clustered_five),
        ("spearman vs a 0/1 verdict (length; default)", human_length, pass_length),
        ("weighted_kappa quadratic, rare levels (BCa)", kappa("quadratic"), rare_levels),
        ("percent_agreement, unequal clusters (cluster bootstrap)",
         unequal_clusters("agreement"), unequal),
        ("cohen_kappa, unequal clusters (cluster bootstrap)", unequal_clusters("kappa"), unequal),
    ]


def seed_of(name: str, cell: Cell) -> int:
    return zlib.crc32(f"{name}|{cell.label()}".encode())


def coverage(run: Interval, cell: Cell, reps: int, resamples: int, seed: int) -> dict[str, float]:
    """Coverage among the intervals given, share refused, share warned, mean width."""
    rng = np.random.default_rng(seed)
    hits = refused = warned = 0
    widths = []
    for _ in range(reps):
        (low, high), truth, warns = run(cell, rng, resamples)
        warned += warns
        if not (math.isfinite(low) and math.isfinite(high)):
            refused += 1
            continue
        hits += low <= truth <= high
        widths.append(high - low)
    given = reps - refused
    return {
        "coverage": hits / given if given else math.nan,
        "refused": refused / reps,
        "warned": warned / reps,
        "width": float(np.mean(widths)) if widths else math.nan,
    }


def verdict(cov: float, warned: float) -> str:
    if LOW <= cov <= HIGH:
        return "yes" + (" (warns)" if warned > 0.5 else "")
    side = "low" if cov < LOW else "high"
    if side == "low":
        return f"no ({side}, {'warns' if warned > 0.5 else 'NO WARNING'})"
    return f"no ({side})"


def print_header(reps: object, resamples: object) -> None:
    print(f"95% intervals, {reps} replications per cell, {resamples} bootstrap resamples")
    print(
        f"{'interval':<50}{'design':<42}{'coverage':>9}{'refused':>8}{'warned':>7}"
        f"{'width':>7}  in 93-97%"
    )


def print_row(row: dict[str, str | float]) -> None:
    cov, warned = float(row["coverage"]), float(row["warned"])
    print(
        f"{row['interval']!s:<50}{row['design']!s:<42}{cov:>9.3f}{float(row['refused']):>8.3f}"
        f"{warned:>7.2f}{float(row['width']):>7.3f}  {verdict(cov, warned)}"
    )


def merge(paths: list[str]) -> None:
    rows: dict[tuple[str, str], dict[str, str | float]] = {}
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                rows[(row["interval"], row["design"])] = dict(row)
    order = {name: i for i, (name, _, _) in enumerate(grid(False))}
    ordered = sorted(rows.values(), key=lambda r: order.get(str(r["interval"]), len(order)))
    print_header(
        "/".join(sorted({str(r["reps"]) for r in ordered})),
        "/".join(sorted({str(r["resamples"]) for r in ordered})),
    )
    unwarned = 0
    for row in ordered:
        print_row(row)
        unwarned += float(row["coverage"]) < LOW and float(row["warned"]) <= 0.5
    print(f"cells below 93% without a warning: {unwarned}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few replications: a smoke run")
    parser.add_argument("--reps", type=int, default=None, help="replications per cell (500)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (1000)")
    parser.add_argument("--only", action="append", default=[], help="interval names containing")
    parser.add_argument("--design", action="append", default=[], help="design labels containing")
    parser.add_argument("--shard", default="0/1", help="I/N: every N-th cell from the I-th")
    parser.add_argument("--out", default=None, help="append one CSV row per finished cell")
    parser.add_argument("--merge", nargs="+", default=None, help="print the table of CSV files")
    args = parser.parse_args()
    if args.merge:
        merge(args.merge)
        return
    reps = args.reps or (20 if args.quick else 500)
    resamples = args.resamples or (200 if args.quick else 1000)
    index, total = (int(part) for part in args.shard.split("/"))
    tasks = [
        (name, run, cell)
        for name, run, cells in grid(args.quick)
        if not args.only or any(text in name for text in args.only)
        for cell in cells
        if not args.design or any(text in cell.label() for text in args.design)
    ][index::total]
    out = None
    if args.out:
        fresh = not Path(args.out).exists()
        handle = open(args.out, "a", newline="")  # noqa: SIM115 (kept open for the run)
        out = csv.DictWriter(handle, fieldnames=FIELDS)
        if fresh:
            out.writeheader()
    start = time.perf_counter()
    print_header(reps, resamples)
    outside = unwarned = 0
    for name, run, cell in tasks:
        figures = coverage(run, cell, reps, resamples, seed_of(name, cell))
        row: dict[str, str | float] = {
            "interval": name, "design": cell.label(), "reps": reps, "resamples": resamples,
            **figures,
        }
        print_row(row)
        outside += not LOW <= figures["coverage"] <= HIGH
        unwarned += figures["coverage"] < LOW and figures["warned"] <= 0.5
        if out is not None:
            out.writerow(row)
            handle.flush()
        sys.stdout.flush()
    print(
        f"cells outside 93-97%: {outside}; below 93% without a warning: {unwarned}; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
