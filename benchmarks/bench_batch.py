"""``batch prepare`` and ``batch collect`` at 100,000 calls: rows per second and peak memory.

Run: ``python benchmarks/bench_batch.py [--n 100000] [--repeats 3] [--quick]``. Each step runs in a
fresh process (``spawn``), so its peak resident memory is its own. Both steps
run at n/4 and at n: the peak should stay flat (files and output are streamed,
nothing per call is held), while the time grows linearly. Times exclude
imports (done before the clock starts). Baselines measured in the same run:

- prepare vs ``json.dumps`` of the same request lines to a file (no cache
  lookup, no store);
- collect vs a bare ``executemany`` of the same judgment rows into SQLite (no
  parsing, no lookups).

At n the step and its baseline run ``--repeats`` times in fresh folders, in turn (prepare and
json.dumps alternate which goes first; collect's baseline needs the rows collect stored, so it
always follows); the ratio is the step's time over its baseline's, median and spread over the
pairs. ``--quick``: n = 4,000 and 2 pairs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _common import Paired, header, on_path, ratio_line, ratio_text, table

on_path()

from judgekit.clients.request import chat_request, response_format_for  # noqa: E402
from judgekit.clients.spec import JudgeSpec  # noqa: E402
from judgekit.judging.units import WorkUnit, unit_messages  # noqa: E402
from judgekit.rubrics import load_rubric, verdict_json_schema  # noqa: E402
from judgekit.types import Item  # noqa: E402

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


def one_size(root: Path, tag: str, n: int, prepare_first: bool) -> dict[str, dict[str, Any]]:
    """prepare, its baseline, collect and its baseline at ``n`` calls, in a fresh folder."""
    folder = root / tag
    folder.mkdir()
    out: dict[str, dict[str, Any]] = {}
    for step in ("prepare", "dumps") if prepare_first else ("dumps", "prepare"):
        out[step] = measure(step, str(folder), n)
    write_output(str(folder))
    for step in ("collect", "executemany"):
        out[step] = measure(step, str(folder), n)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="calls at the large size")
    parser.add_argument("--repeats", type=int, default=3, help="pairs at the large size")
    parser.add_argument("--quick", action="store_true", help="n = 4,000, 2 pairs")
    args = parser.parse_args()
    if args.quick:
        args.n, args.repeats = 4_000, 2
    header(f"batch prepare / collect against bare json.dumps / executemany, {args.n:,} calls")
    small, large = args.n // 4, args.n
    pairs = {"prepare": Paired(), "collect": Paired()}
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        first = one_size(Path(tmp), "small", small, True)
        runs = [one_size(Path(tmp), f"large{r}", large, r % 2 == 0) for r in range(args.repeats)]
    for run in runs:
        pairs["prepare"].add(run["prepare"]["seconds"], run["dumps"]["seconds"])
        pairs["collect"].add(run["collect"]["seconds"], run["executemany"]["seconds"])
    rows = []
    for step, base in (("prepare", "dumps"), ("collect", "executemany")):
        for name, key in ((step, step), (f"  {base} baseline", base)):
            for n, results in ((small, [first]), (large, runs)):
                seconds = statistics.median(r[key]["seconds"] for r in results)
                peak = max(r[key]["peak_mib"] for r in results)
                ratio = ratio_text(pairs[step].ratios) if key == step and n == large else ""
                rows.append((name, n, f"{seconds:.2f}", f"{results[0][key]['rows'] / seconds:,.0f}",
                             f"{peak:.1f}", ratio))
    print(table(("step", "calls", "seconds", "rows/s", "peak MiB", "step / baseline (time)"),
                rows))
    print()
    for step in ("prepare", "collect"):
        growth = max(r[step]["peak_mib"] for r in runs) / first[step]["peak_mib"]
        print(f"{step}: peak memory {growth:.2f}x from {small:,} to {large:,} calls")
    for step, base in (("prepare", "json.dumps"), ("collect", "executemany")):
        print(ratio_line(f"batch {step} / bare {base} (time)", pairs[step].ratios))


if __name__ == "__main__":
    main()
