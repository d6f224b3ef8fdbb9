"""``judgekit probe position|length|consistency``: measure a judge's biases.

Each subcommand takes the data and endpoint options of ``judgekit judge``,
runs its variants through the same cached runner, stores the summary for
``judgekit report`` and prints every figure with its n and 95% interval.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

import click

from judgekit.cli._common import db_option, rubric_option
from judgekit.cli.judge import (
    BASE_URL_ENV,
    LOCAL_CONCURRENCY,
    MODEL_ENV,
    REMOTE_CONCURRENCY,
    judge_endpoint,
    load_dataset,
    resolve_api_key,
)
from judgekit.clients import DEFAULT_API_KEY_ENV, JudgeSpec
from judgekit.errors import InputError
from judgekit.local import LOCAL_MODEL
from judgekit.probes import (
    DEFAULT_FILLER,
    DEFAULT_LEVELS,
    ProbeOutcome,
    load_filler,
    run_consistency_probe,
    run_length_probe,
    run_position_probe,
)
from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store
from judgekit.types import Item, Rubric, SamplingParams

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS: list[Callable[[Any], Any]] = [
    rubric_option,
    click.option("--data", type=click.Path(dir_okay=False, path_type=Path),
                 help="JSONL or CSV file of items (imported under its file name as dataset)."),
    click.option("--dataset", help="Dataset name: a stored dataset, or the name for --data."),
    db_option,
    click.option("--model", envvar=MODEL_ENV, show_envvar=True,
                 help=f"Judge model (default with the local judge: {LOCAL_MODEL})."),
    click.option("--base-url", envvar=BASE_URL_ENV, show_envvar=True,
                 help="OpenAI-compatible endpoint. Without it the local judge is started."),
    click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True,
                 metavar="NAME", help="Environment variable holding the API key."),
    click.option("--api-key", default=None, metavar="KEY",
                 help="API key (prefer --api-key-env: command lines end up in shell history)."),
    click.option("--concurrency", type=click.IntRange(min=1), default=None,
                 help=f"Requests in flight [default: {REMOTE_CONCURRENCY}; "
                      f"{LOCAL_CONCURRENCY} for the local judge]."),
    click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None,
                 help="At most this many requests per minute."),
    click.option("--limit", type=click.IntRange(min=1), default=None,
                 help="Probe only the first N items."),
    click.option("--force", is_flag=True, help="Re-judge everything, cached or not."),
    click.option("--retry-failed", is_flag=True,
                 help="Re-judge answered failures (parse_error, refusal, truncated)."),
    click.option("--temperature", type=float, default=0.0, show_default=True,
                 help="Sampling temperature (use the production value)."),
    click.option("--max-tokens", type=click.IntRange(min=1), default=512, show_default=True),
    click.option("--top-p", type=float, default=1.0, show_default=True),
    click.option("--seed", type=int, default=0, show_default=True),
    click.option("--max-retries", type=click.IntRange(min=0), default=4, show_default=True,
                 help="Retries per call for rate limits, timeouts and server errors."),
    click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0,
                 show_default=True, help="Seconds per request."),
    click.option("--progress/--no-progress", default=None,
                 help="Progress bar [default: only on a terminal]."),
    click.option("--json", "as_json", is_flag=True,
                 help="Print the stored result as JSON instead of the summary."),
]


def probe_options(func: F) -> F:
    """The data and endpoint options of ``judgekit judge``, in its order."""
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


@dataclass(frozen=True)
class _Context:
    store: Store
    rubric: Rubric
    items: list[Item]
    dataset: str
    spec: JudgeSpec


@contextmanager
def _prepared(opts: dict[str, Any]) -> Iterator[_Context]:
    """Open the store, load rubric and items, and bring up the endpoint for one probe."""
    rubric = load_rubric(opts["rubric"])
    sampling = SamplingParams(temperature=opts["temperature"], max_tokens=opts["max_tokens"],
                              top_p=opts["top_p"], seed=opts["seed"])
    with open_store(opts["db"]) as store:
        name, items = load_dataset(store, opts["data"], opts["dataset"])
        if opts["limit"] is not None:
            items = list(islice(items, opts["limit"]))
        with judge_endpoint(opts["base_url"], opts["model"]) as (url, model, local):
            spec = JudgeSpec(
                base_url=url, model=model,
                api_key=None if local else resolve_api_key(opts["api_key"], opts["api_key_env"]),
                sampling=sampling,
                concurrency=opts["concurrency"]
                or (LOCAL_CONCURRENCY if local else REMOTE_CONCURRENCY),
                rpm=opts["rpm"], max_retries=opts["max_retries"], timeout=opts["timeout"],
            )
            yield _Context(store, rubric, items, name, spec)


def _runner_args(opts: dict[str, Any]) -> dict[str, Any]:
    return {"force": opts["force"], "retry_failed": opts["retry_failed"],
            "progress": opts["progress"]}


# -- printing ---------------------------------------------------------------------


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def format_statistic(name: str, stat: dict[str, Any] | None, note: str = "") -> str:
    """One aligned line: value, 95% interval, n, p-value where there is one, and a note."""
    if stat is None:
        return f"  {name:<26} not measured"
    if stat.get("statistic") is None:
        return f"  {name:<26} n/a  n={stat.get('n', 0)}  ({stat.get('reason', 'undefined')})"
    line = (f"  {name:<26} {_num(stat['statistic']):>7}  95% CI "
            f"[{_num(stat['ci_low'])}, {_num(stat['ci_high'])}]  n={stat['n']}")
    if stat.get("pvalue") is not None:
        line += f"  p={stat['pvalue']:.3g}"
    return line + (f"  {note}" if note else "")


def _header(outcome: ProbeOutcome) -> list[str]:
    r = outcome.result
    rubric = r["rubric"]
    return [
        f"{outcome.probe} probe: rubric {rubric['name']} v{rubric['version']} "
        f"[{rubric['sha256'][:12]}] on {r['dataset']!r} ({r['n_items']} items), "
        f"judge {r['model']}",
        f"  run {r['run_id']}; failed judgments excluded: {r.get('n_excluded', 0)}",
    ]


def format_outcome(outcome: ProbeOutcome) -> str:
    """The summary printed at the end of a probe."""
    r = outcome.result
    lines = _header(outcome)
    if outcome.probe == "position":
        test = r["first_slot_test"]
        lines += [
            format_statistic("position consistency", r["position_consistency"]),
            format_statistic("conflict rate", r["conflict_rate"]),
            format_statistic("first slot", r["first_slot_rate"],
                             f"({test['k']} of {test['n']} inconsistent, exact binomial test)"),
            format_statistic("second slot", r["second_slot_rate"]),
            format_statistic("position fairness (PF)", r["position_fairness"],
                             "(-1 always first, 0 fair, +1 always last)"),
        ]
        if "level_order_shift" in r:
            lines.append(format_statistic("shift when levels reversed", r["level_order_shift"],
                                          "(level steps)"))
    elif outcome.probe == "length":
        lines += [
            format_statistic("length correlation (judge)", r["length_correlation"], "Spearman"),
            format_statistic("length correlation (human)", r["human_length_correlation"]),
        ]
        for level, effect in r["padding_levels"].items():
            lines.append(format_statistic(f"padding +{level}% shift", effect["padding_shift"]))
            lines.append(format_statistic(f"padding +{level}% flip rate",
                                          effect["padding_flip_rate"]))
        if "prefer_longer_rate" in r:
            lines += [
                format_statistic("prefer longer (judge)", r["prefer_longer_rate"],
                                 f"(gap > {r['min_gap_chars']} chars; recommended < "
                                 f"{r['prefer_longer_threshold']})"),
                format_statistic("prefer longer (human)", r["human_prefer_longer_rate"]),
            ]
    else:
        lines += [
            f"  {r['samples']} samples per item at temperature {r['temperature']}",
            format_statistic("repetition stability", r["repetition_stability"]),
            format_statistic("flip rate", r["flip_rate"]),
            format_statistic("Fleiss' kappa (repeats)", r["repeat_fleiss_kappa"]),
            format_statistic("Krippendorff's alpha", r["repeat_alpha"]),
        ]
    return "\n".join(lines)


def _finish(outcome: ProbeOutcome, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(outcome.result, indent=2, sort_keys=True))
        return
    click.echo(outcome.summary.format(), err=True)
    click.echo(format_outcome(outcome))


# -- commands ---------------------------------------------------------------------


@click.group("probe")
def command() -> None:
    """Measure position, length and self-consistency bias of a judge."""


@command.command("position")
@probe_options
def position(**opts: Any) -> None:
    """Judge every pair in both orders (or levels reversed, for pointwise rubrics)."""
    with _prepared(opts) as ctx:
        outcome = run_position_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                     dataset=ctx.dataset, **_runner_args(opts))
    _finish(outcome, opts["as_json"])


def _parse_levels(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        message = f"--levels must be comma-separated whole percentages, got {text!r}"
        raise InputError(message) from None


@command.command("length")
@probe_options
@click.option("--levels", default=",".join(map(str, DEFAULT_LEVELS)), show_default=True,
              help="Padding levels in percent of the original length.")
@click.option("--filler", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Filler templates, one neutral sentence per line ({input} = the request).")
@click.option("--min-gap", type=click.IntRange(min=0), default=30, show_default=True,
              help="Length gap in characters for P(prefer longer) (pairwise rubrics).")
def length(levels: str, filler: Path | None, min_gap: int, **opts: Any) -> None:
    """Score vs length, padding with content-free filler, and P(prefer the longer answer)."""
    templates = load_filler(filler) if filler is not None else DEFAULT_FILLER
    parsed = _parse_levels(levels)
    with _prepared(opts) as ctx:
        outcome = run_length_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                   dataset=ctx.dataset, levels=parsed, filler=templates,
                                   min_gap=min_gap, **_runner_args(opts))
    _finish(outcome, opts["as_json"])


@command.command("consistency")
@probe_options
@click.option("--samples", type=click.IntRange(min=2), default=5, show_default=True,
              help="Repeated samples per item (K).")
def consistency(samples: int, **opts: Any) -> None:
    """K repeated samples per item: repetition stability, flip rate, kappa and alpha."""
    with _prepared(opts) as ctx:
        outcome = run_consistency_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                        dataset=ctx.dataset, samples=samples,
                                        **_runner_args(opts))
    _finish(outcome, opts["as_json"])
