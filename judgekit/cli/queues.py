"""``judgekit queues``: every labeling queue with each annotator's progress."""

from __future__ import annotations

import click

from judgekit.cli._common import (
    db_option,
    echo,
    echo_json,
    read_store,
    resolve_rubric,
    text_or_json_option,
)
from judgekit.cli._progress import progress_bar
from judgekit.progress import phase


@click.command("queues")
@db_option
@click.option("--rubric", "-r", default=None, metavar="NAME_OR_PATH",
              help="Only this rubric's queues (a file, a name, or its sha256 in the store).")
@text_or_json_option
def command(db: str, rubric: str | None, fmt: str) -> None:
    """Per-annotator progress (labeled, skipped, flagged, remaining) through each queue.

    `sessions` is how many browser sessions of `judgekit serve` are open on the
    queue now (0 when no server runs on the store).
    """
    from judgekit.serve.progress import queue_rows

    with read_store(db) as store, progress_bar("queues", 1):
        rubric_hash = resolve_rubric(store, rubric).sha256 if rubric else None
        phase("counting labels per queue")
        rows = queue_rows(store, rubric_hash)
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
