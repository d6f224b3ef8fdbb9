"""Fit the text report to a terminal: wrap long lines at word boundaries, with a hanging indent.

The text report is read in a terminal (80 columns when it is not one: a file, a
pipe, a CI log). A line the terminal wraps for us breaks mid-word at column 0 and
loses its indentation, so every line is wrapped here instead: at spaces only,
continuation lines indented under the line's value column (``key   value`` rows
and statistic rows) or two spaces deeper than the line's own indent (sentences).
A single word longer than the width (a URL) is left whole: breaking it would
change what it says.
"""

from __future__ import annotations

import re
import shutil
import sys
import textwrap

#: The width when the output is not a terminal.
DEFAULT_WIDTH = 80
#: A value column further right than this share of the width leaves too little room:
#: its continuation lines are indented like a sentence's instead.
_MAX_HANG_SHARE = 0.6
#: A value column that leaves fewer columns than this for a long value (a figure with a
#: note) would wrap it into a narrow ribbon: it hangs under the line's indent instead.
_MIN_ROOM = 40
_GAP = re.compile(r"\S( {2,})(?=\S)")
#: An interval ``[0.552, 0.822]`` is one unit: never split between its bounds.
_INTERVAL = re.compile(r"\[[^\]\s]*, [^\]\s]*\]")
_GLUE = "\x00"


def terminal_width(stream: object = None) -> int:
    """The terminal's width when ``stream`` (default stdout) is one, else :data:`DEFAULT_WIDTH`."""
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    return DEFAULT_WIDTH


def _hang(line: str, width: int) -> str:
    indent = len(line) - len(line.lstrip(" "))
    if indent > width * _MAX_HANG_SHARE / 2:  # a continuation row already: keep its column
        return " " * indent
    gap = _GAP.search(line, indent)
    if gap is not None and gap.end(1) <= width * _MAX_HANG_SHARE and (
            len(line) - gap.end(1) <= width - gap.end(1) or width - gap.end(1) >= _MIN_ROOM):
        return " " * gap.end(1)
    return " " * (indent + 2)


def wrap_line(line: str, width: int) -> list[str]:
    """``line`` as lines of at most ``width`` columns (a word longer than that kept whole)."""
    if len(line) <= width:
        return [line]
    glued = _INTERVAL.sub(lambda m: m.group(0).replace(" ", _GLUE), line)
    return [part.replace(_GLUE, " ") for part in _wrap(glued, width)]


def _wrap(line: str, width: int) -> list[str]:
    indent = line[: len(line) - len(line.lstrip(" "))]
    hang = _hang(line, width)
    wrapper = textwrap.TextWrapper(
        width=width,
        initial_indent=indent,
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
        replace_whitespace=False,
        drop_whitespace=True,
    )
    # keep runs of spaces inside the first chunk (the aligned columns) as they are
    head_end = len(hang) if len(hang) > len(indent) and line[: len(hang)].strip() else len(indent)
    head, rest = line[:head_end], line[head_end:]
    wrapper.initial_indent = head
    return wrapper.wrap(rest) or [line]


def wrap_text(text: str, width: int) -> str:
    """Every line of ``text`` wrapped to ``width`` columns."""
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(wrap_line(line, width))
    return "\n".join(out)


__all__ = ["DEFAULT_WIDTH", "terminal_width", "wrap_line", "wrap_text"]
