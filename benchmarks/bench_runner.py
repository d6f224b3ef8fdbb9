"""Runner throughput, rerun time and peak memory against the loopback test server.

    python benchmarks/bench_runner.py [--items 5000] [--concurrency 64] [--latency 0.1]
                                      [--memory-items 100000] [--rounds 4] [--quick]

1. Throughput: the same requests (same rendered prompts, same parameters) sent
   by a bare ``AsyncOpenAI`` + semaphore loop without storage, and by
   judgekit's runner (cache lookup, parsing, one SQLite commit per judgment),
   in the same run against the same server, in alternating rounds (``--rounds``
   pairs). Prints both (median round each) and the throughput ratio judgekit / bare,
   median and spread over the pairs (target >= 0.9).
2. Rerun: the finished items judged again (target < 2 s, 0 requests).
3. Peak memory: a fresh process judges N items streamed from a generator at
   zero latency; peak RSS for N/10 and N items (target: flat in N).

The server runs in its own process so it does not compete for this one's GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from _common import header, on_path, ratio_line, spread, table

ROOT = on_path()

import openai  # noqa: E402

from judgekit.clients import JudgeSpec  # noqa: E402
from judgekit.judging.runner import run_judgments  # noqa: E402
from judgekit.rubrics import load_rubric, render_messages  # noqa: E402
from judgekit.store import open_store  # noqa: E402
from judgekit.types import Item, SamplingParams  # noqa: E402

RUBRIC = ROOT / "rubrics" / "correctness.toml"


def items(n: int, prefix: str = "i") -> Iterator[Item]:
    for i in range(n):
        yield Item(id=f"{prefix}{i}", input=f"What is {i} + {i}?", response=str(2 * i),
                   reference=str(2 * i))


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "support" / "openai_server.py"),
         "--latency", str(latency)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def server_requests(base_url: str) -> int:
    with urllib.request.urlopen(f"{base_url}/stats", timeout=5) as response:
        return int(json.load(response)["requests"])


async def bare_loop(base_url: str, n: int, concurrency: int) -> float:
    """The baseline: AsyncOpenAI + a semaphore, same requests, nothing stored."""
    rubric = load_rubric(RUBRIC)
    sampling = SamplingParams().as_dict()
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    semaphore = asyncio.Semaphore(concurrency)
    fmt = {"type": "json_schema",
           "json_schema": {"name": "verdict", "strict": True,
                           "schema": {"type": "object", "properties": {
                               "reasoning": {"type": "string"},
                               "verdict": {"type": "string", "enum": ["pass", "fail"]}},
                               "required": ["reasoning", "verdict"],
                               "additionalProperties": False}}}

    async def one(item: Item) -> None:
        async with semaphore:
            await client.chat.completions.create(
                model="bench", messages=render_messages(rubric, item),  # type: ignore[arg-type]
                response_format=fmt, **sampling)  # type: ignore[call-overload]

    started = time.perf_counter()
    await asyncio.gather(*(one(item) for item in items(n, "b")))
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


def judgekit_run(base_url: str, db: Path, n: int, concurrency: int, prefix: str) -> tuple[
        float, int, int]:
    """(elapsed, judged, requests seen by the server) for one runner invocation."""
    rubric = load_rubric(RUBRIC)
    spec = JudgeSpec(base_url=base_url, model="bench", concurrency=concurrency, max_retries=0)
    before = server_requests(base_url)
    with open_store(db) as store:
        started = time.perf_counter()
        summary = run_judgments(store, rubric, items(n, prefix), spec, dataset="bench",
                                total=n, progress=False)
        elapsed = time.perf_counter() - started
    return elapsed, summary.judged, server_requests(base_url) - before


def peak_rss_child(base_url: str, n: int) -> float:
    """Peak RSS (MiB) of a fresh process that judges ``n`` streamed items."""
    code = (
        "import sys, resource; sys.path.insert(0, sys.argv[1] + '/benchmarks');"
        "from bench_runner import judgekit_run;"
        "from pathlib import Path;"
        "judgekit_run(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), 64, 'm');"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "mem.db"
        # capabilities probed once beforehand so the child only judges
        judgekit_run(base_url, db, 1, 1, "warm")
        out = subprocess.run([sys.executable, "-c", code, str(ROOT), base_url, str(db), str(n)],
                             capture_output=True, text=True, check=True, cwd=ROOT)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--memory-items", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=4, help="pairs of bare and runner rounds")
    parser.add_argument("--quick", action="store_true",
                        help="300 items, 2 pairs, 2,000 for memory")
    args = parser.parse_args()
    if args.quick:
        args.items, args.memory_items, args.rounds = 300, 2_000, 2
    header("Runner throughput against a bare AsyncOpenAI loop on the same loopback server")

    n, conc = args.items, args.concurrency
    server, url = start_server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            judgekit_run(url, db, 1, 1, "warm")  # probe capabilities once
            # rounds in alternating order, one ratio per pair: a busy machine slows
            # both sides of a pair alike
            bare_times, jk_times = [], []
            for round_number in range(args.rounds):
                order = ("bare", "jk") if round_number % 2 == 0 else ("jk", "bare")
                for side in order:
                    if side == "bare":
                        bare_times.append(asyncio.run(bare_loop(url, n, conc)))
                    else:
                        elapsed, judged, requests = judgekit_run(url, db, n, conc,
                                                                 f"r{round_number}-")
                        assert judged == n and requests == n, (judged, requests)
                        jk_times.append(elapsed)
            rerun_s, rejudged, rerun_requests = judgekit_run(url, db, n, conc, "r0-")
        ratios = [b / j for b, j in zip(bare_times, jk_times, strict=True)]
        base_s, jk_s = statistics.median(bare_times), statistics.median(jk_times)
        mid, low, high = spread(ratios)
        print(f"throughput, {n} items, concurrency {conc}, server latency "
              f"{args.latency * 1000:.0f} ms, {args.rounds} pairs of rounds")
        print(table(("side", "per s (median)", "seconds per round"), [
            ("bare AsyncOpenAI + semaphore", f"{n / base_s:.1f} req",
             ", ".join(f"{t:.2f}" for t in bare_times)),
            ("judgekit runner (with store)", f"{n / jk_s:.1f} judgments",
             ", ".join(f"{t:.2f}" for t in jk_times)),
            ("judgekit / bare (throughput)", f"{mid:.3f} ({low:.3f}-{high:.3f})",
             "target >= 0.9"),
        ]))
        print(f"rerun of the {n} finished items : {rerun_s:.3f} s, {rerun_requests} requests, "
              f"{rejudged} judged  (target < 2 s, 0 requests)")
        print(ratio_line("judgekit / bare client (throughput)", ratios))
    finally:
        server.terminate()
        server.wait()

    server, url = start_server(0.0)
    try:
        small = max(1, args.memory_items // 10)
        rss_small = peak_rss_child(url, small)
        rss_large = peak_rss_child(url, args.memory_items)
        print(f"peak RSS, items streamed at 0 ms latency: {small:,} items {rss_small:.1f} MiB; "
              f"{args.memory_items:,} items {rss_large:.1f} MiB "
              f"(ratio {rss_large / rss_small:.2f}; target: flat)")
    finally:
        server.terminate()
        server.wait()
    print(f"(this process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}"
          " MiB)")


if __name__ == "__main__":
    main()
