"""A report in a notebook: a DataFrame of its figures and an HTML view that restyles nothing.

The HTML report is a whole page whose stylesheet sets ``body``, ``table`` and
``h1``; shown as is in Jupyter it would restyle the notebook. The notebook view
is the same body inside one ``<div>`` with every rule scoped to that div's class.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from judgekit.report.model import Stat

if TYPE_CHECKING:
    from judgekit.report.model import Report

#: The class every scoped rule hangs from.
SCOPE = "judgekit-report"
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def scoped_css(css: str, scope: str = SCOPE) -> str:
    """``css`` with each selector limited to ``.scope`` (``body`` becomes ``.scope`` itself)."""
    rules = []
    for selectors, body in _RULE.findall(css):
        scoped = []
        for selector in selectors.split(","):
            selector = selector.strip()
            if not selector:
                continue
            scoped.append(f".{scope}" if selector in ("body", "html")
                          else f".{scope} {selector}")
        rules.append(f"{','.join(scoped)}{{{body}}}")
    return "\n".join(rules)


def report_html_fragment(report: Report) -> str:
    """The HTML report's body in a ``<div class="judgekit-report">`` with scoped CSS."""
    from judgekit.report.render_html import _CSS, render_html

    page = render_html(report)
    start = page.index("<body>") + len("<body>")
    end = page.rindex("</body>")
    return (f'<div class="{SCOPE}"><style>{scoped_css(_CSS)}</style>'
            f"{page[start:end]}</div>")


def _row(section: str, name: str, stat: Stat, **extra: Any) -> dict[str, Any]:
    return {"section": section, "name": name, "statistic": stat.statistic,
            "ci_low": stat.ci_low, "ci_high": stat.ci_high, "n": stat.n, "method": stat.method,
            "pvalue": stat.pvalue,
            "cluster_pvalue": None if stat.cluster_p is None else stat.cluster_p.pvalue,
            "reason": stat.reason, **extra}


def report_records(report: Report) -> list[dict[str, Any]]:
    """One row per figure: agreement statistics, the human ceiling, the agreement levels
    (sections ``level:item``, ``level:per group``, ``level:system``), slices, bias probes,
    and the latest held-out and dev figures of ``judgekit align`` (section ``alignment``)."""
    rows: list[dict[str, Any]] = []
    if report.agreement is not None:
        for key, stat in report.agreement.stats.items():
            rows.append(_row("agreement", key, stat, primary=key == report.agreement.primary))
    if report.ceiling is not None:
        for key, stat in report.ceiling.stats.items():
            rows.append(_row("human ceiling", key, stat))
    if report.levels is not None:
        for level, figures in (("item", report.levels.item),
                               ("per group", report.levels.per_group),
                               ("system", report.levels.system)):
            for key, stat in figures.items():
                rows.append(_row(f"level:{level}", key, stat))
    if report.slices is not None:
        for row in report.slices.rows:
            rows.append(_row("slice", row.name, row.primary, slice_pvalue=row.pvalue,
                             adjusted_pvalue=row.adjusted_pvalue, flagged=row.flagged))
    for entry in report.bias.probes:
        for key, stat in entry.stats.items():
            rows.append(_row(f"probe:{entry.probe}", key, stat, run_id=entry.run_id))
    if report.alignment is not None:
        for name, figure in report.alignment.figures():
            rows.append(_row("alignment", name, _stat_of(figure)))
    return rows


def _stat_of(figure: Mapping[str, Any]) -> Stat:
    """A stored statistic object (``{"statistic", "ci_low", "ci_high", "n"}``) as a Stat."""
    def number(key: str) -> float:
        value = figure.get(key)
        return (float(value) if isinstance(value, int | float) and not isinstance(value, bool)
                else math.nan)

    n = figure.get("n")
    return Stat(number("statistic"), number("ci_low"), number("ci_high"),
                n if isinstance(n, int) and not isinstance(n, bool) else 0,
                reason=figure.get("reason") if isinstance(figure.get("reason"), str) else None)


def report_frame(report: Report, backend: str = "pandas") -> Any:
    """:func:`report_records` as a DataFrame."""
    from judgekit.io.frames import records_frame

    return records_frame(report_records(report), backend)
