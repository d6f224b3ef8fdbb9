"""How long ``judgekit queues`` takes on a queue of a whole multi-criteria file, against a
single-criterion queue of the same size in the same run.

Run: ``python benchmarks/bench_queue_progress.py [--items 20000] [--criteria 4] [--quick]
[--before REF]``. A fresh store of ``--items`` items gets a rubric file of ``--criteria``
criteria, one queue of every item assigned to ana for the whole file and one for its
first criterion alone (each timed in a copy of the store holding only that queue), and
labels: ana every criterion of 75% of the items (a tenth of them relabeled, one item in
fifty with a criterion skipped) and the first half of the criteria of 15% more, bo every
criterion of every item (another queue's work), and adjudications of a twentieth.

Each cell is timed in a fresh process on the code under test: the median and maximum
of ``--repeats`` calls of :func:`judgekit.serve.progress.queue_rows` (what
``judgekit queues``, the API and the lead page run), the SQL statements one call runs,
and the median wall time of the command ``judgekit queues --format json`` (Python's
start and imports included). With ``--before REF`` the same cells run on that commit's
code too (exported with ``git archive``), where a whole-file queue was counted by its
first criterion only. The last line is the ratio of the whole file's queue_rows to the
single criterion's, timed in this process in alternating pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import header, paired, ratio_line  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from judgekit.cli.main import cli  # noqa: E402
from judgekit.store import open_store  # noqa: E402
from judgekit.types import ADJUDICATED_SOURCE, Item, Label  # noqa: E402

#: Timed in the process under test: queue_rows repeated, and the statements of one call.
_TIMER = """
import json, statistics, sys, time
from judgekit.serve.progress import queue_rows
from judgekit.store import open_store
db, repeats = sys.argv[1], int(sys.argv[2])
with open_store(db) as store:
    queue_rows(store)  # warm: the page cache and the imports
    statements = []
    store._conn.set_trace_callback(statements.append)
    rows = queue_rows(store)
    store._conn.set_trace_callback(None)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        queue_rows(store)
        times.append(time.perf_counter() - start)
print(json.dumps({"median": statistics.median(times), "max": max(times),
                  "statements": len(statements), "rows": rows}))
"""


def rubric_text(criteria: int) -> str:
    parts = ['name = "bench"', 'version = "1"', "", "[scale]", 'kind = "ordinal"', "min = 1",
             "max = 5", "", "[scale.levels]", *[f'"{v}" = "Level {v}."' for v in range(1, 6)],
             "", "[prompt]", 'user = "Input: {input}\\nResponse: {response}\\n{scale}"']
    for c in range(criteria):
        parts += ["", f"[criteria.c{c + 1}]", f'description = "Criterion {c + 1}."']
    return "\n".join(parts) + "\n"


def build(folder: Path, n: int, criteria: int) -> tuple[Path, Path]:
    """Two store files, the same items and labels: one with the whole-file queue only, one
    with the first criterion's queue only."""
    from judgekit.cli._annotate_criteria import criteria_file

    rubric = folder / "bench.toml"
    rubric.write_text(rubric_text(criteria), encoding="utf-8")
    db = folder / "both.db"
    with open_store(db) as store:
        store.import_items("d", [Item(id=f"i{i:05d}", input=f"question {i}",
                                      response=f"answer {i}") for i in range(n)])
    for reference in (str(rubric), f"{rubric}#c1"):
        result = CliRunner().invoke(cli, ["queue", "assign", "--db", str(db), "--rubric",
                                          reference, "--annotators", "ana"])
        assert result.exit_code == 0, (result.output, result.exception)
    whole = criteria_file(str(rubric))
    assert whole is not None
    shas = [c.rubric.sha256 for c in whole.criteria]
    labels: list[Label] = []
    for i in range(n):
        key = ("d", f"i{i:05d}")
        if i < 0.75 * n:
            ana = shas
        elif i < 0.9 * n:
            ana = shas[: max(1, criteria // 2)]
        else:
            ana = []
        for c, sha in enumerate(ana):
            if i % 10 == 0:
                labels.append(Label(*key, sha, "ana", "2"))  # replaced by the next row
            skip = i % 50 == 0 and c == criteria - 1
            labels.append(Label(*key, sha, "ana", None if skip else str(1 + (i + c) % 5)))
        labels += [Label(*key, sha, "bo", str(1 + i % 5)) for sha in shas]
        if i % 20 == 0:
            labels.append(Label(*key, shas[0], "lee", "3", source=ADJUDICATED_SOURCE))
    with open_store(db) as store:
        store.add_labels(labels)
        names = {head.name: bool(head.criteria) for head in store.queue_heads()}
    copies = []
    for keep_whole in (True, False):
        copy = folder / ("whole.db" if keep_whole else "single.db")
        shutil.copy(db, copy)
        with sqlite3.connect(copy) as conn:
            for name, is_whole in names.items():
                if is_whole != keep_whole:
                    conn.execute("DELETE FROM queue_items WHERE queue = ?", [name])
                    conn.execute("DELETE FROM queues WHERE name = ?", [name])
        copies.append(copy)
    print(f"store: {n:,} items, {criteria} criteria, {len(labels):,} label rows", flush=True)
    return copies[0], copies[1]


def measure(code: Path, db: Path, repeats: int, cli_runs: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    timed = subprocess.run([sys.executable, "-c", _TIMER, str(db), str(repeats)], env=env,
                           cwd=code, capture_output=True, text=True, check=True)
    found: dict[str, Any] = json.loads(timed.stdout)
    walls = []
    for _ in range(cli_runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "judgekit", "queues", "--db", str(db),
                        "--format", "json"], env=env, cwd=code, capture_output=True, check=True)
        walls.append(time.perf_counter() - start)
    found["cli"] = statistics.median(walls)
    return found


def export(ref: str, folder: Path) -> Path:
    """The code of ``ref`` in ``folder`` (``git archive``: no checkout, no worktree)."""
    target = folder / "before"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "judgekit"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--criteria", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--before", metavar="REF", default=None,
                        help="also time this commit's code (e.g. the commit before the change)")
    parser.add_argument("--quick", action="store_true", help="2,000 items, 3 repeats, 1 CLI run")
    args = parser.parse_args()
    if args.quick:
        args.items, args.repeats, args.cli_runs = 2_000, 3, 1
    header(f"queue progress: a whole {args.criteria}-criteria file's queue against one "
           "criterion's, same items")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        whole, single = build(folder, args.items, args.criteria)
        codes = [("now", ROOT)]
        if args.before:
            codes.insert(0, (f"before ({args.before})", export(args.before, folder)))
        print(f"\n| queue ({args.items:,} items) | code | queue_rows median ms | max ms | "
              "statements | `judgekit queues` s | ana: labeled / skipped / remaining |")
        print("|---|---|---:|---:|---:|---:|---|")
        for label, db in (("first criterion alone (c1)", single),
                          (f"whole file ({args.criteria} criteria)", whole)):
            for name, code in codes:
                found = measure(code, db, args.repeats, args.cli_runs)
                ana = next(r for r in found["rows"] if r["annotator"] == "ana")
                counts = f"{ana['labeled']:,} / {ana['skipped']:,} / {ana['remaining']:,}"
                if ana.get("criteria"):
                    counts += " (" + ", ".join(f"{k} {v['remaining']:,} left"
                                               for k, v in ana["criteria"].items()) + ")"
                print(f"| {label} | {name} | {1000 * found['median']:.1f} | "
                      f"{1000 * found['max']:.1f} | {found['statements']} | "
                      f"{found['cli']:.2f} | {counts} |", flush=True)
        from judgekit.serve.progress import queue_rows

        with open_store(whole) as whole_store, open_store(single) as single_store:
            pairs = paired(lambda: queue_rows(whole_store), lambda: queue_rows(single_store),
                           args.repeats)
        print()
        print(ratio_line(f"whole file ({args.criteria} criteria) / first criterion alone "
                         "(queue_rows, time)", pairs.ratios))


if __name__ == "__main__":
    main()
