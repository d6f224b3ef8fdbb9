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
from textual.widgets import Footer, Input, Static

from judgekit.errors import JudgekitError
from judgekit.tui.session import LabelingSession
from judgekit.tui.widgets import (
    ItemPanel,
    ProgressHeader,
    ScalePanel,
    StatusLine,
    header_content,
    plain,
    scale_levels,
    status_content,
)
from judgekit.types import Label, Scale

Operation = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    """A non-scale action, the keys that trigger it (first free one shown) and its label."""

    action: str
    keys: tuple[str, ...]
    description: str
    help: str
    fallback: tuple[str, ...] = ()  # used only when a scale level claims every key in ``keys``


#: Commands in footer order. A key a scale level claims (binary ``f`` = fail)
#: is dropped from the command, which then answers to its next key (flag: ``!``).
COMMANDS: tuple[Command, ...] = (
    Command("skip", ("s",), "skip", "skip this item (it comes back at the end)"),
    Command("back", ("u", "backspace"), "back", "go back to the previous item to change its label"),
    Command("flag", ("f",), "flag", "flag / unflag the item for review", ("exclamation_mark",)),
    Command("note", ("n",), "note", "add or edit a note on the item"),
    Command("help", ("question_mark",), "help", "show all keys"),
    Command("quit", ("q",), "quit", "save and quit (everything given is already saved)"),
)

_KEY_DISPLAY = {"question_mark": "?", "exclamation_mark": "!", "backspace": "⌫"}


def display_key(key: str) -> str:
    return _KEY_DISPLAY.get(key, key)


def command_keys(scale: Scale) -> dict[str, tuple[str, ...]]:
    """Command action -> its keys once the scale's keys are taken out."""
    taken = {level.key for level in scale.levels}
    result: dict[str, tuple[str, ...]] = {}
    for command in COMMANDS:
        keys = tuple(k for k in command.keys if k not in taken)
        if not keys:
            keys = tuple(k for k in command.fallback if k not in taken)
        if not keys:
            raise JudgekitError(
                f"the scale's keys leave no key for {command.action!r}: "
                f"use keys other than {', '.join(command.keys + command.fallback)}"
            )
        result[command.action] = keys
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
        shown_keys = "/".join(display_key(k) for k in free)
        bindings.append(Binding(",".join(free), command.action, command.description,
                                key_display=shown_keys))
    return bindings


class LabelScreen(Screen[None]):
    """The main screen: one item at a time, labeled with a single key."""

    DEFAULT_CSS = """
    LabelScreen { layout: vertical; }
    """

    def __init__(self, session: LabelingSession) -> None:
        super().__init__()
        self.session = session
        self._ops: asyncio.Queue[Operation] = asyncio.Queue()
        self._quitting = False

    def compose(self) -> ComposeResult:
        yield ProgressHeader(markup=False)
        yield ItemPanel()
        yield StatusLine(markup=False)
        yield ScalePanel(markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.run_worker(self._consume(), name="label-writer", group="label-writer")
        self.refresh_view()

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
        """Redraw every panel from the session (cheap: one indexed item read)."""
        session = self.session
        self.query_one(ProgressHeader).update(
            header_content(session.rubric, session.annotator, session.blind,
                           session.progress(), session.agreement())
        )
        panel = self.query_one(ItemPanel)
        status = self.query_one(StatusLine)
        entry = session.current
        row = session.current_label()
        if entry is None:
            panel.show_item(
                None, None,
                f"Queue complete: all {session.total} items are labeled.\n\n"
                "Press u to go back and change a label, q to quit.",
            )
            status.update(plain(f" done · {session.total}/{session.total} labeled"))
        else:
            item = session.current_item()
            panel.show_item(
                item, session.current_judge(),
                f"Item {entry.item_id!r} of dataset {entry.dataset!r} is no longer in the "
                "store. Press s to skip it.",
            )
            status.update(
                status_content(
                    session.index + 1, session.total, entry.item_id, entry.stratum,
                    item.slice if item else None, row, session.current_flag(),
                    session.current_note(),
                )
            )
        chosen = row.label if row is not None else None
        self.query_one(ScalePanel).show(session.rubric, chosen)

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
        """Quit once everything queued is saved (and unsaved notes/flags as skips)."""

        async def operation() -> None:
            if self._quitting:
                return
            self._quitting = True
            for row in self.session.pending_rows():
                await self._commit(row)
                self.session.apply(row, advance=False)
            self.app.exit()

        self.enqueue(operation)


class HelpScreen(ModalScreen[None]):
    """Every key, including the scale's levels; any of escape, ? or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: auto; max-width: 90%; height: auto; max-height: 90%;
        border: round $accent; padding: 0 2; background: $surface;
    }
    HelpScreen VerticalScroll { width: auto; height: auto; max-height: 1fr; }
    HelpScreen Static { width: auto; }
    HelpScreen #help-close { margin-top: 1; }
    """

    def __init__(self, session: LabelingSession) -> None:
        super().__init__()
        self._session = session

    def compose(self) -> ComposeResult:
        rubric = self._session.rubric
        scale = rubric.scale
        lines: list[Content] = [
            Content.assemble(
                (f"{rubric.name} v{rubric.version}", "bold"), f" · {scale.kind} scale"
            ),
            Content(""),
        ]
        for level, label, description in scale_levels(rubric):
            parts: list[str | tuple[str, str]] = [(f"  {level.key:<6}", "bold")]
            if label is not None:
                parts += [(label, "bold"), "  "]
            parts.append(description)
            lines.append(Content.assemble(*parts))
        keys = command_keys(scale)
        for command in COMMANDS:
            shown = " / ".join(display_key(k) for k in keys[command.action])
            lines.append(Content.assemble((f"  {shown:<6}", "bold"), command.help))
        lines += [
            Content(""),
            Content("Labels are saved as you give them; a change keeps the history."),
            Content("Blind mode hides the judge's verdict." if self._session.blind
                    else "The judge's verdict is shown (--show-judge); labels record that."),
        ]
        # The body scrolls on a short terminal; the closing hint always stays in view.
        with Vertical():
            with VerticalScroll():
                yield Static(Content("\n").join(lines), markup=False)
            yield Static(
                Content.assemble(("escape", "bold"), " or ", ("?", "bold"), " closes this help"),
                id="help-close",
                markup=False,
            )

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
