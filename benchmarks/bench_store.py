"""Store speed on a real file: the operations a judge run, a report and the annotate app hit.

Run: ``python benchmarks/bench_store.py [--n 100000] [--repeats 5] [--quick]``. Prints one
row per operation with its time and rate. The baselines, in the same run and alternated with the
store pair by pair, answer "what does the store cost over a bare INSERT?":

- ``record_judgment`` (one transaction per judgment, as a run commits) against a bare ``sqlite3``
  loop of one ``INSERT`` + ``COMMIT`` per row of the same judgment columns in WAL mode;
- ``record_judgments`` (one transaction for many) against one ``executemany`` of those rows;
- ``add_label`` against the same bare loop for label rows.

Each ratio is the store's time over the bare loop's, median and spread over the pairs.
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import header, on_path, paired, ratio_line, ratio_text, table

on_path()

from judgekit.store import RunRecord, open_store  # noqa: E402
from judgekit.types import Judgment, Label  # noqa: E402

RUBRIC = "b" * 64


def judgment(k: int) -> Judgment:
    return Judgment(
        run_id="bench", dataset="ds", item_id=f"i{k}", sample_index=0, status="ok",
        label="pass", score=1.0, reasoning="short reason", raw_text='{"verdict":"pass"}',
        model_requested="m", model_returned="m", base_url="http://127.0.0.1:1/v1",
        sampling={"temperature": 0.0, "max_tokens": 512, "top_p": 1.0, "seed": 0},
        rubric_name="r", rubric_version="1", rubric_hash=RUBRIC, cache_key=f"key{k}",
        prompt_tokens=100, completion_tokens=20, latency_ms=100.0, finish_reason="stop",
    )


def timed(label: str, count: int, fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    print(f"{label:<44} {elapsed:8.3f} s  {count / elapsed:>12,.0f} /s")
    return elapsed


class BareTable:
    """The baseline: a plain WAL file with the judgment's columns, written with bare ``sqlite3``."""

    COLUMNS = ("run_id", "dataset", "item_id", "status", "label", "score", "reasoning",
               "raw_text", "model", "base_url", "sampling", "cache_key")

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=wal")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY, {', '.join(self.COLUMNS)})")
        self.sql = f"INSERT INTO t ({', '.join(self.COLUMNS)}) VALUES ({', '.join('?' * 12)})"

    @staticmethod
    def row(j: Judgment) -> tuple[Any, ...]:
        return (j.run_id, j.dataset, j.item_id, j.status, j.label, j.score, j.reasoning,
                j.raw_text, j.model_requested, j.base_url, json.dumps(j.sampling), j.cache_key)

    def commits(self, judgments: list[Judgment]) -> None:
        """One INSERT and COMMIT per row, as the store's single-row writes."""
        for j in judgments:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(self.sql, self.row(j))
            self.conn.execute("COMMIT")

    def bulk(self, judgments: list[Judgment]) -> None:
        """One transaction, one ``executemany``."""
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(self.sql, [self.row(j) for j in judgments])
        self.conn.execute("COMMIT")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="judgments for the bulk reads")
    parser.add_argument("--commits", type=int, default=2_000, help="single-row commits per pair")
    parser.add_argument("--repeats", type=int, default=5, help="pairs of store and bare runs")
    parser.add_argument("--quick", action="store_true",
                        help="10,000 judgments, 300 commits per pair, 3 pairs")
    args = parser.parse_args()
    if args.quick:
        args.n, args.commits, args.repeats = 10_000, 300, 3
    header("Store speed: judgekit's store against bare sqlite3 writes of the same rows")
    folder = Path(tempfile.mkdtemp(prefix="judgekit-bench-"))
    atexit.register(shutil.rmtree, folder, True)
    store = open_store(folder / "bench.db")
    store.create_run(RunRecord(
        id="bench", kind="judge", dataset="ds", rubric_hash=RUBRIC, model="m",
        base_url="http://127.0.0.1:1/v1", sampling={}, capabilities={},
        judgekit_version="bench", started_at="",
    ))
    bare = BareTable(folder / "bare.db")
    counter = iter(range(10**9))

    def batch(size: int) -> list[Judgment]:
        return [judgment(next(counter)) for _ in range(size)]

    rows: list[tuple[str, int, float, float, str]] = []
    ratios: dict[str, list[float]] = {}
    bulk_size = max(1, args.n // (2 * (args.repeats + 1)))
    labels = iter(range(10**9))

    def label_batch(size: int) -> list[Label]:
        return [Label(dataset="ds", item_id=f"i{k}", rubric_hash=RUBRIC, annotator=f"a{k % 3}",
                      label="pass") for k in (next(labels) for _ in range(size))]

    cases = (
        ("record_judgment (one txn each)", args.commits,
         lambda: [store.record_judgment(j) for j in batch(args.commits)],
         lambda: bare.commits(batch(args.commits))),
        ("record_judgments (one txn)", bulk_size,
         lambda: store.record_judgments(batch(bulk_size)),
         lambda: bare.bulk(batch(bulk_size))),
        ("add_label (one txn each)", args.commits,
         lambda: [store.add_label(label) for label in label_batch(args.commits)],
         lambda: bare.commits(batch(args.commits))),
    )
    for name, count, ours, base in cases:
        pairs = paired(ours, base, args.repeats)
        ratios[name] = pairs.ratios
        rows.append((name, count, pairs.candidate_median, pairs.baseline_median,
                     ratio_text(pairs.ratios)))
    print(table(("write", "rows", "store s", "bare s", "store / bare (spread)"), rows))
    print()
    for name, values in ratios.items():
        print(ratio_line(f"store / bare sqlite3 (time), {name}", values))
    print()
    rest = batch(max(1, args.n - len(store.judgments(rubric_hash=RUBRIC))))
    timed(f"record_judgments: {len(rest):,} more in one txn", len(rest),
          lambda: store.record_judgments(rest))
    keys = [j.cache_key for j in store.judgments(rubric_hash=RUBRIC)]
    timed(f"cached_judgments({len(keys):,} keys)", len(keys),
          lambda: store.cached_judgments(keys))
    timed(f"judgments(rubric_hash) -> {len(keys):,}", len(keys),
          lambda: store.judgments(rubric_hash=RUBRIC))
    timed("latest_labels", 1, lambda: store.latest_labels(RUBRIC))
    store.close()


if __name__ == "__main__":
    main()
