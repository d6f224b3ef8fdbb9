"""Screens of the annotate app: the labeling screen, the help screen and the note dialog.

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
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Markdown, Static

from judgekit.errors import JudgekitError
from judgekit.tui.document import DocumentView
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
from judgekit.types import Label, Scale

Operation = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    """A non-scale action, its keys (the first is shown) and its descriptions."""

    action: str
    keys: tuple[str, ...]
    description: str
    help: str
    show: bool = True


#: Commands in footer order. No command key is a scale key on any scale (scale
#: keys are p/f, a/b/t and digits), so a key means the same on every rubric:
#: the flag is ``!`` everywhere, never the ``f`` that is *fail* on a binary scale.
COMMANDS: tuple[Command, ...] = (
    Command("skip", ("s",), "skip", "skip this item (it comes back at the end)"),
    Command("back", ("u", "backspace"), "back", "go back to the previous item to change its label"),
    Command("flag", ("exclamation_mark",), "flag", "flag / unflag the item for review"),
    Command("note", ("n",), "note", "add or edit a note on the item"),
    Command("jump(1)", ("right_square_bracket",), "sections",
            "jump to the next section (Input, Response, Reference)"),
    Command("jump(-1)", ("left_square_bracket",), "section", "jump to the previous section",
            show=False),
    Command("page(1)", ("pagedown", "space"), "scroll",
            "scroll down a page (up/down arrows: a row)"),
    Command("page(-1)", ("pageup",), "page up", "scroll up a page", show=False),
    Command("edge(-1)", ("home",), "top", "go to the top of the item", show=False),
    Command("edge(1)", ("end",), "end", "go to the end of the item", show=False),
    Command("help", ("question_mark",), "help", "show the guidelines and every key"),
    Command("quit", ("q",), "quit", "save and quit (everything given is already saved)"),
)

_KEY_DISPLAY = {
    "question_mark": "?", "exclamation_mark": "!", "backspace": "⌫",
    "right_square_bracket": "]", "left_square_bracket": "[", "pagedown": "PgDn",
    "pageup": "PgUp", "space": "space", "home": "Home", "end": "End",
}


def display_key(key: str) -> str:
    return _KEY_DISPLAY.get(key, key)


def command_keys(scale: Scale) -> dict[str, tuple[str, ...]]:
    """Command action -> its keys; an error if a scale key would collide with one."""
    taken = {level.key for level in scale.levels}
    result: dict[str, tuple[str, ...]] = {}
    for command in COMMANDS:
        clash = sorted(taken.intersection(command.keys))
        if clash:
            raise JudgekitError(
                f"the scale key {clash[0]!r} is also the key of {command.action!r}"
            )
        result[command.action] = command.keys
    return result


def scale_bindings(scale: Scale) -> list[BindingType]:
    """Footer bindings: one entry for the whole scale ("p/f label"), then each command."""
    keys = [level.key for level in scale.levels]
    if all(k.isdigit() for k in keys) and len(keys) > 2:
        shown = f"{keys[0]}-{keys[-1]}"
    else:
        shown = "/".join(keys)
    bindings: list[BindingType] = [
        Binding(level.key, f"label({level.label!r})", "label", show=index == 0,
                key_display=shown if index == 0 else None)
        for index, level in enumerate(scale.levels)
    ]
    keys_of = command_keys(scale)
    for command in COMMANDS:
        free = keys_of[command.action]
        shown_key = display_key(free[0])
        if command.action == "jump(1)":
            shown_key = "[ ]"
        bindings.append(Binding(",".join(free), command.action, command.description,
                                key_display=shown_key, show=command.show))
    return bindings


class LabelScreen(Screen[None]):
    """The main screen: one item at a time, labeled with a single key."""

    DEFAULT_CSS = """
    LabelScreen { layout: vertical; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll(-1)", "up", show=False),
        Binding("down", "scroll(1)", "down", show=False),
    ]

    def __init__(self, session: LabelingSession) -> None:
        super().__init__()
        self.session = session
        self._ops: asyncio.Queue[Operation] = asyncio.Queue()
        self._quitting = False

    def compose(self) -> ComposeResult:
        yield ProgressHeader(markup=False)
        yield DocumentView(id="item")
        yield StatusLine(markup=False)
        yield ScalePanel(markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.run_worker(self._consume(), name="label-writer", group="label-writer")
        self.refresh_view()
        self.call_after_refresh(self._opening)

    def _opening(self) -> None:
        """Once on screen: the start-up notes as notifications, then the guidelines if new."""
        for notice in self.session.notices:
            self.notify(notice, title="Queue", timeout=15, markup=False)
        if self.session.opens_guidelines:
            self.app.push_screen(HelpScreen(self.session))

    @property
    def document(self) -> DocumentView:
        return self.query_one(DocumentView)

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
            self.document.show(message_sections(
                "Queue complete",
                f"All {session.total} items are labeled.\n\n"
                "Press u to go back and change a label, q to quit.",
            ))
            status.update(plain(f" done · {session.total}/{session.total} labeled"))
        else:
            item = session.current_item()
            self.document.show(
                item_sections(item, session.current_judge(), session.current_opinions())
                if item is not None
                else message_sections(
                    "Item missing from the store",
                    f"Item {entry.item_id!r} of dataset {entry.dataset!r} is no longer in the "
                    "store. Press s to skip it.",
                )
            )
            status.update(
                status_content(
                    session.index + 1, session.total, entry.item_id,
                    None if session.blind else entry.stratum,  # strata come from the judges
                    item.slice if item else None, row, session.current_flag(),
                    session.current_note(),
                )
            )
        chosen = row.label if row is not None else None
        self.query_one(ScalePanel).show(session.rubric, chosen)

    # -- reading ---------------------------------------------------------------------
    def action_scroll(self, rows: int) -> None:
        self.document.scroll_rows(rows)

    def action_page(self, direction: int) -> None:
        self.document.page(direction)

    def action_edge(self, direction: int) -> None:
        self.document.edge(direction)

    def action_jump(self, direction: int) -> None:
        self.document.jump(direction)

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


class HelpScreen(ModalScreen[None]):
    """The rubric's description and guidelines, the scale and every key; escape, ? or q closes.

    Shown on ``?``, and when a session opens on a queue this annotator has not
    started, if the rubric has a description or guidelines to read first.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q,enter", "close", "close"),
        Binding("pagedown,space", "page(1)", "page down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("down", "rows(1)", "down", show=False),
        Binding("up", "rows(-1)", "up", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 95%;
        border: round $accent; padding: 0 1; background: $surface;
    }
    HelpScreen VerticalScroll { height: auto; max-height: 1fr; }
    HelpScreen #help-scale { border-top: none; padding: 0; }
    HelpScreen Markdown { margin: 0; padding: 0; }
    HelpScreen .help-heading { text-style: bold; color: $text-accent; margin-top: 1; }
    HelpScreen #help-close { dock: bottom; margin-top: 1; }
    """

    def __init__(self, session: LabelingSession) -> None:
        super().__init__()
        self._session = session

    def compose(self) -> ComposeResult:
        session = self._session
        rubric = session.rubric
        scale = rubric.scale
        with Vertical():
            with VerticalScroll(id="help-body"):
                yield Static(Content.assemble(
                    (f"{rubric.name} v{rubric.version}", "bold"), f" · {scale.kind} scale"
                ), markup=False)
                if rubric.description.strip():
                    yield Static(plain(rubric.description.strip()), markup=False)
                if rubric.guidelines:
                    yield Static("Guidelines", classes="help-heading", markup=False)
                    yield Markdown(rubric.guidelines, open_links=False)
                yield Static("Scale", classes="help-heading", markup=False)
                yield ScalePanel(markup=False, id="help-scale")
                yield Static("Keys", classes="help-heading", markup=False)
                keys = command_keys(scale)
                lines = [
                    Content.assemble((f"  {' / '.join(map(display_key, keys[c.action])):<14}",
                                      "bold"), c.help)
                    for c in COMMANDS
                ]
                lines.append(Content.assemble((f"  {'↑ / ↓':<14}", "bold"), "scroll a row"))
                yield Static(Content("\n").join(lines), markup=False)
                notes = [
                    "Labels, notes and flags are saved as you give them; a change keeps the "
                    "history.",
                    "Blind mode: nothing the judge said is shown." if session.blind
                    else "The judge's verdict is shown (--show-judge); labels record that.",
                    *(["Adjudicating: your label becomes the item's reference in reports; "
                       "the annotators' labels and notes are under the item."]
                      if session.adjudicating else []),
                    *session.notices,
                ]
                yield Static(plain("\n".join(notes)), markup=False)
            yield Static(
                Content.assemble(("escape", "bold"), " or ", ("?", "bold"),
                                 " closes this help; PgDn/PgUp scroll it"),
                id="help-close",
                markup=False,
            )

    def on_mount(self) -> None:
        self.query_one("#help-scale", ScalePanel).show(self._session.rubric, None)

    def action_page(self, direction: int) -> None:
        body = self.query_one("#help-body", VerticalScroll)
        body.scroll_to(y=body.scroll_y + direction * max(1, body.size.height - 1), animate=False)

    def action_rows(self, rows: int) -> None:
        body = self.query_one("#help-body", VerticalScroll)
        body.scroll_to(y=body.scroll_y + rows, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)


class NoteScreen(ModalScreen[str | None]):
    """A one-line note on the current item; enter saves, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    NoteScreen { align: center middle; }
    NoteScreen > Vertical {
        width: 70; max-width: 95%; height: auto;
        border: round $accent; padding: 0 1; background: $surface;
    }
    """

    def __init__(self, note: str) -> None:
        super().__init__()
        self._note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Note (enter saves, escape cancels; empty clears)", markup=False)
            yield Input(value=self._note, placeholder="why this label, what to review…",
                        id="note-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
