"""``batch prepare`` and ``batch collect`` at 100,000 calls: rows per second and peak memory.

Run: ``python benchmarks/bench_batch.py [--n 100000]``. Each step runs in a
fresh process (``spawn``), so its peak resident memory is its own. Both steps
run at n/4 and at n: the peak should stay flat (files and output are streamed,
nothing per call is held), while the time grows linearly. Times exclude
imports (done before the clock starts). Baselines measured in the same run:

- prepare vs ``json.dumps`` of the same request lines to a file (no cache
  lookup, no store);
- collect vs a bare ``executemany`` of the same judgment rows into SQLite (no
  parsing, no lookups).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from judgekit.clients.request import chat_request, response_format_for
from judgekit.clients.spec import JudgeSpec
from judgekit.judging.units import WorkUnit, unit_messages
from judgekit.rubrics import load_rubric, verdict_json_schema
from judgekit.types import Item

BASE_URL = "http://127.0.0.1:1/v1"
ANSWER = json.dumps({"reasoning": "The answer matches the reference.", "verdict": "pass"})


def items(n: int) -> Iterator[Item]:
    for k in range(n):
        yield Item(id=f"i{k}", input=f"What is {k} + 1? Explain briefly.", response=str(k + 1),
                   reference=str(k + 1))


def spec() -> JudgeSpec:
    return JudgeSpec(base_url=BASE_URL, model="judge-model")


def step_prepare(folder: str, n: int) -> dict[str, Any]:
    from judgekit.judging.batch.prepare import prepare_batch
    from judgekit.store import open_store

    rubric = load_rubric("correctness")
    with open_store(Path(folder) / "b.db") as store:
        start = time.perf_counter()
        prepared = prepare_batch(store, rubric, (WorkUnit(i) for i in items(n)), spec(),
                                 dataset="bench", out=Path(folder) / "req.jsonl")
        elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "rows": prepared.prepared, "files": len(prepared.files)}


def step_dumps(folder: str, n: int) -> dict[str, Any]:
    """Baseline: the same request lines, json.dumps'd to a file; no store, no cache keys."""
    rubric = load_rubric("correctness")
    fmt = response_format_for("json_schema", verdict_json_schema(rubric))
    judge = spec()
    start = time.perf_counter()
    with (Path(folder) / "plain.jsonl").open("w", encoding="utf-8") as handle:
        for k, item in enumerate(items(n)):
            body = chat_request(judge, unit_messages(rubric, WorkUnit(item)),
                                response_format=fmt, logprobs=True)
            handle.write(json.dumps({"custom_id": str(k), "method": "POST",
                                     "url": "/v1/chat/completions", "body": body}) + "\n")
    return {"seconds": time.perf_counter() - start, "rows": n}


def write_output(folder: str) -> int:
    """A ``vllm run-batch``-shaped output file answering every prepared request."""
    n = 0
    with (Path(folder) / "out.jsonl").open("w", encoding="utf-8") as out:
        for path in sorted(Path(folder).glob("req*.jsonl")):
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    custom_id = json.loads(line)["custom_id"]
                    body = {"id": f"c{n}", "object": "chat.completion", "model": "judge-model",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": ANSWER}}],
                            "usage": {"prompt_tokens": 120, "completion_tokens": 20}}
                    out.write(json.dumps({"id": f"r{n}", "custom_id": custom_id,
                                          "response": {"status_code": 200, "body": body},
                                          "error": None}) + "\n")
                    n += 1
    return n


def step_collect(folder: str, n: int) -> dict[str, Any]:
    import judgekit.clients.openai_client  # noqa: F401  (imported once, before the clock starts)
    from judgekit.judging.batch.collect import collect_files
    from judgekit.store import open_store

    with open_store(Path(folder) / "b.db") as store:
        start = time.perf_counter()
        report = collect_files(store, [Path(folder) / "out.jsonl"])
        elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "rows": report.n_stored}


def step_executemany(folder: str, n: int) -> dict[str, Any]:
    """Baseline: the same judgment rows inserted with one bare executemany (no parsing)."""
    from judgekit.store import open_store
    from judgekit.store import rows as R

    with open_store(Path(folder) / "b.db") as store:
        judgments = store.judgments(latest_only=False)
    rows = [R.judgment_to_row(j) for j in judgments]
    conn = sqlite3.connect(Path(folder) / "bare.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute(f"CREATE TABLE judgments ({', '.join(R.JUDGMENT_COLUMNS)})")
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(R.insert_sql("judgments", R.JUDGMENT_COLUMNS), rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return {"seconds": elapsed, "rows": len(rows)}


def _child(step: str, folder: str, n: int, queue: Any) -> None:
    result = STEPS[step](folder, n)
    result["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(result)


STEPS: dict[str, Callable[[str, int], dict[str, Any]]] = {
    "prepare": step_prepare, "dumps": step_dumps, "collect": step_collect,
    "executemany": step_executemany,
}


def measure(step: str, folder: str, n: int) -> dict[str, Any]:
    """Run one step in a fresh process; its result with the process's peak RSS."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(step, folder, n, queue))
    process.start()
    result: dict[str, Any] = queue.get(timeout=3600)
    process.join(timeout=60)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="calls at the large size")
    args = parser.parse_args()
    sizes = (args.n // 4, args.n)
    rows: list[tuple[str, int, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        for n in sizes:
            folder = Path(tmp) / str(n)
            folder.mkdir()
            rows.append(("prepare", n, measure("prepare", str(folder), n)))
            rows.append(("  json.dumps baseline", n, measure("dumps", str(folder), n)))
            write_output(str(folder))
            rows.append(("collect", n, measure("collect", str(folder), n)))
            rows.append(("  executemany baseline", n, measure("executemany", str(folder), n)))
    print(f"{'step':<24} {'calls':>8} {'seconds':>9} {'rows/s':>10} {'peak MiB':>9}")
    for name, n, r in rows:
        print(f"{name:<24} {n:>8} {r['seconds']:>9.2f} {r['rows'] / r['seconds']:>10,.0f} "
              f"{r['peak_mib']:>9.1f}")
    by = {(name.strip().split()[0], n): r for name, n, r in rows}
    small, large = sizes
    for step, base in (("prepare", "json.dumps"), ("collect", "executemany")):
        ours, plain = by[(step, large)], by[(base, large)]
        print(f"{step}: {plain['seconds'] / ours['seconds']:.2f}x the baseline's rows/s at {large};"
              f" peak memory {ours['peak_mib'] / by[(step, small)]['peak_mib']:.2f}x from "
              f"{small} to {large} calls")


if __name__ == "__main__":
    main()
