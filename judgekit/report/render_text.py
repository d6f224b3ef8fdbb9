"""The terminal report: plain text, readable top to bottom, verdict last.

Sections follow methods.md's report order (manifest, health, agreement, ceiling,
slices, bias, decision); every figure is printed with its interval and n.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from judgekit.report._format import (
    absent_lines,
    bias_labels,
    ceiling_guide,
    interval,
    label_of,
    no_rates_text,
    num,
    pct,
    probe_extras,
    probe_note,
    probe_source,
    provenance_pairs,
    pvalue_text,
    stale_text,
    stat_text,
)
from judgekit.report._wrap import DEFAULT_WIDTH, wrap_text
from judgekit.report.model import Agreement, Report, Stat
from judgekit.report.render_estimate import estimate_text_lines
from judgekit.report.render_levels import levels_text_lines
from judgekit.report.verdict_lines import (
    explanation_texts,
    gate_check_lines,
    needed_sentence,
    reason_lines,
)
from judgekit.textsafe import terminal_safe

#: Hashes are shown to this many characters (the JSON report has them in full).
SHORT_HASH = 12


def _kv(key: str, value: str) -> str:
    return f"  {key:<14}{value}"


#: Width of the name column; a longer name gets its figure on the next line.
NAME_WIDTH = 44


def _stat_lines(stats: Mapping[str, Stat], primary: str | None = None) -> list[str]:
    return _named_lines(
        (label_of(key) + (" (primary)" if key == primary else ""), stat)
        for key, stat in stats.items()
    )


def _named_lines(rows: Iterable[tuple[str, Stat]]) -> list[str]:
    lines = []
    for name, stat in rows:
        if len(name) < NAME_WIDTH:
            lines.append(f"  {name:<{NAME_WIDTH}}{stat_text(stat)}")
        else:  # the figure on the next line: under the column, or further left to fit 80
            text = stat_text(stat)
            column = NAME_WIDTH if NAME_WIDTH + len(text) <= 74 else 6
            lines += [f"  {name}", f"  {'':<{column}}{text}"]
    return lines


def provenance_lines(report: Report) -> list[str]:
    """The provenance block, one ``key  value`` line per field."""
    pairs = provenance_pairs(
        report.provenance, judge_labels=("Judge", "Returned as"), empty_sampling="-",
        hash_chars=SHORT_HASH,
    )
    return [_kv(key, value) for key, value in pairs]


def _confusion_lines(agreement: Agreement) -> list[str]:
    labels = agreement.confusion.labels
    width = max([6, *(len(label) + 2 for label in labels)])
    head = " " * 16 + "".join(f"{label:>{width}}" for label in labels)
    lines = ["  Confusion matrix (rows: judge, columns: human)", "  " + head]
    for label, row in zip(labels, agreement.confusion.matrix, strict=True):
        lines.append("  " + f"{label:>14}  " + "".join(f"{count:>{width}}" for count in row))
    return lines


def render_text(report: Report, width: int = DEFAULT_WIDTH) -> str:
    """The whole report as terminal text, wrapped at word boundaries to ``width`` columns.

    Names and reasons come from items, labels and the endpoint, so the finished
    text goes through :func:`~judgekit.textsafe.terminal_safe`: a control
    sequence in a slice name is printed as ``\\x1b[...``, never executed.
    """
    out: list[str] = ["judgekit calibration report", "=" * 27, ""]
    out.extend(provenance_lines(report))

    health = report.health
    no_rates = no_rates_text(health)
    cis = "" if no_rates else f"; Wilson {report.confidence_level:.0%} CIs"
    out += ["", f"Health (n={health.total} judgments{cis})"]
    if no_rates:
        out.append(f"  {no_rates}")
    else:
        out.extend(
            f"  {row.status:<14}{row.count:>8}  {pct(row.count, health.total):>7}  "
            f"{interval(row.rate)}"
            for row in health.rows
        )
    out.append(
        f"  Failed judgments are excluded from agreement: {health.failed_labeled_items} "
        "labeled item(s) had a failed judgment."
    )
    stale = stale_text(health)
    if stale:
        out.append(f"  {stale}")

    agreement = report.agreement
    out.append("")
    if agreement is None:
        out.append("Judge vs human: no item has both an ok judgment and a human label.")
    else:
        out.append(
            f"Judge vs human ({agreement.scale_kind}; n={agreement.n_items} items; "
            f"{agreement.interval_method})"
        )
        out.append(f"  Human reference: {agreement.reference}")
        out.extend(_stat_lines(agreement.stats, agreement.primary))
        out.append("")
        out.extend(_confusion_lines(agreement))

    ceiling = report.ceiling
    if ceiling is not None:
        out += [
            "",
            f"Human-human ceiling ({ceiling.n_items} items, {ceiling.n_annotators} annotators)",
        ]
        if ceiling.reason:
            out.append(f"  {ceiling.reason}")
        out.extend(_stat_lines(ceiling.stats))
        if (guide := ceiling_guide(report)) is not None:
            out.append(f"  {guide}")
        if ceiling.parity:
            out.append(f"  {ceiling.parity}")

    sens = report.failure_sensitivity
    if sens is not None and sens.n_failed:
        out += [
            "",
            f"If the {sens.n_failed} failed judgment(s) counted as disagreements ({sens.rule})",
        ]
        out.extend(_stat_lines(sens.stats))

    weighted = report.weighted
    if weighted is not None:
        out += [
            "",
            f"Population estimates (queue {weighted.queue!r}, strategy {weighted.strategy})",
        ]
        out.append(f"  {weighted.note}")
        out.extend(_stat_lines(weighted.stats))

    slices = report.slices
    if slices is not None:
        out += [
            "",
            f"Per slice ({slices.n_comparisons} comparisons; {slices.test}; "
            f"Benjamini-Hochberg q={slices.q})",
        ]
        name_w = max([8, *(len(r.name) + 2 for r in slices.rows)])
        primary_name = label_of(agreement.primary) if agreement else ""
        for srow in slices.rows:
            flag = "  WORSE" if srow.flagged else ""
            out.append(
                f"  {srow.name:<{name_w}}n={srow.n:<6}{primary_name}"
                f" {num(srow.primary.statistic)} {interval(srow.primary)}  agreement "
                f"{num(srow.percent_agreement.statistic)} {interval(srow.percent_agreement)}  "
                f"p_adj={pvalue_text(srow.adjusted_pvalue)}{flag}"
            )

    if report.levels is not None:
        out += ["", "Agreement by level (item, per group, system)"]
        out.extend(levels_text_lines(report.levels))

    if report.estimate is not None:
        out += ["", "Estimate (judge only, labels only, PPI++)"]
        out.extend(estimate_text_lines(report.estimate, report.confidence_level))

    bias = report.bias
    out += ["", "Bias probes"]
    if not bias.probes:
        out.append("  No probe results stored (run `judgekit probe position|length|consistency|"
                   "injection|identical`).")
    else:
        out.extend(_named_lines(bias_labels(bias, bias.headline)))
        for entry, others in probe_extras(bias):
            out.append(f"  [{entry.probe} probe, {probe_source(entry)}]")
            out.extend("  " + line for line in _named_lines(bias_labels(bias, others)))
            if (note := probe_note(entry)) is not None:
                out.append(f"    Note: {note}")
    out.extend(f"  {line}" for line in absent_lines(bias))
    out += ["", *verdict_lines(report)]
    if report.alignment is not None:
        out += ["", "Alignment", *(f"  {line}" for line in report.alignment.lines())]
    return wrap_text(terminal_safe("\n".join(out)), width) + "\n"


def verdict_lines(report: Report) -> list[str]:
    """The decision, one line per reason with its figure and threshold, then why."""
    verdict = report.verdict
    out = [f"VERDICT: {verdict.decision}"]
    out += [f"  {line.text()}" for line in reason_lines(verdict, report.confidence_level)]
    out += ["", "  Why:"]
    out += [f"  - {text}" for text in explanation_texts(verdict)]
    needed = needed_sentence(verdict)
    if needed is not None:
        out.append(f"  - {needed}")
    if verdict.gates:
        out.append("  Bias gates (failed first):")
        out.extend(f"    {line}" for _, line in gate_check_lines(verdict))
    return out
