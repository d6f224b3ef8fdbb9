"""Blind labeling shows nothing derived from a judge, for every queue strategy and size.

The queues are drawn as ``judgekit annotate`` draws them (``prepare_queue``) from
stored judgments of two judges that disagree, with confidences, so every
strategy builds its judge-derived strata; the app is then driven through the
queue, with the help screen open too, and every screen is searched for text
that could only come from a judge.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from judgekit.cli.annotate import earlier_versions, prepare_queue
from judgekit.rubrics import rubric_from_text
from judgekit.sampling import STRATEGIES
from judgekit.store import Store
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.types import Label, Rubric
from tests.support.annotate import (
    RUBRIC_TEXT,
    judgment,
    make_items,
    record_judgments,
    rubric,
    screen_text,
)

SECRET = "REASONING-c0ffee: the judge thinks this is wrong"
JUDGE_MODELS = ("judge-alpha-9b", "judge-beta-3b")
#: Words that only a judge-derived stratum, notice or header could put on screen.
FORBIDDEN = (
    SECRET, *JUDGE_MODELS, "verdict", "disagree", "agreement", "uncertain", "confiden",
    "slice=", "random", "judge shown", "κ",
)
SIZES = [(80, 24), (160, 48)]


def seed_judged(store: Store, n: int = 40) -> Rubric:
    """``n`` binary items in two slices, judged by two models that split on a third."""
    rub = rubric("binary")
    items = make_items("binary", n)
    store.import_items("d", items)
    store.save_rubric(rub)
    judgments = []
    for i, item in enumerate(items):
        first = "pass" if i % 2 else "fail"
        second = first if i % 3 else ("fail" if first == "pass" else "pass")
        judgments.append(replace(
            judgment(rub, "d", item.id, first, reasoning=SECRET, model=JUDGE_MODELS[0],
                     run_id="run-a"),
            confidence=0.5 + (i % 10) / 20))
        judgments.append(judgment(rub, "d", item.id, second, model=JUDGE_MODELS[1],
                                  run_id="run-b"))
    record_judgments(store, rub, [j for j in judgments if j.run_id == "run-a"])
    record_judgments(store, rub, [j for j in judgments if j.run_id == "run-b"])
    return rub


def judge_derived(text: str) -> list[str]:
    lowered = text.lower()
    return [word for word in FORBIDDEN if word.lower() in lowered]


async def visit(app: AnnotateApp, size: tuple[int, int], presses: int) -> list[str]:
    """Screens seen while labeling ``presses`` items and opening help (one text each)."""
    screens = []
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause(0.2)  # notifications mount asynchronously
        screens.append(screen_text(app))
        for i in range(presses):
            await pilot.press("p" if i % 2 else "f")
            await app.label_screen.settled()
            await pilot.pause()
            screens.append(screen_text(app))
        await pilot.press("question_mark")
        await pilot.pause()
        screens.append(screen_text(app))
        await pilot.press("escape", "s")
        await app.label_screen.settled()
        await pilot.pause()
        screens.append(screen_text(app))
    return screens


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_no_judge_derived_text_on_any_blind_screen(
    tmp_db: Store, strategy: str, size: tuple[int, int]
) -> None:
    rub = seed_judged(tmp_db)
    queue = prepare_queue(tmp_db, rub, dataset="d", strategy=strategy, sample=16, seed=3)
    if strategy != "random":  # the design really used the judges
        assert {e.stratum for e in queue.entries} - {"random"}
    app = make_app(tmp_db, rub, queue.entries, annotator="alice", notices=queue.notices)
    screens = await visit(app, size, presses=6)
    for screen in screens:
        assert not judge_derived(screen), screen
    assert "item 1/" in screens[0]  # the screen really was the labeling screen
    rows = tmp_db.latest_labels(rub.sha256, annotator="alice", include_skips=True)
    assert len(rows) == 7 and all(r.blind for r in rows)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_start_up_notes_are_shown_in_the_app(tmp_db: Store, size: tuple[int, int]) -> None:
    rub = rubric("binary")
    tmp_db.import_items("d", make_items("binary", 30))
    queue = prepare_queue(tmp_db, rub, dataset="d", strategy="stratified", sample=10, seed=0)
    assert any("strata use slices only" in n for n in queue.notices)
    app = make_app(tmp_db, rub, queue.entries, annotator="alice", notices=queue.notices)
    async with app.run_test(size=size, notifications=True) as pilot:
        for _ in range(40):
            if "strata use slices only" in screen_text(app).replace("\n", " "):
                break
            await pilot.pause(0.05)
        assert "strata" in screen_text(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert "strata use slices only" in " ".join(screen_text(app).split())


def test_labels_of_an_earlier_rubric_version_are_announced(tmp_db: Store) -> None:
    old = rubric("binary")
    tmp_db.import_items("d", make_items("binary", 4))
    tmp_db.save_rubric(old)
    tmp_db.add_labels([Label("d", f"item-00{i}", old.sha256, "alice", "pass") for i in range(3)])
    new = rubric_from_text(RUBRIC_TEXT["binary"].replace("is correct and complete",
                                                         "is correct, complete"))
    assert new.sha256 != old.sha256
    tmp_db.save_rubric(new)
    notices = earlier_versions(tmp_db, new, "alice")
    assert len(notices) == 1 and "3 label(s) of yours" in notices[0]
    assert old.sha256[:12] in notices[0]
    assert earlier_versions(tmp_db, new, "bob") == []
    assert earlier_versions(tmp_db, old, "alice") == []
