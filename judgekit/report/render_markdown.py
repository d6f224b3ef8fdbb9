"""Markdown rendering: the same sections as the text report, as tables for a PR or wiki.

Every string that can come from outside (names, labels, reasons, notes, ids)
goes through :func:`_cell` or :func:`~judgekit.textsafe.markdown_code`, so an
item or slice named ``<script>`` or ``[x](javascript:...)`` is shown as
written: no tag, image or link can be formed and no control code survives.
"""

from __future__ import annotations

from collections.abc import Mapping

from judgekit.report._format import (
    NO_PAIRS_TEXT,
    absent_lines,
    bias_labels,
    ceiling_guide,
    counts_text,
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
    pvalue_text,
    rule_text,
    sampling_text,
    stale_text,
)
from judgekit.report.model import Report, Stat
from judgekit.report.render_estimate import estimate_markdown_lines
from judgekit.report.render_levels import levels_markdown_lines
from judgekit.report.verdict_lines import (
    explanation_texts,
    gate_check_lines,
    needed_sentence,
    reason_lines,
)
from judgekit.textsafe import markdown_code, markdown_text


def _cell(text: str) -> str:
    """Literal text, safe in a paragraph or a table cell."""
    return markdown_text(text)


def _stat_table(stats: Mapping[str, Stat], primary: str | None = None) -> list[str]:
    return _named_table(
        [(_cell(label_of(key)) + (" **(primary)**" if key == primary else ""), stat)
         for key, stat in stats.items()]
    )


def _named_table(rows: list[tuple[str, Stat]]) -> list[str]:
    """A statistic table of (name already safe for Markdown, figure) rows."""
    with_p = has_pvalues(dict(rows))
    lines = (
        ["| statistic | value | 95% CI | n | p |", "|---|---:|---|---:|---:|"]
        if with_p
        else ["| statistic | value | 95% CI | n |", "|---|---:|---|---:|"]
    )
    for name, stat in rows:
        value = num(stat.statistic) if stat.defined else f"n/a ({_cell(stat.reason or '')})"
        note = f" ({_cell(stat.note)})" if stat.note else ""
        line = f"| {name} | {value} | {interval(stat)}{note} | {stat.n} |"
        if with_p:
            line += f" {p_cell(stat)} |"
        lines.append(line)
    return lines


def render_markdown(report: Report) -> str:
    """The whole report as GitHub-flavoured Markdown."""
    p = report.provenance
    verdict = report.verdict
    out = [
        "# judgekit calibration report",
        "",
        f"**Verdict: {verdict.decision}**",
        "",
        *_reason_items(report),
        "",
        "The reasons in full are in the Verdict section at the end.",
        "",
        "## Provenance",
        "",
        "| | |",
        "|---|---|",
        f"| Rubric | {_cell(p.rubric_name)} v{_cell(p.rubric_version)} "
        f"({markdown_code(p.rubric_sha256)}) |",
        f"| Dataset | {_cell(', '.join(p.datasets) or '-')} |",
        f"| Judge model (requested) | {_cell(', '.join(p.judge_models_requested) or '-')} |",
        f"| Judge model (returned) | {_cell(', '.join(p.judge_models_returned) or '-')} |",
        f"| Endpoint | {_cell(', '.join(p.endpoints) or '-')} |",
        "| Sampling | " + _cell("; ".join(sampling_text(s) for s in p.sampling)) + " |",
        f"| Runs | {_cell(', '.join(p.run_ids) or '-')}{' (imported)' if p.imported else ''} |",
        f"| judgekit | {_cell(p.report_judgekit_version)} (report); judged with "
        f"{_cell(', '.join(p.judgekit_versions) or '-')} |",
        f"| Judged | {_cell(p.first_judgment_at or '-')} .. {_cell(p.last_judgment_at or '-')} |",
        f"| Generated | {_cell(p.generated_at)} |",
        f"| Counts | {_cell(counts_text(p))} |",
    ]
    out.extend(f"| Note | {_cell(note)} |" for note in p.notes)

    health = report.health
    out += ["", f"## Health (n={health.total})", ""]
    no_rates = no_rates_text(health)
    if no_rates:
        out.append(_cell(no_rates))
    else:
        out += ["| status | count | rate | 95% Wilson CI |", "|---|---:|---:|---|"]
        out.extend(
            f"| {_cell(row.status)} | {row.count} | {pct(row.count, health.total)} "
            f"| {interval(row.rate)} |"
            for row in health.rows
        )
    out += [
        "",
        _cell(failed_text(health)),
    ]
    stale = stale_text(health)
    if stale:
        out += ["", _cell(stale)]

    agreement = report.agreement
    out += ["", "## Judge vs human", ""]
    if agreement is None:
        out.append(_cell(NO_PAIRS_TEXT))
    else:
        out += [
            f"Scale: {_cell(agreement.scale_kind)}; n={agreement.n_items} items; "
            f"{_cell(agreement.interval_method)}. Human reference: {_cell(agreement.reference)}.",
            "",
        ]
        out += _stat_table(agreement.stats, agreement.primary)
        labels = agreement.confusion.labels
        out += [
            "",
            "Confusion matrix (rows: judge, columns: human)",
            "",
            "| judge \\ human | " + " | ".join(_cell(x) for x in labels) + " |",
            "|---|" + "---:|" * len(labels),
        ]
        for label, counts in zip(labels, agreement.confusion.matrix, strict=True):
            out.append(f"| {_cell(label)} | " + " | ".join(str(c) for c in counts) + " |")

    if report.ceiling is not None:
        c = report.ceiling
        out += ["", f"## Human-human ceiling ({c.n_items} items, {c.n_annotators} annotators)", ""]
        if c.reason:
            out += [_cell(c.reason), ""]
        out += _stat_table(c.stats)
        if (guide := ceiling_guide(report)) is not None:
            out += ["", _cell(guide)]
        if c.parity:
            out += ["", c.parity]

    sens = report.failure_sensitivity
    if sens is not None and sens.n_failed:
        out += [
            "",
            f"## If the {sens.n_failed} failed judgment(s) counted as disagreements",
            "",
            _cell(sens.rule),
            "",
        ]
        out += _stat_table(sens.stats)

    if report.weighted is not None:
        w = report.weighted
        out += ["", f"## Population estimates (queue {markdown_code(w.queue)}, "
                f"{_cell(w.strategy)})", "", _cell(w.note), ""]
        out += _stat_table(w.stats)

    if report.slices is not None:
        s = report.slices
        primary_name = _cell(label_of(agreement.primary) if agreement else "primary")
        out += [
            "",
            f"## Per slice ({s.n_comparisons} comparisons, {_cell(s.test)}, "
            f"Benjamini-Hochberg q={s.q})",
            "",
            f"| slice | n | {primary_name} | 95% CI | agreement | 95% CI | adj. p | flagged |",
            "|---|---:|---:|---|---:|---|---:|---|",
        ]
        for r in s.rows:
            out.append(
                f"| {_cell(r.name)} | {r.n} | {num(r.primary.statistic)} | {interval(r.primary)} | "
                f"{num(r.percent_agreement.statistic)} | {interval(r.percent_agreement)} | "
                f"{pvalue_text(r.adjusted_pvalue)} | {'**worse**' if r.flagged else ''} |"
            )

    if report.levels is not None:
        out += ["", "## Agreement by level (item, per group, system)", ""]
        out += levels_markdown_lines(report.levels)

    if report.estimate is not None:
        out += ["", "## Estimate (judge only, labels only, PPI++)", ""]
        out += estimate_markdown_lines(report.estimate, report.confidence_level)

    out += ["", "## Bias probes", ""]
    if not report.bias.probes:
        out.append("No probe results stored.")
    else:
        out += _bias_table(report, report.bias.headline)
        for entry, others in probe_extras(report.bias):
            source = (f"run {markdown_code(entry.run_id)}" if entry.run_id
                      else _cell(probe_source(entry)))
            out += ["", f"### {_cell(entry.probe)} probe ({source})", ""]
            out += _bias_table(report, others)
            if (note := probe_note(entry)) is not None:
                out += ["", f"Note: {_cell(note)}"]
    if report.bias.absent:
        out += ["", *(f"- {_cell(line)}" for line in absent_lines(report.bias))]

    out += ["", "## Verdict", "", f"**{verdict.decision}**", "", *_reason_items(report), ""]
    out += [_cell(text) for text in _paragraphs(explanation_texts(verdict))]
    needed = needed_sentence(verdict)
    if needed is not None:
        out += [_cell(needed), ""]
    out.append(f"{_cell(rule_text(report))}.")
    if verdict.gates:
        out += ["", "Bias gates (failed first):", ""]
        out += [f"- {'**FAIL**' if outcome == 'FAIL' else outcome}: {_cell(line)}"
                for outcome, line in gate_check_lines(verdict)]
    if report.alignment is not None:
        out += ["", "## Alignment", ""]
        out += [f"  - {_cell(line.strip())}" if line.startswith("  ") else f"- {_cell(line)}"
                for line in report.alignment.lines()]
    return "\n".join(out) + "\n"


def _reason_items(report: Report) -> list[str]:
    """One bullet per reason of the verdict, its outcome in bold when it failed."""
    out = []
    for line in reason_lines(report.verdict, report.confidence_level):
        outcome = f"**{line.outcome}**" if line.outcome == "FAIL" else line.outcome
        out.append(f"- {_cell(line.label)}: {outcome}, {_cell(line.detail)}")
    return out


def _paragraphs(texts: list[str]) -> list[str]:
    out = []
    for text in texts:
        out += [text, ""]
    return out


def _bias_table(report: Report, stats: Mapping[str, Stat]) -> list[str]:
    return _named_table([(_cell(name), stat) for name, stat in bias_labels(report.bias, stats)])
