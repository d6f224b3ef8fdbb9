"""Key press -> frame in the annotate app, for short items, 1 MB items and SQuALITY stories.

Run: ``python benchmarks/bench_annotate_long.py [--presses 40]``.

Each key is sent the way a terminal delivers it (through the driver) and timed
until every label write it caused is committed and Textual has handed the
terminal the next frame. Keys: a label (commits, then draws the next item,
which is as long as this one, and searches it), PgDn, ``]`` (jump to the next
section), End, ``!`` (flag, committed), ``n`` (the next match of a search for
"the", on from item to item) and ``'`` (back to where the last jump left from).
The baseline is the same keys on short items, in the same run; the ratio
column is each median against that baseline. The SQuALITY rows (20 real
5,000-word stories at 80x24) run when the shared data folder is present.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402

from judgekit.store import QueueEntry, open_store  # noqa: E402
from judgekit.tui.app import make_app  # noqa: E402
from judgekit.types import Item, Rubric  # noqa: E402
from tests.support import squality  # noqa: E402
from tests.support.annotate import rubric  # noqa: E402

KEYS = (("label", "3"), ("PgDn", "pagedown"), ("] section", "right_square_bracket"),
        ("End", "end"), ("! flag", "exclamation_mark"), ("n match", "n"), ("' back", "apostrophe"))
#: Searched for before the keys are timed: it stays on from item to item, so ``n`` moves
#: between its matches and every new item is searched as it is laid out.
QUERY = "the"


def megabyte_items(n: int) -> list[Item]:
    paragraph = ("The committee met again on Tuesday to review the draft, line by line, "
                 "and to agree on the wording of the findings. ") * 8 + "\n\n"
    text = (paragraph * (1_000_000 // len(paragraph) + 1))[:1_000_000]
    return [Item(id=f"mb-{i:03d}", input=text, response="A short summary of the minutes.",
                 reference="The reference summary.") for i in range(n)]


def short_items(n: int) -> list[Item]:
    return [Item(id=f"s-{i:03d}", input=f"Question {i}?", response=f"Answer {i}.")
            for i in range(n)]


async def time_keys(items: list[Item], rub: Rubric, presses: int,
                    size: tuple[int, int] = (80, 24)) -> dict[str, list[float]]:
    """Seconds per key press, by key, over ``presses`` rounds of every key in KEYS."""
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        store.import_items("d", items)
        entries = [QueueEntry(i, "d", item.id, 1.0, None) for i, item in enumerate(items)]
        app = make_app(store, rub, entries, annotator="bench")
        samples: dict[str, list[float]] = {name: [] for name, _ in KEYS}
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            if len(app.screen_stack) > 2:  # the guidelines open first on a new queue
                await pilot.press("escape")
                await pilot.pause()
            screen = app.label_screen
            screen.document.search(QUERY)
            frame = asyncio.Event()
            original = app._display

            def display_spy(target, renderable) -> None:  # type: ignore[no-untyped-def]
                original(target, renderable)
                frame.set()

            app._display = display_spy  # type: ignore[method-assign]
            driver = app._driver
            assert driver is not None
            for _ in range(presses):
                for name, key in KEYS:
                    if screen.session.finished:
                        break
                    frame.clear()
                    started = time.perf_counter()
                    driver.send_message(events.Key(key, None if len(key) > 1 else key))
                    await asyncio.sleep(0)
                    await screen.settled()
                    frame.clear()
                    screen.refresh()
                    await asyncio.wait_for(frame.wait(), timeout=30)
                    samples[name].append(time.perf_counter() - started)
            app._display = original  # type: ignore[method-assign]
            await pilot.press("q")
        store.close()
    return samples


def table(title: str, samples: dict[str, list[float]], base: dict[str, list[float]]) -> None:
    print(f"\n{title}")
    print(f"{'key':<12} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p50/base':>9}")
    for name, values in samples.items():
        if not values:
            continue
        p50 = statistics.median(values) * 1000
        p95 = sorted(values)[round(0.95 * (len(values) - 1))] * 1000
        ref = statistics.median(base[name]) * 1000 if base.get(name) else float("nan")
        print(f"{name:<12} {len(values):>4} {p50:>8.1f} {p95:>8.1f} {max(values) * 1000:>8.1f} "
              f"{p50 / ref:>8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=20)
    args = parser.parse_args()
    rub = rubric("ordinal")
    base = asyncio.run(time_keys(short_items(args.presses + 2), rub, args.presses))
    table("short items (baseline), 80x24", base, base)
    big = asyncio.run(time_keys(megabyte_items(args.presses + 2), rub, args.presses))
    table("1 MB items, 80x24", big, base)
    worst = max(statistics.median(v) for v in big.values() if v) * 1000
    print(f"\nslowest median key press on a 1 MB item: {worst:.1f} ms (target < 100 ms): "
          f"{'OK' if worst < 100 else 'OVER TARGET'}")
    if squality.available():
        items = squality.long_items(20)
        real = asyncio.run(time_keys(items, squality.rubric(), 20))
        table("20 SQuALITY stories (5,000+ words each), 80x24", real, base)


if __name__ == "__main__":
    main()
