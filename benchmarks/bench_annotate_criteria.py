"""Key press -> label committed and screen redrawn: every criterion on one screen vs one rubric.

Run: ``python benchmarks/bench_annotate_criteria.py [--items 100000] [--presses 200]
[--rounds 3] [--quick]``.

The same store and queue (a stratified draw over ``--items`` items) are labeled twice:
by the single-criterion app on the file's first criterion, and by the multi-criteria
app on all four criteria of a SummEval-like file. For every press the clock runs from
posting the key (through the driver, as a terminal delivers it) until the screen has
committed the row and redrawn (focus moved, or the next item shown). Outside the timed
window a separate SQLite connection checks that the row is committed, so every sample
is a durable label. One key is one row in both apps; the multi-criteria screen moves
to the next item after every fourth key. The two apps take turns over ``--rounds``
rounds (each a fresh annotator, ``--presses`` keys split among the rounds), and the
ratio line is the four-criteria median over the one-criterion median, round by round.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import header, ratio_line  # noqa: E402
from textual import events  # noqa: E402

from judgekit.cli._annotate_criteria import criteria_file  # noqa: E402
from judgekit.cli.annotate import prepare_queue  # noqa: E402
from judgekit.store import Store, open_store  # noqa: E402
from judgekit.tui.app import AnnotateApp, make_app  # noqa: E402
from judgekit.tui.criteria_app import make_criteria_app, title_rubric  # noqa: E402
from judgekit.types import Item  # noqa: E402

RUBRIC = """
name = "summeval"
version = "1"
per_call = true
[scale]
kind = "ordinal"
min = 1
max = 5
levels = { "1" = "Very poor.", "2" = "Poor.", "3" = "Fair.", "4" = "Good.", "5" = "Very good." }
[prompt]
user = "Article: {input}\\n\\nSummary: {response}\\n\\n{scale}"
[criteria.coherence]
description = "The summary is well structured and organised."
[criteria.consistency]
description = "Every fact in the summary is supported by the article."
[criteria.fluency]
description = "Every sentence is grammatical and reads naturally."
[criteria.relevance]
description = "The summary keeps the important content and leaves out the rest."
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def rows_of(path: Path, annotator: str) -> int:
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM labels WHERE annotator = ?",
                                [annotator]).fetchone()
    return int(count)


async def timed_presses(app: AnnotateApp, path: Path, annotator: str,
                        presses: int) -> list[float]:
    """Post ``presses`` level keys; time each until its row is committed and the view redrawn."""
    samples: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        if len(app.screen_stack) > 2:  # the guidelines open first on a new queue
            await pilot.press("escape")
            await pilot.pause()
        screen = app.label_screen
        drawn = asyncio.Event()
        original = screen.refresh_view

        def spy() -> None:
            original()
            drawn.set()

        screen.refresh_view = spy  # type: ignore[method-assign]
        driver = app._driver
        assert driver is not None
        for i in range(presses):
            drawn.clear()
            key = str(1 + i % 5)
            started = time.perf_counter()
            driver.send_message(events.Key(key, key))
            await asyncio.wait_for(drawn.wait(), timeout=10)
            samples.append(time.perf_counter() - started)
            assert rows_of(path, annotator) == i + 1, "the row was not committed"
        screen.refresh_view = original  # type: ignore[method-assign]
        await pilot.press("q")
    return samples


def build(path: Path, n_items: int) -> Store:
    store = open_store(path)
    batch: list[Item] = []
    for i in range(n_items):
        batch.append(Item(id=f"item-{i:06d}", input=f"Article {i}: the council met. " * 5,
                          response=f"Summary {i}: the council met.", slice="ab"[i % 2]))
        if len(batch) == 10_000:
            store.import_items("bench", batch)
            batch = []
    if batch:
        store.import_items("bench", batch)
    return store


def row(name: str, samples: list[float]) -> str:
    p50, p95 = statistics.median(samples) * 1000, percentile(samples, 95) * 1000
    return f"{name:<44} {len(samples):>5} {p50:>9.2f} {p95:>9.2f} {max(samples) * 1000:>9.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--presses", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="5,000 items, 40 presses, 2 rounds")
    args = parser.parse_args()
    if args.quick:
        args.items, args.presses, args.rounds = 5_000, 40, 2
    header("annotate: a key on the four-criteria screen against one criterion's, same store")
    per_round = max(4, args.presses // max(1, args.rounds))
    single: list[float] = []
    multi: list[float] = []
    ratios: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        rubric_path = Path(tmp) / "summeval.toml"
        rubric_path.write_text(RUBRIC, encoding="utf-8")
        found = criteria_file(str(rubric_path))
        assert found is not None
        path = Path(tmp) / "bench.db"
        store = build(path, args.items)
        first = found.criteria[0].rubric
        for criterion in found.criteria:
            store.save_rubric(criterion.rubric)
        queue = prepare_queue(store, first, dataset="bench", strategy="random",
                              sample=per_round + 10, seed=0)
        open_ms: list[float] = []
        for k in range(max(1, args.rounds)):
            one = asyncio.run(timed_presses(
                make_app(store, first, queue.name, annotator=f"one-{k}"), path, f"one-{k}",
                per_round))
            started = time.perf_counter()
            app = make_criteria_app(store, title_rubric(found.name, found.criteria),
                                    found.criteria, queue.entries, annotator=f"all-{k}")
            open_ms.append((time.perf_counter() - started) * 1000)
            four = asyncio.run(timed_presses(app, path, f"all-{k}", per_round))
            single += one
            multi += four
            ratios.append(statistics.median(four) / statistics.median(one))
        store.close()
    print(f"store: {args.items:,} items; queue of {queue.size}; the four-criteria app opened "
          f"in {statistics.median(open_ms):.0f} ms (median of {len(open_ms)})")
    print()
    print(f"{'key press -> row committed, screen redrawn (ms)':<44} {'n':>5} {'p50':>9} "
          f"{'p95':>9} {'max':>9}")
    print("-" * 44 + "  " + "  ".join("-" * w for w in (5, 9, 9, 9)))
    print(row("one criterion (FILE#coherence)", single))
    print(row("four criteria on one screen", multi))
    print()
    print(ratio_line("four criteria / one criterion (median key, time)", ratios, "rounds"))


if __name__ == "__main__":
    main()
