"""Store speed on a real file: the operations a judge run, a report and the annotate app hit.

Run: ``python benchmarks/bench_store.py [--n 100000]``. Prints one row per
operation with its time and rate. The baseline in the same run is a bare
``sqlite3`` loop doing the same single-row commits without the store, so the
ratio shows what the store's own overhead costs.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgekit.store import RunRecord, open_store
from judgekit.types import Judgment, Label

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


def bare_sqlite_commits(path: Path, n: int) -> None:
    """Baseline: WAL + one INSERT and COMMIT per row, no store."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, key TEXT, label TEXT, raw TEXT)")
    for k in range(n):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (key, label, raw) VALUES (?, ?, ?)", [f"k{k}", "pass", "{}"])
        conn.execute("COMMIT")
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="judgments for the bulk reads")
    parser.add_argument("--commits", type=int, default=5_000, help="single-row commits")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="judgekit-bench-"))
    store = open_store(folder / "bench.db")
    store.create_run(RunRecord(
        id="bench", kind="judge", dataset="ds", rubric_hash=RUBRIC, model="m",
        base_url="http://127.0.0.1:1/v1", sampling={}, capabilities={},
        judgekit_version="bench", started_at="",
    ))
    print(f"store at {folder}")
    base = timed(f"bare sqlite3: {args.commits:,} single commits", args.commits,
                 lambda: bare_sqlite_commits(folder / "bare.db", args.commits))
    ours = timed(f"record_judgment x {args.commits:,} (one txn each)", args.commits,
                 lambda: [store.record_judgment(judgment(k)) for k in range(args.commits)])
    print(f"{'  store / bare sqlite3 throughput ratio':<44} {base / ours:8.2f}")
    rest = range(args.commits, args.n)
    timed(f"record_judgments: {len(rest):,} in one txn", len(rest),
          lambda: store.record_judgments([judgment(k) for k in rest]))
    keys = [f"key{k}" for k in range(args.n)]
    timed(f"cached_judgments({args.n:,} keys)", args.n, lambda: store.cached_judgments(keys))
    timed(f"judgments(rubric_hash) -> {args.n:,}", args.n,
          lambda: store.judgments(rubric_hash=RUBRIC))
    labels = [Label(dataset="ds", item_id=f"i{k}", rubric_hash=RUBRIC, annotator=f"a{k % 3}",
                    label="pass") for k in range(2_000)]
    timed("add_label x 2,000 (one txn each)", 2_000,
          lambda: [store.add_label(label) for label in labels])
    timed("latest_labels (2,000)", 2_000, lambda: store.latest_labels(RUBRIC))
    store.close()


if __name__ == "__main__":
    main()
