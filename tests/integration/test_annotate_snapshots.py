"""Snapshots of the labeling screen for each scale kind at fixed terminal sizes.

Regenerate after an intended layout change with ``pytest --snapshot-update`` on
this file, and read the SVGs' text before committing them.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot

from judgekit.store import Store
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.types import Item
from tests.support.annotate import judgment, queue_for, record_judgments, rubric

QUESTION = "What is the boiling point of water at sea level, in degrees Celsius?"
ANSWER = (
    "Water boils at 100 °C (212 °F) at standard atmospheric pressure (1 atm). "
    "At higher altitudes the boiling point is lower because the air pressure is lower."
)


class ManualClock:
    """A clock the test moves, so rate and ETA in the header are reproducible."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def build(store: Store, kind: str, *, show_judge: bool = False,
          clock: Callable[[], float] | None = None) -> AnnotateApp:
    rub = rubric(kind)
    if kind == "pairwise":
        items = [
            Item(id=f"pair-{i}", input=QUESTION,
                 response_a="100 °C.",
                 response_b=ANSWER, slice="science")
            for i in range(4)
        ]
    else:
        items = [Item(id=f"q-{i}", input=QUESTION, response=ANSWER, slice="science",
                      reference="100 °C at 1 atm." if kind == "binary" else None)
                 for i in range(4)]
    store.import_items("demo", items)
    if show_judge:
        record_judgments(store, rub, [
            judgment(rub, "demo", item.id, rub.scale.levels[-1].label,
                     reasoning="Correct value, and the altitude remark is accurate.")
            for item in items
        ])
    return make_app(store, rub, queue_for("demo", items), annotator="alice",
                    show_judge=show_judge, clock=clock or ManualClock())


def test_binary_screen(snap_compare, tmp_db: Store) -> None:
    assert snap_compare(build(tmp_db, "binary"), terminal_size=(80, 24))


def test_ordinal_screen_with_progress(snap_compare, tmp_db: Store) -> None:
    clock = ManualClock()
    app = build(tmp_db, "ordinal", clock=clock)

    async def label_two(pilot: Pilot) -> None:
        for key in ("4", "5"):
            clock.now += 30.0
            await pilot.press(key)
            await app.label_screen.settled()
        clock.now += 10.0
        await pilot.press("exclamation_mark")  # flag the third item
        await app.label_screen.settled()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=label_two)


def test_pairwise_screen_side_by_side(snap_compare, tmp_db: Store) -> None:
    assert snap_compare(build(tmp_db, "pairwise"), terminal_size=(120, 30))


def test_pairwise_screen_stacked(snap_compare, tmp_db: Store) -> None:
    assert snap_compare(build(tmp_db, "pairwise"), terminal_size=(80, 24))


def test_categorical_screen(snap_compare, tmp_db: Store) -> None:
    assert snap_compare(build(tmp_db, "categorical"), terminal_size=(80, 24))


def test_judge_shown_screen(snap_compare, tmp_db: Store) -> None:
    assert snap_compare(build(tmp_db, "ordinal", show_judge=True), terminal_size=(80, 24))


def test_help_screen(snap_compare, tmp_db: Store) -> None:
    assert snap_compare(build(tmp_db, "binary"), terminal_size=(80, 24), press=["question_mark"])
