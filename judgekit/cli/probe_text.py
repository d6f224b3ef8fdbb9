"""``judgekit probe injection|identical``: probes that change the judged text itself.

``injection`` puts instructions aimed at the judge into the responses;
``identical`` shows one response in both slots of a pair. Same options,
runner, storage and printing as the other probes (:mod:`judgekit.cli.probe`,
which registers these two commands in its group).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from judgekit.cli._common import echo_json
from judgekit.cli.probe import (
    _prepared,
    _runner_args,
    format_statistic,
    print_outcome,
    probe_options,
)
from judgekit.judging.injection_templates import (
    POSITIONS,
    TEMPLATES,
    check_positions,
    check_templates,
    injection_target,
)
from judgekit.types import Item, Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.clients import JudgeSpec
    from judgekit.judging.probes import ProbeOutcome
    from judgekit.judging.runner import WorkUnit
    from judgekit.store import Store


def _finish(outcome: ProbeOutcome, as_json: bool, lines: list[str]) -> None:
    if as_json:
        echo_json(outcome.result, indent=2, sort_keys=True)
        return
    print_outcome(outcome, lines)


def injection_lines(r: dict[str, Any]) -> list[str]:
    """The injection summary below the header: pooled figures, then each cell."""
    lines = [
        f"  target: {r['target']}; templates: {', '.join(r['templates'])}; "
        f"positions: {', '.join(r['positions'])}",
        format_statistic("net move toward - away (worst cell)", r["injection_net"],
                         f"({r['worst_cell']}; simultaneous CI over the cells)"),
        format_statistic("moves toward (worst cell)", r["injection_flip_rate"],
                         f"({r['worst_flip_cell']}; counts a noisy judge's changes too)"),
        format_statistic("mean shift", r["injection_shift"],
                         "(toward the target, all cells)"),
        format_statistic("net move (all cells)", r["injection_net_pooled"],
                         "(each item once; t test of 0)"),
    ]
    for template in r["templates"]:
        for position in r["positions"]:
            cell = f"{template}@{position}"
            lines.append(f"  {template}, at the {position} of the response:")
            lines.append("  " + format_statistic("net move", r[f"injection_net[{cell}]"]))
            if f"injection_vs_placebo[{cell}]" in r:
                lines.append("  " + format_statistic("net move vs placebo",
                                                     r[f"injection_vs_placebo[{cell}]"]))
            lines.append("  " + format_statistic("flip rate", r[f"injection_flip_rate[{cell}]"]))
            lines.append("  " + format_statistic("mean shift", r[f"injection_shift[{cell}]"]))
    return lines


def identical_lines(r: dict[str, Any]) -> list[str]:
    """The identical-pairs summary below the header."""
    counts = r["verdict_counts"]
    return [
        f"  verdicts on identical pairs: A {counts['A']}, B {counts['B']}, tie {counts['tie']}",
        format_statistic("decisive share", r["identical_decisive_rate"], "(a fair judge: 0)"),
        format_statistic("first slot among decisive", r["identical_first_slot_share"],
                         "(exact binomial test vs 0.5)"),
        format_statistic("slot imbalance |2p-1|", r["identical_slot_imbalance"]),
    ]


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


@click.command("injection")
@probe_options
@click.option("--templates", default=",".join(TEMPLATES), show_default=True,
              help="Injected texts to try, comma-separated (docs/probes.md lists them).")
@click.option("--positions", default=",".join(POSITIONS), show_default=True,
              help="Where the text goes in the response: start, end.")
@click.option("--target", default=None, metavar="LABEL",
              help="The verdict the injected text asks for (default: the top level, pass for "
                   "binary; needed for categorical rubrics; pairs: the response injected into).")
def injection(templates: str, positions: str, target: str | None, **opts: Any) -> None:
    """Re-judge responses carrying instructions aimed at the judge: flip rate and shift.

    Pairwise, the text goes into the response the judge did not prefer as written.
    """
    from judgekit.judging.probe_injection import injection_units, run_injection_probe

    chosen = check_templates(_names(templates))
    where = check_positions(_names(positions))

    def plan(store: Store, rubric: Rubric, items: list[Item], spec: JudgeSpec,
             dataset: str) -> list[WorkUnit]:
        return injection_units(store, rubric, items, spec, dataset=dataset, templates=chosen,
                               positions=where, target=target)

    def check(rubric: Rubric) -> None:
        injection_target(rubric, target)  # a categorical rubric needs --target, ...

    with _prepared(opts, store_plan=plan, check=check) as ctx:
        outcome = run_injection_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                      dataset=ctx.dataset, templates=chosen, positions=where,
                                      target=target, **_runner_args(opts))
    _finish(outcome, opts["as_json"], injection_lines(outcome.result))


@click.command("identical")
@probe_options
def identical(**opts: Any) -> None:
    """Judge pairs whose two responses are the same text (pairwise rubrics): the share of
    decisive verdicts and the slot split."""
    from judgekit.judging.probe_identical import (
        check_pairwise,
        identical_units,
        run_identical_probe,
    )

    with _prepared(opts, lambda rubric, items: (identical_units(items), 1),
                   check=check_pairwise) as ctx:
        outcome = run_identical_probe(ctx.store, ctx.rubric, ctx.items, ctx.spec,
                                      dataset=ctx.dataset, **_runner_args(opts))
    _finish(outcome, opts["as_json"], identical_lines(outcome.result))
