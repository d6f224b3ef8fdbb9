"""Key press -> frame in the annotate app, for short items, 1 MB items and SQuALITY stories.

Run: ``python benchmarks/bench_annotate_long.py [--presses 7] [--rounds 3] [--quick]``.

Each key is sent the way a terminal delivers it (through the driver) and timed
until every label write it caused is committed and Textual has handed the
terminal the next frame. Keys: a label (commits, then draws the next item,
which is as long as this one, and searches it), PgDn, ``]`` (jump to the next
section), End, ``!`` (flag, committed), ``n`` (the next match of a search for
"the", on from item to item) and ``'`` (back to where the last jump left from).
The baseline is the same keys on short items, in the same run: short and 1 MB items run
in turn, ``--rounds`` rounds of ``--presses`` rounds of keys each; the ratio column is each
key's median against the baseline's, median and spread over the rounds. ``--quick``: 3
presses, 2 rounds. The SQuALITY rows (20 real 5,000-word stories at 80x24, against the
pooled baseline) run when the shared data folder is present, and not with ``--quick``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from _common import header, on_path, ratio_line, ratio_text, table

ROOT = on_path()

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


def pooled(rounds: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    return {name: [v for r in rounds for v in r[name]] for name, _ in KEYS}


def key_table(title: str, rounds: list[dict[str, list[float]]],
              base: list[dict[str, list[float]]]) -> None:
    """p50/p95/max per key over every round; the ratio to the baseline round by round."""
    print(f"\n{title}")
    rows = []
    samples, reference = pooled(rounds), pooled(base)
    for name, values in samples.items():
        if not values:
            continue
        p50 = statistics.median(values) * 1000
        p95 = sorted(values)[round(0.95 * (len(values) - 1))] * 1000
        ratios = [statistics.median(r[name]) / statistics.median(b[name])
                  for r, b in zip(rounds, base, strict=False) if r[name] and b[name]]
        if not ratios and reference[name]:  # one round of its own: against the pooled baseline
            ratios = [p50 / 1000 / statistics.median(reference[name])]
        rows.append((name, len(values), f"{p50:.1f}", f"{p95:.1f}", f"{max(values) * 1000:.1f}",
                     "-" if rounds is base else ratio_text(ratios)))
    print(table(("key", "n", "p50 ms", "p95 ms", "max ms", "p50 / base (spread)"), rows))


def all_keys(round_: dict[str, list[float]]) -> float:
    return statistics.median(v for values in round_.values() for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=7, help="rounds of every key per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of short and 1 MB items")
    parser.add_argument("--quick", action="store_true", help="3 presses, 2 rounds")
    args = parser.parse_args()
    if args.quick:
        args.presses, args.rounds = 3, 2
    header("Key press -> frame in the annotate app: 1 MB items against short items")
    rub = rubric("ordinal")
    base: list[dict[str, list[float]]] = []
    big: list[dict[str, list[float]]] = []
    for k in range(args.rounds):
        for kind in ("short", "big") if k % 2 == 0 else ("big", "short"):
            if kind == "short":
                base.append(asyncio.run(time_keys(short_items(args.presses + 2), rub,
                                                  args.presses)))
            else:
                big.append(asyncio.run(time_keys(megabyte_items(args.presses + 2), rub,
                                                 args.presses)))
    key_table("short items (baseline), 80x24", base, base)
    key_table("1 MB items, 80x24", big, base)
    worst = max(statistics.median(v) for v in pooled(big).values() if v) * 1000
    print(f"\nslowest median key press on a 1 MB item: {worst:.1f} ms (target < 100 ms): "
          f"{'OK' if worst < 100 else 'OVER TARGET'}")
    if squality.available() and not args.quick:
        items = squality.long_items(20)
        real = asyncio.run(time_keys(items, squality.rubric(), 20))
        key_table("20 SQuALITY stories (5,000+ words each), 80x24", [real], base)
    print()
    print(ratio_line("1 MB / short items (time, every key)",
                     [all_keys(b) / all_keys(s) for b, s in zip(big, base, strict=True)]))


if __name__ == "__main__":
    main()
