"""Word wrapping for the item view, fast enough for a 1 MB item on every key press.

The item view draws only the rows on screen (:class:`judgekit.tui.document.DocumentView`),
so the cost that remains is wrapping the text once per item and width. ASCII
paragraphs (the common case) are wrapped with ``str.rfind`` on the raw string;
other text is measured in terminal cells by grapheme (rich's tables), so wide
CJK characters take two cells and an emoji ZWJ sequence, a flag or a letter with
combining marks is never split across rows.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, split_graphemes

from judgekit.textsafe import terminal_safe

_SPACES = re.compile(r"( +)")


def clean(text: str) -> str:
    """Text as it may reach the terminal: tabs expanded, every control and bidi override
    shown as an escape (:func:`judgekit.textsafe.terminal_safe`).

    A stray escape sequence in an item must not repaint the annotator's terminal.
    """
    return terminal_safe(text).expandtabs(4)


def wrap(text: str, width: int) -> list[str]:
    """``text`` as rows of at most ``width`` cells (words kept whole where they fit)."""
    width = max(1, width)
    rows: list[str] = []
    for paragraph in clean(text).split("\n"):
        if not paragraph:
            rows.append("")
        elif paragraph.isascii():
            _wrap_ascii(paragraph, width, rows)
        else:
            _wrap_cells(paragraph, width, rows)
    return rows


def _wrap_ascii(paragraph: str, width: int, rows: list[str]) -> None:
    """One cell per character: break at the last space that fits, else mid-word."""
    pos, end = 0, len(paragraph)
    while end - pos > width:
        cut = paragraph.rfind(" ", pos, pos + width + 1)
        if cut <= pos:  # no space in reach: a word longer than the row
            cut = pos + width
        rows.append(paragraph[pos:cut].rstrip(" "))
        pos = cut
        while pos < end and paragraph[pos] == " ":
            pos += 1
    if pos < end or not rows:
        rows.append(paragraph[pos:])


def _wrap_cells(paragraph: str, width: int, rows: list[str]) -> None:
    """Greedy wrap by cell width; words wider than a row are cut between graphemes."""
    line: list[str] = []
    used = 0
    for token in _SPACES.split(paragraph):
        if not token:
            continue
        size = cell_len(token)
        if used + size <= width:
            line.append(token)
            used += size
            continue
        if token.startswith(" "):  # a break: the spaces are not carried to the next row
            rows.append("".join(line).rstrip(" "))
            line, used = [], 0
            continue
        if line:
            rows.append("".join(line).rstrip(" "))
            line, used = [], 0
        if size <= width:
            line, used = [token], size
            continue
        for grapheme in _graphemes(token):
            g = cell_len(grapheme)
            if used + g > width and line:
                rows.append("".join(line))
                line, used = [], 0
            line.append(grapheme)
            used += g
    rows.append("".join(line).rstrip(" "))


def _graphemes(text: str) -> list[str]:
    """User-perceived characters (a ZWJ emoji sequence or a flag stays one)."""
    spans, _ = split_graphemes(text)
    return [text[start:end] for start, end, _width in spans]


__all__ = ["clean", "wrap"]
