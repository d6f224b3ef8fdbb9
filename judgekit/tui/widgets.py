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

import json
from collections.abc import Mapping
from typing import Any

from textual.content import Content
from textual.widgets import Static

from judgekit.textsafe import one_line, terminal_safe
from judgekit.tui.document import Section
from judgekit.tui.figures import Agreement, Progress
from judgekit.tui.session import JudgeView, is_note_row
from judgekit.tui.wrapping import wrap
from judgekit.types import Item, Label, Rubric, ScaleLevel


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
    adjudicating: bool = False,
) -> Content:
    """One line: who and what on the left, progress (and agreement) on the right."""
    mode = ("blind", "bold $success") if blind else ("judge shown", "bold $warning")
    if adjudicating:
        mode = ("adjudicating", "bold $accent")
    parts: list[str | tuple[str, str]] = [
        (f" {one_line(rubric.name)} v{one_line(rubric.version)}", "bold"),
        f" · {one_line(annotator)} · ",
        mode,
        "  │  ",
        (f"{progress.labeled}/{progress.total}", "bold"),
        " adjudicated" if adjudicating else " labeled",
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


def item_sections(
    item: Item, judge: JudgeView | None, opinions: str | None = None,
    display: Mapping[str, Any] | None = None,
) -> list[Section]:
    """The sections the item view shows for ``item`` (the judge only when given; the
    annotators' labels and notes when adjudicating).

    ``display`` (the rubric's ``[display]``) names the sections ("Story and question"
    for the input) and lists ``meta`` fields to show as sections of their own, after
    the input.
    """
    display = display or {}
    titles: Mapping[str, str] = display.get("titles", {})

    def title(anchor: str, default: str) -> str:
        return titles.get(anchor.replace("-", "_"), default)

    sections = [Section("input", title("input", "Input"), item.input)]
    for name in display.get("meta", ()):
        if name in item.meta and item.meta[name] is not None:
            value = item.meta[name]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            sections.append(Section(f"meta-{name}", name.replace("_", " ").capitalize(), text))
    if item.is_pairwise:
        sections.append(Section("response-a", title("response_a", "Response A"),
                                item.response_a or "",
                                pair_with=Section("response-b", title("response_b", "Response B"),
                                                  item.response_b or "")))
    else:
        sections.append(Section("response", title("response", "Response"), item.response or ""))
    if item.reference is not None:
        sections.append(Section("reference", title("reference", "Reference"), item.reference))
    if opinions is not None:
        sections.append(Section("annotators", "Annotators' labels", opinions))
    if judge is not None:
        who = f"Judge ({judge.model})" if judge.model else "Judge"
        sections.append(Section("judge", f"{who}: {judge.label}",
                                judge.reasoning or "(no reasoning given)"))
    return sections


def message_sections(title: str, text: str) -> list[Section]:
    """A message in place of an item (queue complete, item missing)."""
    return [Section("message", title, text)]


def status_content(
    position: int,
    total: int,
    item_id: str | None,
    stratum: str | None,
    slice_: str | None,
    row: Label | None,
    flagged: bool,
    note: str | None,
    context: str | None = None,
) -> Content:
    """Where the annotator is and what they said about the item, then where it is from.

    ``stratum`` is built from the judges' verdicts, so callers pass it only when the
    judge is shown; a blind session passes None, and no ``item_id`` or ``slice_`` either
    (an id such as ``story-7-human`` can name the system that wrote the response),
    unless the rubric says ids are safe to show. ``context`` says how the item relates
    to the previous one ("same story"). The note comes last: it is the part to cut when
    the line is too long.
    """
    parts: list[str | tuple[str, str]] = [(f" item {position}/{total}", "bold"), "  │  "]
    if row is not None and row.label is not None:
        parts += ["your label: ", (one_line(row.label), "bold $success")]
    elif row is not None and not is_note_row(row):
        parts.append(("skipped", "$warning"))
    else:
        parts.append(("unlabeled", "dim"))
    if flagged:
        parts += [" · ", ("⚑ flagged", "bold $error")]
    if context:
        parts += [" · ", (one_line(context), "$accent")]
    if item_id is not None:
        parts += ["  │  ", one_line(item_id)]
    if slice_:
        parts += [" · slice ", one_line(slice_)]
    if stratum and stratum != "all":  # "all": the queue holds every item, nothing to say
        parts += [" · ", (one_line(stratum), "dim")]
    if note:
        parts += [" · ", ("✎ ", "bold"), one_line(note.replace("\n", " "))]
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


def scale_content(rubric: Rubric, current: str | None, width: int = 0,
                  compact: bool = False) -> Content:
    """Each level: key, label, description wrapped in full under itself (``width`` cells;
    0: one line per level); the annotator's label highlighted. ``compact``: keys and
    labels on one line, no descriptions (``d``), so the item gets the rows."""
    if compact:
        keys: list[str | tuple[str, str]] = []
        for level in rubric.scale.levels:
            chosen = level.label == current
            keys += [(f" {level.key} ", "bold reverse $accent" if chosen else "bold reverse"),
                     (f" {one_line(level.label)}  ", "bold $success" if chosen else "")]
        keys.append(("(d: descriptions)", "dim"))
        return Content.assemble(*keys)
    lines: list[Content] = []
    for level, label, description in scale_levels(rubric):
        chosen = level.label == current
        parts: list[str | tuple[str, str]] = [
            (f" {level.key} ", "bold reverse $accent" if chosen else "bold reverse"),
            " ",
        ]
        if label is not None:
            parts += [(label, "bold $success" if chosen else "bold"), "  "]
        indent = len(level.key) + 3 + (len(label) + 2 if label is not None else 0)
        tail = "  ← your label" if chosen else ""
        rows = wrap(description + tail, width - indent) if width > indent + 10 else [
            description + tail]
        style = "bold" if chosen else ""
        for index, row in enumerate(rows):
            if index:
                lines.append(Content.assemble(" " * indent, (row, style)))
            else:
                lines.append(Content.assemble(*parts, (row, style)))
    return Content("\n").join(lines)


class ScalePanel(Static):
    """The rubric's scale, always visible: the key for each level and what it means.

    Descriptions wrap in full at the panel's width (a word is never cut), each
    continuation row indented under its description.
    """

    DEFAULT_CSS = """
    ScalePanel {
        height: auto;
        border-top: solid $primary;
        padding: 0 1;
        text-wrap: nowrap;
    }
    """

    _shown: tuple[str, str | None, int, bool] | None = None
    _wanted: tuple[Rubric, str | None] | None = None
    compact = False  # d: keys and labels only

    def show(self, rubric: Rubric, current: str | None) -> None:
        """Redraw only when the highlighted level or the width changes."""
        self._wanted = (rubric, current)
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self._wanted is None:
            return
        rubric, current = self._wanted
        width = self.content_region.width
        key = (rubric.sha256, current, width, self.compact)
        if key != self._shown:
            self._shown = key
            self.update(scale_content(rubric, current, width, self.compact))
