"""The annotate app driven through Textual's pilot, on a real SQLite store file."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgekit.cli.main import main
from judgekit.errors import StoreError
from judgekit.store import Store, open_store
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.tui.document import DocumentView, Section
from judgekit.types import Item, Rubric
from tests.support.annotate import (
    RUBRIC_TEXT,
    judgment,
    make_items,
    queue_for,
    record_judgments,
    rubric,
    screen_text,
    seed_store,
)

SIZE = (80, 24)


async def keys(pilot, app: AnnotateApp, *pressed: str) -> None:
    """Press keys one at a time, each fully processed (label committed) before the next."""
    for key in pressed:
        await pilot.press(key)
        await app.label_screen.settled()
    await pilot.pause()


async def shows(pilot, app: AnnotateApp, text: str, timeout: float = 3.0) -> bool:
    """Whether ``text`` appears on screen within ``timeout`` (toasts mount asynchronously)."""
    for _ in range(int(timeout / 0.05)):
        if text in screen_text(app):
            return True
        await pilot.pause(0.05)
    return False


async def footer(pilot, app: AnnotateApp) -> str:
    """The footer line, once drawn (it is laid out after the first frame)."""
    for _ in range(60):
        line = screen_text(app).splitlines()[-1]
        if "quit" in line:
            return line
        await pilot.pause(0.05)
    return line


def rows(path: Path) -> list[tuple]:
    """Label rows as a *separate* connection sees them: proof they are committed."""
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT item_id, annotator, label, note, flagged, blind, seconds "
            "FROM labels ORDER BY id"
        ).fetchall()


def latest(store: Store, rub: Rubric, annotator: str) -> dict[str, str]:
    return {lb.item_id: lb.label for lb in store.latest_labels(rub.sha256, annotator=annotator)}


def status(app: AnnotateApp) -> str:
    return next(line for line in screen_text(app).splitlines() if " item " in line)


async def test_label_a_queue_end_to_end(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 5)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        assert "item 1/5" in status(app)
        assert "Question number 0?" in screen_text(app)
        await keys(pilot, app, "3", "5", "1", "2", "4")
        text = screen_text(app)
        assert "Queue complete" in text
        assert "5/5 labeled" in text
        await keys(pilot, app, "q")
    assert app.return_code == 0
    assert latest(tmp_db, rub, "alice") == {
        "item-000": "3", "item-001": "5", "item-002": "1", "item-003": "2", "item-004": "4"
    }
    stored = rows(tmp_db.path)
    assert len(stored) == 5
    assert all(r[1] == "alice" and r[5] == 1 and r[6] is not None and r[6] >= 0 for r in stored)


async def test_each_label_is_committed_before_the_next_item_is_shown(
    tmp_db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rub, items = seed_store(tmp_db, "binary", 4)
    shown: list[tuple[str, int]] = []
    original = DocumentView.show
    texts = {item.input: item.id for item in items}

    def spy(self: DocumentView, sections: list[Section]) -> None:
        # At the moment an item is put on screen, count committed rows from outside.
        shown.append((texts.get(sections[0].text, "-"), len(rows(tmp_db.path))))
        original(self, sections)

    monkeypatch.setattr(DocumentView, "show", spy)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "p", "f", "p", "f")
    firsts = {}
    for item_id, committed in shown:
        firsts.setdefault(item_id, committed)
    assert firsts == {"item-000": 0, "item-001": 1, "item-002": 2, "item-003": 3, "-": 4}
    assert [r[2] for r in rows(tmp_db.path)] == ["pass", "fail", "pass", "fail"]


async def test_typed_ahead_keys_apply_in_order(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 6)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1", "2", "3", "4", "5")  # no waiting between keys
        await app.label_screen.settled()
        await pilot.pause()
        assert "item 6/6" in status(app)
    assert [r[:3] for r in rows(tmp_db.path)] == [
        (f"item-00{i}", "alice", str(i + 1)) for i in range(5)
    ]


async def test_skip_back_and_change_keep_the_history(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 4)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "2", "s")  # label item 0, skip item 1
        assert "item 3/4" in status(app)
        await keys(pilot, app, "u")
        assert "item 2/4" in status(app) and "skipped" in status(app)
        await keys(pilot, app, "backspace")
        assert "item 1/4" in status(app) and "your label: 2" in status(app)
        assert "← your label" in screen_text(app)
        await keys(pilot, app, "4")  # change it: advances to the first unlabeled item
        assert "item 2/4" in status(app)
        await keys(pilot, app, "u", "s")  # skipping a labeled item keeps its label
        assert "item 2/4" in status(app)
    history = tmp_db.label_history(rub.sha256, "d", "item-000", "alice")
    assert [lb.label for lb in history] == ["2", "4"]
    assert latest(tmp_db, rub, "alice") == {"item-000": "4"}
    skip = tmp_db.label_history(rub.sha256, "d", "item-001", "alice")
    assert [lb.label for lb in skip] == [None] and skip[0].seconds is not None


async def test_pressing_the_label_an_item_already_has_writes_nothing(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "3", "u")
        assert "item 1/3" in status(app) and "your label: 3" in status(app)
        await keys(pilot, app, "3")  # the same label again: already durable
        assert "item 2/3" in status(app)  # still moves on
        assert len(rows(tmp_db.path)) == 1
        await keys(pilot, app, "u", "exclamation_mark")  # a flag is a change: saved at once
        assert len(rows(tmp_db.path)) == 2
        await keys(pilot, app, "3")  # same label, same flag: nothing new
        assert "item 2/3" in status(app) and "1/3 labeled" in screen_text(app)
        assert len(rows(tmp_db.path)) == 2
        await keys(pilot, app, "u", "4")  # a different label is a new row
        assert "item 2/3" in status(app)
    assert [r[2:5] for r in rows(tmp_db.path)] == [("3", None, 0), ("3", None, 1), ("4", None, 1)]
    assert app.session.progress().session_labels == 2  # the first label and the change


async def test_skipping_an_item_already_skipped_writes_nothing(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 2)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "s")  # item 1 skipped: one row
        assert len(rows(tmp_db.path)) == 1
        await keys(pilot, app, "u", "s")  # skipped again, nothing changed
        assert len(rows(tmp_db.path)) == 1
        await keys(pilot, app, "u", "exclamation_mark", "s")  # the flag: a skip row carries it
    assert [r[2:5] for r in rows(tmp_db.path)] == [(None, None, 0), (None, None, 1)]


async def test_the_same_label_in_the_other_mode_is_recorded(tmp_db: Store) -> None:
    rub, items = _with_judge(tmp_db, "binary", 2)
    entries = queue_for("d", items)
    blind = make_app(tmp_db, rub, entries, annotator="alice")
    async with blind.run_test(size=SIZE) as pilot:
        await keys(pilot, blind, "p")
    shown = make_app(tmp_db, rub, entries, annotator="alice", show_judge=True)
    async with shown.run_test(size=SIZE) as pilot:
        await keys(pilot, shown, "u", "p")  # now given with the judge on screen
    assert [(r[2], r[5]) for r in rows(tmp_db.path)] == [("pass", 1), ("pass", 0)]


async def test_back_at_the_first_item_says_so(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 2)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await keys(pilot, app, "u")
        assert "item 1/2" in status(app)
        assert await shows(pilot, app, "already at the first item")


async def test_notes_and_flags(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "exclamation_mark", "n")
        await pilot.press(*"check units", "enter")
        await app.label_screen.settled()
        await pilot.pause()
        line = status(app)
        assert "⚑ flagged" in line and "check units" in line and "unlabeled" in line
        # saved on the key press, as note rows (no label, no time): a kill loses nothing
        assert rows(tmp_db.path) == [("item-000", "alice", None, None, 1, 1, None),
                                     ("item-000", "alice", None, "check units", 1, 1, None)]
        await keys(pilot, app, "3")
        assert rows(tmp_db.path)[-1][:5] == ("item-000", "alice", "3", "check units", 1)
        # On a labeled item, a flag change is saved at once, repeating the label.
        await keys(pilot, app, "u", "exclamation_mark")
        assert rows(tmp_db.path)[-1][:5] == ("item-000", "alice", "3", "check units", 0)
        await keys(pilot, app, "n")
        await pilot.press("escape")  # cancel: nothing saved
        await app.label_screen.settled()
        assert len(rows(tmp_db.path)) == 4
        await keys(pilot, app, "n")
        await pilot.press("ctrl+a", "ctrl+k", "enter")  # empty note clears it
        await app.label_screen.settled()
        assert rows(tmp_db.path)[-1][:5] == ("item-000", "alice", "3", None, 0)


async def test_binary_f_labels_fail_and_bang_flags(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "binary", 2)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        line = await footer(pilot, app)
        assert "p/f label" in line and "! flag" in line
        await keys(pilot, app, "exclamation_mark", "f")
    assert [r[2:5] for r in rows(tmp_db.path)] == [(None, None, 1), ("fail", None, 1)]


async def test_help_screen_lists_every_key(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "pairwise", 2)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        line = await footer(pilot, app)
        for shown in ("a/b/t label", "s skip", "u back", "! flag", "n note", "[ ] section",
                      "? help", "q quit"):
            assert shown in line
        await keys(pilot, app, "question_mark")
        text = screen_text(app)
        for _ in range(3):  # the key list is longer than 24 rows: page through it
            await keys(pilot, app, "pagedown")
            text += screen_text(app)
        for line in (" a  A    Response A is better.", " b  B    Response B is better.",
                     " t  tie  Both are equally good, or equally bad.", "skip this item",
                     "flag / unflag", "add or edit a note", "jump to the next section",
                     "scroll down a page", "search the item", "mark this place"):
            assert line in text
        await keys(pilot, app, "a")  # keys do not label while help is open
        assert rows(tmp_db.path) == []
        await keys(pilot, app, "escape", "a")
    assert rows(tmp_db.path)[0][2] == "A"


async def test_help_shows_each_ordinal_level_with_its_description(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 2)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "question_mark")
        text = screen_text(app)
    assert "label 1" not in text and "label 5" not in text
    for level in rub.scale.levels:
        assert f" {level.key}  {level.description}" in text
    assert "closes this help" in text, "the closing hint stays in view at 80x24"


async def test_resume_after_closing_mid_queue(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 6)
    entries = queue_for("d", items)
    tmp_db.save_queue("q1", rub.sha256, "random", 0, entries)
    first = make_app(tmp_db, rub, "q1", annotator="alice")
    async with first.run_test(size=SIZE) as pilot:
        await keys(pilot, first, "1", "s", "3", "exclamation_mark")  # item 4 is flagged
        await keys(pilot, first, "q")
    assert first.return_code == 0
    # A fresh process would open the file anew: so do we.
    reopened = open_store(tmp_db.path)
    try:
        again = make_app(reopened, rub, "q1", annotator="alice")
        async with again.run_test(size=SIZE) as pilot:
            # Resumes at the first item neither labeled nor skipped: the flagged one was
            # saved on the key press, and a flag alone is not a skip.
            line = status(again)
            assert "item 4/6" in line and "unlabeled" in line and "⚑ flagged" in line
            await keys(pilot, again, "4", "5", "1")
            assert "item 2/6" in status(again) and "skipped" in status(again)
            await keys(pilot, again, "2")
            assert "Queue complete" in screen_text(again)
        assert latest(reopened, rub, "alice") == {
            "item-000": "1", "item-001": "2", "item-002": "3", "item-003": "4",
            "item-004": "5", "item-005": "1",
        }
        flagged = reopened.label_history(rub.sha256, "d", "item-003", "alice")
        assert [(lb.label, lb.flagged) for lb in flagged] == [(None, True), ("4", True)]
    finally:
        reopened.close()


async def test_reopening_puts_skipped_items_after_the_unlabeled_ones(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 5)
    entries = queue_for("d", items)
    first = make_app(tmp_db, rub, entries, annotator="alice")
    async with first.run_test(size=SIZE) as pilot:
        await keys(pilot, first, "s", "2")  # skip item 1, label item 2, quit at item 3
        assert "item 3/5" in status(first)
        await keys(pilot, first, "q")
    visited: list[str] = []
    again = make_app(tmp_db, rub, entries, annotator="alice")
    async with again.run_test(size=SIZE) as pilot:
        while not again.session.finished:
            visited.append(status(again).split("│")[0].strip())
            await keys(pilot, again, "3")
    # The same order as if the session had never been closed: 3, 4, 5, then the skipped 1.
    assert visited == ["item 3/5", "item 4/5", "item 5/5", "item 1/5"]
    only_skips = make_app(tmp_db, rub, entries, annotator="bob")
    async with only_skips.run_test(size=SIZE) as pilot:
        await keys(pilot, only_skips, *"sssss", "q")
    bob = make_app(tmp_db, rub, entries, annotator="bob")
    async with bob.run_test(size=SIZE):  # nothing left but skips: the first of them
        assert "item 1/5" in status(bob) and "skipped" in status(bob)


async def test_ctrl_q_quits_after_pending_writes(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2", "3", "ctrl+q")
        await pilot.pause()
    assert [r[2] for r in rows(tmp_db.path)] == ["2", "3"]


async def test_two_annotators_each_see_only_their_own_labels(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 4)
    entries = queue_for("d", items)
    alice = make_app(tmp_db, rub, entries, annotator="alice")
    async with alice.run_test(size=SIZE) as pilot:
        await keys(pilot, alice, "5", "5", "5")
    bob = make_app(tmp_db, rub, entries, annotator="bob")
    async with bob.run_test(size=SIZE) as pilot:
        assert "item 1/4" in status(bob) and "unlabeled" in status(bob)
        assert "0/4 labeled" in screen_text(bob)
        await keys(pilot, bob, "1")
    alice_again = make_app(tmp_db, rub, entries, annotator="alice")
    async with alice_again.run_test(size=SIZE):
        assert "item 4/4" in status(alice_again) and "3/4 labeled" in screen_text(alice_again)
    assert latest(tmp_db, rub, "alice") == {"item-000": "5", "item-001": "5", "item-002": "5"}
    assert latest(tmp_db, rub, "bob") == {"item-000": "1"}


async def test_pairwise_side_by_side_or_stacked(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "pairwise", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        anchors = app.screen.query_one(DocumentView).anchors
        assert anchors["response-a"] == anchors["response-b"]  # side by side
        line = next(x for x in screen_text(app).splitlines() if "First answer to 0." in x)
        assert line.index("Second answer to 0.") > line.index("First answer to 0.") + 40
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        anchors = app.screen.query_one(DocumentView).anchors
        assert anchors["response-b"] > anchors["response-a"]  # stacked
        text = screen_text(app)
        assert text.index("Second answer to 0.") > text.index("First answer to 0.")
        await keys(pilot, app, "a", "b", "t")
    assert [r[2] for r in rows(tmp_db.path)] == ["A", "B", "tie"]


async def test_categorical_keys(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "categorical", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        assert "1-3 label" in await footer(pilot, app)
        await keys(pilot, app, "3", "1", "4", "2")  # 4 is not a level: ignored
    assert [r[2] for r in rows(tmp_db.path)] == ["unsafe", "safe", "borderline"]


SECRET = "JUDGE-REASONING-7f3a: the response cites the wrong year"


def _with_judge(store: Store, kind: str, n: int) -> tuple[Rubric, list[Item]]:
    rub, items = seed_store(store, kind, n)
    record_judgments(store, rub, [
        judgment(rub, "d", item.id, rub.scale.levels[0].label, reasoning=SECRET)
        for item in items
    ])
    return rub, items


async def test_blind_mode_hides_the_judge(tmp_db: Store) -> None:
    rub, items = _with_judge(tmp_db, "binary", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=(120, 40)) as pilot:
        text = screen_text(app)
        assert "Question number 0?" in text
        assert "JUDGE-REASONING" not in text and "judge-model" not in text
        assert "blind" in text.splitlines()[0]
        await keys(pilot, app, "p")
        assert "JUDGE-REASONING" not in screen_text(app)
    assert rows(tmp_db.path)[0][5] == 1


async def test_show_judge_reveals_it_and_records_that(tmp_db: Store) -> None:
    rub, items = _with_judge(tmp_db, "binary", 3)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice", show_judge=True)
    async with app.run_test(size=(120, 40)) as pilot:
        text = screen_text(app)
        assert SECRET in text and "Judge (judge-model): pass" in text
        assert "judge shown" in text.splitlines()[0]
        await keys(pilot, app, "f")
    assert rows(tmp_db.path)[0][2] == "fail" and rows(tmp_db.path)[0][5] == 0


async def test_agreement_appears_after_twenty_overlapping_labels(tmp_db: Store) -> None:
    rub, items = _with_judge(tmp_db, "binary", 24)  # the judge says "pass" to everything
    entries = queue_for("d", items)
    app = make_app(tmp_db, rub, entries, annotator="alice", show_judge=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await keys(pilot, app, *["p"] * 15, *["f"] * 4)
        assert "agreement" not in screen_text(app).splitlines()[0]
        await keys(pilot, app, "f")
        header = "\n".join(screen_text(app).splitlines()[:2])
        # 15/20: Wilson 95% interval 0.531-0.888. The judge says pass to everything, so
        # kappa is 0 by construction in every bootstrap replicate: it has no interval,
        # so the header shows no kappa rather than a zero-width "[0.00, 0.00]".
        assert "judge agreement 75% [53%, 89%] · n=20 · 95% CI" in header
        assert "κ" not in header
        assert "20/24 labeled" in header
    blind = make_app(tmp_db, rub, entries, annotator="alice")
    async with blind.run_test(size=(120, 30)):
        assert "agreement" not in screen_text(blind)


async def test_huge_cjk_emoji_and_rtl_text(tmp_db: Store) -> None:
    rub = rubric("ordinal")
    cjk = "你好，世界。这个回答正确吗？ 🎉👍 日本語のテキスト"
    rtl = "مرحبا بالعالم"
    huge = "\n".join(f"line {i}: " + "lorem ipsum dolor sit amet " * 4 for i in range(5000))
    tmp_db.import_items("d", [
        Item(id="cjk", input=cjk, response=rtl),
        Item(id="huge", input="long one", response=huge + "\nTHE-VERY-END"),
        Item(id="last", input="short", response="ok"),
    ])
    entries = queue_for("d", [Item("cjk", ""), Item("huge", ""), Item("last", "")])
    app = make_app(tmp_db, rub, entries, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        text = screen_text(app)
        assert cjk in text and rtl in text
        await keys(pilot, app, "4")
        panel = app.screen.query_one(DocumentView)
        assert panel.max_scroll_y > 1000
        assert "THE-VERY-END" not in screen_text(app)
        await keys(pilot, app, "end")  # scroll keys work without focusing anything first
        assert "THE-VERY-END" in screen_text(app)
        await keys(pilot, app, "3")
        assert panel.scroll_y == 0 and "item 3/3" in status(app)
    assert [r[2] for r in rows(tmp_db.path)] == ["4", "3"]


async def test_markup_in_item_text_is_shown_literally(tmp_db: Store) -> None:
    rub = rubric("binary")
    tmp_db.import_items("d", [
        Item(id="m", input="[bold]x[/bold] and [link=http://evil]y[/link]",
             response="[/] [red]not red[/red] \x1b[31m :smile: $accent"),
    ])
    app = make_app(tmp_db, rub, queue_for("d", [Item("m", "")]), annotator="alice")
    async with app.run_test(size=SIZE):
        text = screen_text(app)
        assert "[bold]x[/bold] and [link=http://evil]y[/link]" in text
        assert "[/] [red]not red[/red]" in text and ":smile: $accent" in text


async def test_missing_item_can_be_skipped(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "binary", 1)
    entries = queue_for("d", [*items, Item("gone", "")])
    app = make_app(tmp_db, rub, entries, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "p")
        assert "no longer in the store" in screen_text(app)
        await keys(pilot, app, "p")  # cannot label what is not shown
        assert "item 2/2" in status(app)
        await keys(pilot, app, "s")
    assert [r[:3] for r in rows(tmp_db.path)] == [("item-000", "alice", "pass"),
                                                  ("gone", "alice", None)]


async def test_a_failed_write_is_a_notification_not_a_crash(
    tmp_db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rub, items = seed_store(tmp_db, "binary", 2)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")

    def broken(label: object) -> int:
        raise StoreError("disk I/O error")

    async with app.run_test(size=SIZE, notifications=True) as pilot:
        monkeypatch.setattr(tmp_db, "add_label", broken)
        await keys(pilot, app, "p")
        assert await shows(pilot, app, "not saved: disk I/O error")
        assert "item 1/2" in status(app)
        monkeypatch.undo()
        await keys(pilot, app, "p")
        assert "item 2/2" in status(app)
    assert [r[2] for r in rows(tmp_db.path)] == ["pass"]


JUDGE_RUN = """
import sys, time
from pathlib import Path
from judgekit.store import open_store
from tests.support.annotate import judgment, rubric
db, kind, n, stop = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = open_store(db)
rub = rubric(kind)
i = 0
while not stop.exists():
    store.record_judgment(judgment(rub, "d", f"item-{i % n:03d}", "4", sample=i + 1))
    i += 1
    time.sleep(0.002)
store.close()
print(i)
"""


async def test_labeling_while_a_judge_run_writes_the_same_file(
    tmp_db: Store, tmp_path: Path
) -> None:
    rub, items = seed_store(tmp_db, "ordinal", 30)
    record_judgments(tmp_db, rub, [judgment(rub, "d", items[0].id, "3")])  # creates the run
    stop = tmp_path / "stop"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    writer = subprocess.Popen(
        [sys.executable, "-c", JUDGE_RUN, str(tmp_db.path), "ordinal", "30", str(stop)],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while len(tmp_db.judgments(rubric_hash=rub.sha256)) < 20:  # the run is writing
            assert writer.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
        async with app.run_test(size=SIZE) as pilot:
            await keys(pilot, app, *["2", "4"] * 15)
            assert "Queue complete" in screen_text(app)
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err
    assert int(out) > 20
    assert len(rows(tmp_db.path)) == 30


def test_make_app_rejects_a_queue_of_another_rubric(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "binary", 2)
    tmp_db.save_queue("q", rub.sha256, "random", 0, queue_for("d", items))
    with pytest.raises(ValueError, match="another rubric"):
        make_app(tmp_db, rubric("ordinal"), "q", annotator="alice")
    with pytest.raises(StoreError, match="no labeling queue"):
        make_app(tmp_db, rub, "nope", annotator="alice")
    with pytest.raises(ValueError, match="empty"):
        make_app(tmp_db, rub, [], annotator="alice")
    with pytest.raises(ValueError, match="annotator"):
        make_app(tmp_db, rub, queue_for("d", items), annotator=" ")


def test_make_items_helper_builds_pairs() -> None:
    assert make_items("pairwise", 1)[0].is_pairwise


def test_cli_draws_the_queue_then_resumes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "judgekit.db"
    setup = open_store(db)
    rub, _ = seed_store(setup, "binary", 40)
    setup.close()
    rubric_file = tmp_path / "correct.toml"
    rubric_file.write_text(RUBRIC_TEXT["binary"], encoding="utf-8")
    opened: list[tuple[int, str]] = []

    def drive(self: AnnotateApp) -> None:
        """Stand-in for the terminal: the real app, headless, an annotator pressing keys."""

        async def session() -> None:
            async with self.run_test(size=SIZE) as pilot:
                opened.append((self.session.index, self.session.current_key[1]))
                await keys(pilot, self, "p", "f", "p", "q")

        asyncio.run(session())

    monkeypatch.setattr(AnnotateApp, "run", drive)
    argv = ["annotate", "--rubric", str(rubric_file), "--db", str(db), "--annotator", "alice",
            "--sample", "10", "--strategy", "stratified", "--seed", "3"]
    main(argv)
    first = capsys.readouterr()
    assert "drew queue correct-" in first.err
    assert "-all-stratified-seed3-n10 (10 items)" in first.err
    assert "strata use slices only" in first.err
    assert "alice: 3/10 labeled" in first.out
    main(argv)
    second = capsys.readouterr()
    assert "resuming queue" in second.err and "alice: 6/10 labeled" in second.out
    assert opened[1][0] == 3  # the second session opened at the first item not yet labeled
    check = open_store(db)
    try:
        assert len(check.latest_labels(rub.sha256, annotator="alice")) == 6
        [queue] = check.list_queues()
        assert check.queue_openers(queue) == ["alice"]  # `judgekit queues` lists her under it
    finally:
        check.close()

    with pytest.raises(SystemExit) as exited:
        main([*argv[:-2], "--dataset", "nope"])
    assert exited.value.code == 2
    assert "error: no dataset 'nope' in" in capsys.readouterr().err
