"""``judgekit queue assign``: split a rubric's items among a team, with an overlap.

Every item goes to one annotator and an ``--overlap`` share to a second one, so
the report can measure human-human agreement on the shared items. The plan is
saved as one queue per annotator (``assign:<rubric>:<sha8>:<name>``); each annotator
opens theirs with ``judgekit annotate --queue NAME`` or through ``judgekit serve``.
"""

from __future__ import annotations

from typing import Any

import click

from judgekit.cli._common import SHA256, db_option, echo, read_store, resolve_rubric, rubric_option
from judgekit.cli._progress import progress_bar
from judgekit.progress import phase

#: ``--overlap`` when two or more annotators are named.
DEFAULT_OVERLAP = 0.2


@click.group("queue")
def command() -> None:
    """Labeling queues for a team (see also `judgekit queues` for progress)."""


@command.command("assign")
@rubric_option
@db_option
@click.option("--annotators", required=True, metavar="NAME,NAME,...",
              help="Comma-separated annotator names (their tokens carry the same names).")
@click.option("--overlap", type=click.FloatRange(0.0, 1.0), default=None,
              help="Share of items also given to a second annotator, for human-human agreement "
                   "[default: 0.2; 0 for a single annotator].")
@click.option("--dataset", default=None, help="Assign this dataset's items only (default: all).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Random seed; the same seed gives the same assignment.")
def assign(rubric: str, db: str, annotators: str, overlap: float | None, dataset: str | None,
           seed: int) -> None:
    """Give every item to one annotator and a share to two; saved as one queue each."""
    from judgekit.assignment import (
        ASSIGNED_STRATEGY,
        assignment_queue_name,
        parse_annotators,
        plan_assignment,
    )
    from judgekit.cli._annotate_criteria import criteria_file
    from judgekit.serve.progress import queue_rows
    from judgekit.store import QueueEntry
    from judgekit.store.queues import QueueMatch

    names = parse_annotators(annotators)
    notes: list[str] = []
    if overlap is None:
        overlap = DEFAULT_OVERLAP if len(names) > 1 else 0.0
        if len(names) == 1:
            notes.append("one annotator: overlap 0 (no item is labeled twice, so the report "
                         "has no human-human agreement; add annotators for it)")
    saved: list[str] = []
    with read_store(db) as store, progress_bar("queue assign", 2 + len(names)):
        whole = None if SHA256.match(rubric) else criteria_file(rubric)  # every criterion
        rub = whole.criteria[0].rubric if whole else resolve_rubric(store, rubric)
        phase("reading item ids")
        from judgekit.report_inputs import require_dataset

        require_dataset(store, dataset)
        known = store.datasets()
        keys = [(name, item_id) for name in ([dataset] if dataset else known)
                for item_id in store.item_ids(name)]
        plan = plan_assignment(keys, names, overlap=overlap, seed=seed)
        for saved_rubric in [c.rubric for c in whole.criteria] if whole else [rub]:
            store.save_rubric(saved_rubric)
        extra = {"criteria": whole.listed, "criteria_file": whole.name} if whole else {}
        for annotator in names:
            phase(f"saving {annotator}'s queue")
            entries = [
                QueueEntry(position=i, dataset=ds, item_id=item_id, inclusion_prob=1.0)
                for i, (ds, item_id) in enumerate(plan.items[annotator])
            ]
            queue = assignment_queue_name(whole.name if whole else rub.name,
                                          whole.sha256 if whole else rub.sha256, annotator)
            store.save_queue(
                queue, rub.sha256, ASSIGNED_STRATEGY, seed, entries, replace=True,
                params={"annotator": annotator, "annotators": list(names), "overlap": overlap,
                        "dataset": dataset, "shared_items": len(plan.overlap_items),
                        **extra},
            )
            saved.append(queue)
        phase("counting labels per queue")
        counted = {row["queue"]: row for row in queue_rows(store, QueueMatch.of([rub.sha256]))}
        lines = [_saved_line(counted[queue]) for queue in saved]
    for line in lines:  # after the progress bar is gone
        echo(line)
    echo(f"{len(keys)} items, {len(plan.overlap_items)} of them to two annotators "
               f"(overlap {overlap:g}, seed {seed})")
    for note in notes:
        echo(f"note: {note}")


def _saved_line(row: dict[str, Any]) -> str:
    """A saved queue, its size and how much of it is done already: labels are kept when a
    queue is replaced, and a whole-file queue counts an item once every criterion has a row."""
    from judgekit.serve.progress import criteria_left

    left = criteria_left(row)
    return (f"{row['queue']}: {row['total']} items for {row['annotator']} "
            f"({row['labeled'] + row['skipped']} done, {row['remaining']} remaining"
            + (f"; {left})" if left else ")"))
