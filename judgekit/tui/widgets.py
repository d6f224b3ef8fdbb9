"""The pieces of the labeling screen: header, item panel, status line, scale panel.

Every piece of item or rubric text goes through :class:`textual.content.Content`
built from plain strings, never markup: an item that contains ``[bold]`` or
``[link=...]`` is shown exactly as written, and every string passes through
:mod:`judgekit.textsafe` first (:func:`plain` for text, :func:`one_line` for
names and ids), so an escape sequence, backspace or bidi override in an item,
slice, annotator or model name is shown as ``\\x1b...`` and cannot repaint the
terminal or rename its window.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from judgekit.textsafe import one_line, terminal_safe
from judgekit.tui.figures import Agreement, Progress
from judgekit.tui.session import JudgeView
from judgekit.types import Item, Label, Rubric, ScaleLevel

#: Below this many columns the two responses of a pair are stacked, not side by side.
STACK_BELOW_COLUMNS = 100


def plain(text: str | None) -> Content:
    """Literal text for display (tabs expanded; markup never interpreted; controls escaped)."""
    return Content(terminal_safe(text).expandtabs(4))


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return "<1m"
    if minutes < 60:
        return f"{minutes}m"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def header_content(
    rubric: Rubric,
    annotator: str,
    blind: bool,
    progress: Progress,
    agreement: Agreement | None,
) -> Content:
    """One line: who and what on the left, progress (and agreement) on the right."""
    mode = ("blind", "bold $success") if blind else ("judge shown", "bold $warning")
    parts: list[str | tuple[str, str]] = [
        (f" {one_line(rubric.name)} v{one_line(rubric.version)}", "bold"),
        f" · {one_line(annotator)} · ",
        mode,
        "  │  ",
        (f"{progress.labeled}/{progress.total}", "bold"),
        " labeled",
    ]
    if progress.rate_per_min is not None:
        parts.append(f" · {progress.rate_per_min:.1f}/min")
    if progress.eta_seconds is not None:
        parts.append(f" · ETA {_duration(progress.eta_seconds)}")
    if agreement is not None:
        parts += ["\n", (agreement_text(agreement), "$accent")]
    return Content.assemble(*parts)


def agreement_text(agreement: Agreement) -> str:
    """The running agreement on a line of its own, every figure with its n and interval."""
    low, high = agreement.percent_interval
    text = f" judge agreement {agreement.percent:.0%} [{low:.0%}, {high:.0%}]"
    if agreement.kappa is not None and agreement.kappa_interval is not None:
        k_low, k_high = agreement.kappa_interval
        text += f" · κ {agreement.kappa:.2f} [{k_low:.2f}, {k_high:.2f}]"
    return f"{text} · n={agreement.n} · 95% CI"


class ProgressHeader(Static):
    """Top line: rubric, annotator, blind/shown mode, labeled/total, rate and ETA.

    With the judge shown, a second line gives the running agreement with the judge.
    """

    DEFAULT_CSS = """
    ProgressHeader {
        dock: top;
        height: auto;
        max-height: 2;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """


class Section(Vertical):
    """A titled block of literal text inside the item panel."""

    DEFAULT_CSS = """
    Section { height: auto; margin: 0 0 1 0; }
    Section > .section-title { color: $text-accent; text-style: bold; height: 1; }
    Section > .section-body { height: auto; padding: 0 0 0 1; }
    """

    def __init__(self, title: str, *, id: str) -> None:
        super().__init__(id=id)
        self._title = title

    def compose(self) -> ComposeResult:
        yield Static(plain(self._title), classes="section-title", markup=False)
        yield Static("", classes="section-body", markup=False)

    def set_text(self, text: str | None, *, title: str | None = None) -> None:
        if title is not None:
            self.query_one(".section-title", Static).update(plain(title))
        self.query_one(".section-body", Static).update(plain(text))


class ItemPanel(VerticalScroll):
    """The item itself, dominant and scrollable: input, response(s), reference, judge."""

    DEFAULT_CSS = """
    ItemPanel { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    ItemPanel #pair { height: auto; }
    ItemPanel #pair > Section { width: 1fr; }
    ItemPanel #pair > #response-a { margin-right: 2; }
    ItemPanel.stacked #pair { layout: vertical; }
    ItemPanel.stacked #pair > #response-a { margin: 0 0 1 0; }
    ItemPanel #judge { border-left: thick $warning; padding-left: 1; }
    ItemPanel #done { height: auto; padding: 1 2; text-style: bold; }
    """

    def compose(self) -> ComposeResult:
        yield Section("Input", id="input")
        yield Section("Response", id="response")
        with Horizontal(id="pair"):
            yield Section("Response A", id="response-a")
            yield Section("Response B", id="response-b")
        yield Section("Reference", id="reference")
        yield Section("Judge", id="judge")
        yield Static("", id="done", markup=False)

    def on_resize(self) -> None:
        self.set_class(self.size.width < STACK_BELOW_COLUMNS, "stacked")

    def _section(self, name: str) -> Section:
        return self.query_one(f"#{name}", Section)

    def show_item(self, item: Item | None, judge: JudgeView | None, missing: str = "") -> None:
        """Show ``item`` (None: show ``missing`` instead) and scroll back to its top."""
        done = self.query_one("#done", Static)
        if item is None:
            for name in ("input", "response", "reference", "judge"):
                self._section(name).display = False
            self.query_one("#pair").display = False
            done.update(plain(missing))
            done.display = True
            return
        done.display = False
        self._section("input").display = True
        self._section("input").set_text(item.input)
        pairwise = item.is_pairwise
        self._section("response").display = not pairwise
        self.query_one("#pair").display = pairwise
        if pairwise:
            self._section("response-a").set_text(item.response_a)
            self._section("response-b").set_text(item.response_b)
        else:
            self._section("response").set_text(item.response)
        self._section("reference").display = item.reference is not None
        self._section("reference").set_text(item.reference)
        self._section("judge").display = judge is not None
        if judge is not None:
            who = f"Judge ({judge.model})" if judge.model else "Judge"
            title = f"{who}: {judge.label}"
            self._section("judge").set_text(judge.reasoning or "(no reasoning given)", title=title)
        self.scroll_home(animate=False)


def status_content(
    position: int,
    total: int,
    item_id: str,
    stratum: str | None,
    slice_: str | None,
    row: Label | None,
    flagged: bool,
    note: str | None,
) -> Content:
    """What this annotator said about the item first (it matters most), then where it is from."""
    parts: list[str | tuple[str, str]] = [(f" item {position}/{total}", "bold"), "  │  "]
    if row is not None and row.label is not None:
        parts += ["your label: ", (one_line(row.label), "bold $success")]
    elif row is not None:
        parts.append(("skipped", "$warning"))
    else:
        parts.append(("unlabeled", "dim"))
    if flagged:
        parts += [" · ", ("⚑ flagged", "bold $error")]
    if note:
        parts += [" · ", ("✎ ", "bold"), one_line(note.replace("\n", " "))]
    parts += ["  │  ", one_line(item_id)]
    if slice_:
        parts += [" · slice ", one_line(slice_)]
    if stratum:
        parts += [" · ", (one_line(stratum), "dim")]
    return Content.assemble(*parts)


class StatusLine(Static):
    """One line under the item: position, id, stratum, your current label, flag, note."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $boost;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """


def scale_levels(rubric: Rubric) -> list[tuple[ScaleLevel, str | None, str]]:
    """Each level with its label padded to a column (None when it only repeats the key,
    as an ordinal level's "3" does) and its description on one line.

    The scale panel and the help screen both show the scale this way.
    """
    levels = rubric.scale.levels
    show_label = any(level.label != level.key for level in levels)
    width = max(len(level.label) for level in levels)
    return [
        (level, one_line(level.label.ljust(width)) if show_label else None,
         one_line(level.description.replace("\n", " ")))
        for level in levels
    ]


def scale_content(rubric: Rubric, current: str | None) -> Content:
    """One line per level: key, label, description; the annotator's label highlighted."""
    lines: list[Content] = []
    for level, label, description in scale_levels(rubric):
        chosen = level.label == current
        parts: list[str | tuple[str, str]] = [
            (f" {level.key} ", "bold reverse $accent" if chosen else "bold reverse"),
            " ",
        ]
        if label is not None:
            parts += [(label, "bold $success" if chosen else "bold"), "  "]
        parts.append((description, "bold" if chosen else ""))
        if chosen:
            parts.append(("  ← your label", "$success"))
        lines.append(Content.assemble(*parts))
    return Content("\n").join(lines)


class ScalePanel(Static):
    """The rubric's scale, always visible: the key for each level and what it means."""

    DEFAULT_CSS = """
    ScalePanel {
        height: auto;
        max-height: 12;
        border-top: solid $primary;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    _shown: tuple[str, str | None] | None = None

    def show(self, rubric: Rubric, current: str | None) -> None:
        """Redraw only when the highlighted level changes (it rarely does between items)."""
        wanted = (rubric.sha256, current)
        if wanted != self._shown:
            self._shown = wanted
            self.update(scale_content(rubric, current))
