"""The agreement-by-level section in text, Markdown and HTML (the JSON is ``Levels.to_dict``).

One table, one row per level (item, per group, system) and one column per
correlation, then the pairwise system accuracy and the per-system means, so a
reader sees at once whether a judge that scores items loosely still ranks
systems as people do.
"""

from __future__ import annotations

from html import escape

from judgekit.report._format import interval, num, stat_text
from judgekit.report.levels import Levels
from judgekit.report.model import Stat
from judgekit.stats.levels import CORRELATIONS
from judgekit.textsafe import markdown_text, terminal_safe

#: Column titles of the correlations.
TITLES = {"spearman": "Spearman", "kendall_tau": "Kendall tau-b", "pearson": "Pearson"}

#: Shown when the section has too many systems to list each one.
MAX_SYSTEM_ROWS = 50


def _rows(levels: Levels) -> list[tuple[str, dict[str, Stat]]]:
    group = f"per group (by {levels.group_by}; {levels.n_groups_used} of {levels.n_groups} groups)"
    system = f"system (by {levels.system_by}; {len(levels.systems)} systems)"
    return [
        (f"item ({levels.item['pearson'].n} items)" if "pearson" in levels.item else "item",
         dict(levels.item)),
        (group, dict(levels.per_group)),
        (system, {k: v for k, v in levels.system.items() if k in CORRELATIONS}),
    ]


def _accuracy(levels: Levels) -> str:
    stat = levels.system.get("pairwise_accuracy")
    if stat is None:
        return ""
    if not stat.defined:
        return f"Pairwise system accuracy: {stat_text(stat)}"
    agreeing = stat.statistic * levels.n_pairs
    settled = (
        "" if levels.n_settled is None
        else f"; the groups settle the order of {levels.n_settled} of {levels.n_pairs} on both "
        "sides, and the intervals let every other pair go either way"
    )
    ties = levels.n_one_sided_ties
    half = (
        "" if not ties
        else f"; {ties} {'pair ties' if ties == 1 else 'pairs tie'} on one side only and "
        f"{'counts' if ties == 1 else 'count'} half (Kocmi et al. 2021 count such a pair 0: "
        f"{(agreeing - ties / 2):g} of {levels.n_pairs})"
    )
    return (
        f"Pairwise system accuracy: {stat_text(stat)} ({agreeing:g} of {levels.n_pairs} system "
        f"pairs ordered as people order them{half}{settled})"
    )


def _intro(levels: Levels) -> str:
    return (
        "Correlation of judge and human scores over all items (item), within each group of "
        "items averaged over groups where both sides vary (per group), and of per-system "
        "means (system); intervals resample groups. System-level intervals are for the "
        "systems' population means and span every system order the groups leave open "
        f"(simultaneous intervals for the systems' differences). Scores compared: {levels.values}."
    )


def levels_text_lines(levels: Levels) -> list[str]:
    """The section as indented terminal lines (no title)."""
    out = [f"  {terminal_safe(_intro(levels), one_line=True)}"]
    for name, figures in _rows(levels):
        out.append(f"  {terminal_safe(name, one_line=True)}")
        for key in CORRELATIONS:
            if key in figures:
                out.append(f"    {TITLES[key]:<16}{stat_text(figures[key])}")
    if levels.system_reason:
        out.append(f"  System level: {levels.system_reason}")
    elif (acc := _accuracy(levels)):
        out.append(f"  {acc}")
        if levels.system_note:
            out.append(f"  {levels.system_note}")
    for row in levels.systems[:MAX_SYSTEM_ROWS]:
        out.append(
            f"    {terminal_safe(row.name, one_line=True):<24}n={row.n_items:<6}"
            f"judge {num(row.judge_mean)}  human {num(row.human_mean)}"
        )
    return out


def _cell(stat: Stat) -> str:
    if not stat.defined:
        return markdown_text(f"n/a ({stat.reason})" if stat.reason else "n/a")
    return f"{num(stat.statistic)} {interval(stat)}"


def levels_markdown_lines(levels: Levels) -> list[str]:
    """The section as Markdown (no heading)."""
    out = [markdown_text(_intro(levels)), ""]
    out += ["| level | " + " | ".join(TITLES[k] for k in CORRELATIONS) + " |",
            "|---|" + "---|" * len(CORRELATIONS)]
    for name, figures in _rows(levels):
        cells = [_cell(figures[k]) if k in figures else "" for k in CORRELATIONS]
        out.append(f"| {markdown_text(name)} | " + " | ".join(cells) + " |")
    out.append("")
    if levels.system_reason:
        out += [markdown_text(f"System level: {levels.system_reason}"), ""]
    elif (acc := _accuracy(levels)):
        out += [markdown_text(acc), ""]
        if levels.system_note:
            out += [markdown_text(levels.system_note), ""]
    if levels.systems:
        out += ["| system | n | judge mean | human mean |", "|---|---|---|---|"]
        out += [
            f"| {markdown_text(r.name)} | {r.n_items} | {num(r.judge_mean)} | {num(r.human_mean)} |"
            for r in levels.systems[:MAX_SYSTEM_ROWS]
        ]
        out.append("")
    return out


def levels_html(levels: Levels) -> str:
    """The section as HTML tables."""
    parts = [f'<p class="muted">{escape(_intro(levels))}</p>', "<table><tr><th>level</th>"]
    parts.append("".join(f"<th>{escape(TITLES[k])}</th>" for k in CORRELATIONS) + "</tr>")
    for name, figures in _rows(levels):
        cells = "".join(
            f'<td class="num">{escape(_plain(figures[k]))}</td>' if k in figures else "<td></td>"
            for k in CORRELATIONS
        )
        parts.append(f"<tr><td>{escape(name)}</td>{cells}</tr>")
    parts.append("</table>")
    if levels.system_reason:
        parts.append(f"<p>System level: {escape(levels.system_reason)}</p>")
    elif (acc := _accuracy(levels)):
        parts.append(f"<p>{escape(acc)}</p>")
        if levels.system_note:
            parts.append(f'<p class="muted">{escape(levels.system_note)}</p>')
    if levels.systems:
        parts.append("<table><tr><th>system</th><th>n</th><th>judge mean</th>"
                     "<th>human mean</th></tr>")
        parts.extend(
            f'<tr><td>{escape(r.name)}</td><td class="num">{r.n_items}</td>'
            f'<td class="num">{num(r.judge_mean)}</td><td class="num">{num(r.human_mean)}</td></tr>'
            for r in levels.systems[:MAX_SYSTEM_ROWS]
        )
        parts.append("</table>")
    return "\n".join(parts)


def _plain(stat: Stat) -> str:
    if not stat.defined:
        return f"n/a ({stat.reason})" if stat.reason else "n/a"
    return f"{num(stat.statistic)} {interval(stat)}"


__all__ = ["levels_html", "levels_markdown_lines", "levels_text_lines"]
