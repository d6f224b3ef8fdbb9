"""Snapshots of the labeling screen for each scale kind at fixed terminal sizes.

Regenerate after an intended layout change with ``pytest --snapshot-update`` on
this file, and read the SVGs' text before committing them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from judgekit.rubrics import rubric_from_text
from judgekit.store import QueueEntry, Store
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.types import Item
from tests.support.annotate import RUBRIC_TEXT, judgment, queue_for, record_judgments, rubric

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


SIZES = [(80, 24), (160, 48)]
GUIDED = RUBRIC_TEXT["ordinal"].replace('version = "1"\n', '''version = "1"
description = "How much does the answer help the person who asked?"
guidelines = """
Judge the answer **as written**; do not reward length.

- A correct answer with one wrong number is a *3* at most.
- Refusals of harmless requests are a *1*.
"""
''')


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_blind_stratified_screen(snap_compare, tmp_db: Store, size: tuple[int, int]) -> None:
    """A stratified queue, blind: the status line names no stratum."""
    rub = rubric("binary")
    items = [Item(id=f"q-{i}", input=QUESTION, response=ANSWER, slice="science")
             for i in range(4)]
    tmp_db.import_items("demo", items)
    entries = [QueueEntry(i, "demo", item.id, 0.5, "slice=science|verdict=fail")
               for i, item in enumerate(items)]
    app = make_app(tmp_db, rub, entries, annotator="alice", clock=ManualClock())
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_guidelines_on_first_open(snap_compare, tmp_db: Store, size: tuple[int, int]) -> None:
    rub = rubric_from_text(GUIDED, path="helpful.toml")
    items = [Item(id=f"q-{i}", input=QUESTION, response=ANSWER) for i in range(2)]
    tmp_db.import_items("demo", items)
    app = make_app(tmp_db, rub, queue_for("demo", items), annotator="alice",
                   clock=ManualClock())
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_long_document_after_a_jump(snap_compare, tmp_db: Store, size: tuple[int, int]) -> None:
    rub = rubric("binary")
    story = "\n\n".join(f"Chapter {c}. " + "The ship drifted on. " * 40 for c in range(30))
    items = [Item(id="story", input=story, response=ANSWER, reference="100 °C at 1 atm.")]
    tmp_db.import_items("demo", items)
    app = make_app(tmp_db, rub, queue_for("demo", items), annotator="alice",
                   clock=ManualClock())
    assert snap_compare(app, terminal_size=size, press=["right_square_bracket"])


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_adjudication_screen(snap_compare, tmp_db: Store, size: tuple[int, int]) -> None:
    rub = rubric("binary")
    items = [Item(id="q-0", input=QUESTION, response=ANSWER)]
    tmp_db.import_items("demo", items)
    opinions = {("demo", "q-0"): "ann: pass\n    note: units are right\nbea: fail  ⚑ flagged"}
    app = make_app(tmp_db, rub, queue_for("demo", items), annotator="lead",
                   clock=ManualClock(), opinions=opinions)
    assert snap_compare(app, terminal_size=size)


LONG_STORY = "\n\n".join(
    f"Chapter {c}. " + " ".join("The ship drifted on." if w != 20 or c % 7 else
                                "The beacon of Mars flickered." for w in range(40))
    for c in range(30))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_search_in_a_long_document(snap_compare, tmp_db: Store, size: tuple[int, int]) -> None:
    """/ beacon, enter, n: the second match highlighted, its position on the status line."""
    rub = rubric("binary")
    items = [Item(id="story", input=LONG_STORY, response=ANSWER)]
    tmp_db.import_items("demo", items)
    app = make_app(tmp_db, rub, queue_for("demo", items), annotator="alice",
                   clock=ManualClock())
    assert snap_compare(app, terminal_size=size,
                        press=["slash", *"beacon", "enter", "n"])


def test_split_view_with_folded_scale(snap_compare, tmp_db: Store) -> None:
    """v on a wide terminal: the story left, the response right; d folds the scale."""
    rub = rubric("binary")
    items = [Item(id="story", input=LONG_STORY, response=ANSWER, reference="100 °C.")]
    tmp_db.import_items("demo", items)
    app = make_app(tmp_db, rub, queue_for("demo", items), annotator="alice",
                   clock=ManualClock())
    assert snap_compare(app, terminal_size=(160, 48), press=["v", "d"])
