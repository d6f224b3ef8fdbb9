"""``judgekit compare judges|candidates``: paired comparisons on the same items."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli._common import (
    RESAMPLES,
    SEED,
    F,
    db_option,
    echo,
    echo_json,
    read_store,
    reference_option,
    resolve_rubric,
    rubric_option,
    text_or_json_option,
)
from judgekit.cli._progress import progress_bar

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.compare import CandidateComparison, Clustering, JudgeComparison


def render_judges(c: JudgeComparison) -> str:
    from judgekit.report._format import label_of, pvalue_text, stat_text

    lines = [f"Judges compared on {c.n_items} items with an ok verdict from both and a human label"]
    lines.append(f"  Human reference: {c.reference}")
    for side in (c.a, c.b):
        run = f", run {side.run_id}" if side.run_id else ""
        lines.append(f"  {side.title}: {side.rubric}{run}")
        lines.append(f"     {label_of(c.primary):<26}{stat_text(side.primary)}")
        lines.append(f"     {'Agreement with humans':<26}{stat_text(side.percent_agreement)}")
        statuses = ", ".join(f"{k}={v}" for k, v in sorted(side.status_counts.items()))
        lines.append(f"     {'Statuses':<26}{statuses}")
    lines.append(
        f"  Agreement A - B ({c.agreement_test}): {stat_text(c.agreement_difference)} "
        f"p={pvalue_text(c.pvalue)}"
    )
    lines.append(
        f"  {label_of(c.primary)} A - B ({c.primary_method}): {stat_text(c.primary_difference)}"
    )
    lines.extend(_level_lines(c))
    lines.extend(_clustering_lines(c.clustering, c.notes))
    return "\n".join(lines) + "\n"


def _level_lines(c: JudgeComparison) -> list[str]:
    """Each judge's per-group and system-level agreement, where they are defined."""
    from judgekit.report._format import stat_text

    a, b = c.levels_a, c.levels_b
    if a is None or b is None:
        return []
    lines: list[str] = []
    if a.n_groups_used or b.n_groups_used:
        lines.append(f"  Per group (by {a.group_by}; Spearman averaged over groups where both "
                     "sides vary)")
        for side, lv in (("A", a), ("B", b)):
            lines.append(f"     {side}: {stat_text(lv.per_group['spearman'])}")
    if a.systems and b.systems:
        lines.append(f"  System level (by {a.system_by}; {len(a.systems)} systems, "
                     f"{a.n_pairs} pairs)")
        for side, lv in (("A", a), ("B", b)):
            lines.append(
                f"     {side}: Kendall tau-b {stat_text(lv.system['kendall_tau'])}; pairwise "
                f"accuracy {stat_text(lv.system['pairwise_accuracy'])}"
            )
        lines.extend(f"  {note}" for note in dict.fromkeys((a.system_note, b.system_note)) if note)
    return lines


def _clustering_lines(clustering: Clustering | None, notes: tuple[str, ...]) -> list[str]:
    """How intervals were made, when items are clustered (nothing otherwise)."""
    if clustering is None:
        return []
    return [f"  Intervals: {clustering.method}"] + [f"  Note: {note}" for note in notes]


def render_candidates(c: CandidateComparison) -> str:
    from judgekit.report._format import pvalue_text, stat_text

    lines = [
        f"Candidates compared on {c.n_items} shared items ({c.score}; {c.excluded} item(s) "
        "excluded because a judgment failed)",
        f"  A {c.score:<22}{stat_text(c.mean_a)}",
        f"  B {c.score:<22}{stat_text(c.mean_b)}",
        f"  A - B micro               {stat_text(c.micro_difference)} p={pvalue_text(c.pvalue)}",
        f"  A - B macro over slices   {stat_text(c.macro_difference)}",
    ]
    for name, stat in c.slices.items():
        lines.append(f"    {name:<24}{stat_text(stat)}")
    for side, fails in (("A", c.abstentions_a), ("B", c.abstentions_b)):
        text = ", ".join(f"{k}={v}" for k, v in sorted(fails.items())) or "none"
        lines.append(f"  Abstentions/failures {side}: {text}")
    lines.extend(_clustering_lines(c.clustering, c.notes))
    return "\n".join(lines) + "\n"


def _output_options(func: F) -> F:
    """``--format``, ``--resamples``, ``--seed`` and ``--cluster-by``, the same on both."""
    func = click.option(
        "--cluster-by",
        default=None,
        metavar="FIELD",
        help="Resample clusters of items sharing FIELD (cluster, prompt, slice, meta.NAME; "
        "'item' for none); default: 'cluster' when items have one, else 'prompt' when items "
        "share one.",
    )(func)
    func = click.option(
        "--seed", type=SEED, default=0, show_default=True, help="Seed of the bootstrap."
    )(func)
    func = click.option(
        "--resamples", type=RESAMPLES, default=1000, show_default=True,
        help="Bootstrap resamples."
    )(func)
    return text_or_json_option(func)


def _emit(result: Any, fmt: str, render: Callable[[Any], str]) -> None:
    """JSON (``result.to_dict()``) or the text rendering (controls escaped), on stdout."""
    if fmt == "json":
        echo_json(result.to_dict(), indent=2)
    else:
        echo(render(result), nl=False)


@click.group("compare")
def command() -> None:
    """Compare two judges, or two candidate models scored by one judge."""


@command.command("judges")
@rubric_option
@db_option
@click.option("--rubric-b", default=None, help="Rubric of judge B (default: the same rubric).")
@click.option(
    "--run-a", "--judge-run-a", "run_a", default=None,
    help="A run of judge A (stands for all its judge's judgments).",
)
@click.option(
    "--run-b", "--judge-run-b", "run_b", default=None,
    help="A run of judge B (stands for all its judge's judgments).",
)
@click.option("--model-a", default=None, metavar="NAME",
              help="Judge A by its model name (as `report --model`).")
@click.option("--model-b", default=None, metavar="NAME",
              help="Judge B by its model name (as `report --model`).")
@click.option("--dataset", default=None, help="Only items of this dataset.")
@click.option("--annotator", default=None, help="Human reference annotator (default: majority).")
@reference_option
@_output_options
def judges(
    rubric: str,
    db: str,
    rubric_b: str | None,
    run_a: str | None,
    run_b: str | None,
    model_a: str | None,
    model_b: str | None,
    dataset: str | None,
    annotator: str | None,
    reference: str | None,
    fmt: str,
    resamples: int,
    seed: int,
    cluster_by: str | None,
) -> None:
    """Two judges (two runs or two rubric versions) against the same human labels."""
    from judgekit.compare import compare_judges
    from judgekit.report.stat_intervals import IntervalSpec
    from judgekit.report_inputs import require_dataset
    from judgekit.store.exports import snapshot  # one state of the store for both judges

    store = read_store(db)
    try:
        require_dataset(store, dataset)
        rub_a = resolve_rubric(store, rubric)
        rub_b = resolve_rubric(store, rubric_b) if rubric_b else rub_a
        with progress_bar("compare judges", 5), snapshot(store):
            result = compare_judges(
                store,
                rub_a,
                rub_b,
                run_a=run_a,
                run_b=run_b,
                dataset=dataset,
                annotator=annotator,
                spec=IntervalSpec(n_resamples=resamples, random_state=seed),
                cluster_by=cluster_by,
                reference=reference,
                model_a=model_a,
                model_b=model_b,
            )
    finally:
        store.close()
    _emit(result, fmt, render_judges)


@command.command("candidates")
@rubric_option
@db_option
@click.option("--dataset-a", required=True, help="Dataset holding candidate A's outputs.")
@click.option("--dataset-b", required=True, help="Dataset holding candidate B's outputs.")
@click.option(
    "--run",
    "run_id",
    default=None,
    help="A run of the judge; its judge scores both datasets (default: the only judge).",
)
@_output_options
def candidates(
    rubric: str,
    db: str,
    dataset_a: str,
    dataset_b: str,
    run_id: str | None,
    fmt: str,
    resamples: int,
    seed: int,
    cluster_by: str | None,
) -> None:
    """Two candidate models scored by one judge on the same item ids."""
    from judgekit.compare import compare_candidates
    from judgekit.report.stat_intervals import IntervalSpec
    from judgekit.report_inputs import require_dataset
    from judgekit.store.exports import snapshot

    store = read_store(db)
    try:
        require_dataset(store, dataset_a)
        require_dataset(store, dataset_b)
        rub = resolve_rubric(store, rubric)
        with progress_bar("compare candidates", 4), snapshot(store):
            result = compare_candidates(
                store,
                rub,
                dataset_a,
                dataset_b,
                run_id=run_id,
                spec=IntervalSpec(n_resamples=resamples, random_state=seed),
                cluster_by=cluster_by,
            )
    finally:
        store.close()
    _emit(result, fmt, render_candidates)
