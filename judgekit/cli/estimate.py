"""``judgekit estimate``: the humans' rate on every judged item, corrected for the judge's errors.

Reads the report's selection (one judge, the report's human reference per item)
and prints, per target, the judge-only figure (the judge's own rate), the
labels-only estimate, PPI++ and, for binary scales, Rogan-Gladen; see
docs/estimate.md. ``--compare A B`` estimates two candidates judged on the same
prompts and their difference. Read-only: a missing store is an error, never created.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli._common import db_option, reference_option, report_inputs, rubric_option
from judgekit.cli._progress import progress_bar
from judgekit.cli.report import FORMATS, REPORT_STEPS, format_for, write_output
from judgekit.errors import InputError
from judgekit.progress import phase
from judgekit.textsafe import json_safe, markdown_text, terminal_safe
from judgekit.types import Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.report import ReportOptions
    from judgekit.report.estimate_section import EstimateComparison, EstimateSection
    from judgekit.report.model import Report
    from judgekit.store import Store


def _section(
    store: Store, rubric: Rubric, options: ReportOptions
) -> tuple[Report, EstimateSection]:
    from judgekit.report import build_report

    report = build_report(store, rubric, options)
    section = report.estimate
    assert section is not None
    if section.targets and section.n_judged == 0:
        where = f" on dataset {options.dataset!r}" if options.dataset else ""
        raise InputError(
            f"no usable judgments for rubric {rubric.name!r}{where}: run `judgekit judge` first"
        )
    return report, section


def _title(report: Report) -> str:
    prov = report.provenance
    models = ", ".join(prov.judge_models_requested) or "no judge"
    datasets = ", ".join(prov.datasets) or "no dataset"
    return f"rubric {prov.rubric_name} v{prov.rubric_version}; dataset {datasets}; judge {models}"


def render_section(report: Report, section: EstimateSection, fmt: str, level: float) -> str:
    """The estimate alone as a document in ``fmt``."""
    from judgekit.report.render_estimate import (
        estimate_html,
        estimate_markdown_lines,
        estimate_text_lines,
    )

    title = _title(report)
    if fmt == "json":
        data: dict[str, Any] = {
            "rubric": report.provenance.rubric_name,
            "rubric_sha256": report.provenance.rubric_sha256,
            "datasets": list(report.provenance.datasets),
            "judge_models": list(report.provenance.judge_models_requested),
            "confidence_level": level,
            **section.to_dict(),
        }
        return json_safe(json.dumps(data, indent=2)) + "\n"
    if fmt == "md":
        lines = ["# judgekit estimate", "", markdown_text(title), ""]
        lines += estimate_markdown_lines(section, level)
        return "\n".join(lines) + "\n"
    if fmt == "html":
        return (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            "<title>judgekit estimate</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #e2e8f0;padding:3px 8px}"
            ".num{text-align:right}.muted{color:#718096}</style></head><body>"
            f"<h1>judgekit estimate</h1><p>{escape(title)}</p>"
            + estimate_html(section, level)
            + "</body></html>\n"
        )
    lines = ["judgekit estimate", "=" * 17, terminal_safe(title), ""]
    lines += estimate_text_lines(section, level)
    return "\n".join(lines) + "\n"


def render_comparison(comparison: EstimateComparison, fmt: str, level: float) -> str:
    """The two candidates and their difference as a document in ``fmt``."""
    from judgekit.report._format import stat_text

    a, b = comparison.datasets
    if fmt == "json":
        dumped = json.dumps({"confidence_level": level, **comparison.to_dict()}, indent=2)
        return json_safe(dumped) + "\n"
    rows = [
        (f"PPI++ {a}", comparison.first),
        (f"PPI++ {b}", comparison.second),
        (f"difference {a} - {b}", comparison.difference),
    ]
    head = f"{comparison.target}: {a} vs {b} ({level:.0%} intervals, clustered by prompt)"
    if fmt == "text":
        head = terminal_safe(head, one_line=True)
        rows = [(terminal_safe(name, one_line=True), stat) for name, stat in rows]
    if fmt == "md":
        body = [f"| {markdown_text(name)} | {stat_text(stat)} |" for name, stat in rows]
        head = markdown_text(head)
        return (
            "\n".join(["# judgekit estimate --compare", "", head, "", "| | |", "|---|---|", *body])
            + "\n"
        )
    if fmt == "html":
        cells = "".join(
            f"<tr><td>{name}</td><td>{stat_text(stat)}</td></tr>" for name, stat in rows
        )
        return (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            "<title>judgekit estimate</title></head><body><h1>judgekit estimate</h1>"
            f"<p>{escape(head)}</p>"
            f"<table>{cells}</table></body></html>\n"
        )
    width = max(len(name) for name, _ in rows) + 2
    return "\n".join([head, *(f"  {name:<{width}}{stat_text(stat)}" for name, stat in rows)]) + "\n"


def _compare(
    store: Store, rubric: Rubric, datasets: tuple[str, str], options: ReportOptions
) -> EstimateComparison:
    """Both datasets' estimates, read from one state of the store."""
    from judgekit.store.exports import snapshot

    with snapshot(store):
        return _compare_in(store, rubric, datasets, options)


def _compare_in(
    store: Store, rubric: Rubric, datasets: tuple[str, str], options: ReportOptions
) -> EstimateComparison:
    from judgekit.report import ReportOptions
    from judgekit.report.estimate_section import compare_sections

    if options.judge_run is not None:
        selection = store.run_judge_selection(options.judge_run, rubric_hash=rubric.sha256)
        options = ReportOptions(**{**options.__dict__, "judge_run": None, "model": selection.model})
    reports = []
    for name in datasets:
        if name not in store.datasets():
            raise InputError(f"no dataset {name!r} in {store.path}")
        report, section = _section(
            store, rubric, ReportOptions(**{**options.__dict__, "dataset": name})
        )
        reports.append((report, section))
    (ra, sa), (rb, sb) = reports
    judge_a = (ra.provenance.judge_models_requested, ra.provenance.endpoints)
    judge_b = (rb.provenance.judge_models_requested, rb.provenance.endpoints)
    if judge_a != judge_b:
        raise InputError(
            f"{datasets[0]!r} and {datasets[1]!r} were judged by different judges "
            f"({', '.join(judge_a[0])} vs {', '.join(judge_b[0])}); name one with --model"
        )
    if not sa.targets:
        raise InputError(sa.reason or "no target to compare")
    return compare_sections(sa, sb, datasets, options.confidence_level)


@click.command("estimate")
@rubric_option
@db_option
@click.option("--dataset", default=None, help="Only this dataset's items.")
@click.option(
    "--judge-run",
    default=None,
    metavar="RUN_ID",
    help="Use the judge this run used (as `judgekit report --judge-run`).",
)
@click.option("--model", default=None, metavar="NAME", help="Use this judge model's judgments.")
@click.option("--annotator", default=None, help="This annotator's labels as the human reference.")
@reference_option
@click.option(
    "--include-unblinded",
    is_flag=True,
    help="Also use labels given with the judge's verdict shown (as `judgekit report`); "
    "by default the human reference uses blind labels only.",
)
@click.option(
    "--by",
    type=click.Choice(["slice"]),
    default=None,
    help="Also estimate per slice (stratified PPI++) and the overall weighted by slice size.",
)
@click.option(
    "--compare",
    nargs=2,
    default=None,
    metavar="DATASET_A DATASET_B",
    help="Two candidates judged by one judge on the same prompts (same item ids): "
    "PPI++ of each and of their difference.",
)
@click.option(
    "--cluster-by",
    default=None,
    metavar="FIELD",
    help="Cluster-robust variance over items sharing FIELD (cluster, prompt, slice, "
    "meta.NAME; 'item' for none). Default (as `judgekit report`): 'cluster' when items have "
    "one, else 'prompt' when labeled items share a prompt, else none.",
)
@click.option(
    "--queue",
    default=None,
    help="Labeling queue whose inclusion probabilities weight the labels "
    "(default: the rubric's latest non-uniform queue).",
)
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="text, md, html or json. Default: from the --out suffix, else text.",
)
@click.option("--out", default=None, type=click.Path(dir_okay=False), help="Write to this file.")
def command(
    rubric: str,
    db: str,
    dataset: str | None,
    judge_run: str | None,
    model: str | None,
    annotator: str | None,
    reference: str | None,
    include_unblinded: bool,
    by: str | None,
    compare: tuple[str, str] | None,
    cluster_by: str | None,
    queue: str | None,
    confidence: float,
    fmt: str | None,
    out: str | None,
) -> None:
    """Estimate the humans' rate on every judged item: judge only, labels only, PPI++.

    Binary scales: pass rate (plus Rogan-Gladen); ordinal: mean score and the
    share at or above each level; pairwise: win rate of A over B, ties as half.
    """
    if not 0.0 < confidence < 1.0:
        raise InputError(f"--confidence must be between 0 and 1, got {confidence}")
    if compare and dataset:
        raise InputError("--compare names both datasets; drop --dataset")
    fmt = format_for(out, fmt)
    with report_inputs(
        db, rubric, check_dataset=True,
        dataset=dataset,
        judge_run=judge_run,
        model=model,
        annotator=annotator,
        reference=reference,
        include_unblinded=include_unblinded,
        cluster_by=cluster_by,
        queue=queue,
        confidence_level=confidence,
        n_resamples=200,
        estimate_by=by,
    ) as (store, rub, options), progress_bar(
        "estimate", 2 * REPORT_STEPS - 1 if compare else REPORT_STEPS
    ):
        if compare:
            comparison = _compare(store, rub, compare, options)
            phase("rendering")
            text = render_comparison(comparison, fmt, confidence)
        else:
            report, section = _section(store, rub, options)
            phase("rendering")
            text = render_section(report, section, fmt, confidence)
    write_output(text, out, store.path)
