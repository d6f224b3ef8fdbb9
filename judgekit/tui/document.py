"""The item view: titled sections of literal text, drawn one screen row at a time.

A long item (a 5,000-word story, a 1 MB log) must not slow the key presses the
annotator makes while reading it. Laying the whole text out as widgets did: every
redraw reflowed it. Here the text is wrapped once per item and width
(:mod:`judgekit.tui.wrapping`) into plain rows, and :meth:`DocumentView.render_line`
turns only the visible rows into segments, so a key press costs the same for a
1 MB item as for a short one (measured in ``benchmarks/bench_annotate_long.py``).

Sections are Input, Response (or Response A and B, side by side when the view is
wide enough, stacked otherwise), Reference and, with ``--show-judge``, the judge.
The labeling screen's ``]`` and ``[`` jump to the next and previous section
title; scrolling never animates. Item text is never interpreted as markup, and
control characters are shown as escapes (``\\x1b``) before it reaches the
terminal. An empty text shows as ``(empty)``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from judgekit.tui.wrapping import wrap

#: Below this many columns the two responses of a pair are stacked, not side by side.
STACK_BELOW_COLUMNS = 100
EMPTY = "(empty)"
_GAP = 2  # columns between side-by-side responses
_INDENT = 1  # body text is indented under its title


@dataclass(frozen=True)
class Section:
    """One titled block; ``pair_with`` puts a second block beside it on a wide view."""

    anchor: str
    title: str
    text: str
    pair_with: Section | None = None


@dataclass(frozen=True)
class _Row:
    kind: str  # "title", "body", "empty", "blank"
    text: str
    right: str | None = None  # the second column of a side-by-side pair
    right_kind: str | None = None


class DocumentView(ScrollView, can_focus=False):
    """Scrollable sections of an item; only the rows on screen are rendered."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "document--title", "document--empty", "document--match", "document--current-match",
    }
    DEFAULT_CSS = """
    DocumentView {
        height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    DocumentView > .document--title { color: $text-accent; text-style: bold; }
    DocumentView > .document--empty { color: $text-muted; text-style: italic; }
    DocumentView > .document--match { background: $warning 45%; }
    DocumentView > .document--current-match {
        background: $warning; color: $background; text-style: bold;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._sections: tuple[Section, ...] = ()
        self._rows: list[_Row] = []
        self._anchors: dict[str, int] = {}
        self._laid_out_width = -1
        self._search = _Search()
        self._mark: int | None = None  # m: a row to come back to
        self._back: int | None = None  # where the last jump left from

    # -- content -----------------------------------------------------------
    def show(self, sections: Sequence[Section]) -> None:
        """Show ``sections`` from the top (a no-op when they are what is shown)."""
        sections = tuple(sections)
        if sections == self._sections:
            return
        self._sections = sections
        self._laid_out_width = -1
        self._mark = self._back = None  # marks belong to one item
        self._layout()
        self.scroll_to(0, 0, animate=False, immediate=True)

    @property
    def anchors(self) -> dict[str, int]:
        """Row of each section's title (Input, Response, ...), for jumping and tests."""
        return dict(self._anchors)

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def text_rows(self) -> list[str]:
        """Every row as plain text (tests read what the annotator can scroll through)."""
        return [row.text + ("  " + row.right if row.right else "") for row in self._rows]

    def on_resize(self) -> None:
        if self.scrollable_content_region.width == self._laid_out_width:
            self._size_to_content()  # only the height changed
        self._layout()

    def _body_width(self) -> int:
        return max(10, self.scrollable_content_region.width - _INDENT)

    def _layout(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or width == self._laid_out_width:
            return
        self._laid_out_width = width
        rows: list[_Row] = []
        anchors: dict[str, int] = {}
        side_by_side = width >= STACK_BELOW_COLUMNS
        for section in self._sections:
            if rows:
                rows.append(_Row("blank", ""))
            partner = section.pair_with
            if partner is not None and side_by_side:
                anchors[section.anchor] = anchors[partner.anchor] = len(rows)
                rows.extend(self._pair_rows(section, partner, width))
                continue
            anchors[section.anchor] = len(rows)
            rows.extend(self._section_rows(section, self._body_width()))
            if partner is not None:
                rows.append(_Row("blank", ""))
                anchors[partner.anchor] = len(rows)
                rows.extend(self._section_rows(partner, self._body_width()))
        self._rows = rows
        self._anchors = anchors
        self._search.find(self._rows)
        self._size_to_content()

    def _size_to_content(self) -> None:
        """Room below the text so that a jump can bring the last section's title to the top."""
        last = max(self._anchors.values(), default=0)
        height = self.scrollable_content_region.height
        rows = len(self._rows)
        self.virtual_size = Size(self._laid_out_width,
                                 rows if rows <= height else max(rows, last + height))
        self.refresh()

    @staticmethod
    def _section_rows(section: Section, width: int) -> list[_Row]:
        rows = [_Row("title", section.title)]
        if not section.text.strip():
            rows.append(_Row("empty", EMPTY if not section.text else f"{EMPTY} (whitespace only)"))
        else:
            rows.extend(_Row("body", line) for line in wrap(section.text, width))
        return rows

    def _pair_rows(self, left: Section, right: Section, width: int) -> list[_Row]:
        column = max(10, (width - _GAP) // 2)
        a = self._section_rows(left, column - _INDENT)
        b = self._section_rows(right, column - _INDENT)
        out = []
        for index in range(max(len(a), len(b))):
            ra = a[index] if index < len(a) else _Row("blank", "")
            rb = b[index] if index < len(b) else _Row("blank", "")
            out.append(_Row(ra.kind, ra.text, rb.text, rb.kind))
        return out

    # -- drawing -------------------------------------------------------------
    def _style(self, kind: str) -> Style:
        if kind == "title":
            return self.get_component_rich_style("document--title")
        if kind == "empty":
            return self.get_component_rich_style("document--empty")
        return Style()

    def _cell(self, kind: str, text: str, width: int,
              spans: Sequence[tuple[int, int, bool]] = ()) -> list[Segment]:
        indent = 0 if kind == "title" else _INDENT
        body = set_cell_size(text, max(0, width - indent)) if cell_len(text) != width - indent \
            else text
        style = self._style(kind)
        out = [Segment(" " * indent)]
        at = 0
        for start, end, current in spans:  # search matches, highlighted
            if start >= len(body):
                break
            name = "document--current-match" if current else "document--match"
            out += [Segment(body[at:start], style),
                    Segment(body[start:end], style + self.get_component_rich_style(name))]
            at = end
        out.append(Segment(body[at:], style))
        return out

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        base = self.rich_style
        if index >= len(self._rows) or width <= 0:
            return Strip.blank(width, base)
        row = self._rows[index]
        spans = self._search.spans(index)
        if row.right is None:
            segments = self._cell(row.kind, row.text, width, spans.get(0, ()))
        else:
            column = max(10, (width - _GAP) // 2)
            segments = [
                *self._cell(row.kind, row.text, column, spans.get(0, ())),
                Segment(" " * _GAP),
                *self._cell(row.right_kind or "blank", row.right, width - column - _GAP,
                            spans.get(1, ())),
            ]
        return Strip(segments).apply_style(base).crop_extend(0, width, base)

    # -- search and marks (/, n, N, m, ') ----------------------------------------
    @property
    def search_query(self) -> str:
        return self._search.query

    def search(self, query: str) -> int:
        """Find ``query`` (case-insensitive) and go to the first match at or below the view.

        Returns the number of matches; an empty query clears the search.
        """
        self._search.query = query.strip()
        self._search.find(self._rows)
        if self._search.matches:
            self.next_match(1)
        self.refresh()
        return len(self._search.matches)

    def next_match(self, direction: int) -> tuple[int, int]:
        """Go to the next (1) or previous (-1) match, wrapping; (position, count), 1-based.

        With no current match (a new item under the same search), the first match at or
        below the top of the view (or the last above it, going back).
        """
        matches = self._search.matches
        if matches:
            if self._search.current < 0:
                here = round(self.scroll_y)
                after = [i for i, m in enumerate(matches) if m[0] >= here]
                before = [i for i, m in enumerate(matches) if m[0] < here]
                pick = ((after or before)[0] if direction > 0
                        else (before or after)[-1])
                self._go_to_match(pick)
            else:
                self._go_to_match((self._search.current + direction) % len(matches))
        return self.match_position()

    def match_position(self) -> tuple[int, int]:
        """(current match, 1-based; 0 when none is current, count)."""
        count = len(self._search.matches)
        return (self._search.current + 1 if count else 0), count

    def _go_to_match(self, index: int) -> None:
        self._search.current = index
        row = self._search.matches[index][0]
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        if not top <= row < top + height:  # off screen: bring it near the top, with context
            self._jump_to_row(max(0, row - 2))
        self.refresh()

    def set_mark(self) -> int:
        """m: remember the row at the top of the view; returns it."""
        self._mark = round(self.scroll_y)
        return self._mark

    def to_mark(self) -> bool:
        """': back to the mark (or to where the last jump left from); pressed again,
        back to where it was pressed. False when there is nowhere to go back to."""
        target = self._mark if self._mark is not None else self._back
        if target is None:
            return False
        here = round(self.scroll_y)
        if self._mark is not None:
            self._mark = here
        self._back = here
        self.scroll_to(y=target, animate=False, immediate=True)
        return True

    def _jump_to_row(self, row: int) -> None:
        """A jump (section, search, Home/End): remember where it left from for '."""
        self._back = round(self.scroll_y)
        self.scroll_to(y=row, animate=False, immediate=True)

    # -- moving (the labeling screen's keys call these; never animated) ----------
    def scroll_rows(self, rows: int) -> None:
        self.scroll_to(y=self.scroll_y + rows, animate=False, immediate=True)

    def page(self, direction: int) -> None:
        self.scroll_rows(direction * max(1, self.scrollable_content_region.height - 1))

    def edge(self, direction: int) -> None:
        """Home: the top; End: the last row of text at the bottom of the view."""
        end = max(0, len(self._rows) - self.scrollable_content_region.height)
        self._jump_to_row(0 if direction < 0 else end)

    def jump(self, direction: int) -> None:
        """Scroll to the next (1) or previous (-1) section title, without animation."""
        here = round(self.scroll_y)
        starts = sorted(set(self._anchors.values()))
        if direction > 0:
            target = next((row for row in starts if row > here), None)
        else:
            target = next((row for row in reversed(starts) if row < here), None)
        if target is not None:
            self._jump_to_row(target)

    def jump_to(self, anchor: str) -> bool:
        """Scroll so that section ``anchor`` starts at the top; False if it is not shown."""
        row = self._anchors.get(anchor)
        if row is None:
            return False
        self._jump_to_row(row)
        return True


class _Search:
    """Matches of a case-insensitive query in the wrapped rows: (row, side, start, end).

    Rows are searched one by one, so a phrase broken across two rows is not found;
    a single word always is.
    """

    def __init__(self) -> None:
        self.query = ""
        self.matches: list[tuple[int, int, int, int]] = []
        self.current = 0

    def find(self, rows: Sequence[_Row]) -> None:
        """Every match in ``rows``; none is current until the reader goes to one."""
        self.matches, self.current = [], -1
        needle = self.query.casefold()
        if not needle:
            return
        for index, row in enumerate(rows):
            for side, text in ((0, row.text), (1, row.right or "")):
                hay = text.casefold()
                at = hay.find(needle)
                while at >= 0 and len(hay) == len(text):  # casefold kept the positions
                    self.matches.append((index, side, at, at + len(needle)))
                    at = hay.find(needle, at + len(needle))

    def spans(self, row: int) -> dict[int, list[tuple[int, int, bool]]]:
        """The matches on one row by side, each with whether it is the current one."""
        if not self.matches:
            return {}
        current = self.matches[self.current] if self.current >= 0 else None
        out: dict[int, list[tuple[int, int, bool]]] = {}
        for match in self._row_matches(row):
            out.setdefault(match[1], []).append((match[2], match[3], match == current))
        return out

    def _row_matches(self, row: int) -> list[tuple[int, int, int, int]]:
        lo = bisect_left(self.matches, (row, -1, -1, -1))
        hi = bisect_left(self.matches, (row + 1, -1, -1, -1))
        return self.matches[lo:hi]


__all__ = ["EMPTY", "STACK_BELOW_COLUMNS", "DocumentView", "Section"]
