"""``judgekit report``: the calibration report and its verdict as an exit code.

Exit codes: 0 PASS, 1 FAIL, 3 INSUFFICIENT DATA (2 is a usage or input error),
so ``judgekit report ... || exit 1`` can gate a pipeline.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli._common import (
    RESAMPLES,
    SEED,
    FiniteFloat,
    db_option,
    echo,
    out_format,
    reference_option,
    report_inputs,
    resolve_db_path,
    rubric_option,
    write_out,
)
from judgekit.cli._criteria_report import criteria_of, criterion_runs
from judgekit.cli._progress import progress_bar
from judgekit.errors import InputError
from judgekit.progress import phase

if TYPE_CHECKING:  # imports numpy: not for --help
    from judgekit.report.model import Report

#: The report formats (``judgekit.report.FORMATS``, named here so ``--help`` imports no numpy).
FORMATS = ("text", "md", "html", "json")

#: Phases of a report as the progress bar counts them (build_report's nine, then rendering).
REPORT_STEPS = 10

#: Report format by ``--out`` suffix when ``--format`` is not given.


def format_for(out: str | None, fmt: str | None = None) -> str:
    """The format of a report: ``--format``, else the ``--out`` suffix, else text.

    A suffix naming another format than ``--format`` is an error (see
    :func:`~judgekit.cli._common.out_format`).
    """
    return out_format(out, fmt, formats=FORMATS, default="text")


def write_output(text: str, out: str | None, store: Path | None = None) -> None:
    """Print to stdout, or write the file (never the store itself) and say where."""
    if out is None:
        click.echo(text, nl=False)
        return
    path = write_out(out, text, store=store)
    echo(f"wrote {path}", err=True)


def read_family_map(path: str) -> dict[str, str]:
    """``--family-map FILE``: a JSON object of model name -> family (an input error otherwise)."""
    import json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"--family-map {path}: cannot read it ({exc.__class__.__name__})"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k.strip() and v.strip()
        for k, v in data.items()
    ):
        raise InputError(f"{path}: --family-map needs a JSON object of model name -> family "
                         "(non-empty strings)")
    return {k: v for k, v in data.items()}


def _asked_for(
    ctx: click.Context, max_self_preference: float, min_variance_ratio: float, max_ece: float
) -> dict[str, str]:
    """Probes whose gate option was given on the command line (and not to turn it off)."""
    from click.core import ParameterSource

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE,
                                                   ParameterSource.ENVIRONMENT)

    asked: dict[str, str] = {}
    if given("judge_family"):
        asked["self_preference"] = "--judge-family"
    if given("family_map"):
        asked["self_preference"] = "--family-map"
    if given("max_self_preference") and max_self_preference < 1:
        asked["self_preference"] = "--max-self-preference"
    if given("min_variance_ratio") and min_variance_ratio > 0:
        asked["scale_use"] = "--min-variance-ratio"
    if given("max_ece") and max_ece < 1:
        asked["confidence_calibration"] = "--max-ece"
    return asked


@click.command("report")
@rubric_option
@db_option
@click.option(
    "--judge-run",
    default=None,
    metavar="RUN_ID",
    help="Report the judge this run used (its model, endpoint, sampling, rubric and "
    "dataset): all its judgments, cached ones included. Default: the one judge with "
    "judgments from judge or import runs; several judges are an error. On a whole "
    "multi-criteria file, a run of one call for every criterion stands for each "
    "criterion's run of that call.",
)
@click.option(
    "--model",
    default=None,
    metavar="NAME",
    help="Report the judgments of this judge model (as requested) when several judges "
    "judged with the rubric.",
)
@click.option("--dataset", default=None, help="Only this dataset's items.")
@click.option(
    "--annotator",
    default=None,
    help="Use this annotator's labels as the human reference (default: majority).",
)
@reference_option
@click.option(
    "--criterion",
    default=None,
    metavar="NAME",
    help="One criterion of a multi-criteria rubric (as -r FILE#NAME). Without it, a "
    "multi-criteria rubric gets one report per criterion and a table across them.",
)
@click.option(
    "--group-by",
    default=None,
    metavar="FIELD",
    help="Per-group agreement: correlate within each group of items sharing FIELD (prompt, "
    "cluster, slice, meta.NAME) and average over groups; default: prompt.",
)
@click.option(
    "--system-by",
    default=None,
    metavar="FIELD",
    help="System-level agreement: the item field naming the candidate system (default: "
    "model; meta.NAME or a bare meta key).",
)
@click.option(
    "--include-unblinded",
    is_flag=True,
    help="Also use labels given with the judge's verdict shown (annotate --show-judge); "
    "by default the reference uses blind labels only and counts the others.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="text, Markdown, self-contained HTML, or JSON (see docs/report-schema.md). "
    "Default: from the --out suffix (.html/.htm, .md, .json), else text.",
)
@click.option(
    "--out",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the report to this file instead of stdout (never the store itself; "
    "a symlink is written through).",
)
@click.option(
    "--min-agreement",
    type=FiniteFloat(min=-1, max=1),
    default=0.6,
    show_default=True,
    help="PASS needs the lower CI bound of the primary statistic at or above this.",
)
@click.option(
    "--min-slice-agreement",
    type=FiniteFloat(min=-1, max=1),
    default=None,
    help="Also FAIL when any slice's whole interval lies below this.",
)
@click.option(
    "--half-width",
    type=FiniteFloat(),
    default=0.1,
    show_default=True,
    help="Interval half-width that counts as enough data (sizes the label advice).",
)
@click.option(
    "--primary",
    default=None,
    help="Primary statistic (default: cohen_kappa; weighted_kappa for ordinal).",
)
@click.option(
    "--cluster-by",
    default=None,
    metavar="FIELD",
    help="Resample clusters of items sharing FIELD (cluster, prompt, slice, meta.NAME); "
    "default: 'cluster' when items have one, else 'prompt' when items share one; "
    "'item' turns clustering off.",
)
@click.option(
    "--queue",
    default=None,
    help="Labeling queue whose inclusion probabilities weight population estimates "
    "(default: the rubric's latest non-uniform queue).",
)
@click.option(
    "--confidence",
    type=FiniteFloat(),
    default=0.95,
    show_default=True,
    help="Confidence level of every interval.",
)
@click.option(
    "--resamples",
    type=RESAMPLES,
    default=1000,
    show_default=True,
    help="Bootstrap resamples per interval.",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--max-position-conflict",
    type=click.FloatRange(0.0, 1.0),
    default=0.3,
    show_default=True,
    help="FAIL when the position probe's conflict rate (verdict changes when the responses "
    "swap places) has its lower bound above this; 1 turns the gate off.",
)
@click.option(
    "--max-injection-flip",
    type=click.FloatRange(0.0, 1.0),
    default=0.1,
    show_default=True,
    help="FAIL when the injection probe's worst net move (verdicts moved toward what text in "
    "the response asked for, minus those moved away) has its lower bound above this; 1 turns "
    "the gate off.",
)
@click.option(
    "--max-identical-decisive",
    type=click.FloatRange(0.0, 1.0),
    default=0.5,
    show_default=True,
    help="FAIL when the identical-pairs probe's share of decisive verdicts (or, for a rubric "
    "without a tie, its slot imbalance |2P(A)-1|) has its lower bound above this; 1 turns "
    "the gate off.",
)
@click.option(
    "--max-self-preference",
    type=click.FloatRange(0.0, 1.0),
    default=0.1,
    show_default=True,
    help="FAIL when self-preference (the judge's win rate for its own model family minus "
    "people's, on the same items; needs model fields on the items) has its lower bound above "
    "this; 1 turns the gate off.",
)
@click.option(
    "--judge-family",
    default=None,
    metavar="NAME",
    help="The judge's model family for self-preference (gpt, claude, llama, qwen, ...; "
    "default: from the judge's model name, see docs/probes.md).",
)
@click.option(
    "--family-map",
    default=None,
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="JSON object of model name -> family for self-preference, overriding the name "
    "rule for the judge and the responses (e.g. {\"gpt2\": \"gpt2\"} keeps GPT-2 out of "
    "gpt).",
)
@click.option(
    "--min-variance-ratio",
    type=click.FloatRange(0.0),
    default=0.5,
    show_default=True,
    help="FAIL when the variance of the judge's scores over people's (ordinal scales) has "
    "its upper bound below this; 0 turns the gate off.",
)
@click.option(
    "--max-ece",
    type=click.FloatRange(0.0, 1.0),
    default=0.15,
    show_default=True,
    help="FAIL when the expected calibration error of the judge's confidence (from logprobs) "
    "has its lower bound above this; 1 turns the gate off.",
)
@click.option(
    "--epsilon",
    type=click.FloatRange(0.0, 1.0, max_open=True),
    default=0.2,
    show_default=True,
    help="Alternative annotator test cost-benefit margin in the human-parity section (0.2 "
    "experts, 0.15 skilled, 0.1 crowd workers), as `agree --epsilon`.",
)
@click.pass_context
def command(
    ctx: click.Context,
    rubric: str,
    db: str,
    judge_run: str | None,
    model: str | None,
    dataset: str | None,
    annotator: str | None,
    reference: str | None,
    criterion: str | None,
    group_by: str | None,
    system_by: str | None,
    include_unblinded: bool,
    fmt: str | None,
    out: str | None,
    min_agreement: float,
    min_slice_agreement: float | None,
    half_width: float,
    primary: str | None,
    cluster_by: str | None,
    queue: str | None,
    confidence: float,
    resamples: int,
    seed: int,
    max_position_conflict: float,
    max_injection_flip: float,
    max_identical_decisive: float,
    max_self_preference: float,
    judge_family: str | None,
    family_map: str | None,
    min_variance_ratio: float,
    max_ece: float,
    epsilon: float,
) -> None:
    """Calibration report: does the judge agree with humans well enough to trust?

    Exits 0 on PASS, 1 on FAIL, 3 on INSUFFICIENT DATA. Bias gates (position
    conflict, self-preference, variance ratio, calibration error) can turn a PASS
    into a FAIL; giving one of their options asks for that probe, so a probe that
    cannot be computed (no model fields, no confidences, not an ordinal scale) is
    then an error rather than a line in the report.
    """
    if not 0.0 < half_width < 1.0:
        raise InputError(f"--half-width must be between 0 and 1, got {half_width}")
    if judge_family is not None and not judge_family.strip():
        raise InputError("--judge-family must not be blank")
    if criterion is not None:
        rubric = f"{rubric}#{criterion}"
    fields: dict[str, Any] = dict(
        dataset=dataset,
        judge_run=judge_run,
        model=model,
        annotator=annotator,
        reference=reference,
        group_by=group_by,
        system_by=system_by,
        include_unblinded=include_unblinded,
        cluster_by=cluster_by,
        queue=queue,
        primary=primary,
        min_agreement=min_agreement,
        min_slice_agreement=min_slice_agreement,
        half_width=half_width,
        confidence_level=confidence,
        n_resamples=resamples,
        random_state=seed,
        max_position_conflict=max_position_conflict,
        max_injection_flip=max_injection_flip,
        max_identical_decisive=max_identical_decisive,
        judge_family=judge_family,
        family_map=None if family_map is None else read_family_map(family_map),
        max_self_preference=max_self_preference,
        min_variance_ratio=min_variance_ratio,
        max_ece=max_ece,
        epsilon=epsilon,
        required=_asked_for(ctx, max_self_preference, min_variance_ratio, max_ece),
    )
    criteria = criteria_of(rubric)
    if criteria:  # one report per criterion, then the table across them
        from judgekit.report.criteria_summary import overall_exit_code, render_summary

        runs = {} if judge_run is None else criterion_runs(db, rubric, criteria, judge_run)
        reports = [_one_report(f"{rubric}#{name}", db, None, out,
                               {**fields, "judge_run": runs.get(name, judge_run)})[0]
                   for name in criteria]
        text = render_summary(criteria, reports, format_for(out, fmt))
        write_output(text, out, resolve_db_path(db))
        ctx.exit(overall_exit_code(reports))
    report, text = _one_report(rubric, db, format_for(out, fmt), out, fields)
    write_output(text, out, resolve_db_path(db))
    if out is not None:
        from judgekit.report._wrap import terminal_width, wrap_text
        from judgekit.report.verdict_lines import reason_lines

        # the decision, then one line per reason, fitted to the terminal's width
        lines: list[str] = [report.verdict.decision]
        lines += [f"  {line.text()}"
                  for line in reason_lines(report.verdict, report.confidence_level)]
        echo(wrap_text("\n".join(lines), terminal_width(sys.stderr)), err=True)
    ctx.exit(report.verdict.exit_code)


def _one_report(
    rubric: str, db: str, fmt: str | None, out: str | None, fields: dict[str, Any]
) -> tuple[Report, str]:
    """The report on one rubric (a criterion's, for a multi-criteria file) and, given a
    format, its rendering."""
    from judgekit.report import build_report, render
    from judgekit.report._wrap import terminal_width
    from judgekit.report.render_text import render_text

    with report_inputs(db, rubric, out=out, **fields) as (store, rub, options), \
            progress_bar("report", REPORT_STEPS):
        report = build_report(store, rub, options)
        phase("rendering")
        if fmt is None:
            return report, ""
        # the text report fits the terminal it is shown in (80 columns in a file or pipe)
        text = (render_text(report, terminal_width() if out is None else 80)
                if fmt == "text" else render(report, fmt))
    return report, text
