"""What the multi-criteria screen draws: header, status line, the criteria panel, the help.

One row per criterion (its name, your level, its description, its keys and how
many of its labels the queue still misses), the focused one marked and its
levels listed under it, wrapped in full like the single-criterion scale panel:
at 80x24 with four criteria nothing is cut. Every string goes through
:mod:`judgekit.textsafe` (plain text, never markup), as on the single screen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static

from judgekit.textsafe import one_line
from judgekit.tui.criteria_session import CriteriaSession
from judgekit.tui.dialogs import HelpScreen
from judgekit.tui.keys import criteria_commands, display_key
from judgekit.tui.session import is_note_row
from judgekit.tui.widgets import _duration, plain, scale_content
from judgekit.tui.wrapping import wrap
from judgekit.types import Label, Scale


def key_range(scale: Scale) -> str:
    """The keys of a scale as the footer writes them: ``1-5``, ``p/f``, ``a/b/t``."""
    keys = [level.key for level in scale.levels]
    if all(k.isdigit() for k in keys) and len(keys) > 2:
        return f"{keys[0]}-{keys[-1]}"
    return "/".join(keys)


def criteria_header(session: CriteriaSession) -> Content:
    """Rubric file, annotator, blind; complete items of the queue, rate and ETA."""
    progress = session.progress()
    parts: list[str | tuple[str, str]] = [
        (f" {one_line(session.title.name)} v{one_line(session.title.version)}", "bold"),
        f" · {one_line(session.annotator)} · ", ("blind", "bold $success"), "  │  ",
        (f"{progress.labeled}/{progress.total}", "bold"), " labeled",
    ]
    if progress.rate_per_min is not None:
        parts.append(f" · {progress.rate_per_min:.1f}/min")
    if progress.eta_seconds is not None:
        parts.append(f" · ETA {_duration(progress.eta_seconds)}")
    return Content.assemble(*parts)


def _state(row: Label | None) -> tuple[str, str]:
    if row is not None and row.label is not None:
        return one_line(row.label), "bold $success"
    if row is not None and not is_note_row(row):
        return "skipped", "$warning"
    return "–", "dim"


def criteria_status(session: CriteriaSession, context: str | None) -> Content:
    """Position, criteria labeled on this item, the focused criterion's flag and note."""
    if session.finished:
        return plain(f" done · {session.total}/{session.total} labeled")
    count = len(session.parts)
    parts: list[str | tuple[str, str]] = [
        (f" item {session.index + 1}/{session.total}", "bold"), "  │  ",
        f"{session.labeled_here()}/{count} criteria labeled",
    ]
    focused = session.focused
    if focused.current_flag():
        parts += [" · ", (f"⚑ {one_line(session.criteria[session.focus].name)}", "bold $error")]
    if context:
        parts += [" · ", (one_line(context), "$accent")]
    note = focused.current_note()
    if note:
        parts += [" · ", ("✎ ", "bold"), one_line(note.replace("\n", " "))]
    return Content.assemble(*parts)


def criteria_content(session: CriteriaSession, width: int, compact: bool = False) -> Content:
    """Every criterion on its row; the focused one's levels under it (``compact``: one line).

    A row: the focus mark, the name, your level (or ``–`` / ``skipped``), flag and note
    marks, then the description, the keys and the labels the queue still misses,
    wrapped in full under the description (``width`` cells; 0: one line each).
    """
    names = [one_line(c.name) for c in session.criteria]
    name_width = max(len(n) for n in names)
    states = [_state(session.row(i)) for i in range(len(names))]
    state_width = max(len(text) for text, _ in states)
    lines: list[Content] = []
    for i, criterion in enumerate(session.criteria):
        focused = i == session.focus and not session.finished
        row = session.row(i)
        marks = ("⚑" if row is not None and row.flagged else " ") + (
            "✎" if row is not None and row.note else " ")
        text, style = states[i]
        head: list[str | tuple[str, str]] = [
            ("▶ " if focused else "  ", "bold $accent"),
            (names[i].ljust(name_width), "bold reverse $accent" if focused else "bold"),
            "  ", (text.ljust(state_width), style), f" {marks} ",
        ]
        indent = 2 + name_width + 2 + state_width + 4
        description = one_line(criterion.rubric.description.replace("\n", " "))
        tail = f"({key_range(criterion.rubric.scale)}; {session.left(i)} left)"
        body = f"{description} {tail}".strip()
        rows = wrap(body, width - indent) if width > indent + 10 else [body]
        for index, part in enumerate(rows):
            lines.append(Content.assemble(*head, part) if index == 0
                         else Content.assemble(" " * indent, part))
        if focused:
            current = row.label if row is not None else None
            scale = scale_content(criterion.rubric, current, max(0, width - 4), compact)
            lines += [Content.assemble("    ", line) for line in scale.split("\n")]
    return Content("\n").join(lines)


class CriteriaPanel(Static):
    """The criteria of the item, always visible, the focused one with its levels."""

    DEFAULT_CSS = """
    CriteriaPanel {
        height: auto;
        border-top: solid $primary;
        padding: 0 1;
        text-wrap: nowrap;
    }
    """

    compact = False  # d: the focused criterion's levels on one line
    _session: CriteriaSession | None = None

    def show(self, session: CriteriaSession) -> None:
        self._session = session
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self._session is not None:
            self.update(criteria_content(self._session, self.content_region.width,
                                         self.compact))


class CriteriaHelpScreen(HelpScreen):
    """The file's description and guidelines, each criterion with its scale, every key."""

    def __init__(self, session: CriteriaSession) -> None:
        super().__init__(session.parts[0])
        self._criteria = session

    def compose(self) -> ComposeResult:
        session = self._criteria
        title = session.title
        with Vertical():
            with VerticalScroll(id="help-body"):
                yield Static(Content.assemble(
                    (one_line(f"{title.name} v{title.version}"), "bold"),
                    f" · {len(session.criteria)} criteria on one screen"), markup=False)
                if title.description.strip():
                    yield Static(plain(title.description.strip()), markup=False)
                if title.guidelines:
                    yield Static("Guidelines", classes="help-heading", markup=False)
                    yield Markdown(title.guidelines, open_links=False)
                for criterion in session.criteria:
                    rubric = criterion.rubric
                    yield Static(one_line(f"{criterion.name} ({rubric.scale.kind})"),
                                 classes="help-heading", markup=False)
                    if rubric.description.strip():
                        yield Static(plain(rubric.description.strip()), markup=False)
                    if rubric.guidelines and rubric.guidelines != title.guidelines:
                        yield Markdown(rubric.guidelines, open_links=False)
                    yield Static(scale_content(rubric, None, 0), markup=False)
                yield Static("Keys", classes="help-heading", markup=False)
                rows = [("level keys", "label the focused criterion; the focus moves to the "
                         "next one left, and the next item comes once all have a level")]
                for command in criteria_commands():
                    rows.append((" / ".join(map(display_key, command.keys)), command.help))
                with Grid(id="help-keys"):
                    for key, text in rows:
                        yield Static(Content.assemble(("  " + key, "bold")), markup=False)
                        yield Static(plain(text), markup=False)
                notes = ["Each criterion's level is saved the moment you key it, under the "
                         "criterion's own rubric.",
                         "Blind mode: nothing the judge said is shown.", *session.notices]
                yield Static(plain("\n".join(notes)), markup=False)
            yield Static(
                Content.assemble(("escape", "bold"), " or ", ("?", "bold"),
                                 " closes this help; PgDn/PgUp scroll it"),
                id="help-close", markup=False)


__all__ = ["CriteriaHelpScreen", "CriteriaPanel", "criteria_content", "criteria_header",
           "criteria_status", "key_range"]
