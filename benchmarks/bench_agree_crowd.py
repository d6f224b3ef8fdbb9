"""``judgekit agree`` on a crowd: time and peak memory against the raters x items table.

Run: ``python benchmarks/bench_agree_crowd.py [--annotators 2000 20000] [--repeats 3] [--quick]``.

A crowd of A annotators labels 1,000 items, 3 labels each (seeded), and one more rater, the
judge, labels every item. The candidate is everything ``agree --judge judge`` computes
(``agreement_from_ratings``: alpha, Fleiss, pairwise kappas, percent agreement, parity). The
baseline, measured in the same run and taking turns with it, is the dense path those figures
used to take: the raters x items table (None where unrated) with Krippendorff's alpha on it,
and the judge's parity from one column per annotator over the items (``judge_parity``). The
dense path also compared every rater pair by scanning every item (A^2 / 2 pairs x items):
hours at 20,000 annotators, so it is not run; its cost is estimated from a timed sample of
pairs and shown on its own line.

Each measurement runs in a fresh process (``spawn``) that first builds the ratings; its peak
is the process's own high-water mark (``VmHWM``) and "added" the peak less the resident
memory before the step. ``--quick``: 200 and 2,000 annotators, 1 pair.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import Paired, alternate, header, on_path, ratio_line, ratio_text, table

on_path()

from judgekit.compare.agree import Rating, agreement_from_ratings  # noqa: E402

N_ITEMS = 1000
PER_ANNOTATOR = 3
RESAMPLES = 200
#: Rater pairs timed to estimate the dense scan of every pair.
SAMPLED_PAIRS = 2000


def crowd(n_annotators: int, seed: int = 0) -> list[Rating]:
    """Seeded crowd ratings (three values, 70% on the item's truth) and the judge's."""
    rng = random.Random(seed)
    items = [f"i{k:04d}" for k in range(N_ITEMS)]
    truth = {i: rng.choice("abc") for i in items}
    out = [Rating(i, f"a{a:05d}", truth[i] if rng.random() < 0.7 else rng.choice("abc"), "-")
           for a in range(n_annotators) for i in rng.sample(items, PER_ANNOTATOR)]
    out += [Rating(i, "judge", truth[i] if rng.random() < 0.8 else rng.choice("abc"), "-")
            for i in items]
    return out


def step_rows(ratings: list[Rating]) -> None:
    agreement_from_ratings(ratings, judge="judge", n_resamples=RESAMPLES)


def step_table(ratings: list[Rating]) -> None:
    """The dense path: alpha on the raters x items table, parity on per-annotator columns."""
    from judgekit import stats
    from judgekit.report.parity import judge_parity
    from judgekit.report.stat_intervals import IntervalSpec, to_stat

    spec = IntervalSpec(n_resamples=RESAMPLES)
    by_item: dict[str, dict[str, Any]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, {})[r.rater] = r.label
    items, raters = sorted(by_item), sorted({r.rater for r in ratings})
    data = [[by_item[i].get(rater) for i in items] for rater in raters]
    to_stat(stats.krippendorff_alpha(data, level="nominal"), spec)
    others = [r for r in raters if r != "judge"]
    shared = [i for i in items if "judge" in by_item[i]
              and sum(r in by_item[i] for r in others) >= 2]
    judge_parity([by_item[i]["judge"] for i in shared],
                 {r: [by_item[i].get(r) for i in shared] for r in others}, spec)


def pair_scan_estimate(ratings: list[Rating]) -> float:
    """Seconds the dense scan of every rater pair over every item would take (sampled)."""
    by_item: dict[str, dict[str, Any]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, {})[r.rater] = r.label
    items, raters = sorted(by_item), sorted({r.rater for r in ratings})
    rng = random.Random(1)
    sample = [tuple(rng.sample(raters, 2)) for _ in range(SAMPLED_PAIRS)]
    start = time.perf_counter()
    for a, b in sample:
        [i for i in items if a in by_item[i] and b in by_item[i]]
    per_pair = (time.perf_counter() - start) / len(sample)
    return per_pair * len(raters) * (len(raters) - 1) / 2


def _status_mib(field: str) -> float:
    """A memory line of /proc/self/status in MiB (ru_maxrss where there is no /proc)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


STEPS: dict[str, Callable[[list[Rating]], Any]] = {"rows": step_rows, "table": step_table}


def _child(step: str, n_annotators: int, queue: Any) -> None:
    ratings = crowd(n_annotators)
    if step == "pairs":
        queue.put({"seconds": pair_scan_estimate(ratings)})
        return
    STEPS[step](crowd(60, seed=1))  # imports and first-use caches, before the clock
    before = _status_mib("VmRSS")
    start = time.perf_counter()
    STEPS[step](ratings)
    seconds = time.perf_counter() - start
    peak = _status_mib("VmHWM")
    queue.put({"seconds": seconds, "peak_mib": peak, "added_mib": peak - before,
               "ratings": len(ratings)})


def measure(step: str, n_annotators: int) -> dict[str, Any]:
    """One step in a fresh process: seconds, peak and added memory."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(step, n_annotators, queue))
    process.start()
    result: dict[str, Any] = queue.get(timeout=3600)
    process.join(timeout=60)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--annotators", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--repeats", type=int, default=3, help="pairs per size")
    parser.add_argument("--quick", action="store_true", help="200 and 2,000 annotators, 1 pair")
    args = parser.parse_args()
    if args.quick:
        args.annotators, args.repeats = [200, 2_000], 1
    header(f"agree on a crowd ({N_ITEMS:,} items, {PER_ANNOTATOR} labels per annotator, "
           f"a judge on every item): labels as rows against the raters x items table")
    rows, largest = [], Paired()
    for n in args.annotators:
        runs: dict[str, list[dict[str, Any]]] = {"rows": [], "table": []}

        def run(step: str, n: int = n, runs: dict[str, list[dict[str, Any]]] = runs) -> float:
            result = measure(step, n)
            runs[step].append(result)
            return float(result["seconds"])

        pairs = alternate(lambda: run("rows"), lambda: run("table"), args.repeats)
        largest = pairs
        for step, name in (("rows", "agree (labels as rows)"),
                           ("table", "  raters x items table baseline")):
            done = runs[step]
            rows.append((name, f"{n:,}", f"{done[0]['ratings']:,}",
                         f"{statistics.median(r['seconds'] for r in done):.2f}",
                         f"{max(r['peak_mib'] for r in done):.0f}",
                         f"{max(r['added_mib'] for r in done):.0f}",
                         ratio_text(pairs.ratios) if step == "rows" else ""))
        scan = measure("pairs", n)["seconds"]
        rows.append(("  every rater pair scanned (est.)", f"{n:,}", "", f"{scan:,.0f}", "", "",
                     ""))
    print(table(("path", "annotators", "ratings", "seconds", "peak MiB", "added MiB",
                 "rows / table (time)"), rows))
    print()
    print(ratio_line(f"agree / raters x items table (time, {args.annotators[-1]:,} annotators)",
                     largest.ratios))


if __name__ == "__main__":
    main()
