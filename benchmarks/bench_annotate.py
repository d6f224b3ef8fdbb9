"""Key press -> next item shown, in the annotate app, on a store with 100,000 items.

Run: ``python benchmarks/bench_annotate.py [--items 100000] [--presses 300] [--quick]``.

For every press the clock runs from posting the key until the labeling screen
has committed the label (``store.add_label`` returned) and redrawn the next item,
then until the next frame has been painted. After each press, and outside the
timed window, a separate SQLite connection checks that the label row is there,
so every sample is a durable label. The baseline, measured in the same run, is
the floor any UI pays: one ``add_label`` plus one ``get_item`` on the same file,
timed just before each press (outside the press's window), so press and baseline
alternate. The ratio is the app's median over the baseline's, per block of 20 presses
(median and spread over the blocks). The last scenario repeats the app run while another
process writes judgments to the same file as fast as a busy judge run. ``--quick``:
10,000 items, 60 presses.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import header, on_path, ratio_line, ratio_text, table

ROOT = on_path()

from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402

from judgekit.cli.annotate import prepare_queue  # noqa: E402
from judgekit.rubrics import rubric_from_text  # noqa: E402
from judgekit.store import RunRecord, Store, open_store  # noqa: E402
from judgekit.tui.app import make_app  # noqa: E402
from judgekit.types import Item, Label, Rubric  # noqa: E402

RUBRIC = """
name = "bench"
version = "1"
[scale]
kind = "ordinal"
min = 1
max = 5
[scale.levels]
"1" = "Not helpful."
"2" = "Slightly helpful."
"3" = "Somewhat helpful."
"4" = "Helpful."
"5" = "Very helpful."
[prompt]
user = "Q: {input}\\nA: {response}\\n{scale}"
"""

WRITER = """
import sys, time
from judgekit.store import open_store
from judgekit.types import Judgment
db, rubric_hash, stop = sys.argv[1], sys.argv[2], sys.argv[3]
import os
store = open_store(db)
i = 0
while not os.path.exists(stop):
    store.record_judgment(Judgment(
        run_id="bench-run", dataset="bench", item_id=f"item-{i % 100000:06d}",
        sample_index=1 + i // 100000, status="ok", label="3", score=None,
        reasoning="fine", raw_text=None, model_requested="m", model_returned="m",
        base_url="http://127.0.0.1:1/v1", sampling={}, rubric_name="bench",
        rubric_version="1", rubric_hash=rubric_hash, cache_key=f"w{i}"))
    i += 1
    time.sleep(0.005)
store.close()
print(i)
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def build_store(path: Path, n_items: int, rubric: Rubric) -> tuple[Store, float]:
    store = open_store(path)
    started = time.perf_counter()
    batch: list[Item] = []
    for i in range(n_items):
        batch.append(Item(
            id=f"item-{i:06d}",
            input=f"Question {i}: how do I reverse a list in Python without copying it?",
            response=f"Answer {i}: call lst.reverse(), which reverses in place. " * 3,
            slice=("code", "math", "prose")[i % 3],
        ))
        if len(batch) == 10_000:
            store.import_items("bench", batch)
            batch = []
    if batch:
        store.import_items("bench", batch)
    store.save_rubric(rubric)
    # Another annotator's earlier work, so label queries are not trivially empty.
    store.add_labels([
        Label("bench", f"item-{i:06d}", rubric.sha256, "someone-else", str(1 + i % 5))
        for i in range(0, n_items, 5)
    ])
    store.create_run(RunRecord(
        id="bench-run", kind="judge", dataset="bench", rubric_hash=rubric.sha256, model="m",
        base_url="http://127.0.0.1:1/v1", sampling={}, capabilities={},
        judgekit_version="bench", started_at="2026-01-01T00:00:00+00:00"))
    return store, time.perf_counter() - started


def committed_labels(path: Path, annotator: str) -> int:
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM labels WHERE annotator = ?", [annotator]
        ).fetchone()
    return int(count)


def baseline(store: Store, rubric: Rubric, i: int, who: str) -> float:
    """One baseline sample: a label written and the next item read, no UI."""
    started = time.perf_counter()
    store.add_label(Label("bench", f"item-{i:06d}", rubric.sha256, who, "3"))
    store.get_item("bench", f"item-{i + 1:06d}")
    return time.perf_counter() - started


async def app_run(
    store: Store, rubric: Rubric, queue: str, annotator: str, presses: int
) -> tuple[list[float], list[float], list[float]]:
    """Press label keys; time key -> next item drawn, and key -> a frame showing it.

    Keys are sent the way a terminal delivers them (through the driver), without
    the pilot's idle waits. "Drawn" is when the screen has committed the label and
    updated its widgets; "painted" is when Textual hands the terminal a frame that
    contains the next item's opening words, rendered to escape codes as a real terminal needs.
    """
    app = make_app(store, rubric, queue, annotator=annotator)
    shown: list[float] = []
    painted: list[float] = []
    base: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        if len(app.screen_stack) > 2:  # the guidelines open first on a new queue
            await pilot.press("escape")
            await pilot.pause()
        screen = app.label_screen
        state: dict[str, float | str | None] = {"drawn": None, "want": None}
        frame = asyncio.Event()
        original_refresh = screen.refresh_view
        original_display = app._display

        def refresh_spy() -> None:
            original_refresh()
            state["drawn"] = time.perf_counter()

        def display_spy(target, renderable) -> None:  # type: ignore[no-untyped-def]
            original_display(target, renderable)
            if renderable is None or state["drawn"] is None or frame.is_set():
                return
            if isinstance(renderable, CompositorUpdate):
                text = renderable.render_segments(app.console)
                if str(state["want"]) in text:
                    frame.set()

        screen.refresh_view = refresh_spy  # type: ignore[method-assign]
        app._display = display_spy  # type: ignore[method-assign]
        driver = app._driver
        assert driver is not None
        for i in range(presses):
            before = screen.session.index
            nxt = screen.session.entries[before + 1]
            # blind labeling shows no id: the next item's opening words stand for it
            state.update(drawn=None, want=f"Question {int(nxt.item_id.split('-')[1])}:")
            frame.clear()
            key = str(1 + i % 5)
            base.append(baseline(store, rubric, i, f"baseline-{annotator}"))
            started = time.perf_counter()
            driver.send_message(events.Key(key, key))
            await asyncio.wait_for(frame.wait(), timeout=10)
            done = time.perf_counter()
            drawn = state["drawn"]
            assert isinstance(drawn, float)
            shown.append(drawn - started)
            painted.append(done - started)
            assert screen.session.index == before + 1, "the next item was not shown"
            assert committed_labels(store.path, annotator) == i + 1, "label not committed"
        screen.refresh_view = original_refresh  # type: ignore[method-assign]
        await pilot.press("q")
    return shown, painted, base


BLOCK = 20


def blocks(samples: list[float], base: list[float]) -> list[float]:
    """Median over median baseline, per block of BLOCK presses."""
    return [statistics.median(samples[k:k + BLOCK]) / statistics.median(base[k:k + BLOCK])
            for k in range(0, len(samples), BLOCK)]


def row(name: str, samples: list[float], base: list[float] | None = None) -> tuple[object, ...]:
    p50 = statistics.median(samples) * 1000
    p95 = percentile(samples, 95) * 1000
    ratio = ratio_text(blocks(samples, base)) if base else "-"
    worst = max(samples) * 1000
    return (name, len(samples), f"{p50:.2f}", f"{p95:.2f}", f"{worst:.2f}", ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="10,000 items, 60 presses")
    args = parser.parse_args()
    if args.quick:
        args.items, args.presses = 10_000, 60
    header(f"Key press -> next item in the annotate app, {args.items:,} items, against "
           "add_label + get_item without UI")
    rubric = rubric_from_text(RUBRIC)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        store, load_s = build_store(path, args.items, rubric)
        started = time.perf_counter()
        queue = prepare_queue(store, rubric, dataset="bench", strategy="stratified",
                              sample=args.presses * 2 + 10, seed=0)
        queue_s = time.perf_counter() - started
        started = time.perf_counter()
        make_app(store, rubric, queue.name, annotator="probe")
        open_s = time.perf_counter() - started

        shown, painted, base = asyncio.run(
            app_run(store, rubric, queue.name, "alice", args.presses))

        stop = Path(tmp) / "stop"
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), rubric.sha256, str(stop)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE, text=True,
        )
        time.sleep(1.0)
        try:
            busy_shown, busy_painted, busy_base = asyncio.run(
                app_run(store, rubric, queue.name, "bob", args.presses)
            )
        finally:
            stop.touch()
            written = int(writer.communicate(timeout=60)[0] or 0)
        store.close()

    print(f"store: {args.items:,} items imported in {load_s:.1f}s; stratified queue of "
          f"{queue.size} drawn in {queue_s:.2f}s; app opened in {open_s * 1000:.0f} ms")
    print()
    print(table(("key press -> next item (ms)", "n", "p50", "p95", "max", "p50 / base (spread)"), [
        row("baseline: add_label + get_item (no UI)", base),
        row("app: label committed, next item drawn", shown, base),
        row("app: ... and a frame showing it rendered", painted, base),
        row("baseline while a judge run writes", busy_base),
        row("app + judge run writing: next item drawn", busy_shown, busy_base),
        row("app + judge run writing: frame rendered", busy_painted, busy_base),
    ]))
    print()
    print(f"concurrent judge run wrote {written} judgments meanwhile; every sample was checked "
          "to be committed (separate connection) before the next press")
    target = percentile(painted, 95) * 1000
    print(f"p95 key -> frame with the next item: {target:.1f} ms (target < 50 ms): "
          f"{'OK' if target < 50 else 'OVER TARGET'}")
    print(ratio_line("app frame / add_label + get_item (time)", blocks(painted, base),
                     "blocks of 20 presses"))
    print(ratio_line("app frame / add_label + get_item (time), judge run writing",
                     blocks(busy_painted, busy_base), "blocks of 20 presses"))


if __name__ == "__main__":
    main()
