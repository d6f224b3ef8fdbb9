"""Every criterion of a multi-criteria rubric on one annotate screen, driven with Pilot on a real
store: level keys, focus moves, auto-advance, skip, undo, notes and flags, restart mid-item."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from judgekit.cli.main import main
from judgekit.store import Store, open_store
from judgekit.store.labels import QueueEntry
from judgekit.tui.app import AnnotateApp
from judgekit.types import Item
from tests.integration.test_criteria import RUBRIC
from tests.support.annotate import screen_text

SIZE = (80, 24)
N = 3


@pytest.fixture
def rubric_file(tmp_path: Path) -> Path:
    path = tmp_path / "summeval.toml"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_db: Store) -> Store:
    tmp_db.import_items("news", [Item(id=f"s{i}", input=f"doc {i}", response=f"summary {i}")
                                 for i in range(N)])
    return tmp_db


def build(store: Store, rubric_file: Path, annotator: str = "h2") -> AnnotateApp:
    from judgekit.cli._annotate_criteria import criteria_file
    from judgekit.tui.criteria_app import make_criteria_app, title_rubric

    found = criteria_file(str(rubric_file))
    assert found is not None
    for criterion in found.criteria:  # as the command does when it draws the queue
        store.save_rubric(criterion.rubric)
    queue = [QueueEntry(i, "news", f"s{i}", 1.0, "random") for i in range(N)]
    return make_criteria_app(store, title_rubric(found.name, found.criteria), found.criteria,
                             queue, annotator=annotator)


async def keys(pilot, app: AnnotateApp, *pressed: str) -> None:
    for key in pressed:
        await pilot.press(key)
        await app.label_screen.settled()
    await pilot.pause()


def rows(db: Path, criterion: str) -> list[tuple[str, str | None, int, str | None]]:
    """Every stored row of a criterion's derived rubric, in order: item, label, flag, note."""
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT l.item_id, l.label, l.flagged, l.note FROM labels l JOIN rubrics r "
            "ON r.sha256 = l.rubric_hash WHERE r.name = ? ORDER BY l.id",
            [f"summeval.{criterion}"]).fetchall()


def panel(app: AnnotateApp) -> list[str]:
    """The criteria panel's rows (under the line that separates it from the item)."""
    text = screen_text(app).splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("────"))
    return text[start + 1:-1]


def level(app: AnnotateApp, criterion: str) -> str:
    """What a criterion's row says of it: the level, ``–`` or ``skipped``."""
    for line in panel(app):
        words = line.replace("▶", "").split()
        if words and words[0] == criterion:
            return words[1]
    raise AssertionError(f"no row for {criterion}: {panel(app)}")


def focused(app: AnnotateApp) -> str:
    return next(line for line in panel(app) if line.startswith(" ▶ ")).split()[1]


async def test_one_screen_shows_every_criterion_and_labels_them_in_turn(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "coherence (ordinal)" in screen_text(app)  # the help opens first: both criteria
        await keys(pilot, app, "escape")
        text = screen_text(app)
        assert "doc 0" in text and "item 1/3" in text and "0/3 labeled" in text
        lines = " ".join(" ".join(panel(app)).split())  # rows wrap at 80 columns
        assert "well structured" in lines and "grammatical" in lines
        assert "(1-5; 3 left)" in lines and "(1-3; 3 left)" in lines
        assert "Very good." in lines and focused(app) == "coherence"
        await keys(pilot, app, "4")
        # one key, one row, under the criterion's own rubric; the item stays, focus moves
        assert rows(store.path, "coherence") == [("s0", "4", 0, None)]
        assert rows(store.path, "fluency") == []
        assert "item 1/3" in screen_text(app) and focused(app) == "fluency"
        assert "Fluent." in "\n".join(panel(app)) and "1/2 criteria labeled" in screen_text(app)
        await keys(pilot, app, "2")
        assert rows(store.path, "fluency") == [("s0", "2", 0, None)]
        text = screen_text(app)
        assert "item 2/3" in text and "doc 1" in text and "1/3 labeled" in text
        assert focused(app) == "coherence"


async def test_arrows_move_the_focus_and_a_key_off_its_scale_writes_nothing(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape", "down")
        assert focused(app) == "fluency"
        await keys(pilot, app, "5")  # fluency is 1-3
        assert rows(store.path, "fluency") == [] and focused(app) == "fluency"
        await keys(pilot, app, "3")
        # the focus wraps round to the criterion still to do; the item stays
        assert focused(app) == "coherence" and "item 1/3" in screen_text(app)
        await keys(pilot, app, "up")  # already the first: nothing moves
        assert focused(app) == "coherence"
        await keys(pilot, app, "1")
        assert "item 2/3" in screen_text(app)
    assert rows(store.path, "coherence") == [("s0", "1", 0, None)]
    assert rows(store.path, "fluency") == [("s0", "3", 0, None)]


async def test_undo_steps_back_through_criteria_then_items(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape", "4", "u")
        assert focused(app) == "coherence" and "item 1/3" in screen_text(app)
        await keys(pilot, app, "5")  # changed: a new row, the history kept
        assert focused(app) == "fluency"
        await keys(pilot, app, "2")
        assert "item 2/3" in screen_text(app)
        await keys(pilot, app, "backspace")  # back to the previous item's last criterion
        assert "item 1/3" in screen_text(app) and focused(app) == "fluency"
        assert (level(app, "coherence"), level(app, "fluency")) == ("5", "2")
        await keys(pilot, app, "u", "u")
        assert focused(app) == "coherence" and "item 1/3" in screen_text(app)
        await keys(pilot, app, "3")  # an item already complete: on to the next one
        assert "item 2/3" in screen_text(app)
    assert [r[1] for r in rows(store.path, "coherence")] == ["4", "5", "3"]
    assert [r[1] for r in rows(store.path, "fluency")] == ["2"]


async def test_skip_a_criterion_or_the_whole_item(store: Store, rubric_file: Path) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape", "s")
        assert rows(store.path, "coherence") == [("s0", None, 0, None)]
        assert focused(app) == "fluency" and level(app, "coherence") == "skipped"
        await keys(pilot, app, "2")  # nothing left to do this visit: the next item
        assert "item 2/3" in screen_text(app)
        await keys(pilot, app, "S")  # both criteria skipped in one transaction
        assert "item 3/3" in screen_text(app)
        assert rows(store.path, "coherence")[-1] == ("s1", None, 0, None)
        assert rows(store.path, "fluency")[-1] == ("s1", None, 0, None)
        await keys(pilot, app, "1", "1")
        # the skipped ones come back: item 1 asks for its skipped criterion only
        assert "item 1/3" in screen_text(app) and focused(app) == "coherence"
        await keys(pilot, app, "4")
        assert "item 2/3" in screen_text(app) and focused(app) == "coherence"
        await keys(pilot, app, "3", "3")
        assert "Queue complete" in screen_text(app) and "3/3 labeled" in screen_text(app)


async def test_flag_and_note_belong_to_the_focused_criterion(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape", "down", "exclamation_mark")
        assert rows(store.path, "fluency") == [("s0", None, 1, None)]  # a note row, at once
        assert "⚑ fluency" in screen_text(app) and "⚑" in panel(app)[1].split()
        await keys(pilot, app, "n")
        assert "Note on fluency" in screen_text(app)
        await pilot.press(*"run-on")
        await keys(pilot, app, "enter")
        assert rows(store.path, "fluency")[-1] == ("s0", None, 1, "run-on")
        await keys(pilot, app, "1")  # the label row keeps the flag and note
        assert rows(store.path, "fluency")[-1] == ("s0", "1", 1, "run-on")
        assert focused(app) == "coherence" and "item 1/3" in screen_text(app)
    assert rows(store.path, "coherence") == []


async def test_restart_mid_item_keeps_the_given_levels_and_asks_for_the_rest(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape", "4", "2", "5")  # item 1 done, item 2 half done
    # the app is gone without quitting (as when killed): the rows are in the file
    store.close()
    again = open_store(store.path)
    try:
        app = build(again, rubric_file)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert "coherence (ordinal)" not in text  # a started queue opens on the item
            assert "item 2/3" in text and "1/3 labeled" in text and "1/2 criteria" in text
            assert level(app, "coherence") == "5" and level(app, "fluency") == "–"
            assert focused(app) == "fluency"
            await keys(pilot, app, "3")
            assert "item 3/3" in screen_text(app)
    finally:
        again.close()
    assert [r[:2] for r in rows(store.path, "coherence")] == [("s0", "4"), ("s1", "5")]
    assert [r[:2] for r in rows(store.path, "fluency")] == [("s0", "2"), ("s1", "3")]


def test_the_cli_opens_a_whole_file_draws_one_queue_and_resumes_it(
    tmp_path: Path, rubric_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = tmp_path / "cli.db"
    with open_store(db) as setup:
        setup.import_items("news", [Item(id=f"s{i}", input=f"doc {i}", response=f"r {i}")
                                    for i in range(6)])
    pressed = [["escape", "4", "2", "5", "q"], ["3", "q"]]

    def drive(self: AnnotateApp) -> None:
        async def session() -> None:
            async with self.run_test(size=SIZE) as pilot:
                await pilot.pause()
                await keys(pilot, self, *pressed.pop(0))

        asyncio.run(session())

    monkeypatch.setattr(AnnotateApp, "run", drive)
    argv = ["annotate", "--rubric", str(rubric_file), "--db", str(db), "--annotator", "alice",
            "--sample", "4", "--seed", "1"]
    main(argv)
    first = capsys.readouterr()
    assert "drew queue summeval-" in first.err and "criteria coherence, fluency" in first.err
    assert "alice: 1/4 items labeled on every criterion" in first.out
    assert "(coherence 2 left, fluency 3 left; 3 new label(s) this session)" in first.out
    main(argv)
    second = capsys.readouterr()
    assert "resuming queue summeval-" in second.err
    assert "alice: 2/4 items labeled" in second.out and "coherence 2 left, fluency 2 left" \
        in second.out
    with open_store(db) as check:
        [queue] = check.list_queues()
        meta, entries = check.get_queue(queue)
        assert [name for name, _ in meta["params"]["criteria"]] == ["coherence", "fluency"]
        assert len(entries) == 4
    # a criterion at a time still works, and the judge is never shown on the whole file
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--show-judge"])
    assert exited.value.code == 2
    assert f"name it as {rubric_file}#coherence" in capsys.readouterr().err


def test_an_assigned_queue_of_the_whole_file_opens_every_criterion_in_the_serve_session(
    tmp_path: Path, rubric_file: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``queue assign`` takes the whole file, and the process ``judgekit serve`` starts per
    browser session opens its queue with every criterion on one screen."""
    from judgekit.serve.session import main as session_main
    from judgekit.tui.criteria_app import CriteriaApp
    from tests.support.cli import run_cli

    db = tmp_path / "serve.db"
    with open_store(db) as setup:
        setup.import_items("news", [Item(id=f"s{i}", input=f"doc {i}", response=f"r {i}")
                                    for i in range(4)])
    code, out, err = run_cli("queue", "assign", "--rubric", str(rubric_file), "--db", str(db),
                             "--annotators", "ann,bob")
    assert code == 0, err
    queue = next(line.rsplit(": ", 1)[0] for line in out.splitlines() if "items for ann" in line)
    assert queue.startswith("assign:summeval:")
    opened: list[AnnotateApp] = []

    def drive(self: AnnotateApp) -> None:
        async def session() -> None:
            async with self.run_test(size=SIZE) as pilot:
                opened.append(self)
                await keys(pilot, self, "escape", "4", "2", "q")

        asyncio.run(session())

    monkeypatch.setattr(AnnotateApp, "run", drive)
    assert session_main(["--db", str(db), "--queue", queue, "--annotator", "ann"]) == 0
    assert isinstance(opened[0], CriteriaApp)
    assert [r[1] for r in rows(db, "coherence")] == ["4"]
    assert [r[1] for r in rows(db, "fluency")] == ["2"]
    # the same queue from the command line, by name, with the whole file
    main(["annotate", "--rubric", str(rubric_file), "--db", str(db), "--annotator", "ann",
          "--queue", queue])
    assert isinstance(opened[1], CriteriaApp)
    assert [r[1] for r in rows(db, "coherence")] == ["4", "4"]


def test_the_queue_is_drawn_as_the_first_criterion_alone_would_draw_it(
    tmp_path: Path, rubric_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Same strategy, sample and seed: the same items in the same order as a single-criterion
    queue of the first criterion, strata from its verdicts (and the command says so)."""
    from judgekit.cli.annotate import prepare_queue
    from judgekit.rubrics import load_rubric
    from tests.support.annotate import judgment, record_judgments

    db = tmp_path / "draw.db"
    coherence = load_rubric(f"{rubric_file}#coherence")
    with open_store(db) as setup:
        setup.import_items("news", [Item(id=f"s{i}", input=f"doc {i}", response=f"r {i}",
                                         slice="a" if i % 3 else "b") for i in range(40)])
        setup.save_rubric(coherence)
        record_judgments(setup, coherence, [judgment(coherence, "news", f"s{i}", str(1 + i % 5))
                                            for i in range(40)])
    monkeypatch.setattr(AnnotateApp, "run", lambda self: None)
    main(["annotate", "--rubric", str(rubric_file), "--db", str(db), "--annotator", "alice",
          "--strategy", "stratified", "--sample", "12", "--seed", "5"])
    err = capsys.readouterr().err
    assert "the stratified draw ranks items by the verdicts of the first criterion" in err
    with open_store(db) as check:
        [name] = check.list_queues()
        whole = check.get_queue(name)[1]
        alone = prepare_queue(check, coherence, dataset=None, strategy="stratified", sample=12,
                              seed=5, name="coherence-alone")
    assert [(e.item_id, e.inclusion_prob, e.stratum) for e in whole] == [
        (e.item_id, e.inclusion_prob, e.stratum) for e in alone.entries]
    assert len(whole) == 12 and {e.stratum for e in whole} != {"random"}
    # the whole-file queue drew the items every criterion's labels come from: a report on
    # the second criterion weights by its inclusion probabilities too
    from judgekit.report import ReportOptions, build_report
    from judgekit.types import Label

    fluency = load_rubric(f"{rubric_file}#fluency")
    with open_store(db) as store:
        store.save_rubric(fluency)
        record_judgments(store, fluency, [judgment(fluency, "news", f"s{i}", str(1 + i % 3))
                                          for i in range(40)])
        store.add_labels([Label(dataset="news", item_id=e.item_id, rubric_hash=fluency.sha256,
                                annotator="alice", label=str(1 + int(e.item_id[1:]) % 3))
                          for e in whole])
        report = build_report(store, fluency, ReportOptions(n_resamples=50))
    assert report.weighted is not None and report.weighted.queue == name


async def test_help_lists_every_criterion_and_the_criteria_keys(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=(100, 60)) as pilot:
        await keys(pilot, app, "escape", "question_mark")
        text = screen_text(app)
        assert "summeval v1 · 2 criteria on one screen" in text
        for needle in ("coherence (ordinal)", "fluency (ordinal)", "Some slips.",
                       "focus the next criterion", "skip the focused criterion",
                       "back to the previous criterion", "shift+up / shift+down: a row"):
            assert needle in text, needle
        assert "up/down arrows: a row" not in text  # the arrows move the focus here


def test_a_file_mixing_pairwise_and_single_criteria_is_refused_before_any_draw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    mixed = tmp_path / "mixed.toml"
    mixed.write_text(RUBRIC + """
[criteria.preference]
description = "Which summary is better."
[criteria.preference.scale]
kind = "pairwise"
allow_tie = true
levels = { A = "A is better.", B = "B is better.", tie = "Equal." }
[criteria.preference.prompt]
user = "{input} A: {response_a} B: {response_b} {scale}"
""", encoding="utf-8")
    db = tmp_path / "mixed.db"
    with open_store(db) as setup:
        setup.import_items("news", [Item(id="s0", input="doc", response="r")])
    with pytest.raises(SystemExit) as exited:
        main(["annotate", "--rubric", str(mixed), "--db", str(db), "--annotator", "alice"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "the criteria mix pairwise and single-response scales" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    with open_store(db) as check:
        assert check.list_queues() == []


async def test_keys_typed_ahead_apply_in_order_to_the_criterion_in_focus_at_their_turn(
    store: Store, rubric_file: Path,
) -> None:
    app = build(store, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape")
        await pilot.press("4", "2", "5", "s", "1", "3")  # no wait between them
        await app.label_screen.settled()
        await pilot.pause()
        # item 3 done, the queue wraps round to item 2's skipped criterion
        assert "item 2/3" in screen_text(app) and "2/3 labeled" in screen_text(app)
        assert level(app, "coherence") == "5" and focused(app) == "fluency"
    assert rows(store.path, "coherence") == [("s0", "4", 0, None), ("s1", "5", 0, None),
                                             ("s2", "1", 0, None)]
    assert rows(store.path, "fluency") == [("s0", "2", 0, None), ("s1", None, 0, None),
                                           ("s2", "3", 0, None)]


async def test_shift_arrows_scroll_the_item_and_d_folds_the_levels(
    tmp_db: Store, rubric_file: Path,
) -> None:
    tmp_db.import_items("news", [Item(id=f"s{i}", input="\n".join(f"line {n}" for n in range(80)),
                                      response="short") for i in range(N)])
    app = build(tmp_db, rubric_file)
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape")
        document = app.label_screen.document
        assert document.scroll_y == 0
        await keys(pilot, app, "shift+down", "shift+down")
        assert document.scroll_y == 2 and focused(app) == "coherence"
        await keys(pilot, app, "shift+up")
        assert document.scroll_y == 1
        assert "Very good." in screen_text(app)
        await keys(pilot, app, "d")
        assert "Very good." not in screen_text(app) and "(d: descriptions)" in screen_text(app)


async def test_each_level_stores_its_own_time_and_a_repeated_level_writes_nothing(
    store: Store, rubric_file: Path,
) -> None:
    """A criterion's time runs from the item appearing or the previous criterion's key, so an
    item's times add up to the time spent on it; pressing the level a criterion already has
    (after going back) appends no row, as on a single rubric."""
    from judgekit.cli._annotate_criteria import criteria_file
    from judgekit.tui.criteria_app import make_criteria_app, title_rubric

    now = [100.0]
    found = criteria_file(str(rubric_file))
    assert found is not None
    for criterion in found.criteria:
        store.save_rubric(criterion.rubric)
    queue = [QueueEntry(i, "news", f"s{i}", 1.0, "random") for i in range(N)]
    app = make_criteria_app(store, title_rubric(found.name, found.criteria), found.criteria,
                            queue, annotator="h2", clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await keys(pilot, app, "escape")
        now[0] += 7.0
        await keys(pilot, app, "4")
        now[0] += 2.5
        await keys(pilot, app, "2", "u", "u")
        assert "item 1/3" in screen_text(app) and focused(app) == "coherence"
        await keys(pilot, app, "4")  # the level it has: nothing to write; a complete item
        assert "item 2/3" in screen_text(app)  # moves on, as a single label would
    with sqlite3.connect(store.path) as conn:
        stored = conn.execute("SELECT label, seconds FROM labels ORDER BY id").fetchall()
    assert stored == [("4", 7.0), ("2", 2.5)]
