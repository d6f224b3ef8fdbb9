"""Reading a long item in the annotate app: search, marks, split view, folded scale, blind ids.

Driven with Textual's pilot at 80x24 and 160x48 on a synthetic 5,000-word story (and
on real SQuALITY stories from the shared data folder, skipped when absent).
"""

from __future__ import annotations

import pytest

from judgekit.cli.annotate import exit_line
from judgekit.rubrics import rubric_from_text
from judgekit.store import QueueEntry, Store
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.tui.dialogs import NoteScreen
from judgekit.tui.document import DocumentView
from judgekit.tui.widgets import ScalePanel, StatusLine
from judgekit.types import Item
from tests.support import squality
from tests.support.annotate import RUBRIC_TEXT, queue_for, rubric, screen_text

SIZES = [(80, 24), (160, 48)]
MARKER = "marscolony"
#: 50 paragraphs of 100 words: 5,000 words, the marker in paragraphs 10, 30 and 45.
STORY = "\n\n".join(
    " ".join(MARKER if (p in (10, 30, 45) and w == 50) else f"w{p}x{w}" for w in range(100))
    for p in range(50)
)


async def press(pilot, app: AnnotateApp, *keys: str) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        await pilot.press(key)
        await app.label_screen.settled()
        await pilot.pause()


async def type_text(pilot, app: AnnotateApp, text: str) -> None:  # type: ignore[no-untyped-def]
    await press(pilot, app, *list(text))


def status(app: AnnotateApp) -> str:
    return str(app.label_screen.query_one(StatusLine).render())


def visible(view: DocumentView) -> list[str]:
    top = round(view.scroll_y)
    return view.text_rows()[top: top + view.scrollable_content_region.height]


def _app(tmp_db: Store, items: list[Item], rub_text: str | None = None,
         **kwargs: object) -> AnnotateApp:
    rub = rubric("binary") if rub_text is None else rubric_from_text(rub_text, path="r.toml")
    tmp_db.import_items("d", items)
    return make_app(tmp_db, rub, queue_for("d", items), annotator="alice", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_search_highlights_and_n_moves_between_matches(
    tmp_db: Store, size: tuple[int, int]
) -> None:
    app = _app(tmp_db, [Item(id="story-1", input=STORY, response="A summary.")])
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.label_screen.document
        assert len(STORY.split()) == 5000
        await press(pilot, app, "slash")
        await type_text(pilot, app, MARKER)
        await press(pilot, app, "enter")
        assert view.match_position() == (1, 3)
        assert any(MARKER in row for row in visible(view))
        assert f"/{MARKER} 1/3" in status(app)
        # the current match is drawn highlighted
        row = next(i for i, r in enumerate(visible(view)) if MARKER in r)
        styled = [s for s in view.render_line(row) if s.text == MARKER]
        assert styled and styled[0].style is not None and styled[0].style.bgcolor is not None
        seen = []
        for key in ("n", "n", "n", "N"):
            await press(pilot, app, key)
            seen.append(view.match_position()[0])
            assert any(MARKER in r for r in visible(view)), key
        assert seen == [2, 3, 1, 3]
        await press(pilot, app, "escape")  # clears: n is the note key again
        assert view.search_query == "" and MARKER not in status(app)
        await press(pilot, app, "n")
        assert isinstance(app.screen, NoteScreen)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_marks_bring_the_reader_back(tmp_db: Store, size: tuple[int, int]) -> None:
    app = _app(tmp_db, [Item(id="story-1", input=STORY, response="A summary.",
                             reference="The reference.")])
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.label_screen.document
        await press(pilot, app, "apostrophe")  # nothing to come back to yet
        assert round(view.scroll_y) == 0
        await press(pilot, app, "pagedown", "pagedown", "m")
        marked = round(view.scroll_y)
        assert marked > 0
        await press(pilot, app, "end")
        end = round(view.scroll_y)
        await press(pilot, app, "apostrophe")
        assert round(view.scroll_y) == marked
        await press(pilot, app, "apostrophe")  # and back where ' was pressed
        assert round(view.scroll_y) == end
        # without a mark, ' comes back from a section jump
        await press(pilot, app, "l", "home")
        app.label_screen.document._mark = None
        await press(pilot, app, "right_square_bracket")
        assert round(view.scroll_y) == view.anchors["response"]
        await press(pilot, app, "apostrophe")
        assert round(view.scroll_y) == 0


async def test_split_view_reads_input_and_response_side_by_side(tmp_db: Store) -> None:
    summary = " ".join(f"s{w}" for w in range(3000))
    app = _app(tmp_db, [Item(id="story-1", input=STORY, response=summary)])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await press(pilot, app, "v")
        left, right = app.label_screen.panes
        assert app.label_screen.query_one("#panes").has_class("-split")
        assert set(left.anchors) == {"input"} and set(right.anchors) == {"response"}
        screen = screen_text(app)
        assert "Input" in screen and "Response" in screen and "w0x0" in screen and "s0" in screen
        await press(pilot, app, "pagedown")  # the left side scrolls, the right stays
        assert left.scroll_y > 0 and right.scroll_y == 0
        await press(pilot, app, "tab", "pagedown")
        assert right.scroll_y > 0
        left_at = left.scroll_y
        await press(pilot, app, "slash")
        await type_text(pilot, app, "s2999")
        await press(pilot, app, "enter")
        assert right.match_position() == (1, 1) and left.scroll_y == left_at
        await press(pilot, app, "v")  # back to one pane, everything in it
        assert set(left.anchors) == {"input", "response"}


async def test_split_view_needs_a_wide_terminal(tmp_db: Store) -> None:
    app = _app(tmp_db, [Item(id="story-1", input=STORY, response="A summary.")])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press(pilot, app, "v")
        assert not app.label_screen.query_one("#panes").has_class("-split")
        assert any("needs 120 columns" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_d_folds_the_scale_descriptions_for_the_text(
    tmp_db: Store, size: tuple[int, int]
) -> None:
    app = _app(tmp_db, [Item(id="story-1", input=STORY, response="A summary.")],
               RUBRIC_TEXT["ordinal"])
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.label_screen.document
        before = view.scrollable_content_region.height
        await press(pilot, app, "d")
        assert app.label_screen.query_one(ScalePanel).compact
        assert view.scrollable_content_region.height > before
        assert "(d: descriptions)" in screen_text(app)
        await press(pilot, app, "d")
        assert view.scrollable_content_region.height == before


SHOW_ID = RUBRIC_TEXT["binary"] + '\n[display]\nshow_id = true\n'
DISPLAY = RUBRIC_TEXT["binary"] + '''
[display]
input = "Story"
response = "Summary"
meta = ["question"]
'''


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_blind_mode_shows_a_position_not_the_id_or_slice(
    tmp_db: Store, size: tuple[int, int]
) -> None:
    items = [Item(id=f"story-{i}-bart-dpr", input="A story.", response="A summary.",
                  slice="bart") for i in range(3)]
    app = _app(tmp_db, items)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        line = status(app)
        assert "item 1/3" in line and "bart" not in line and "story-0" not in line
        await press(pilot, app, "n")
        await type_text(pilot, app, "long note " * 10)
        await press(pilot, app, "enter")
        assert status(app).lstrip().startswith("item 1/3")
    shown = _app(tmp_db, items, SHOW_ID)  # the rubric says its ids are safe to show
    async with shown.run_test(size=size) as pilot:
        await pilot.pause()
        assert "story-0-bart-dpr" in status(shown)


async def test_display_names_sections_and_shows_meta(tmp_db: Store) -> None:
    items = [Item(id="s-1", input="Once upon a time.", response="It ends well.",
                  meta={"question": "How does it end?"})]
    app = _app(tmp_db, items, DISPLAY)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = app.label_screen.document.text_rows()
        assert rows[0] == "Story" and "Question" in rows and "Summary" in rows
        assert rows.index("Question") < rows.index("Summary")
        assert "How does it end?" in screen_text(app)
    plain = rubric_from_text(RUBRIC_TEXT["binary"], path="r.toml")
    shown = rubric_from_text(DISPLAY, path="r.toml")
    assert plain.sha256 == shown.sha256  # display only: the same rubric, the same judgments


async def test_the_next_item_of_the_same_story_says_so(tmp_db: Store) -> None:
    items = [Item(id=f"q-{i}", input=STORY if i < 2 else "Another story.",
                  response=f"Answer {i}.") for i in range(3)]
    app = _app(tmp_db, items, DISPLAY)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "same story" not in status(app)
        await press(pilot, app, "p")
        assert "same story as the previous item" in status(app)
        await press(pilot, app, "p")
        assert "same story" not in status(app)


async def test_quit_summary_counts_skips_flags_and_notes(tmp_db: Store) -> None:
    items = [Item(id=f"q-{i}", input="Q.", response="A.") for i in range(4)]
    app = _app(tmp_db, items)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press(pilot, app, "exclamation_mark", "p", "s", "n")
        await type_text(pilot, app, "why")
        await press(pilot, app, "enter", "f")
        line = exit_line(app.session, "qq", "j.db")
    assert "2/4 labeled in queue qq, 1 skipped, 1 flagged, 1 with a note" in line


async def test_queue_notices_are_not_shown_again_on_resume(tmp_db: Store) -> None:
    items = [Item(id=f"q-{i}", input="Q.", response="A.") for i in range(3)]
    app = _app(tmp_db, items, notices=("the queue holds all 3 items",))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert any("holds all 3" in str(n.message) for n in app._notifications)
        await press(pilot, app, "p")
    rub = rubric("binary")
    again = make_app(tmp_db, rub, queue_for("d", items), annotator="alice",
                     notices=("the queue holds all 3 items",))
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not any("holds all 3" in str(n.message) for n in again._notifications)


@pytest.mark.skipif(not squality.available(), reason="the shared SQuALITY data is absent")
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_real_squality_story_search_and_split(tmp_db: Store, size: tuple[int, int]) -> None:
    items = squality.long_items(3)
    tmp_db.import_items("sq", items)
    rub = squality.rubric()
    app = make_app(tmp_db, rub, [QueueEntry(i, "sq", it.id, 1.0, None)
                                 for i, it in enumerate(items)], annotator="alice")
    word = next(w for w in items[0].response.split() if len(w) > 6 and w.isalpha()
                and w.lower() in items[0].input.lower())  # a word of the summary in the story
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await press(pilot, app, "escape")  # the guidelines open first on a new queue
        await press(pilot, app, "slash")
        await type_text(pilot, app, word)
        await press(pilot, app, "enter")
        view = app.label_screen.document
        at, count = view.match_position()
        assert at == 1 and count >= 2  # in the story and in the summary
        assert any(word.lower() in r.lower() for r in visible(view))
        await press(pilot, app, "v")
        if size[0] >= 120:
            left, right = app.label_screen.panes
            assert "response" in right.anchors and "input" in left.anchors
        else:
            assert not app.label_screen.query_one("#panes").has_class("-split")
