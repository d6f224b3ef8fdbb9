"""Word wrapping for the item view: whole words, cell widths, graphemes never split."""

from __future__ import annotations

import textwrap

from rich.cells import cell_len

from judgekit.tui.wrapping import clean, wrap


def test_ascii_matches_textwrap_on_prose() -> None:
    text = ("The quick brown fox jumps over the lazy dog; " * 40).strip()
    for width in (10, 33, 76, 200):
        assert wrap(text, width) == textwrap.wrap(text, width, break_on_hyphens=False)


def test_long_words_are_cut_and_paragraphs_kept() -> None:
    assert wrap("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert wrap("one\n\ntwo", 10) == ["one", "", "two"]
    assert wrap("", 10) == [""]
    assert wrap("   indented code", 40) == ["   indented code"]


def test_wide_characters_take_two_cells_and_graphemes_stay_whole() -> None:
    cjk = "你好世界这个回答正确吗日本語のテキスト"
    rows = wrap(cjk, 10)
    assert "".join(rows) == cjk
    assert all(cell_len(row) <= 10 for row in rows)
    zwj = "👩‍💻"  # woman technologist: three code points, one grapheme
    rows = wrap("ab " + zwj * 6, 5)
    assert all(row.count("\u200d") == row.count("👩") for row in rows)
    assert "".join(rows).replace("ab", "") == zwj * 6
    accented = "e\u0301" * 12  # e + combining acute accent
    assert all(not row.startswith("\u0301") for row in wrap(accented, 5))


def test_control_characters_never_reach_the_terminal() -> None:
    assert clean("a\x1b[31mred\x07\r\nb\tc\x9b") == "a\\x1b[31mred\\x07\nb   c\\x9b"
    assert wrap("x\x1b]0;title\x07y", 40) == ["x\\x1b]0;title\\x07y"]
