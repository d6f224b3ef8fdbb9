"""``judgekit plan``: how many human labels a confidence interval of a given width needs.

Uses the large-sample formulas in :mod:`judgekit.stats.planning`: for a binary
kappa the Fleiss-Cohen-Everitt SE the report's analysis uses (on the 2x2 table
with the given agreement and prevalence), Cohen's approximate SE for more
categories, the binomial SE for proportions. Treat it as a floor and plan more
per slice.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import click

from judgekit.cli._common import F, db_option, echo, text_or_json_option
from judgekit.errors import InputError


def chance_agreement(prevalence: float, n_categories: int = 2) -> float:
    """p_e when both raters share the marginal ``prevalence`` of the first category.

    Binary: p^2 + (1 - p)^2; with more categories the rest is spread evenly.
    """
    if not 0.0 < prevalence < 1.0:
        raise InputError(f"--prevalence must be between 0 and 1, got {prevalence}")
    rest = (1.0 - prevalence) / (n_categories - 1)
    return prevalence**2 + (n_categories - 1) * rest**2


def plan(
    statistic: str,
    half_width: float,
    *,
    expected: float | None,
    prevalence: float,
    n_categories: int,
    p_observed: float | None,
    p_expected: float | None,
    confidence_level: float,
    current: int,
) -> dict[str, Any]:
    """The plan as a dict (what ``--format json`` prints)."""
    from judgekit import stats

    out: dict[str, Any] = {
        "statistic": statistic,
        "half_width": half_width,
        "confidence_level": confidence_level,
    }
    try:
        if statistic == "kappa":
            pe = (
                p_expected
                if p_expected is not None
                else (
                    None
                    if p_observed is not None and expected is not None
                    else chance_agreement(prevalence, n_categories)
                )
            )
            kappa = expected if expected is not None or p_observed is not None else 0.7
            binary = n_categories == 2
            n = stats.kappa_sample_size(
                half_width=half_width,
                expected_kappa=kappa,
                p_observed=p_observed,
                p_expected=pe,
                confidence_level=confidence_level,
                se="analysis" if binary else "cohen-1960",
            )
            if pe is None:
                assert kappa is not None and p_observed is not None
                pe = (p_observed - kappa) / (1 - kappa)
            po = p_observed if p_observed is not None else (kappa or 0.0) * (1 - pe) + pe
            kappa = (po - pe) / (1 - pe)
            out.update(
                expected_kappa=round(kappa, 6),
                p_observed=round(po, 6),
                p_expected=round(pe, 6),
                formula=(
                    "n = z^2 v / d^2, v = n Var(kappa) by Fleiss-Cohen-Everitt (1969) on the "
                    "2x2 table with p_o, p_e and equal margins"
                    if binary and pe >= 0.5
                    else "n = z^2 p_o (1 - p_o) / (d^2 (1 - p_e)^2)"
                ),
            )
        else:
            p = expected if expected is not None else 0.5
            n = stats.proportion_sample_size(
                half_width=half_width, p=p, confidence_level=confidence_level
            )
            out.update(expected_proportion=p, formula="n = z^2 p (1 - p) / d^2")
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    out["labels_needed"] = n
    out["current"] = current
    out["more_needed"] = max(0, n - current)
    return out


@dataclass(frozen=True)
class PpiSource:
    """Where ``--estimate ppi`` takes the moments from: the store (``--rubric``) or the flags.

    Its fields are the parameters :func:`ppi_options` adds, so the command takes
    them as ``**ppi`` and passes them on whole.
    """

    rubric: str | None
    db: str
    dataset: str | None
    judge_run: str | None
    model: str | None
    correlation: float | None
    variance: float | None
    judged: float


def ppi_options(func: F) -> F:
    """The options of :class:`PpiSource`: ``--rubric``, ``--db``, ... ``--judged``."""
    options = [
        click.option(
            "--rubric",
            "-r",
            default=None,
            metavar="NAME_OR_PATH",
            help="With --estimate: measure the variance, judge-human correlation and judged "
            "items in the store.",
        ),
        db_option,
        click.option("--dataset", default=None,
                     help="With --estimate --rubric: only this dataset."),
        click.option(
            "--judge-run", default=None, metavar="RUN_ID", help="With --rubric: this run's judge."
        ),
        click.option("--model", default=None, metavar="NAME",
                     help="With --rubric: this judge model."),
        click.option(
            "--correlation",
            type=float,
            default=None,
            help="With --estimate, without --rubric: judge-human correlation of the outcome.",
        ),
        click.option(
            "--variance",
            type=float,
            default=None,
            help="With --estimate, without --rubric: variance of the human outcome "
            "(default p(1-p) from --expected).",
        ),
        click.option(
            "--judged",
            type=float,
            default=math.inf,
            help="With --estimate, without --rubric: judged items N (default: unlimited).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _plan_ppi(
    half_width: float, expected: float | None, confidence: float, current: int, fmt: str,
    source: PpiSource,
) -> None:
    """``--estimate ppi``: from the store (``--rubric``) or from the given moments."""
    from judgekit.cli import _plan_estimate as pe

    correlation, variance, judged = source.correlation, source.variance, source.judged
    if source.rubric is not None:
        found = pe.moments_from_store(source.db, source.rubric, source.dataset,
                                      source.judge_run, source.model)
        variance, correlation, judged = found["variance"], found["correlation"], found["judged"]
        current = current or found["current"]
    else:
        if correlation is None:
            raise InputError("--estimate ppi needs --rubric (measure the judge) or --correlation")
        if variance is None:
            p = 0.5 if expected is None else expected
            variance = p * (1.0 - p)
    assert variance is not None and correlation is not None
    result = pe.plan_estimate(
        half_width,
        variance=variance,
        correlation=correlation,
        judged=judged,
        confidence_level=confidence,
        current=current,
    )
    echo(json.dumps(result, indent=2) if fmt == "json" else pe.plan_text(result))


@click.command("plan")
@click.option(
    "--statistic",
    type=click.Choice(["kappa", "proportion"]),
    default="kappa",
    show_default=True,
    help="Plan for Cohen's kappa or for a proportion (e.g. percent agreement).",
)
@click.option(
    "--half-width",
    type=float,
    default=0.1,
    show_default=True,
    help="Wanted half-width d of the interval (e.g. 0.1 for +/-0.10).",
)
@click.option(
    "--expected",
    type=float,
    default=None,
    help="Expected kappa (default 0.7) or proportion (default 0.5, the worst case).",
)
@click.option(
    "--prevalence",
    type=float,
    default=0.5,
    show_default=True,
    help="Share of the first category (sets chance agreement p_e for kappa).",
)
@click.option(
    "--categories",
    "n_categories",
    type=int,
    default=2,
    show_default=True,
    help="Categories on the scale; the share left by --prevalence is spread evenly.",
)
@click.option(
    "--observed-agreement",
    "p_observed",
    type=float,
    default=None,
    help="p_o instead of --expected (kappa).",
)
@click.option(
    "--chance-agreement",
    "p_expected",
    type=float,
    default=None,
    help="p_e instead of --prevalence (kappa).",
)
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option(
    "--current",
    type=int,
    default=0,
    show_default=True,
    help="Labels you already have (prints how many more are needed).",
)
@click.option(
    "--estimate",
    type=click.Choice(["ppi"]),
    default=None,
    help="Plan a PPI++ estimate (docs/estimate.md) instead of an agreement statistic: "
    "labels for +/- HALF-WIDTH, against labels only.",
)
@click.option("--test-gain", type=float, default=None, metavar="DELTA",
              help="Plan align's test split instead: labels to show this gain in agreement "
                   "(with --baseline-agreement, --power) by McNemar's test (docs/align.md).")
@click.option("--baseline-agreement", type=float, default=0.7, show_default=True,
              help="The baseline judge's agreement with people (with --test-gain).")
@click.option("--power", type=float, default=0.8, show_default=True,
              help="Power to detect --test-gain.")
@ppi_options
@text_or_json_option
def command(
    statistic: str,
    half_width: float,
    expected: float | None,
    prevalence: float,
    n_categories: int,
    p_observed: float | None,
    p_expected: float | None,
    confidence: float,
    current: int,
    estimate: str | None,
    fmt: str,
    test_gain: float | None,
    baseline_agreement: float,
    power: float,
    **ppi: Any,
) -> None:
    """How many labels for a confidence interval of +/- HALF-WIDTH.

    Example: --statistic kappa --half-width 0.1 --expected 0.7 --prevalence 0.5
    gives 196 (p_o 0.85, p_e 0.5).
    """
    if test_gain is not None:
        from judgekit.align.power import labels_for_gain

        test_plan = labels_for_gain(baseline_agreement, test_gain, power=power,
                                       confidence_level=confidence)
        click.echo(json.dumps(test_plan.to_dict(), indent=2) if fmt == "json"
                   else test_plan.sentence() + ".")
        return
    if estimate is not None:
        _plan_ppi(half_width, expected, confidence, current, fmt, PpiSource(**ppi))
        return
    if n_categories < 2:
        raise InputError("--categories must be at least 2")
    result = plan(
        statistic,
        half_width,
        expected=expected,
        prevalence=prevalence,
        n_categories=n_categories,
        p_observed=p_observed,
        p_expected=p_expected,
        confidence_level=confidence,
        current=current,
    )
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    if statistic == "kappa":
        what = (
            f"kappa {result['expected_kappa']:.3f} (p_o {result['p_observed']:.3f}, "
            f"p_e {result['p_expected']:.3f})"
        )
    else:
        what = f"proportion {result['expected_proportion']:g}"
    click.echo(
        f"{result['labels_needed']} labels for a {confidence:.0%} interval of "
        f"+/-{half_width:g} around {what}; {result['formula']}."
    )
    if current:
        click.echo(f"You have {current}; {result['more_needed']} more needed.")
