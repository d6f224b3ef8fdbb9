"""Durability under interruption: random ``kill -9`` and Ctrl-C in a faulty run.

    python benchmarks/bench_interrupts.py [--calls 1000] [--kills 10] [--sigints 10]
                                          [--submits 10] [--seed 0] [--limit-s 900]

One store, one dataset of ``--calls`` items, and a hostile endpoint (a share of
500s, 429s with Retry-After 0 and bodies that are not JSON, 0.1 s per answer)
in this process. ``judgekit judge`` runs in its own process and is interrupted
``--kills`` times with SIGKILL and ``--sigints`` times with SIGINT, in random
order, each after a random number (10-40) of new requests; then one last run
finishes the dataset. After every process the script compares the store and
the server's own counts and prints, per kind of interruption:

- finished judgments lost: finished outcomes stored before a process started
  that are missing after it ended (must be 0);
- repeated requests for finished calls: requests for items that already had a
  finished outcome when the process started (must be 0);
- answered-but-discarded calls: answers the server delivered in full during the
  process that were not stored (SIGINT must be 0; kill -9 counts the answers
  that were on their way when the process died).

Then ``batch submit``: ``--submits`` prepared files (one store each) are each
submitted in a process that is killed with SIGKILL while the Batch API test
server holds the upload or the create (the batch already made) open, at a step
drawn at random; the file is then submitted again (after a ``batch status``
for every other file). The table counts the batches the provider created per
file (must be exactly 1) and the jobs the store recorded.

Bounded: every wait has a limit and the whole script stops after ``--limit-s``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.adversarial.conftest import judge_process, write_items  # noqa: E402
from tests.support.batch_server import BatchServer  # noqa: E402
from tests.support.cli import run_cli  # noqa: E402
from tests.support.hostile_server import HostileServer  # noqa: E402

FINISHED = "('ok', 'parse_error', 'refusal', 'truncated')"


@dataclass
class Tally:
    runs: int = 0
    lost: int = 0
    repeated: int = 0
    discarded: int = 0
    stored: int = 0


def finished_items(db: Path) -> Counter[str]:
    """Finished outcome rows per item (0 rows: absent)."""
    if not db.exists():
        return Counter()
    with sqlite3.connect(db) as conn:
        try:
            rows = conn.execute(
                f"SELECT item_id, COUNT(*) FROM judgments WHERE status IN {FINISHED} "
                "GROUP BY item_id").fetchall()
        except sqlite3.OperationalError:
            return Counter()
    return Counter(dict(rows))


def settle(server: HostileServer, limit_s: float = 30.0) -> None:
    """Wait until the server has finished answering (a dead client's calls included)."""
    deadline = time.monotonic() + limit_s
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)


def one_process(server: HostileServer, data: Path, db: Path, sig: signal.Signals | None,
                after: int, tally: Tally, stop_at: float) -> int:
    """Run judge once (interrupted by ``sig`` after ``after`` new requests); count into tally."""
    before = finished_items(db)
    requests, answered = Counter(server.requests), Counter(server.answered)
    proc = judge_process(server.base_url, data, db, "--concurrency", "8")
    start = server.request_count
    while sig is not None and proc.poll() is None and server.request_count - start < after:
        if time.monotonic() > stop_at:
            proc.kill()
            raise SystemExit("time limit reached")
        time.sleep(0.005)
    if sig is not None and proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.communicate(timeout=max(1.0, stop_at - time.monotonic()))
    except Exception:
        proc.kill()
        raise
    settle(server)
    after_rows = finished_items(db)
    new_requests = Counter(server.requests) - requests
    new_answers = Counter(server.answered) - answered
    tally.runs += 1
    tally.lost += sum(1 for item in before if after_rows[item] == 0)
    tally.repeated += sum(n for item, n in new_requests.items() if before[item])
    stored = sum((after_rows - before).values())
    tally.stored += stored
    tally.discarded += sum(new_answers.values()) - stored
    return proc.returncode


def submit_killed(server: BatchServer, tmp: Path, index: int, step: str, then_status: bool,
                  stop_at: float) -> tuple[int, int]:
    """Prepare one file, kill its submit in ``step``, submit again; (batches made, jobs)."""
    folder = tmp / f"submit-{index}"
    folder.mkdir()
    data = write_items(folder / "items.jsonl", 5)
    db, out = folder / "judgekit.db", folder / "req.jsonl"
    code, _, err = run_cli("batch", "prepare", "-r", "correctness", "--data",
                           str(data), "--db", str(db), "--base-url", server.base_url,
                           "--model", "m", "--out", str(out))
    if code != 0:
        raise SystemExit(f"batch prepare failed: {err}")
    before = set(server.batches)
    server.events.clear()
    server.delays = {step: 3.0}
    proc = subprocess.Popen([sys.executable, "-m", "judgekit", "batch", "submit", str(out),
                             "--db", str(db)], cwd=ROOT, env={**os.environ, "PYTHONPATH":
                                                              str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while step not in server.events and proc.poll() is None:
        if time.monotonic() > stop_at:
            proc.kill()
            raise SystemExit("time limit reached")
        time.sleep(0.01)
    time.sleep(0.2)
    proc.kill()
    proc.wait(timeout=30)
    server.delays = {}
    if then_status:
        run_cli("batch", "status", "--db", str(db))
    run_cli("batch", "submit", str(out), "--db", str(db))
    run_cli("batch", "submit", str(out), "--db", str(db))  # a second try is refused
    made = len(set(server.batches) - before)
    with sqlite3.connect(db) as conn:
        jobs = conn.execute("SELECT COUNT(*) FROM batch_jobs").fetchone()[0]
    return made, int(jobs)


def submit_table(submits: int, rng: random.Random, stop_at: float) -> None:
    """The batch-submit interruption table (see the module docstring)."""
    rows: dict[str, list[tuple[int, int]]] = {"upload": [], "create": []}
    with tempfile.TemporaryDirectory() as tmp, BatchServer() as server:
        for index in range(submits):
            step = rng.choice(list(rows))
            rows[step].append(submit_killed(server, Path(tmp), index, step,
                                            rng.random() < 0.5, stop_at))
    print("\n| batch submit killed during | files | batches created per file (min-max) | "
          "files with exactly 1 batch | jobs recorded per file (min-max) |")
    print("|---|---|---|---|---|")
    for step, found in rows.items():
        if not found:
            continue
        made, jobs = [m for m, _ in found], [j for _, j in found]
        print(f"| {step} | {len(found)} | {min(made)}-{max(made)} | "
              f"{sum(1 for m in made if m == 1)}/{len(found)} | {min(jobs)}-{max(jobs)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--sigints", type=int, default=10)
    parser.add_argument("--submits", type=int, default=10,
                        help="batch submits killed at the upload or the create")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit-s", type=float, default=900.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    stop_at = time.monotonic() + args.limit_s
    order = [signal.SIGKILL] * args.kills + [signal.SIGINT] * args.sigints
    rng.shuffle(order)
    tallies = {signal.SIGKILL: Tally(), signal.SIGINT: Tally()}
    final = Tally()
    with tempfile.TemporaryDirectory() as tmp, HostileServer(
        "faulty", seed=args.seed, latency=0.1
    ) as server:
        server.fault_rate = 0.15
        data = write_items(Path(tmp) / "items.jsonl", args.calls)
        db = Path(tmp) / "judgekit.db"
        started = time.monotonic()
        for sig in order:
            one_process(server, data, db, sig, rng.randint(10, 40), tallies[sig], stop_at)
        for _ in range(5):  # transient failures left: run again until every call finished
            code = one_process(server, data, db, None, 0, final, stop_at)
            if code == 0 and len(finished_items(db)) == args.calls:
                break
        elapsed = time.monotonic() - started
        complete = len(finished_items(db))
        total_requests = server.request_count
    print(f"{args.calls} calls, faulty endpoint (15% faults), seed {args.seed}: "
          f"{complete}/{args.calls} finished, {total_requests} judge requests, "
          f"{elapsed:.0f} s\n")
    print("| interruption | processes | finished judgments lost | repeated requests for "
          "finished calls | answered-but-discarded calls | outcomes stored |")
    print("|---|---|---|---|---|---|")
    for name, tally in (("kill -9", tallies[signal.SIGKILL]),
                        ("SIGINT (Ctrl-C)", tallies[signal.SIGINT]), ("final run", final)):
        print(f"| {name} | {tally.runs} | {tally.lost} | {tally.repeated} | {tally.discarded} | "
              f"{tally.stored} |")
    if args.submits:
        submit_table(args.submits, rng, stop_at)


if __name__ == "__main__":
    main()
