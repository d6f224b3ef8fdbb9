"""The annotate app's dialogs: the help screen (guidelines, scale, keys) and the note box."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Markdown, Static

from judgekit.tui.keys import COMMANDS, command_keys, display_key
from judgekit.tui.session import LabelingSession
from judgekit.tui.widgets import ScalePanel, plain


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
    HelpScreen #help-keys { grid-size: 2; grid-columns: 16 1fr; height: auto; }
    HelpScreen #help-keys Static { height: auto; }
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
                rows = [(" / ".join(map(display_key, keys[c.action])), c.help)
                        for c in COMMANDS]
                rows.append(("↑ / ↓", "scroll a row"))
                with Grid(id="help-keys"):  # two columns: a long line wraps in its own
                    for key, text in rows:
                        yield Static(Content.assemble(("  " + key, "bold")), markup=False)
                        yield Static(plain(text), markup=False)
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
        for panel in self.query("#help-scale").results(ScalePanel):  # none: drawn in compose
            panel.show(self._session.rubric, None)

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

    def __init__(self, note: str, about: str = "") -> None:
        super().__init__()
        self._note = note
        self._about = about  # the criterion the note is on, on the multi-criteria screen

    def compose(self) -> ComposeResult:
        with Vertical():
            on = f" on {self._about}" if self._about else ""
            yield Static(plain(f"Note{on} (enter saves, escape cancels; empty clears)"),
                         markup=False)
            yield Input(value=self._note, placeholder="why this label, what to review…",
                        id="note-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SearchScreen(ModalScreen[str | None]):
    """The text to search the item for; enter searches, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    SearchScreen { align: center bottom; }
    SearchScreen > Vertical {
        width: 70; max-width: 95%; height: auto; margin-bottom: 4;
        border: round $accent; padding: 0 1; background: $surface;
    }
    """

    def __init__(self, query: str) -> None:
        super().__init__()
        self._query = query

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Search the item (enter searches, escape cancels)", markup=False)
            yield Input(value=self._query, placeholder="a word or phrase…", id="search-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
