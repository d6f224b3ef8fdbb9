"""Long documents in the annotate app: jump keys, no animation, empty text, real SQuALITY stories.

The SQuALITY test reads 20 real 5,000-word stories from the shared data folder
and skips when it is absent. Speed is measured in benchmarks/bench_annotate_long.py,
not here.
"""

from __future__ import annotations

import pytest

from judgekit.store import Store
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.types import Item
from tests.support import squality
from tests.support.annotate import queue_for, rubric, screen_text

SIZES = [(80, 24), (160, 48)]
STORY = "\n\n".join(
    f"Paragraph {p}. " + " ".join(f"word{p}x{w}" for w in range(120)) for p in range(60)
)


def body_words(rows: list[str]) -> list[str]:
    """The words of a section's body rows (up to the blank row that ends it)."""
    body = []
    for row in rows:
        text = row.rstrip("▁▂▃▄▅▆▇█▏ ")
        if not text.strip():
            break
        body.append(text)
    return " ".join(body).split()


def item_rows(app: AnnotateApp) -> list[str]:
    """The item view's rows as on screen (between the header and the status line)."""
    view = app.label_screen.document
    lines = screen_text(app).splitlines()
    return lines[view.region.y: view.region.y + view.region.height]


async def press(pilot, app: AnnotateApp, *keys: str) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        await pilot.press(key)
        await app.label_screen.settled()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_jump_keys_move_between_sections_without_animation(
    tmp_db: Store, size: tuple[int, int]
) -> None:
    rub = rubric("binary")
    summary = "SUMMARY-{} starts here, " + " ".join(f"then{w}," for w in range(80)) + " end."
    items = [Item(id=f"long-{i}", input=STORY, response=summary.format(i),
                  reference=f"REFERENCE-{i} text.") for i in range(2)]
    tmp_db.import_items("d", items)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    assert app.animation_level == "none"
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.label_screen.document
        assert item_rows(app)[0].strip() == "Input"
        await press(pilot, app, "right_square_bracket")
        assert view.scroll_y == view.anchors["response"]  # there at once: no animation
        rows = item_rows(app)
        assert rows[0].strip() == "Response"
        words = body_words(rows[1:])
        assert words == summary.format(0).split()[: len(words)]  # no character lost at a wrap
        await press(pilot, app, "right_square_bracket")
        assert item_rows(app)[0].strip() == "Reference"
        await press(pilot, app, "left_square_bracket", "left_square_bracket")
        assert view.scroll_y == 0
        await press(pilot, app, "end")
        assert "REFERENCE-0 text." in item_rows(app)[-1]  # the last row at the bottom
        await press(pilot, app, "home", "pagedown")
        assert view.scroll_y == view.size.height - 1
        await press(pilot, app, "p")  # the next item opens at its top
        assert view.scroll_y == 0 and item_rows(app)[0].strip() == "Input"


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_empty_text_is_shown_as_empty(tmp_db: Store, size: tuple[int, int]) -> None:
    rub = rubric("pairwise")
    items = [Item(id="e", input="", response_a="   ", response_b="B answer", reference="")]
    tmp_db.import_items("d", items)
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = screen_text(app)
    assert text.count("(empty)") == 3 and "(empty) (whitespace only)" in text


@pytest.mark.skipif(not squality.available(), reason="shared SQuALITY data not present")
async def test_labeling_twenty_squality_stories_at_80x24(tmp_db: Store) -> None:
    rub = squality.rubric()
    items = squality.long_items(20)
    assert len(items) == 20 and min(len(i.input.split()) for i in items) > 3000
    tmp_db.import_items("squality", items)
    app = make_app(tmp_db, rub, queue_for("squality", items), annotator="alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press(pilot, app, "escape")  # the guidelines open first on a new queue
        view = app.label_screen.document
        assert view.size.height >= 10  # rows of item text on an 80x24 screen
        for n, item in enumerate(items):
            assert f"item {n + 1}/20" in screen_text(app)
            await press(pilot, app, "right_square_bracket")  # the story -> the summary
            rows = item_rows(app)
            assert rows[0].strip() == "Response"
            words = body_words(rows[1:])
            assert words == item.response.split()[: len(words)]
            await press(pilot, app, "right_square_bracket")  # -> the reference
            assert item_rows(app)[0].strip() == "Reference"
            await press(pilot, app, "left_square_bracket", str(1 + n % 5))
        assert "Queue complete" in screen_text(app)
    labels = tmp_db.latest_labels(rub.sha256, annotator="alice")
    assert [lb.label for lb in labels] == [str(1 + n % 5) for n in range(20)]
    assert all(lb.blind for lb in labels)
