"""The labeling screen of the annotate app (its dialogs are in ``dialogs``, its keys in ``keys``).

The labeling screen never writes to SQLite on the event loop. Every key that
changes something becomes an operation on one FIFO queue consumed by a single
worker: the operation builds the row, commits it in a thread
(``store.add_label``), and only then updates the session and shows the next item.
So the UI keeps painting while a write waits for a judge run's transaction, keys
typed ahead apply in order to the items they were meant for, and the next item
is never on screen before the label it follows is durable.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer

from judgekit.errors import JudgekitError
from judgekit.tui.dialogs import HelpScreen, NoteScreen, SearchScreen
from judgekit.tui.document import DocumentView, Section
from judgekit.tui.session import LabelingSession
from judgekit.tui.widgets import (
    ProgressHeader,
    ScalePanel,
    StatusLine,
    header_content,
    item_sections,
    message_sections,
    plain,
    status_content,
)
from judgekit.types import Label

Operation = Callable[[], Awaitable[None]]

#: The split view (input left, response right) needs this many columns.
SPLIT_MIN_COLUMNS = 120


class LabelScreen(Screen[None]):
    """The main screen: one item at a time, labeled with a single key."""

    DEFAULT_CSS = """
    LabelScreen { layout: vertical; }
    LabelScreen #panes { height: 1fr; }
    LabelScreen #side { display: none; border-left: solid $primary; }
    LabelScreen #panes.-split #side { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll(-1)", "up", show=False),
        Binding("down", "scroll(1)", "down", show=False),
        Binding("tab", "other_side", "other side", show=False, priority=True),
    ]

    def __init__(self, session: LabelingSession) -> None:
        super().__init__()
        self.session = session
        self._ops: asyncio.Queue[Operation] = asyncio.Queue()
        self._quitting = False
        self._split = False
        self._active = "item"  # the pane the reading keys move (split view: item or side)

    def compose(self) -> ComposeResult:
        yield ProgressHeader(markup=False)
        with Horizontal(id="panes"):
            yield DocumentView(id="item")
            yield DocumentView(id="side")
        yield StatusLine(markup=False)
        yield ScalePanel(markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.run_worker(self._consume(), name="label-writer", group="label-writer")
        self.refresh_view()
        self.call_after_refresh(self._opening)

    def _opening(self) -> None:
        """Once on screen: the start-up notes (a queue not started yet: on resume they are in
        the help, not over the scale again), then the guidelines if new."""
        if not self.session.latest:
            for notice in self.session.notices:
                self.notify(notice, title="Queue", timeout=8, markup=False)
        if self.session.opens_guidelines:
            self.app.push_screen(HelpScreen(self.session))

    @property
    def document(self) -> DocumentView:
        """The pane the reading keys move (the left one unless the split view says else)."""
        return self.query_one(f"#{self._active}", DocumentView)

    @property
    def panes(self) -> tuple[DocumentView, DocumentView]:
        return self.query_one("#item", DocumentView), self.query_one("#side", DocumentView)

    # -- the operation queue -----------------------------------------------
    async def _consume(self) -> None:
        while True:
            operation = await self._ops.get()
            try:
                await operation()
            except (JudgekitError, sqlite3.Error, OSError, ValueError) as exc:
                self.notify(f"not saved: {exc}", title="Error", severity="error", timeout=8)
            finally:
                self._ops.task_done()

    def enqueue(self, operation: Operation) -> None:
        """Run ``operation`` after every operation queued before it."""
        self._ops.put_nowait(operation)

    async def settled(self) -> None:
        """Wait until every queued operation has run (tests and the benchmark use it)."""
        await self._ops.join()

    async def _commit(self, row: Label) -> None:
        await asyncio.to_thread(self.session.store.add_label, row)

    # -- view ------------------------------------------------------------------
    def refresh_view(self) -> None:
        """Redraw every panel from the session (the item's text only when the item changes)."""
        session = self.session
        self.query_one(ProgressHeader).update(
            header_content(session.rubric, session.annotator, session.blind,
                           session.progress(), session.agreement(), session.adjudicating)
        )
        status = self.query_one(StatusLine)
        entry = session.current
        row = session.current_label()
        if entry is None:
            self._show(message_sections(
                "Queue complete",
                f"All {session.total} items are labeled.\n\n"
                "Press u to go back and change a label, q to quit.",
            ))
            status.update(plain(f" done · {session.total}/{session.total} labeled"))
        else:
            item = session.current_item()
            self._show(
                item_sections(item, session.current_judge(), session.current_opinions(),
                              session.rubric.display)
                if item is not None
                else message_sections(
                    "Item missing from the store",
                    f"Item {entry.item_id!r} of dataset {entry.dataset!r} is no longer in the "
                    "store. Press s to skip it.",
                )
            )
            # blind: no id or slice (an id can name the system that wrote the response)
            origin = not session.blind or bool(session.rubric.display.get("show_id"))
            status.update(
                status_content(
                    session.index + 1, session.total, entry.item_id if origin else None,
                    None if session.blind else entry.stratum,  # strata come from the judges
                    item.slice if item and origin else None, row, session.current_flag(),
                    session.current_note(), self._status_context(),
                )
            )
        chosen = row.label if row is not None else None
        self.query_one(ScalePanel).show(session.rubric, chosen)

    def _status_context(self) -> str | None:
        """Same story as the previous item, and where the search is."""
        parts = [self.session.context()]
        query = self.document.search_query
        if query:
            at, count = self.document.match_position()
            if not count:
                parts.append(f"/{query}: no match")
            else:
                parts.append(f"/{query} {at}/{count}" if at else f"/{query}: {count} (n)")
        return " · ".join(p for p in parts if p) or None

    def _show(self, sections: list[Section]) -> None:
        """The item in one pane, or split: input (and meta) left, the rest right."""
        item_pane, side_pane = self.panes
        split = self._split and self.size.width >= SPLIT_MIN_COLUMNS
        self.query_one("#panes").set_class(split, "-split")
        if not split:
            self._active = "item"
            item_pane.show(sections)
            if side_pane.row_count:
                side_pane.show([])
            return
        left = [x for x in sections if x.anchor == "input" or x.anchor.startswith("meta-")]
        right = [x for x in sections if x not in left]
        item_pane.show(left or sections)
        side_pane.show(right if left else [])

    def on_resize(self) -> None:
        if self._split and self.size.width < SPLIT_MIN_COLUMNS:
            self.refresh_view()

    # -- reading ---------------------------------------------------------------------
    def action_scroll(self, rows: int) -> None:
        self.document.scroll_rows(rows)

    def action_page(self, direction: int) -> None:
        self.document.page(direction)

    def action_edge(self, direction: int) -> None:
        self.document.edge(direction)

    def action_jump(self, direction: int) -> None:
        self.document.jump(direction)

    def action_search(self) -> None:
        def done(query: str | None) -> None:
            if query is None:
                return
            found = self.document.search(query)
            if query.strip() and not found and self._split:  # try the other side
                other = "side" if self._active == "item" else "item"
                if self.query_one(f"#{other}", DocumentView).search(query):
                    self.document.search("")
                    self._active = other
            self.refresh_view()

        self.app.push_screen(SearchScreen(self.document.search_query), done)

    def action_match(self, direction: int) -> None:
        if self.document.search_query:
            self.document.next_match(direction)
            self.refresh_view()

    def action_clear_search(self) -> None:
        for pane in self.panes:
            pane.search("")
        self.refresh_view()

    def action_mark(self) -> None:
        self.document.set_mark()
        self.notify("marked: ' comes back here", timeout=2)

    def action_to_mark(self) -> None:
        if not self.document.to_mark():
            self.notify("no mark yet: m marks a place, and ' also returns from a jump",
                        timeout=3)

    def action_descriptions(self) -> None:
        panel = self.query_one(ScalePanel)
        panel.compact = not panel.compact
        self.refresh_view()

    def action_split(self) -> None:
        if not self._split and self.size.width < SPLIT_MIN_COLUMNS:
            self.notify(f"the split view needs {SPLIT_MIN_COLUMNS} columns "
                        f"(this terminal has {self.size.width})", timeout=3)
            return
        self._split = not self._split
        self.refresh_view()

    def action_other_side(self) -> None:
        if self.query_one("#panes").has_class("-split"):
            self._active = "side" if self._active == "item" else "item"
            self.notify(f"reading the {'right' if self._active == 'side' else 'left'} side",
                        timeout=1.5)

    # -- actions -------------------------------------------------------------------
    def action_label(self, value: str) -> None:
        async def operation() -> None:
            if self.session.finished or self._quitting:
                return
            if self.session.current_item() is None:
                self.notify("this item is missing from the store: press s to skip it",
                            severity="warning")
                return
            row = self.session.decide(value)
            if self.session.is_repeat(row):  # already stored as it is: nothing to write
                self.session.forward()
            else:
                await self._commit(row)
                self.session.apply(row)
            self.refresh_view()

        self.enqueue(operation)

    def action_skip(self) -> None:
        async def operation() -> None:
            if self.session.finished or self._quitting:
                return
            if self.session.skip_needs_row():
                row = self.session.decide(None)
                await self._commit(row)
                self.session.apply(row)
            else:
                self.session.step()
            self.refresh_view()

        self.enqueue(operation)

    def action_back(self) -> None:
        async def operation() -> None:
            if self._quitting:
                return
            if not self.session.back():
                self.notify("already at the first item", timeout=2)
            self.refresh_view()

        self.enqueue(operation)

    def action_flag(self) -> None:
        async def operation() -> None:
            if self.session.finished or self._quitting:
                return
            await self._annotate(flagged=not self.session.current_flag())

        self.enqueue(operation)

    async def _annotate(self, *, note: str | None = None, flagged: bool | None = None) -> None:
        """Save a note or flag at once (a killed app must not lose it)."""
        row = self.session.annotation_row(note=note, flagged=flagged)
        if row is not None:
            await self._commit(row)
            self.session.apply(row, advance=False)
        self.refresh_view()

    def action_note(self) -> None:
        if self.document.search_query:  # while searching, n is the next match
            self.action_match(1)
            return
        if self.session.finished:
            return
        key = self.session.current_key

        def done(text: str | None) -> None:
            if text is None:
                return

            async def operation() -> None:
                if self.session.current_key != key or self._quitting:
                    return
                await self._annotate(note=text)

            self.enqueue(operation)

        self.app.push_screen(NoteScreen(self.session.current_note() or ""), done)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.session))

    def action_quit(self) -> None:
        """Quit once everything queued is saved (every label, note and flag already is)."""

        async def operation() -> None:
            if self._quitting:
                return
            self._quitting = True
            self.app.exit()

        self.enqueue(operation)
