"""The table across criteria that ``report`` prints for a multi-criteria rubric.

One row per criterion (:mod:`judgekit.criteria`): its primary statistic with its
interval, the human ceiling read like for like (the annotators' mean pairwise
primary kappa when there is one, else Krippendorff's alpha), and its verdict;
then the overall decision: FAIL if any criterion fails, else INSUFFICIENT DATA
if any is undecided, else PASS.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from judgekit.report._format import label_of, stat_text
from judgekit.report.model import EXIT_CODES, Report, Stat
from judgekit.textsafe import markdown_text, terminal_safe


def overall_decision(reports: Sequence[Report]) -> str:
    decisions = [r.verdict.decision for r in reports]
    if "FAIL" in decisions:
        return "FAIL"
    if "INSUFFICIENT DATA" in decisions:
        return "INSUFFICIENT DATA"
    return "PASS"


def overall_exit_code(reports: Sequence[Report]) -> int:
    return EXIT_CODES[overall_decision(reports)]


def _ceiling(report: Report) -> tuple[str, Stat] | None:
    ceiling = report.ceiling
    if ceiling is None:
        return None
    key = f"mean_pairwise_{report.verdict.primary}"
    if key in ceiling.stats:
        return key, ceiling.stats[key]
    if "krippendorff_alpha" in ceiling.stats:
        return "krippendorff_alpha", ceiling.stats["krippendorff_alpha"]
    return None


def rows(criteria: Sequence[str], reports: Sequence[Report]) -> list[dict[str, Any]]:
    out = []
    for name, report in zip(criteria, reports, strict=True):
        ceiling = _ceiling(report)
        out.append({
            "criterion": name,
            "primary": report.verdict.primary,
            "statistic": report.verdict.statistic.to_dict(),
            "ceiling": None if ceiling is None else {"name": ceiling[0], **ceiling[1].to_dict()},
            "decision": report.verdict.decision,
            "reason": report.verdict.reason,
        })
    return out


def render_summary(criteria: Sequence[str], reports: Sequence[Report], fmt: str) -> str:
    """The table in ``fmt`` (text, md, html or json)."""
    table = rows(criteria, reports)
    overall = overall_decision(reports)
    if fmt == "json":
        return json.dumps({"criteria": table, "decision": overall,
                           "exit_code": EXIT_CODES[overall]}, indent=2, allow_nan=False) + "\n"
    lines = []
    for name, report in zip(criteria, reports, strict=True):
        ceiling = _ceiling(report)
        lines.append((name, f"{label_of(report.verdict.primary)} "
                      f"{stat_text(report.verdict.statistic)}",
                      "n/a" if ceiling is None else f"{label_of(ceiling[0])} "
                      f"{stat_text(ceiling[1])}", report.verdict.decision))
    if fmt == "md":
        out = ["## Criteria", "", "| criterion | primary | human ceiling | verdict |",
               "|---|---|---|---|"]
        out += [f"| {' | '.join(markdown_text(c) for c in row)} |" for row in lines]
        return "\n".join([*out, "", f"**Overall: {overall}** (FAIL if any criterion fails)", ""])
    if fmt == "html":
        from html import escape

        cells = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in lines)
        return ("<!doctype html><meta charset=utf-8><title>judgekit criteria</title>"
                "<h1>Criteria</h1><table><tr><th>criterion</th><th>primary</th>"
                f"<th>human ceiling</th><th>verdict</th></tr>{cells}</table>"
                f"<p><b>Overall: {escape(overall)}</b> (FAIL if any criterion fails)</p>\n")
    width = max(len(row[0]) for row in lines) + 2
    out = ["Criteria (one report per criterion: judgekit report -r FILE#CRITERION)"]
    for name, primary, ceiling_text, decision in lines:
        out.append(f"  {terminal_safe(name, one_line=True):<{width}}{decision}")
        out.append(f"    primary   {primary}")
        out.append(f"    ceiling   {ceiling_text}")
    out.append(f"OVERALL: {overall} (FAIL if any criterion fails)")
    return "\n".join(out) + "\n"


__all__ = ["overall_decision", "overall_exit_code", "render_summary", "rows"]
