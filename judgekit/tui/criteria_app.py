"""The annotate app for a multi-criteria rubric file: every criterion of an item on one screen.

The screen is the labeling screen (:class:`LabelScreen`: the item view, search,
marks, split view, the one FIFO worker that commits each row before the screen
moves on) with the scale panel replaced by the criteria panel and the label,
skip, back, flag and note keys acting on the focused criterion
(:class:`CriteriaSession` holds the rules). One level key is one row, committed
in a worker thread before the focus or the item moves, so a killed app loses no
level given. Always blind: no judge verdict is loaded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer

from judgekit.errors import InputError, StoreError
from judgekit.rubrics import rubric_from_text
from judgekit.store import QueueEntry, Store
from judgekit.store.queues import CRITERIA_PARAM  # the store reads it too (queue progress)
from judgekit.textsafe import one_line
from judgekit.tui.app import AnnotateApp, make_app
from judgekit.tui.criteria_session import CriteriaSession, Criterion
from judgekit.tui.criteria_view import (
    CriteriaHelpScreen,
    CriteriaPanel,
    criteria_header,
    criteria_status,
)
from judgekit.tui.dialogs import NoteScreen
from judgekit.tui.document import DocumentView
from judgekit.tui.keys import criteria_bindings
from judgekit.tui.screens import LabelScreen
from judgekit.tui.widgets import ProgressHeader, StatusLine, item_sections, message_sections
from judgekit.types import Label, Rubric


class CriteriaScreen(LabelScreen):
    """The labeling screen with every criterion of the item under it."""

    def __init__(self, criteria: CriteriaSession) -> None:
        super().__init__(criteria.parts[0])
        self.criteria = criteria

    def compose(self) -> ComposeResult:
        yield ProgressHeader(markup=False)
        with Horizontal(id="panes"):
            yield DocumentView(id="item")
            yield DocumentView(id="side")
        yield StatusLine(markup=False)
        yield CriteriaPanel(markup=False)
        yield Footer(compact=True)

    def _opening(self) -> None:
        if not self.criteria.started:
            for notice in self.criteria.notices:
                self.notify(notice, title="Queue", timeout=8, markup=False)
        if self.criteria.opens_guidelines:
            self.app.push_screen(CriteriaHelpScreen(self.criteria))

    def refresh_view(self) -> None:
        session = self.criteria
        self.query_one(ProgressHeader).update(criteria_header(session))
        entry = session.current
        if entry is None:
            self._show(message_sections(
                "Queue complete",
                f"Every criterion of all {session.total} items is labeled.\n\n"
                "Press u to go back and change a level, q to quit."))
        else:
            item = session.current_item()
            self._show(
                item_sections(item, None, None, session.title.display) if item is not None
                else message_sections(
                    "Item missing from the store",
                    f"Item {entry.item_id!r} of dataset {entry.dataset!r} is no longer in the "
                    "store. Press S to skip it."))
        self.query_one(StatusLine).update(
            criteria_status(session, None if session.finished else self._status_context()))
        self.query_one(CriteriaPanel).show(session)

    # -- focus -----------------------------------------------------------------------
    def action_criterion(self, delta: int) -> None:
        async def operation() -> None:
            if self._quitting:
                return
            if self.criteria.move_focus(delta):
                self.refresh_view()

        self.enqueue(operation)

    def action_descriptions(self) -> None:
        panel = self.query_one(CriteriaPanel)
        panel.compact = not panel.compact
        self.refresh_view()

    # -- decisions ----------------------------------------------------------------------
    def action_level(self, key: str) -> None:
        async def operation() -> None:
            session = self.criteria
            if session.finished or self._quitting:
                return
            if session.current_item() is None:
                self.notify("this item is missing from the store: press S to skip it",
                            severity="warning")
                return
            label = session.label_for_key(key)
            if label is None:
                name = one_line(session.criteria[session.focus].name)
                keys = "/".join(level.key for level in session.focused.rubric.scale.levels)
                self.notify(f"{key} is not a level of {name} ({keys})", timeout=3,
                            markup=False)
                return
            row = session.decide(label)
            if row is not None:
                await self._commit(row)
            session.labeled(row)
            self.refresh_view()

        self.enqueue(operation)

    def action_skip(self) -> None:
        async def operation() -> None:
            session = self.criteria
            if session.finished or self._quitting:
                return
            row = session.skip_row()
            if row is not None:
                await self._commit(row)
            session.skipped(row)
            self.refresh_view()

        self.enqueue(operation)

    def action_skip_item(self) -> None:
        async def operation() -> None:
            session = self.criteria
            if session.finished or self._quitting:
                return
            rows = session.item_skip_rows()
            if rows:  # one transaction: every criterion's skip, or none
                await self._commit_many(rows)
            session.item_skipped(rows)
            self.refresh_view()

        self.enqueue(operation)

    async def _commit_many(self, rows: Sequence[Label]) -> None:
        await asyncio.to_thread(self.criteria.store.add_labels, rows)

    def action_back(self) -> None:
        async def operation() -> None:
            if self._quitting:
                return
            if not self.criteria.back():
                self.notify("already at the first criterion of the first item", timeout=2)
            self.refresh_view()

        self.enqueue(operation)

    def action_flag(self) -> None:
        async def operation() -> None:
            if self.criteria.finished or self._quitting:
                return
            await self._annotate(flagged=not self.criteria.focused.current_flag())

        self.enqueue(operation)

    async def _annotate(self, *, note: str | None = None, flagged: bool | None = None) -> None:
        row = self.criteria.annotation_row(note=note, flagged=flagged)
        if row is not None:
            await self._commit(row)
            self.criteria.annotated(row)
        self.refresh_view()

    def action_note(self) -> None:
        if self.document.search_query:
            self.action_match(1)
            return
        session = self.criteria
        if session.finished:
            return
        where = (session.current_key, session.focus)

        def done(text: str | None) -> None:
            if text is None:
                return

            async def operation() -> None:
                if (session.current_key, session.focus) != where or self._quitting:
                    return
                await self._annotate(note=text)

            self.enqueue(operation)

        about = session.criteria[session.focus].name
        self.app.push_screen(NoteScreen(session.focused.current_note() or "", about), done)

    def action_help(self) -> None:
        self.app.push_screen(CriteriaHelpScreen(self.criteria))


class CriteriaApp(AnnotateApp):
    """The annotate app over every criterion of a rubric file."""

    def __init__(self, criteria: CriteriaSession) -> None:
        App.__init__(self)
        self.animation_level = "none"
        self.criteria = criteria
        self.session = criteria.parts[0]
        self.sub_title = one_line(f"{criteria.title.name} · {criteria.annotator}")
        bindings = criteria_bindings([c.rubric.scale for c in criteria.criteria])
        self._screen_class = type("CriteriaScreen", (CriteriaScreen,), {"BINDINGS": bindings})

    def first_screen(self) -> LabelScreen:
        return self._screen_class(self.criteria)


def make_criteria_app(
    store: Store,
    title: Rubric,
    criteria: Sequence[Criterion],
    entries: Sequence[QueueEntry],
    *,
    annotator: str,
    clock: Callable[[], float] = time.monotonic,
    notices: Sequence[str] = (),
) -> CriteriaApp:
    """Build the app for ``annotator`` over every criterion of a file (always blind).

    ``title`` names the file in the header (its name and version; its first
    criterion's display settings show the items).
    """
    if not entries:
        raise InputError("the labeling queue is empty: nothing to label")
    shapes = {c.rubric.scale.kind == "pairwise" for c in criteria}
    if len(shapes) > 1:
        raise InputError("the criteria mix pairwise and single-response scales: annotate "
                         "them one criterion at a time (FILE#CRITERION)")
    session = CriteriaSession(store, title, criteria, entries, annotator=annotator,
                              clock=clock, notices=notices)
    return CriteriaApp(session)


def stored_criteria(store: Store, params: dict[str, object], queue: str) -> list[Criterion]:
    """The criteria a multi-criteria queue was drawn for, read back from the store."""
    found: list[Criterion] = []
    listed = params.get(CRITERIA_PARAM)
    if not isinstance(listed, list):
        raise StoreError(f"queue {queue!r} names no criteria")
    for name, sha in listed:
        text = store.get_rubric_text(sha)
        if text is None:
            raise StoreError(f"queue {queue!r} names a rubric not in the store ({sha[:12]})")
        found.append(Criterion(str(name), rubric_from_text(text, path=f"<store:{sha[:12]}>")))
    return found


def app_for_queue(store: Store, queue: str, *, annotator: str) -> AnnotateApp:
    """The blind app for a stored queue: every criterion on one screen when the queue was
    drawn for a multi-criteria file, else the single-rubric app (``judgekit serve``)."""
    found = store.get_queue(queue)
    if found is None:
        raise StoreError(f"no labeling queue named {queue!r}")
    meta, entries = found
    params = meta["params"]
    if CRITERIA_PARAM in params:
        criteria = stored_criteria(store, params, queue)
        title = title_rubric(str(params.get("criteria_file") or queue), criteria)
        return make_criteria_app(store, title, criteria, entries, annotator=annotator)
    sha = meta["rubric_hash"]
    text = store.get_rubric_text(sha)
    if text is None:
        raise StoreError(f"queue {queue!r} names a rubric not in the store")
    rubric = rubric_from_text(text, path=f"<store:{sha[:12]}>")
    return make_app(store, rubric, queue, annotator=annotator, show_judge=False)


def title_rubric(name: str, criteria: Sequence[Criterion], description: str = "",
                 guidelines: str = "") -> Rubric:
    """The header's rubric: the file's name (and its shared text), with the first
    criterion's version and display settings."""
    return replace(criteria[0].rubric, name=name, description=description,
                   guidelines=guidelines)


__all__ = ["CRITERIA_PARAM", "CriteriaApp", "CriteriaScreen", "app_for_queue",
           "make_criteria_app", "stored_criteria", "title_rubric"]
