"""Header pacing against a rate-limited server, and replicas against capacity-bound servers.

    python benchmarks/bench_pacing.py [--items 200] [--repeats 3] [--quick]

1. A server that allows ``--limit`` requests per 1 s window and answers HTTP 429
   (with ``Retry-After``) past it, run twice on the same items: once sending only
   the 429s, once also sending ``x-ratelimit-remaining-requests`` and
   ``x-ratelimit-reset-requests`` with every answer. Prints the 429s received,
   requests made and judgments per second of each (target: with the headers,
   a few 429s at most instead of one per call over the limit). The two alternate,
   ``--repeats`` pairs; the ratio is the time with headers over the time without.
2. Three servers that each answer at most 2 requests at a time (200 ms each): the
   same judge at concurrency 6 through one URL, through all three, and through
   all three with one of them down. Prints judgments per second and the ratio to
   one URL (target: towards 3x with three and 2x with one down as runs grow; the
   capability probes, a few sequential requests, are a fixed cost). The three set-ups
   run in turn, ``--repeats`` rounds; each ratio is taken within its round.

``--quick``: 40 items, 2 pairs.

The servers run in this process (the figures compare runs of this script
against each other, never against another machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import header, on_path, ratio_line, ratio_text, table

ROOT = on_path()

from judgekit.clients import JudgeSpec  # noqa: E402
from judgekit.judging.runner import run_judgments  # noqa: E402
from judgekit.rubrics import load_rubric  # noqa: E402
from judgekit.store import open_store  # noqa: E402
from judgekit.types import Item  # noqa: E402
from tests.support.openai_server import OpenAIServer, _error  # noqa: E402

WINDOW_S = 1.0


class LimitedServer(OpenAIServer):
    """Answers ``per_window`` requests per window, 429 past it; ``capacity`` at a time."""

    def __init__(self, *, per_window: int | None = None, headers: bool = False,
                 capacity: int | None = None, service_s: float = 0.0) -> None:
        super().__init__(keep_bodies=False)
        self.per_window, self.send_headers = per_window, headers
        self.service_s = service_s
        self.limited = 0
        self._window_end, self._used = 0.0, 0
        self._gate = threading.Semaphore(capacity) if capacity else None
        self._limit_lock = threading.Lock()

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        left, reset = None, 0.0
        if self.per_window is not None:
            with self._limit_lock:
                now = time.monotonic()
                if now >= self._window_end:
                    self._window_end, self._used = now + WINDOW_S, 0
                reset = self._window_end - now
                left = self.per_window - self._used
                if left <= 0:
                    self.limited += 1
                    return _error(429, "Rate limit reached.", "rate_limit_exceeded",
                                  {"Retry-After": f"{reset:.3f}"})
                self._used += 1
        if self._gate is not None:
            with self._gate:
                time.sleep(self.service_s)
        status, headers, data = super()._completion(body)
        if self.send_headers and left is not None:
            headers = {**headers, "x-ratelimit-remaining-requests": str(left - 1),
                       "x-ratelimit-reset-requests": f"{reset * 1000:.0f}ms"}
        return status, headers, data


def items(n: int) -> list[Item]:
    return [Item(id=f"i{k}", input=f"What is {k} + 1?", response=str(k + 1),
                 reference=str(k + 1)) for k in range(n)]


def judge(urls: list[str], n: int, concurrency: int) -> tuple[float, Any]:
    rubric = load_rubric(ROOT / "rubrics" / "correctness.toml")
    spec = JudgeSpec(base_url=urls[0], replica_urls=tuple(urls[1:]), model="m",
                     identity="name:bench" if len(urls) > 1 else None,
                     concurrency=concurrency, max_retries=8, logprobs=False)
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "b.db") as store:
        started = time.perf_counter()
        summary = run_judgments(store, rubric, items(n), spec, dataset="bench", progress=False)
        return time.perf_counter() - started, summary


def header_pacing(n: int, limit: int, repeats: int) -> list[str]:
    print(f"1. {n} calls, concurrency 16, server limit {limit} requests per "
          f"{WINDOW_S:g} s window, {repeats} pairs")
    seen: dict[bool, list[tuple[float, int, int, float]]] = {False: [], True: []}
    for k in range(repeats):
        for headers in ((False, True) if k % 2 == 0 else (True, False)):
            with LimitedServer(per_window=limit, headers=headers) as server:
                seconds, summary = judge([server.base_url], n, 16)
                assert summary.counts.get("ok") == n, summary.counts
                seen[headers].append((seconds, server.limited, summary.requests,
                                      summary.judged / seconds))
    ratios = [w[0] / wo[0] for w, wo in zip(seen[True], seen[False], strict=True)]
    rows = []
    for headers, label in ((False, "429 + Retry-After only (baseline)"),
                           (True, "429 + x-ratelimit-* headers")):
        runs = seen[headers]
        rows.append((label, f"{statistics.median(r[0] for r in runs):.2f}",
                     f"{statistics.median(r[1] for r in runs):g}",
                     f"{statistics.median(r[2] for r in runs):g}",
                     f"{statistics.median(r[3] for r in runs):.1f}",
                     ratio_text(ratios) if headers else ""))
    print(table(("server sends", "seconds", "429s", "requests", "judged/s",
                 "headers / baseline (time)"), rows))
    return [ratio_line("header pacing / Retry-After only (time)", ratios)]


def replicas(n: int, repeats: int) -> list[str]:
    print(f"2. {n} calls, concurrency 6, each server 2 at a time, 200 ms per answer, "
          f"{repeats} rounds")
    rates: dict[str, list[float]] = {}
    notes: dict[str, str] = {}
    with LimitedServer(capacity=2, service_s=0.2) as a, \
            LimitedServer(capacity=2, service_s=0.2) as b, \
            LimitedServer(capacity=2, service_s=0.2) as c:
        down = OpenAIServer()
        down_url = down.base_url
        down.close_socket()
        setups = [("one (baseline)", [a.base_url]),
                  ("three", [a.base_url, b.base_url, c.base_url]),
                  ("three, one of them down", [down_url, b.base_url, c.base_url])]
        for k in range(repeats):
            for label, urls in setups if k % 2 == 0 else setups[::-1]:
                seconds, summary = judge(urls, n, 6)
                assert summary.counts.get("ok") == n, summary.counts
                rates.setdefault(label, []).append(summary.judged / seconds)
                if len(urls) > 1:
                    notes[label] = json.dumps([{key: r[key] for key in ("requests", "failed",
                                                                        "cool_downs")}
                                               for r in summary.replicas])
    base = rates["one (baseline)"]
    rows, lines = [], []
    for label, _ in setups:
        ratios = [r / b for r, b in zip(rates[label], base, strict=True)]
        rows.append((label, f"{statistics.median(rates[label]):.1f}",
                     ratio_text(ratios) if label != "one (baseline)" else ""))
        if label != "one (baseline)":
            lines.append(ratio_line(f"replicas {label} / one url (throughput)", ratios))
    print(table(("urls", "judged/s", "ratio to one url (spread)"), rows))
    for label, note in notes.items():
        print(f"  {label}, last round: {note}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="pairs (rounds) of each part")
    parser.add_argument("--quick", action="store_true", help="40 items, 2 pairs")
    args = parser.parse_args()
    n, repeats = (40, 2) if args.quick else (args.items, args.repeats)
    header("Header pacing and replicas against loopback servers")
    lines = header_pacing(n, args.limit, repeats)
    print()
    lines += replicas(n, repeats)
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
