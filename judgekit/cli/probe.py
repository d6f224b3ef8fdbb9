"""``judgekit probe position|length|consistency|injection|identical``: a judge's biases.

``injection`` and ``identical`` live in :mod:`judgekit.cli.probe_text` and join
this group at the end of the module.

Each subcommand takes the data and endpoint options of ``judgekit judge``,
runs its variants through the same cached runner, stores the summary for
``judgekit report`` and prints every figure with its n and 95% interval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli._common import echo, echo_json, read_store, store_for_items
from judgekit.cli._endpoint import EndpointOptions, endpoint_options, load_dataset, open_endpoint
from judgekit.cli._progress import progress_bar
from judgekit.clients import JudgeSpec
from judgekit.errors import InputError
from judgekit.judging.probe_variants import DEFAULT_LEVELS
from judgekit.judging.units import WorkUnit
from judgekit.types import Item, Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.judging.probes import ProbeOutcome
    from judgekit.store import Store

_JSON = click.option("--json", "as_json", is_flag=True,
                     help="Print the stored result as JSON instead of the summary.")
_ENDPOINT = endpoint_options(verb="Probe", url_example=False,
                             temperature_help="Sampling temperature (use the production value).")


def probe_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The data and endpoint options of ``judgekit judge``, in its order, then ``--json``."""
    return _ENDPOINT(_JSON(func))


#: What a probe will judge, from the rubric and items: its work units and samples per unit.
Plan = Callable[[Rubric, list[Item]], tuple[list[WorkUnit], int]]
#: A plan that depends on stored verdicts (store, rubric, items, judge, dataset name).
StorePlan = Callable[["Store", Rubric, list[Item], JudgeSpec, str], list[WorkUnit]]


@dataclass(frozen=True)
class _Context:
    store: Store
    rubric: Rubric
    items: list[Item]
    dataset: str
    spec: JudgeSpec


@contextmanager
def _prepared(opts: dict[str, Any], plan: Plan | None = None, *,
              store_plan: StorePlan | None = None,
              check: Callable[[Rubric], None] | None = None) -> Iterator[_Context]:
    """Open the store, load rubric and items, and bring up the endpoint for one probe.

    ``plan`` (or ``store_plan``, for calls that depend on stored verdicts) lists the
    probe's calls, so the local judge is started only when one of them is not cached
    yet. ``check`` rejects a rubric the probe does not fit before the store is opened.
    """
    from judgekit.io.items import load_items
    from judgekit.judging.probes import check_items
    from judgekit.judging.runner import has_pending_calls
    from judgekit.rubrics import load_rubric

    endpoint = EndpointOptions.take(opts)
    rubric = load_rubric(opts["rubric"])
    if check is not None:
        check(rubric)
    loaded = None
    if opts["data"] is not None:  # a file that does not fit changes nothing: checked first
        loaded = load_items(opts["data"])
        check_items(loaded, rubric)
    # only --data may create the store; --dataset reads one that exists
    with store_for_items(opts["db"], opts["data"], opts["dataset"]) as store:
        name, items = load_dataset(store, opts["data"], opts["dataset"], opts["limit"], loaded)
        check_items(items, rubric)

        def has_work(spec: JudgeSpec) -> bool:
            if store_plan is not None:
                units, samples = store_plan(store, rubric, items, spec, name), 1
            else:
                assert plan is not None
                units, samples = plan(rubric, items)
            return has_pending_calls(store, rubric, units, spec, dataset=name, samples=samples,
                                     force=opts["force"], retry_failed=opts["retry_failed"])

        with open_endpoint(endpoint, has_work=has_work) as spec:
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
    if stat.get("ci_low") is None or stat.get("ci_high") is None:
        why = str(stat.get("note") or "the interval is undefined on these data")
        interval = f"95% CI n/a ({why.removeprefix('no interval: ')})"
    else:
        interval = f"95% CI [{_num(stat['ci_low'])}, {_num(stat['ci_high'])}]"
    line = f"  {name:<26} {_num(stat['statistic']):>7}  {interval}  n={stat['n']}"
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


def _position_lines(r: dict[str, Any]) -> list[str]:
    test = r["first_slot_test"]
    if r.get("mode") == "pointwise":  # no pairs: the scale's levels were listed reversed
        lines = [
            format_statistic("level-order consistency", r["position_consistency"]),
            format_statistic("level-order conflict", r["conflict_rate"]),
            format_statistic("toward level listed first", r["first_slot_rate"],
                             f"({test['k']} of {test['n']} changed verdicts, exact binomial "
                             "test)"),
            format_statistic("toward level listed last", r["second_slot_rate"]),
        ]
        if "level_order_shift" in r:
            lines.append(format_statistic("shift when levels reversed", r["level_order_shift"],
                                          "(level steps)"))
        return lines
    lines = [
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
    return lines


def format_position(r: dict[str, Any]) -> str:
    """The position summary of a probe from imported verdicts."""
    return "\n".join([*_imported_header(r), *_position_lines(r)])


def _imported_header(r: dict[str, Any]) -> list[str]:
    rubric = r["rubric"]
    return [
        f"position probe (imported verdicts): rubric {rubric['name']} v{rubric['version']} "
        f"[{rubric['sha256'][:12]}] on {r['dataset']!r} ({r['n_items']} pairs), "
        f"judge {r['model']}",
        f"  run {r['run_id']}; failed judgments excluded: {r.get('n_excluded', 0)}",
    ]


def format_outcome(outcome: ProbeOutcome) -> str:
    """The summary printed at the end of a probe: its title, then its figures."""
    return "\n".join(_header(outcome) + _figure_lines(outcome))


def _figure_lines(outcome: ProbeOutcome) -> list[str]:
    """The figures of a position, length or consistency probe, below its title."""
    r = outcome.result
    lines: list[str] = []
    if outcome.probe == "position":
        lines += _position_lines(r)
    elif outcome.probe == "length":
        lines += [
            format_statistic("length correlation (judge)", r["length_correlation"], "Spearman"),
            format_statistic("length correlation (human)", r["human_length_correlation"]),
            format_statistic("slope per doubling", r.get("length_slope"),
                             "(score change, fixed effects by prompt)"),
        ]
        if r.get("length_slope_human_adjusted") is not None:
            lines.append(format_statistic("slope, human-adjusted",
                                          r["length_slope_human_adjusted"]))
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
    return lines


def print_outcome(outcome: ProbeOutcome, figures: list[str]) -> None:
    """The title on stdout, the run's summary on stderr, then the figures on stdout.

    In this order so that one stream holding both (``2>&1 | less``, a CI log) reads
    top-down: which probe, what the run cost, what it found. ``echo`` flushes each
    write, so the order holds when stdout is a pipe and stderr is not.
    """
    echo("\n".join(_header(outcome)))
    echo(outcome.summary.format(), err=True)
    echo("\n".join(figures))


def _finish(outcome: ProbeOutcome, as_json: bool) -> None:
    if as_json:
        echo_json(outcome.result, indent=2, sort_keys=True)
        return
    print_outcome(outcome, _figure_lines(outcome))


# -- commands ---------------------------------------------------------------------


@click.group("probe")
def command() -> None:
    """Measure a judge's biases: position, length, consistency, injection, identical pairs."""


@command.command("position")
@probe_options
@click.option("--imported", is_flag=True,
              help="Measure from imported both-order verdicts (judgments import) instead of "
                   "calling an endpoint; needs --dataset and a pairwise rubric.")
@click.option("--judge", default=None, metavar="NAME",
              help="With --imported: the imported judge (needed when there are several).")
def position(imported: bool, judge: str | None, **opts: Any) -> None:
    """Judge every pair in both orders (or levels reversed, for pointwise rubrics).

    With --imported nothing is called: the verdicts imported in both orders are read
    from the store, and the result is stored and reported like a live probe's.
    """
    from judgekit.judging.probes import position_units, run_position_probe

    if imported:
        _imported_position(opts, judge)
        return
    if judge is not None:
        raise InputError("--judge is only for --imported (name the model with --model)")
    with _prepared(opts, lambda rubric, items: (position_units(items, rubric), 1)) as ctx:
        outcome = run_position_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                     dataset=ctx.dataset, **_runner_args(opts))
    _finish(outcome, opts["as_json"])


def _imported_position(opts: dict[str, Any], judge: str | None) -> None:
    from judgekit.judging.probe_imported import imported_position_probe
    from judgekit.rubrics import load_rubric

    if opts["base_url"] or opts["data"] is not None:
        raise InputError("--imported reads stored verdicts: give --dataset NAME, not "
                         "--data or --base-url")
    if not opts["dataset"]:
        raise InputError("--imported needs --dataset NAME (the dataset the verdicts are on)")
    rubric = load_rubric(opts["rubric"])
    if rubric.scale.kind != "pairwise":  # before the store is touched
        raise InputError(f"--imported needs a pairwise rubric ({rubric.name!r} is "
                         f"{rubric.scale.kind}): imported verdicts have no reversed levels")
    with read_store(opts["db"]) as store, progress_bar("probe position", 4):
        outcome = imported_position_probe(store, rubric, opts["dataset"], judge)
    if opts["as_json"]:
        if outcome.warning is not None:
            echo(f"warning: {outcome.warning}", err=True)
        echo_json(outcome.result, indent=2, sort_keys=True)
        return
    echo("\n".join(_imported_header(outcome.result)))  # the title before the warning
    if outcome.warning is not None:
        echo(f"warning: {outcome.warning}", err=True)
    echo("\n".join(_position_lines(outcome.result)))


def _pairwise_only(param: str, option: str, rubric_path: str) -> None:
    """An option given on the command line that only a pairwise rubric uses: one line, exit 2."""
    from click.core import ParameterSource

    from judgekit.rubrics import load_rubric

    source = click.get_current_context().get_parameter_source(param)
    if source not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
        return
    kind = load_rubric(rubric_path).scale.kind
    if kind != "pairwise":
        raise InputError(f"{option} is for pairwise rubrics (P(prefer longer)); "
                         f"this rubric is {kind}")


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
    from judgekit.judging.probes import (
        DEFAULT_FILLER,
        check_levels,
        length_units,
        load_filler,
        run_length_probe,
    )

    _pairwise_only("min_gap", "--min-gap", opts["rubric"])
    templates = load_filler(filler) if filler is not None else DEFAULT_FILLER
    parsed = check_levels(_parse_levels(levels))

    def plan(rubric: Rubric, items: list[Item]) -> tuple[list[WorkUnit], int]:
        return length_units(items, parsed, templates), 1

    with _prepared(opts, plan) as ctx:
        outcome = run_length_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                   dataset=ctx.dataset, levels=parsed, filler=templates,
                                   min_gap=min_gap, **_runner_args(opts))
    _finish(outcome, opts["as_json"])


@command.command("consistency")
@probe_options
@click.option("--samples", type=click.IntRange(min=2), default=5, show_default=True,
              help="Repeated samples per item (K).")
@click.option("--imported", is_flag=True,
              help="Measure from imported repeated verdicts (samples of one item: promptfoo "
                   "--repeat, Inspect epochs) instead of calling an endpoint; needs --dataset.")
@click.option("--judge", default=None, metavar="NAME",
              help="With --imported: the imported judge (needed when there are several).")
def consistency(samples: int, imported: bool, judge: str | None, **opts: Any) -> None:
    """K repeated samples per item: repetition stability, flip rate, kappa and alpha.

    With --imported nothing is called: an imported judge's repeated verdicts of each
    item are read from the store, and the result is stored like a live probe's.
    """
    from judgekit.judging.probes import run_consistency_probe

    if imported:
        from click.core import ParameterSource

        from judgekit.cli.probe_imported import imported_consistency

        source = click.get_current_context().get_parameter_source("samples")
        imported_consistency(opts, judge, source in (ParameterSource.COMMANDLINE,
                                                     ParameterSource.ENVIRONMENT))
        return
    if judge is not None:
        raise InputError("--judge is only for --imported (name the model with --model)")

    with _prepared(opts, lambda rubric, items: ([WorkUnit(i) for i in items], samples)) as ctx:
        outcome = run_consistency_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                        dataset=ctx.dataset, samples=samples,
                                        **_runner_args(opts))
    _finish(outcome, opts["as_json"])


# registered here so `judgekit probe --help` lists them; they use the helpers above
from judgekit.cli.probe_text import identical, injection  # noqa: E402

command.add_command(injection)
command.add_command(identical)
