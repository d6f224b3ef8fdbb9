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

    COMPONENT_CLASSES: ClassVar[set[str]] = {"document--title", "document--empty"}
    DEFAULT_CSS = """
    DocumentView {
        height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    DocumentView > .document--title { color: $text-accent; text-style: bold; }
    DocumentView > .document--empty { color: $text-muted; text-style: italic; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._sections: tuple[Section, ...] = ()
        self._rows: list[_Row] = []
        self._anchors: dict[str, int] = {}
        self._laid_out_width = -1

    # -- content -----------------------------------------------------------
    def show(self, sections: Sequence[Section]) -> None:
        """Show ``sections`` from the top (a no-op when they are what is shown)."""
        sections = tuple(sections)
        if sections == self._sections:
            return
        self._sections = sections
        self._laid_out_width = -1
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

    def _cell(self, kind: str, text: str, width: int) -> list[Segment]:
        indent = 0 if kind == "title" else _INDENT
        body = set_cell_size(text, max(0, width - indent)) if cell_len(text) != width - indent \
            else text
        return [Segment(" " * indent), Segment(body, self._style(kind))]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        base = self.rich_style
        if index >= len(self._rows) or width <= 0:
            return Strip.blank(width, base)
        row = self._rows[index]
        if row.right is None:
            segments = self._cell(row.kind, row.text, width)
        else:
            column = max(10, (width - _GAP) // 2)
            segments = [
                *self._cell(row.kind, row.text, column),
                Segment(" " * _GAP),
                *self._cell(row.right_kind or "blank", row.right, width - column - _GAP),
            ]
        return Strip(segments).apply_style(base).crop_extend(0, width, base)

    # -- moving (the labeling screen's keys call these; never animated) ----------
    def scroll_rows(self, rows: int) -> None:
        self.scroll_to(y=self.scroll_y + rows, animate=False, immediate=True)

    def page(self, direction: int) -> None:
        self.scroll_rows(direction * max(1, self.scrollable_content_region.height - 1))

    def edge(self, direction: int) -> None:
        """Home: the top; End: the last row of text at the bottom of the view."""
        end = max(0, len(self._rows) - self.scrollable_content_region.height)
        self.scroll_to(y=0 if direction < 0 else end, animate=False, immediate=True)

    def jump(self, direction: int) -> None:
        """Scroll to the next (1) or previous (-1) section title, without animation."""
        here = round(self.scroll_y)
        starts = sorted(set(self._anchors.values()))
        if direction > 0:
            target = next((row for row in starts if row > here), None)
        else:
            target = next((row for row in reversed(starts) if row < here), None)
        if target is not None:
            self.scroll_to(y=target, animate=False, immediate=True)

    def jump_to(self, anchor: str) -> bool:
        """Scroll so that section ``anchor`` starts at the top; False if it is not shown."""
        row = self._anchors.get(anchor)
        if row is None:
            return False
        self.scroll_to(y=row, animate=False, immediate=True)
        return True


__all__ = ["EMPTY", "STACK_BELOW_COLUMNS", "DocumentView", "Section"]
