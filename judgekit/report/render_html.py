"""One self-contained HTML file: inline CSS and hand-drawn SVG, no script, no URL.

The file must open on an air-gapped laptop and look the same printed, so nothing
is fetched: no fonts, stylesheets, scripts or images from anywhere. The tables
repeat every plotted number with its n and interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape

from judgekit.report import _svg
from judgekit.report._format import (
    NO_PAIRS_TEXT,
    absent_lines,
    bias_labels,
    ceiling_guide,
    failed_text,
    has_pvalues,
    interval,
    label_of,
    no_rates_text,
    num,
    p_cell,
    pct,
    probe_extras,
    probe_note,
    probe_source,
    provenance_pairs,
    pvalue_text,
    rule_text,
    stale_text,
)
from judgekit.report.model import Report, ScatterPoint, Stat
from judgekit.report.render_estimate import estimate_html
from judgekit.report.render_levels import levels_html
from judgekit.report.verdict_lines import (
    explanation_texts,
    gate_checks,
    needed_sentence,
    reason_lines,
)

_CSS = """
body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#1a202c}
h1{font-size:1.6em}h2{border-bottom:1px solid #cbd5e0;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #e2e8f0;padding:3px 8px}
th{background:#f7fafc;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:1.3em;padding:.6em 1em;border-radius:6px;margin:1em 0}
.PASS{background:#c6f6d5}.FAIL{background:#fed7d7}.INSUFFICIENT{background:#fefcbf}
.flag{color:#c53030;font-weight:bold}.muted{color:#718096}svg.plot{max-width:100%;height:auto}
figure{margin:1em 0}figcaption{color:#4a5568;font-size:.9em}
.verdict ul{font-size:.8em;margin:.4em 0 0;padding-left:1.2em}
.out-FAIL{color:#9b2c2c;font-weight:bold}.out-PASS,.out-ok{color:#276749}
.out-INSUFFICIENT,.out-WARNING{color:#975a16;font-weight:bold}.out-not{color:#718096}
tr.gate-FAIL td{background:#fed7d7}tr.gate-ok td{background:#f0fff4}
tr.gate-not td{color:#718096;background:#f7fafc}
"""

GE, PLUS_MINUS = "\u2265", "\u00b1"  # written as characters: the page is UTF-8


def _e(text: object) -> str:
    return escape(str(text))


def _stat_table(stats: Mapping[str, Stat], primary: str | None = None) -> str:
    return _named_table(
        [(_e(label_of(key)) + (" <b>(primary)</b>" if key == primary else ""), stat)
         for key, stat in stats.items()]
    )


def _named_table(rows: list[tuple[str, Stat]]) -> str:
    """A statistic table of (name already escaped, figure) rows; empty: no table at all."""
    if not rows:
        return ""
    with_p = has_pvalues(dict(rows))
    p_head = "<th>p</th>" if with_p else ""
    html = [
        f"<table><tr><th>statistic</th><th>value</th><th>95% CI</th><th>n</th>{p_head}</tr>"
    ]
    for name, stat in rows:
        value = num(stat.statistic) if stat.defined else f"n/a ({_e(stat.reason or '')})"
        note = f' <span class="muted">({_e(stat.note)})</span>' if stat.note else ""
        p_td = f'<td class="num">{_e(p_cell(stat))}</td>' if with_p else ""
        html.append(
            f'<tr><td>{name}</td><td class="num">{value}</td>'
            f'<td>{interval(stat)}{note}</td><td class="num">{stat.n}</td>{p_td}</tr>'
        )
    html.append("</table>")
    return "".join(html)


def _provenance(report: Report) -> str:
    pairs = provenance_pairs(report.provenance)
    return (
        "<table>"
        + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in pairs)
        + "</table>"
    )


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _scatter_points(report: Report) -> tuple[list[ScatterPoint], str]:
    if report.scatter:
        return list(report.scatter), (
            f"Judge score against response length: {len(report.scatter)} of "
            f"{report.scatter_total} ok judgments shown."
        )
    for entry in report.bias.probes:
        raw = entry.details.get("points")
        if entry.probe == "length" and isinstance(raw, list) and raw:
            pts = [
                ScatterPoint(int(x), float(y))
                for x, y in raw
                if isinstance(y, int | float) and math.isfinite(float(y))
            ]
            return pts, f"Judge score against length from the length probe ({len(pts)} points)."
    return [], ""


def _position_bars(report: Report) -> list[tuple[str, Stat]]:
    for entry in report.bias.probes:
        if entry.probe == "position":
            keys = ("position_consistency", "first_slot_rate", "second_slot_rate", "conflict_rate")
            return bias_labels(report.bias, {k: entry.stats[k] for k in keys if k in entry.stats})
    return []


def render_html(report: Report) -> str:
    """The whole report as one HTML document (no external resources)."""
    verdict = report.verdict
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f"<title>judgekit report: {_e(report.provenance.rubric_name)}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>judgekit calibration report</h1>",
        f'<div class="verdict {verdict.decision.split()[0]}" id="verdict">'
        f"<b>{_e(verdict.decision)}</b>{_reason_list(report)}</div>",
        _verdict_section(report),
        "<h2>Provenance</h2>",
        _provenance(report),
    ]
    health = report.health
    parts.append(f"<h2>Health (n={health.total})</h2>")
    no_rates = no_rates_text(health)
    if no_rates:
        parts.append(f"<p>{escape(no_rates)}</p>")
    else:
        parts.append("<table><tr><th>status</th><th>count</th><th>rate</th>"
                     "<th>95% Wilson CI</th></tr>")
        parts.extend(
            f'<tr><td>{row.status}</td><td class="num">{row.count}</td>'
            f'<td class="num">{pct(row.count, health.total)}</td><td>{interval(row.rate)}</td></tr>'
            for row in health.rows
        )
        parts.append("</table>")
    parts.append(f"<p>{failed_text(health)}</p>")
    stale = stale_text(health)
    if stale:
        parts.append(f"<p>{escape(stale)}</p>")

    agreement = report.agreement
    parts.append("<h2>Judge vs human</h2>")
    if agreement is None:
        parts.append(f"<p>{NO_PAIRS_TEXT}</p>")
    else:
        parts.append(
            f"<p>Scale: {_e(agreement.scale_kind)}; n={agreement.n_items} items; "
            f"{_e(agreement.interval_method)}. Human reference: "
            f"{_e(agreement.reference)}.</p>"
        )
        parts.append(_stat_table(agreement.stats, agreement.primary))
        parts.append(
            _figure(
                _svg.confusion_heatmap(agreement.confusion),
                "Confusion matrix: rows are the judge's label, columns the human's; the "
                "darker the cell, the more items it holds (the darkest holds the most).",
            )
        )
    if report.ceiling is not None:
        c = report.ceiling
        parts.append(
            f"<h2>Human-human ceiling ({c.n_items} items, {c.n_annotators} annotators)</h2>"
        )
        if c.reason:
            parts.append(f"<p>{_e(c.reason)}</p>")
        parts.append(_stat_table(c.stats))
        if (guide := ceiling_guide(report)) is not None:
            parts.append(f"<p>{_e(guide)}</p>")
        if c.parity:
            parts.append(f"<p>{_e(c.parity)}</p>")
    sens = report.failure_sensitivity
    if sens is not None and sens.n_failed:
        parts.append(
            f"<h2>If the {sens.n_failed} failed judgment(s) counted as disagreements</h2>"
            f"<p>{_e(sens.rule)}</p>" + _stat_table(sens.stats)
        )
    if report.weighted is not None:
        w = report.weighted
        parts.append(
            f"<h2>Population estimates (queue {_e(w.queue)}, {_e(w.strategy)})</h2>"
            f"<p>{_e(w.note)}</p>" + _stat_table(w.stats)
        )
    if report.slices is not None and agreement is not None:
        s = report.slices
        parts.append(
            f"<h2>Per slice</h2><p>{s.n_comparisons} comparisons; {_e(s.test)}; "
            f"Benjamini-Hochberg q={s.q}.</p>"
        )
        parts.append(
            _figure(
                _svg.forest_plot(
                    [(r.name, r.primary, r.flagged) for r in s.rows],
                    agreement.primary_stat,
                    verdict.threshold,
                    label_of(agreement.primary),
                ),
                "Per-slice estimates with 95% intervals; red = worse than the rest after BH; "
                "dashed grey = overall, dotted red = threshold.",
            )
        )
        parts.append(
            "<table><tr><th>slice</th><th>n</th><th>primary</th><th>95% CI</th>"
            "<th>agreement</th><th>95% CI</th><th>adj. p</th><th></th></tr>"
        )
        for r in s.rows:
            flag = '<span class="flag">worse</span>' if r.flagged else ""
            parts.append(
                f'<tr><td>{_e(r.name)}</td><td class="num">{r.n}</td>'
                f'<td class="num">{num(r.primary.statistic)}</td><td>{interval(r.primary)}</td>'
                f'<td class="num">{num(r.percent_agreement.statistic)}</td>'
                f"<td>{interval(r.percent_agreement)}</td>"
                f'<td class="num">{pvalue_text(r.adjusted_pvalue)}</td><td>{flag}</td></tr>'
            )
        parts.append("</table>")

    if report.levels is not None:
        parts.append('<h2 id="levels">Agreement by level: item, per group, system</h2>')
        parts.append(levels_html(report.levels))

    if report.estimate is not None:
        parts.append('<h2 id="estimate">Estimate: judge only, labels only, PPI++</h2>')
        parts.append(estimate_html(report.estimate, report.confidence_level))

    parts.append("<h2>Bias</h2>")
    points, caption = _scatter_points(report)
    if points:
        parts.append(_figure(_svg.scatter_plot(points), caption))
    bars = _position_bars(report)
    if bars:
        parts.append(
            _figure(_svg.bias_bars(bars), "Position probe rates with 95% Wilson intervals.")
        )
    if report.bias.probes:
        parts.append(_bias_table(report, report.bias.headline))
        for entry, others in probe_extras(report.bias):
            table = _bias_table(report, others)
            if not table:
                continue
            parts.append(f"<h3>{_e(entry.probe)} probe ({_e(probe_source(entry))})</h3>")
            parts.append(table)
            if (note := probe_note(entry)) is not None:
                parts.append(f"<p>Note: {_e(note)}</p>")
            bins = entry.details.get("reliability")
            if entry.probe == "confidence_calibration" and isinstance(bins, list) and bins:
                parts.append(_figure(_svg.reliability_diagram(bins),
                                     "Reliability diagram: accuracy against the judge's stated "
                                     "confidence per bin (the diagonal is perfect calibration; "
                                     "dot area grows with the bin's count)."))
    else:
        parts.append('<p class="muted">No probe results stored.</p>')
    parts.extend(f'<p class="muted">{_e(line)}</p>' for line in absent_lines(report.bias))

    if report.alignment is not None:
        parts.append('<section id="alignment"><h2>Alignment</h2><pre>'
                     + _e("\n".join(report.alignment.lines())) + "</pre></section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _outcome_class(outcome: str) -> str:
    return "out-" + outcome.split()[0]


def _reason_list(report: Report) -> str:
    """One list item per reason of the verdict, its outcome coloured."""
    items = "".join(
        f'<li>{_e(line.label)}: <span class="{_outcome_class(line.outcome)}">'
        f"{_e(line.outcome)}</span>, {_e(line.detail)}</li>"
        for line in reason_lines(report.verdict, report.confidence_level, ge=GE)
    )
    return f"<ul>{items}</ul>"


def _verdict_section(report: Report) -> str:
    """Why, in full; the rule; and every bias gate, failed first and coloured by outcome."""
    verdict = report.verdict
    parts = ["<h2>Verdict</h2>"]
    parts += [f"<p>{_e(text)}</p>" for text in explanation_texts(verdict)]
    needed = needed_sentence(verdict, pm=PLUS_MINUS)
    if needed is not None:
        parts.append(f"<p>{_e(needed)}</p>")
    parts.append(f"<p>{_e(rule_text(report, ge=GE))}.</p>")
    checks = gate_checks(verdict, ge=GE)
    if checks:
        rows = "".join(
            f'<tr class="gate-{c.outcome.split()[0]}"><td>{_e(c.label)}</td>'
            f'<td class="{_outcome_class(c.outcome)}">{_e(c.outcome)}</td>'
            f"<td>{_e(c.detail)}</td></tr>"
            for c in checks
        )
        parts.append('<table id="gates"><tr><th>bias gate</th><th>outcome</th>'
                     f"<th>reading</th></tr>{rows}</table>")
    return "".join(parts)


def _bias_table(report: Report, stats: Mapping[str, Stat]) -> str:
    return _named_table([(_e(name), stat) for name, stat in bias_labels(report.bias, stats)])
