"""The estimate section in text, Markdown and HTML (the JSON is ``EstimateSection.to_dict``).

Shared by the calibration report's renderers and ``judgekit estimate``, so the
section reads the same in both. Every estimate is shown with its n and interval
and named for what it is: the judge-only figure is the judge's own rate.
"""

from __future__ import annotations

import math
from html import escape

from judgekit.report import _svg
from judgekit.report._format import num, stat_text
from judgekit.report.estimate_section import METHOD_NAMES, EstimateSection, TargetEstimate
from judgekit.report.model import Stat
from judgekit.textsafe import markdown_text, terminal_safe


def _cell(text: str) -> str:
    """Literal text, safe in a Markdown table cell (slice names come from the data)."""
    return markdown_text(text)


def _effective(target: TargetEstimate) -> str:
    value = target.effective_labels
    lam = target.lam
    if not math.isfinite(value):
        return "effective labels n/a"
    return f"lambda {num(lam, 2)}; worth {value:.0f} labels"


def _summary(section: EstimateSection) -> str:
    text = f"n={section.n_labeled} labeled, N={section.n_judged} judged; design: {section.design}"
    return f"{text}; human reference: {section.reference}" if section.reference else text


def _method(key: str, target: TargetEstimate) -> str:
    """The estimate's name; the judge-only figure of a mean is the judge's own mean, not a rate."""
    if key == "judge_only" and target.key == "mean_score":
        return "judge only (the judge's own mean, not corrected)"
    return METHOD_NAMES[key]


def estimate_text_lines(section: EstimateSection, confidence_level: float) -> list[str]:
    """The section as indented terminal lines (no title)."""
    if section.reason and not section.targets:
        return [f"  {section.reason}"]
    out = [f"  {_summary(section)}"]
    if section.reason:
        out.append(f"  {section.reason}")
    width = max(len(name) for name in METHOD_NAMES.values()) + 2
    for target in section.targets:
        out.append(f"  {target.name} ({confidence_level:.0%} intervals; {_effective(target)})")
        for key, stat in target.stats.items():
            out.append(f"    {_method(key, target):<{width}}{stat_text(stat)}")
    if section.stratified is not None:
        head = section.targets[0].name if section.targets else ""
        out.append(f"  {head} by {section.by} (stratified PPI++, weighted by slice size)")
        name_w = max([10, *(len(s.name) + 2 for s in section.slices)])
        for row in section.slices:
            name = terminal_safe(row.name, one_line=True)
            out.append(f"    {name:<{name_w}}N={row.n_judged:<7}{stat_text(row.ppi)}")
        out.append(
            f"    {'overall':<{name_w}}N={section.n_judged:<7}{stat_text(section.stratified)}"
        )
    out.extend(f"  Note: {terminal_safe(note, one_line=True)}" for note in section.notes)
    return out


def estimate_markdown_lines(section: EstimateSection, confidence_level: float) -> list[str]:
    """The section as Markdown (tables; no heading)."""
    if section.reason and not section.targets:
        return [section.reason, ""]
    out = [_cell(_summary(section)) + ".", ""]
    if section.reason:
        out += [section.reason, ""]
    level = f"{confidence_level:.0%} CI"
    for target in section.targets:
        out += [f"**{_cell(target.name)}** ({_effective(target)})", ""]
        out += [f"| estimate | value | {level} | n |", "|---|---|---|---|"]
        for key, stat in target.stats.items():
            out.append(
                f"| {_method(key, target)} | {_cell(_value(stat))} | {_ci(stat)} | {stat.n} |"
            )
        out.append("")
    if section.stratified is not None:
        out += [f"By {section.by} (stratified PPI++):", ""]
        out += [
            f"| {section.by} | N judged | n labeled | PPI++ | {level} |",
            "|---|---|---|---|---|",
        ]
        for row in section.slices:
            out.append(
                f"| {_cell(row.name)} | {row.n_judged} | {row.n_labeled} | "
                f"{_cell(_value(row.ppi))} | {_ci(row.ppi)} |"
            )
        s = section.stratified
        out += [
            f"| overall | {section.n_judged} | {section.n_labeled} | {_value(s)} | {_ci(s)} |",
            "",
        ]
    out.extend(f"- {_cell(note)}" for note in section.notes)
    return out


def _value(stat: Stat) -> str:
    if not stat.defined:
        return f"n/a ({stat.reason})" if stat.reason else "n/a"
    return num(stat.statistic) + (f" ({stat.note})" if stat.note else "")


def _ci(stat: Stat) -> str:
    if not (math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high)):
        return "n/a"
    return f"[{num(stat.ci_low)}, {num(stat.ci_high)}]"


def estimate_plot(target: TargetEstimate) -> str:
    """The estimates of one target as intervals on one axis (SVG)."""
    rows = [(METHOD_NAMES[k].split(" (")[0], s, k == "judge_only") for k, s in target.stats.items()]
    return _svg.forest_plot(
        rows, None, None, target.name, plot_id="estimate-intervals", title="Estimate intervals"
    )


def estimate_html(section: EstimateSection, confidence_level: float) -> str:
    """The section as HTML: a table per target and, for the first, the interval plot."""
    if section.reason and not section.targets:
        return f"<p>{escape(section.reason)}</p>"
    parts = [f"<p>{escape(_summary(section))}.</p>"]
    if section.reason:
        parts.append(f"<p>{escape(section.reason)}</p>")
    level = f"{confidence_level:.0%} CI"
    for i, target in enumerate(section.targets):
        parts.append(f"<h3>{escape(target.name)}</h3><p>{escape(_effective(target))}.</p>")
        if i == 0:
            parts.append(
                '<figure class="estimate">'
                + estimate_plot(target)
                + f"<figcaption>{escape(target.name)}: each estimate with its {level}; the "
                "judge-only interval (red) is the judge's own rate, not the humans'."
                "</figcaption></figure>"
            )
        parts.append(f"<table><tr><th>estimate</th><th>value</th><th>{level}</th><th>n</th></tr>")
        for key, stat in target.stats.items():
            parts.append(
                f'<tr><td>{escape(_method(key, target))}</td><td class="num">'
                f"{escape(_value(stat))}</td><td>{_ci(stat)}</td>"
                f'<td class="num">{stat.n}</td></tr>'
            )
        parts.append("</table>")
    if section.stratified is not None:
        parts.append(
            f"<h3>By {escape(str(section.by))} (stratified PPI++)</h3><table><tr>"
            f"<th>{escape(str(section.by))}</th><th>N judged</th><th>n labeled</th>"
            f"<th>PPI++</th><th>{level}</th></tr>"
        )
        for row in section.slices:
            parts.append(
                f'<tr><td>{escape(row.name)}</td><td class="num">{row.n_judged}</td>'
                f'<td class="num">{row.n_labeled}</td><td class="num">'
                f"{escape(_value(row.ppi))}</td><td>{_ci(row.ppi)}</td></tr>"
            )
        s = section.stratified
        parts.append(
            f'<tr><td>overall</td><td class="num">{section.n_judged}</td>'
            f'<td class="num">{section.n_labeled}</td><td class="num">{escape(_value(s))}</td>'
            f"<td>{_ci(s)}</td></tr></table>"
        )
    parts.extend(f'<p class="muted">{escape(note)}</p>' for note in section.notes)
    return "\n".join(parts)


__all__ = ["estimate_html", "estimate_markdown_lines", "estimate_plot", "estimate_text_lines"]
