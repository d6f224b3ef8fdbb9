"""Calibration reports: store -> statistics -> report model -> text, Markdown, HTML, JSON.

``build_report(store, rubric, ReportOptions(...))`` computes a :class:`Report`;
``render(report, fmt)`` turns it into one of the four formats. The verdict's
exit code (0 PASS, 1 FAIL, 3 INSUFFICIENT DATA) is ``report.verdict.exit_code``.
"""

from __future__ import annotations

from judgekit.report.build import ReportOptions, build_report
from judgekit.report.model import EXIT_CODES, Report, Stat
from judgekit.report.render_html import render_html
from judgekit.report.render_json import render_json, report_to_dict
from judgekit.report.render_markdown import render_markdown
from judgekit.report.render_text import render_text

_RENDERERS = {
    "text": render_text,
    "md": render_markdown,
    "html": render_html,
    "json": render_json,
}
#: Output formats of ``judgekit report --format``.
FORMATS = tuple(_RENDERERS)


def render(report: Report, fmt: str = "text") -> str:
    """The report in one of :data:`FORMATS`."""
    if fmt not in _RENDERERS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    return _RENDERERS[fmt](report)


__all__ = [
    "EXIT_CODES",
    "FORMATS",
    "Report",
    "ReportOptions",
    "Stat",
    "build_report",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
    "report_to_dict",
]
