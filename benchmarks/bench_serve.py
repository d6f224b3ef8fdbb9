"""Label POST latency through ``judgekit serve``: three annotators, with and without a judge run.

Run: ``python benchmarks/bench_serve.py [--labels 100] [--items 20000] [--annotators 3]
[--report-loop]``. Starts a real server on 127.0.0.1 over a fresh store; three (or
``--annotators``) annotators (threads, one keep-alive connection each) POST one
label per request. The baseline in the same run is the
same load with nothing else writing; then again while a judge run (another
process) appends judgments to the same file, and with ``--report-loop`` once more
while a read token asks for the gate over and over (a report build each time).
Prints p50/p95/p99/max latency, the gates answered, and the ratio of the loaded
p95 to the baseline p95.

Then labels/s of one client posting one label per request over a dataset of
``--items`` items, through the app with its caches (:mod:`judgekit.serve.caches`)
and without (parsing the rubric and indexing the dataset's item ids per request,
the baseline), both behind uvicorn on 127.0.0.1 in this process.

Then the same for an ``annotate`` token, which may label only the items of its
own queues (two annotators share the ``--items`` items): with the caches each
annotator's queue items are kept until a queue changes; without them every
request read every queue with all its entries (the baseline; fewer POSTs).

Then pages/s of ``GET /annotate`` (what an annotate token opens, and what every
websocket of the browser app checks) over ``--queues`` assigned queues of
``--queue-size`` items, with the queue cache and without (every queue read with
all its entries per request, the baseline). ``--only annotate`` runs that part alone.

``--only crowd``: the report (what the gate and the HTML report build inside the
server) over 25 items labeled once by each of ``--crowd`` annotators (default
1,000, 10,000 and 100,000), its time and peak RSS in a fresh process; the baseline
folds the human reference with tuples grown per annotator, as before (run up to
``--crowd-baseline-max`` annotators: it is quadratic).

Every comparison runs its two sides in turn, ``--repeats`` pairs (the order flipping every
pair), and prints the ratio with its spread over the pairs. ``--quick``: 10 labels per
annotator, 2,000 items, 8 queues of 300, 10 pages, 2 pairs, and no crowd rows (they start a
process per report; ``--quick --only crowd`` runs them on a crowd of 500).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _common import alternate, header, on_path, ratio_line, ratio_text, table

ROOT = on_path()

import httpx2 as httpx  # noqa: E402

from judgekit.store import open_store  # noqa: E402
from tests.support.annotate import judgment, record_judgments, seed_store  # noqa: E402
from tests.support.serve import (  # noqa: E402
    judge_writing,
    post_labels_concurrently,
    running_service,
    service_in_thread,
    token,
)

ANNOTATORS = ("ana", "bo", "cy")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(tmp: Path, labels_each: int, with_writer: bool, annotators: tuple[str, ...] = ANNOTATORS,
        report_loop: bool = False) -> tuple[list[float], int, int]:
    """Latencies and failed POSTs of the annotators' load, and gates answered meanwhile.

    With ``report_loop`` a read token asks for the gate over and over while the
    annotators post (each build then competes with the label writes).
    """
    n_items = labels_each * len(annotators)
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", n_items)
        record_judgments(store, rub, [judgment(rub, "d", items[0].id, "pass", run_id="writer")])
        tokens = {name: token(store, name, "annotate") for name in annotators}
        reader = token(store, "ci", "read")
    subprocess.run([sys.executable, "-m", "judgekit", "queue", "assign", "--db", str(db),
                    "--rubric", rub.sha256, "--annotators", ",".join(annotators),
                    "--overlap", "0"], check=True, capture_output=True, cwd=ROOT)
    with open_store(db) as store:
        work = {}
        for name, tok in tokens.items():
            queue = next(q for q in store.list_queues() if q.endswith(f":{name}"))
            found = store.get_queue(queue)
            assert found is not None
            work[name] = (tok, [entry.item_id for entry in found[1]])
    gates: list[int] = []
    with running_service(db, tmp) as service:
        stop = threading.Event()

        def report_reader() -> None:
            with httpx.Client(base_url=service.url, timeout=300,
                              headers={"Authorization": f"Bearer {reader}"}) as client:
                while not stop.is_set():
                    gates.append(client.get("/api/v1/gate?rubric=correct&resamples=200")
                                 .status_code)

        looping = threading.Thread(target=report_reader, daemon=True)
        if report_loop:
            looping.start()
        try:
            if not with_writer:
                latencies, statuses = post_labels_concurrently(service, work, rub.sha256)
            else:
                with judge_writing(db, tmp, "binary", n_items):
                    latencies, statuses = post_labels_concurrently(service, work, rub.sha256)
        finally:
            stop.set()
            if report_loop:
                looping.join(timeout=300)
    return latencies, sum(s != 200 for s in statuses), sum(s == 200 for s in gates)


def labels_per_second(tmp: Path, posts: int, n_items: int, cache: bool) -> float:
    """One keep-alive client POSTing ``posts`` single labels over ``n_items`` items."""
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", n_items)
        writer = token(store, "lead", "write")
    with service_in_thread(db, cache=cache) as service, httpx.Client(
            base_url=service.url, timeout=60,
            headers={"Authorization": f"Bearer {writer}"}) as client:
        start = time.perf_counter()
        for n in range(posts):
            response = client.post("/api/v1/labels", json={"rubric": rub.sha256, "labels": [
                {"item_id": items[n % n_items].id, "annotator": f"a{n}", "label": "pass"}]})
            assert response.status_code == 200, response.text
        return posts / (time.perf_counter() - start)


def annotate_labels_per_second(tmp: Path, posts: int, n_items: int, cache: bool) -> float:
    """One keep-alive client with ana's annotate token POSTing ``posts`` labels of her queue."""
    from judgekit.store.labels import QueueEntry

    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", n_items)
        ana = token(store, "ana", "annotate")
        for name, share in (("ana", items[0::2]), ("bo", items[1::2])):
            store.save_queue(f"assign:{name}", rub.sha256, "random", 0,
                             [QueueEntry(i, "d", item.id, 1.0) for i, item in enumerate(share)],
                             params={"annotator": name})
    mine = items[0::2]
    with service_in_thread(db, cache=cache) as service, httpx.Client(
            base_url=service.url, timeout=120,
            headers={"Authorization": f"Bearer {ana}"}) as client:
        start = time.perf_counter()
        for n in range(posts):
            response = client.post("/api/v1/labels", json={"rubric": rub.sha256, "labels": [
                {"item_id": mine[n % len(mine)].id, "label": "pass"}]})
            assert response.status_code == 200, response.text
        return posts / (time.perf_counter() - start)


def annotate_pages_per_second(tmp: Path, pages: int, n_queues: int, size: int,
                              cache: bool) -> float:
    """One keep-alive client GETting ``/annotate`` ``pages`` times with an annotate token."""
    from judgekit.store.labels import QueueEntry

    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", size)
        reader = token(store, "ana", "annotate")
        entries = [QueueEntry(i, "d", item.id, 1.0) for i, item in enumerate(items)]
        for q in range(n_queues):  # one of them hers: the page is her terminal
            store.save_queue(f"q{q}", rub.sha256, "random", q, entries,
                             params={"annotator": "ana" if q == 0 else f"other{q}"})
    with service_in_thread(db, cache=cache) as service, httpx.Client(
            base_url=service.url, timeout=60,
            headers={"Authorization": f"Bearer {reader}"}) as client:
        assert "/annotate/ws/q0" in client.get("/annotate").text
        start = time.perf_counter()
        for _ in range(pages):
            response = client.get("/annotate")
            assert response.status_code == 200, response.text
        return pages / (time.perf_counter() - start)


#: Builds the report of argv[1] in a fresh process; prints seconds and peak RSS (MiB).
CROWD_REPORT = """
import resource, sys, time
from judgekit.report import ReportOptions, build_report, reference, render
from judgekit.rubrics import rubric_from_text
from judgekit.store import open_store
if sys.argv[2] == "baseline":
    reference.SHARED_UP_TO = 10**9
with open_store(sys.argv[1]) as store:
    sha = store.list_rubrics()[0]["sha256"]
    rub = rubric_from_text(store.get_rubric_text(sha), path="<store>")
    start = time.perf_counter()
    render(build_report(store, rub, ReportOptions(n_resamples=1000)), "json")
    seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def crowd_report(tmp: Path, annotators: int, mode: str) -> tuple[float, float]:
    """(seconds, peak MiB) of the report over 25 items, one label per annotator."""
    from judgekit.types import Label

    db = tmp / f"crowd-{annotators}.db"
    if not db.exists():
        with open_store(db) as store:
            rub, items = seed_store(store, "binary", 25)
            record_judgments(store, rub, [judgment(rub, "d", it.id, "pass" if i % 2 else "fail")
                                          for i, it in enumerate(items)])
            store.add_labels([Label("d", items[k % 25].id, rub.sha256, f"a{k}",
                                    "pass" if (k * 7) % 3 else "fail")
                              for k in range(annotators)])
    out = subprocess.run([sys.executable, "-c", CROWD_REPORT, str(db), mode], check=True,
                         capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    seconds, mib = out.stdout.split()
    return float(seconds), float(mib)


def crowd_rows(args: argparse.Namespace) -> list[str]:
    rows, lines = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.crowd:
            if n > args.crowd_baseline_max:
                seconds, mib = crowd_report(Path(tmp), n, "current")
                rows.append(("dict per crowded item", n, f"{seconds:.1f}", f"{mib:.0f}",
                             "(baseline skipped: quadratic)"))
                continue
            seen: dict[str, list[tuple[float, float]]] = {"current": [], "baseline": []}

            def side(mode: str, n: int = n,
                     seen: dict[str, list[tuple[float, float]]] = seen) -> float:
                seen[mode].append(crowd_report(Path(tmp), n, mode))
                return seen[mode][-1][0]

            pairs = alternate(lambda: side("current"), lambda: side("baseline"), args.repeats)
            for mode, name in (("baseline", "baseline: tuples grown per annotator"),
                               ("current", "dict per crowded item")):
                rows.append((name, n, f"{statistics.median(x[0] for x in seen[mode]):.1f}",
                             f"{max(x[1] for x in seen[mode]):.0f}",
                             ratio_text(pairs.ratios) if mode == "current" else ""))
            lines.append(ratio_line(f"crowd report, dict / tuples (time), {n} annotators",
                                    pairs.ratios))
    print(table(("report over 25 items, one label per annotator", "annotators", "seconds",
                 "peak MiB", "current / baseline"), rows))
    return lines


def cache_rows(title: str, columns: tuple[str, ...], cells: tuple[object, ...],
               names: tuple[str, str], measure: Callable[[bool], float], repeats: int,
               what: str) -> list[str]:
    """A cached and an uncached server in turn; the throughput ratio cached / uncached."""
    pairs = alternate(lambda: measure(True), lambda: measure(False), repeats)
    print(table((title, *columns, "per s", "cached / baseline (spread)"), [
        (names[0], *cells, f"{statistics.median(pairs.baseline):.1f}", ""),
        (names[1], *cells, f"{statistics.median(pairs.candidate):.1f}",
         ratio_text(pairs.ratios)),
    ]))
    return [ratio_line(f"{what}, cached / baseline (throughput)", pairs.ratios)]


def annotate_rows(args: argparse.Namespace) -> list[str]:
    def measure(cache: bool) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            return annotate_pages_per_second(Path(tmp), args.pages, args.queues,
                                             args.queue_size, cache)

    return cache_rows("GET /annotate, one annotate token", ("queues", "items", "pages"),
                      (args.queues, args.queue_size, args.pages),
                      ("baseline: every queue read per request",
                       "cached assignments (queues marker)"), measure, args.repeats,
                      "GET /annotate pages")


def load_rows(args: argparse.Namespace) -> list[str]:
    people = ANNOTATORS if args.annotators == 3 else tuple(
        f"annotator{i:02d}" for i in range(args.annotators))
    n = len(people)
    loads = [(f"baseline: {n} annotators, nothing else writing", False, False),
             (f"{n} annotators while a judge run writes", True, False)]
    if args.report_loop:
        loads.append((f"{n} annotators, judge run writing, gate loop", True, True))
    seen: dict[str, list[tuple[list[float], int, int]]] = {name: [] for name, _, _ in loads}
    for k in range(args.repeats):
        for name, writer, reports in loads if k % 2 == 0 else loads[::-1]:
            with tempfile.TemporaryDirectory() as tmp:
                seen[name].append(run(Path(tmp), args.labels, writer, people, reports))
    base_name = loads[0][0]
    base_p95 = [percentile(r[0], 0.95) for r in seen[base_name]]
    rows, lines = [], []
    for name, _, _ in loads:
        ms = [1000 * x for r in seen[name] for x in r[0]]
        p95s = [percentile(r[0], 0.95) for r in seen[name]]
        ratios = [a / b for a, b in zip(p95s, base_p95, strict=True)]
        rows.append((name, len(ms), sum(r[1] for r in seen[name]),
                     f"{statistics.median(ms):.1f}", f"{percentile(ms, 0.95):.1f}",
                     f"{percentile(ms, 0.99):.1f}", f"{max(ms):.1f}",
                     sum(r[2] for r in seen[name]),
                     ratio_text(ratios) if name != base_name else ""))
        if name != base_name:
            lines.append(ratio_line(f"label POST p95, {name} / nothing else writing", ratios))
    print(table(("load", "POSTs", "failed", "p50 ms", "p95 ms", "p99 ms", "max ms", "gates",
                 "p95 / baseline (spread)"), rows))
    return lines


def label_rows(args: argparse.Namespace) -> list[str]:
    posts = 3 * args.labels

    def plain(cache: bool) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            return labels_per_second(Path(tmp), posts, args.items, cache)

    lines = cache_rows("POST /api/v1/labels, one client", ("items", "POSTs"),
                       (args.items, posts),
                       ("baseline: rubric parsed, ids indexed per request",
                        "cached rubric and item-id index"), plain, args.repeats,
                       "label POSTs (write token)")
    print()
    annotate_posts = {False: max(10, posts // 10), True: posts}

    def queued(cache: bool) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            return annotate_labels_per_second(Path(tmp), annotate_posts[cache], args.items,
                                              cache)

    lines += cache_rows("POST /api/v1/labels, one annotate token", ("items",),
                        (args.items,),
                        ("baseline: every queue read per request (fewer POSTs)",
                         "cached queue membership (queues marker)"), queued, args.repeats,
                        "label POSTs (annotate token)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=100, help="labels per annotator")
    parser.add_argument("--annotators", type=int, default=3,
                        help="annotators posting at once in the load rows (e.g. 20)")
    parser.add_argument("--report-loop", action="store_true",
                        help="add a load row where a read token asks for the gate meanwhile")
    parser.add_argument("--items", type=int, default=20000,
                        help="dataset size for the labels/s rows")
    parser.add_argument("--queues", type=int, default=40, help="queues for the annotate rows")
    parser.add_argument("--queue-size", type=int, default=2000, help="items per queue")
    parser.add_argument("--pages", type=int, default=50, help="annotate pages requested")
    parser.add_argument("--only", choices=["labels", "annotate", "crowd"], default=None,
                        help="run only the label rows, the annotate rows or the crowd rows")
    parser.add_argument("--crowd", type=int, nargs="+", default=[1_000, 10_000, 100_000],
                        help="annotator counts of the crowd report rows")
    parser.add_argument("--crowd-baseline-max", type=int, default=20_000,
                        help="largest crowd the (quadratic) baseline is run on")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of every comparison")
    parser.add_argument("--quick", action="store_true",
                        help="10 labels each, 2,000 items, 8 queues of 300, 10 pages, 2 pairs, "
                             "no crowd rows unless --only crowd (a crowd of 500)")
    args = parser.parse_args()
    if args.quick:
        args.labels, args.items, args.queues, args.queue_size = 10, 2_000, 8, 300
        args.pages, args.crowd, args.repeats = 10, [500], 2
    header("judgekit serve: label POST latency and throughput, each against its baseline")
    if args.only == "crowd":
        lines = crowd_rows(args)
    elif args.only == "annotate":
        lines = annotate_rows(args)
    else:
        lines = load_rows(args)
        print()
        lines += label_rows(args)
        if args.only is None:
            print()
            lines += annotate_rows(args)
            if not args.quick:
                print()
                lines += crowd_rows(args)
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
