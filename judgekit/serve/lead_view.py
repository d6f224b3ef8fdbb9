"""The HTML of ``/lead``: progress, agreement so far, the report, items to adjudicate.

Everything comes from the machinery the CLI uses: progress from
:func:`judgekit.serve.progress.queue_rows` (``judgekit queues``), agreement from
:func:`judgekit.report.build_report` (``judgekit report``, with fewer resamples so
the page answers in about a second: :data:`LEAD_RESAMPLES`), the items from
:func:`judgekit.review.review_items` (``labels disagreements``). What a role sees
follows what it may do over the API: progress, figures and the report need
``read``; the items to adjudicate need ``read`` or ``adjudicate``. Every string
from the store is escaped.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from fastapi import HTTPException

from judgekit.errors import JudgekitError
from judgekit.report.model import Report, Stat
from judgekit.serve.report_builds import ReportBuilds
from judgekit.store import Store
from judgekit.store.access import TokenRecord
from judgekit.types import Rubric

#: Bootstrap resamples behind the page's intervals (the report's default is 1000): the
#: page is a progress view, rebuilt on every visit; ``/report/RUBRIC`` has the full ones.
LEAD_RESAMPLES = 200
#: Items to adjudicate listed on the page (the rest are counted).
SHOWN_ITEMS = 100

_STYLE = """body { font-family: sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border-bottom: 1px solid #ccc; padding: .2em .6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { background: #f3f3f3; padding: 0 .2em; }"""


def esc(value: object) -> str:
    return html.escape(str(value))


def lead_html(store: Store, token: TokenRecord, rubrics: Sequence[Mapping[str, Any]],
              chosen: Rubric | None, builds: ReportBuilds | None = None) -> str:
    """The whole page for ``token`` (rubric list, then the chosen rubric's sections).

    With ``builds`` (the server's) the report is built on its bounded pool, like every
    other report of the server; a refusal there leaves the rest of the page standing.
    """
    parts = [f"<h1>judgekit</h1><p>Logged in as <b>{esc(token.name)}</b> "
             f"(role <code>{esc(token.role)}</code>).</p>", _rubric_list(rubrics, chosen)]
    if chosen is not None:
        parts.append(f"<h2>{esc(chosen.name)} {esc(chosen.version)} "
                     f"<small><code>{esc(chosen.sha256[:12])}</code></small></h2>")
        if token.may("read"):
            parts += [_progress(store, chosen), _agreement(store, chosen, builds)]
        parts.append(_to_adjudicate(store, chosen, token))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>judgekit: lead"
            f"</title><style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


def _rubric_list(rubrics: Sequence[Mapping[str, Any]], chosen: Rubric | None) -> str:
    if not rubrics:
        return "<p>The store has no rubric yet (judgekit judge or judgekit import).</p>"
    links = "".join(
        f'<li><a href="/lead?rubric={quote(r["sha256"])}">{esc(r["name"])} '
        f'{esc(r["version"])}</a> <code>{esc(r["sha256"][:12])}</code>'
        + (" (shown below)" if chosen is not None and chosen.sha256 == r["sha256"] else "")
        + "</li>" for r in rubrics)
    pick = "" if chosen is not None else "<p>Pick a rubric.</p>"
    return f"<h2>Rubrics</h2><ul>{links}</ul>{pick}"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]],
           numeric: frozenset[int] = frozenset()) -> str:
    cells = "".join(
        "<tr>" + "".join(f'<td class="n">{esc(v)}</td>' if i in numeric else f"<td>{esc(v)}</td>"
                         for i, v in enumerate(row)) + "</tr>" for row in rows)
    return ("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + f"</tr>{cells}"
            "</table>")


def _progress(store: Store, rubric: Rubric) -> str:
    """Per annotator: each queue's done (labeled + skipped), remaining, and totals.

    A queue of a whole multi-criteria file (listed under each criterion) counts an item
    done when every criterion has a row, and says what each criterion has left.
    """
    from judgekit.serve.progress import criteria_left, queue_rows

    rows = [r for r in queue_rows(store, rubric.sha256) if r["annotator"] is not None]
    if not rows:
        return ("<h3>Progress</h3><p>No labeling queue yet: <code>judgekit queue assign "
                f"--rubric {esc(shlex.quote(rubric.name))} --annotators A,B</code>.</p>")
    whole = any(r["criteria"] for r in rows)
    table = _table(
        ("annotator", "queue", "labeled", "skipped", "flagged", "done", "remaining", "total",
         "open sessions", *(["left per criterion"] if whole else [])),
        [(r["annotator"], r["queue"], r["labeled"], r["skipped"], r["flagged"],
          r["labeled"] + r["skipped"], r["remaining"], r["total"], r["sessions"],
          *([criteria_left(r) or "-"] if whole else []))
         for r in sorted(rows, key=lambda r: (str(r["annotator"]), str(r["queue"])))],
        frozenset(range(2, 9)))
    done = sum(r["labeled"] + r["skipped"] for r in rows)
    total = sum(r["total"] for r in rows)
    return (f"<h3>Progress</h3><p>{done} of {total} queue entries done "
            f"({total - done} remaining).</p>{table}")


def _agreement(store: Store, rubric: Rubric, builds: ReportBuilds | None) -> str:
    """Judge vs people and people vs people, the decision so far, and the report's link."""
    from judgekit.report import ReportOptions, build_report

    link = (f'<p><a href="/report/{quote(rubric.sha256)}">The full HTML report</a> '
            f"({ReportOptions().n_resamples} resamples; this page uses {LEAD_RESAMPLES}).</p>")
    options = ReportOptions(n_resamples=LEAD_RESAMPLES)
    try:
        report = (build_report(store, rubric, options) if builds is None
                  else builds.run(lambda own: build_report(own, rubric, options)))
    except JudgekitError as exc:
        return (f"<h3>Agreement so far</h3><p>No report yet: {esc(str(exc).splitlines()[0])}"
                f"</p>{link}")
    except HTTPException as exc:  # the server's report builds are busy or too slow
        return f"<h3>Agreement so far</h3><p>Not shown now: {esc(exc.detail)}</p>{link}"
    return f"<h3>Agreement so far</h3>{_figures(report)}{link}"


def _figures(report: Report) -> str:
    from judgekit.report._format import label_of, stat_text
    from judgekit.report.verdict_lines import reason_lines

    verdict = report.verdict
    reasons = "".join(f"<li>{esc(line.text())}</li>"
                      for line in reason_lines(verdict, report.confidence_level))
    out = [f"<p>Decision so far (judge vs people): <b>{esc(verdict.decision)}</b></p>"
           f"<ul>{reasons}</ul><p>{esc(verdict.reason)}</p>"]

    def rows(stats: Mapping[str, Stat], primary: str | None = None) -> list[tuple[str, str]]:
        return [(label_of(k) + (" (primary)" if k == primary else ""), stat_text(s))
                for k, s in stats.items()]

    agreement = report.agreement
    if agreement is None:
        out.append("<p>Judge vs people: no item has both a judge verdict and a human label "
                   "yet.</p>")
    else:
        out.append(f"<h4>Judge vs people ({agreement.n_items} items, reference: "
                   f"{esc(agreement.reference)})</h4>"
                   + _table(("measure", "value [interval] n"),
                            rows(agreement.stats, agreement.primary)))
    ceiling = report.ceiling
    if ceiling is None:
        out.append("<p>People vs people: no item has labels from two annotators yet "
                   "(queue assign --overlap shares items).</p>")
    else:
        reason = f"<p>{esc(ceiling.reason)}</p>" if ceiling.reason else ""
        out.append(f"<h4>People vs people ({ceiling.n_items} items, {ceiling.n_annotators} "
                   f"annotators)</h4>{reason}"
                   + _table(("measure", "value [interval] n"), rows(ceiling.stats)))
    return "".join(out)


def _to_adjudicate(store: Store, rubric: Rubric, token: TokenRecord) -> str:
    """The items whose annotators disagree or that were flagged, and how to settle them."""
    from judgekit.review import review_items

    items = review_items(store, rubric)
    pending = sum(item.adjudicated is None for item in items)
    if not items:
        return "<h3>To adjudicate</h3><p>No item has disagreeing annotators or a flag.</p>"
    head = (f"<h3>To adjudicate</h3><p>{len(items)} item(s) to review, {pending} not yet "
            "adjudicated.</p>")
    command = (f"<code>judgekit annotate --rubric {esc(shlex.quote(rubric.name))} "
               "--adjudicate --annotator NAME</code>")
    if token.may("adjudicate"):
        how = (f'<p><a href="/adjudicate?rubric={quote(rubric.sha256)}">Adjudicate in the '
               f"browser</a> (as <code>{esc(token.name)}</code>; every label you give becomes "
               f"the item's reference), or in a terminal: {command}.</p>")
    else:
        how = ("<p>A token that may adjudicate (role <code>adjudicate</code> or "
               f"<code>admin</code>) settles them here, or in a terminal: {command}.</p>")
    rows = [(f"{item.dataset}/{item.item_id}", ", ".join(item.reasons),
             "; ".join(f"{o.annotator}: {o.label if o.label is not None else '(no label)'}"
                       + (" (flagged)" if o.flagged else "") for o in item.opinions),
             item.adjudicated if item.adjudicated is not None else "-")
            for item in items[:SHOWN_ITEMS]]
    more = (f"<p>... and {len(items) - SHOWN_ITEMS} more (judgekit labels disagreements).</p>"
            if len(items) > SHOWN_ITEMS else "")
    return head + how + _table(("item", "why", "what annotators said", "adjudicated"),
                               rows) + more


__all__ = ["LEAD_RESAMPLES", "lead_html"]
