"""The lead's page at ``/``: progress, agreement so far, the reports and the disagreements.

A ``read`` or ``admin`` token (log in at ``/login?token=...&next=/``) lands here; an
``annotate`` token is sent to its queues. Per rubric the page shows each
annotator's progress through the labeling queues, the decision and its reasons as
the report gives them (judge vs people, with people vs people from the human
ceiling), a link to the HTML report, and the items annotators disagree on or
flagged, to adjudicate with ``judgekit annotate --adjudicate``. Everything from
outside (names, ids, notes) is HTML-escaped; nothing a judge said about an item is
listed with the disagreements.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from judgekit.errors import JudgekitError
from judgekit.serve.auth import check_token, presented_token
from judgekit.serve.progress import queue_rows
from judgekit.store import Store

router = APIRouter()

#: Disagreements listed per rubric; the rest are counted.
MAX_LISTED = 50

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>judgekit: calibration</title>
<style>
body{{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse;margin:.6em 0}}td,th{{border:1px solid #e2e8f0;padding:3px 8px}}
th{{background:#f7fafc;text-align:left}}.FAIL{{color:#9b2c2c}}.PASS{{color:#276749}}
.INSUFFICIENT{{color:#975a16}}.muted{{color:#718096}}
</style></head><body><h1>Calibration: {who}</h1>{body}</body></html>
"""


def _e(text: object) -> str:
    return html.escape(str(text))


@router.get("/", include_in_schema=False)
def landing(request: Request) -> Response:
    """The lead's page (read and admin tokens); an annotator goes to their queues."""
    store: Store = request.app.state.pool.get()
    token = presented_token(request)
    record = store.token_for(token) if token else None
    if record is not None and record.may("annotate") and not record.may("read"):
        return RedirectResponse("/annotate", status_code=303)
    record = check_token(store, token, "read")
    parts = [_rubric_section(store, rubric) for rubric in store.list_rubrics()]
    body = "".join(parts) or "<p>No rubric in this store yet.</p>"
    return HTMLResponse(_PAGE.format(who=_e(record.name), body=body))


def _rubric_section(store: Store, row: dict[str, Any]) -> str:
    from judgekit.report import ReportOptions, build_report
    from judgekit.report.verdict_lines import reason_lines
    from judgekit.review import review_items
    from judgekit.rubrics import rubric_from_text

    text = store.get_rubric_text(row["sha256"])
    if text is None:
        return ""
    rubric = rubric_from_text(text, path=f"{row['name']}.toml")
    out = [f"<h2>{_e(rubric.name)} v{_e(rubric.version)} "
           f'<span class="muted">({_e(rubric.sha256[:12])})</span></h2>']
    progress = queue_rows(store, rubric.sha256)
    if progress:
        out.append("<table><tr><th>annotator</th><th>queue</th><th>labeled</th><th>skipped</th>"
                   "<th>flagged</th><th>remaining</th></tr>")
        out += [f"<tr><td>{_e(r['annotator'] or '-')}</td><td>{_e(r['queue'])}</td>"
                f"<td>{r['labeled']}/{r['total']}</td><td>{r['skipped']}</td>"
                f"<td>{r['flagged']}</td><td>{r['remaining']}</td></tr>" for r in progress]
        out.append("</table>")
    try:
        report = build_report(store, rubric, ReportOptions(n_resamples=200))
    except JudgekitError as exc:  # several judges, no judgments yet: say why, no figures
        out.append(f"<p class=\"muted\">No report yet: {_e(str(exc).splitlines()[0])}</p>")
        report = None
    if report is not None:
        verdict = report.verdict
        lines = "".join(f"<li>{_e(line.text())}</li>"
                        for line in reason_lines(verdict, report.confidence_level))
        out.append(f'<p><b class="{verdict.decision.split()[0]}">{_e(verdict.decision)}</b> '
                   f'(judge vs people) · <a href="/report/{quote(rubric.sha256)}">the report'
                   f"</a></p><ul>{lines}</ul>")
        ceiling = report.ceiling
        if ceiling is not None and "krippendorff_alpha" in ceiling.stats:
            alpha = ceiling.stats["krippendorff_alpha"]
            out.append(f"<p>People vs people: Krippendorff's alpha {_e(_figure(alpha))} on "
                       f"{ceiling.n_items} items labeled by two or more annotators.</p>")
    items = review_items(store, rubric)
    if items:
        shown = "".join(
            f"<li>{_e(i.dataset)}/{_e(i.item_id)}: {_e(', '.join(i.reasons))}"
            + ("" if i.adjudicated is None else f" · adjudicated: {_e(i.adjudicated)}")
            + "</li>" for i in items[:MAX_LISTED])
        more = f"<p>and {len(items) - MAX_LISTED} more</p>" if len(items) > MAX_LISTED else ""
        out.append(f"<h3>To adjudicate ({len(items)})</h3><ul>{shown}</ul>{more}"
                   f"<p class=\"muted\">judgekit annotate --rubric {_e(rubric.sha256[:12])} "
                   "--annotator YOU --adjudicate</p>")
    return "".join(out)


def _figure(stat: Any) -> str:
    from judgekit.report._format import stat_text

    return str(stat_text(stat))


__all__ = ["router"]
