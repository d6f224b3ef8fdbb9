"""``judgekit queues``: every labeling queue with each annotator's progress."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from judgekit.cli._common import (
    SHA256,
    db_option,
    echo,
    echo_json,
    read_store,
    resolve_rubric,
    text_or_json_option,
)
from judgekit.cli._progress import progress_bar
from judgekit.progress import phase

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.store.queues import QueueMatch


@click.command("queues")
@db_option
@click.option("--rubric", "-r", default=None, metavar="NAME_OR_PATH",
              help="Only this rubric's queues: a file (a multi-criteria file whole, or "
                   "FILE#CRITERION), a name in ./rubrics/, a rubric's name or sha256 in the "
                   "store, or the name of a multi-criteria file a queue was drawn for.")
@text_or_json_option
def command(db: str, rubric: str | None, fmt: str) -> None:
    """Per-annotator progress (labeled, skipped, flagged, remaining) through each queue.

    A queue drawn for a whole multi-criteria file counts an item once every
    criterion has a label or a skip, and lists what each criterion has left.
    `sessions` is how many browser sessions of `judgekit serve` are open on the
    queue now (0 when no server runs on the store).
    """
    from judgekit.serve.progress import criteria_left, queue_rows

    with read_store(db) as store, progress_bar("queues", 1):
        match = queue_match(store, rubric) if rubric else None
        phase("counting labels per queue")
        rows = queue_rows(store, match)
    if fmt == "json":
        echo_json(rows, indent=2)
        return
    if not rows:
        echo("no labeling queues (draw one with `judgekit annotate` or "
                   "`judgekit queue assign`)")
        return
    echo(f"{'queue':<44} {'annotator':<12} {'labeled':>8} {'skipped':>8} "
               f"{'flagged':>8} {'remaining':>9} {'sessions':>8}")
    for row in rows:
        echo(f"{row['queue'][:44]:<44} {str(row['annotator'] or '-')[:12]:<12} "
                   f"{row['labeled']:>8} {row['skipped']:>8} {row['flagged']:>8} "
                   f"{row['remaining']:>9} {row['sessions']:>8}")
        if row["criteria"]:
            echo(f"  {criteria_left(row)}")


def queue_match(store: Store, reference: str) -> QueueMatch:
    """The queues ``--rubric`` names, a whole-file queue found by its file and by each criterion.

    A multi-criteria file picks every queue collecting labels of one of its criteria;
    a single rubric (``FILE#CRITERION``, a file, a sha256) the queues collecting its
    labels, whole-file queues included. A reference that is no file may be a rubric's
    name in the store or the name of a file a whole-file queue was drawn for; else the
    file's error stands.
    """
    from judgekit.cli._annotate_criteria import criteria_file
    from judgekit.errors import InputError
    from judgekit.store.queues import QueueMatch

    if SHA256.match(reference):
        return QueueMatch.of([resolve_rubric(store, reference).sha256])
    try:
        whole = criteria_file(reference)
        if whole is not None:
            return QueueMatch.of([c.rubric.sha256 for c in whole.criteria])
        return QueueMatch.of([resolve_rubric(store, reference).sha256])
    except InputError:
        stored = [r["sha256"] for r in store.list_rubrics() if r["name"] == reference]
        files = [h.criteria_file for h in store.queue_heads() if h.criteria_file == reference]
        if stored or files:
            return QueueMatch.of(stored, [reference] if files else [])
        raise
