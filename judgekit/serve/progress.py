"""Per-annotator progress through labeling queues, as plain rows (CLI and API share it)."""

from __future__ import annotations

from typing import Any

from judgekit.store import Store
from judgekit.store.queues import QueueMatch, QueueProgress, empty_progress


def queue_rows(
    store: Store, rubric: QueueMatch | str | None = None, *, annotator: str | None = None
) -> list[dict[str, Any]]:
    """One row per (queue, annotator): the assignee of an assigned queue, else who opened it.

    ``rubric`` is a rubric's sha256 or a :class:`QueueMatch`: a queue drawn for a whole
    multi-criteria file is listed under each of its criteria and counted whole (an item
    is done when every criterion has a label or a skip; ``criteria`` holds each
    criterion's counts, None for a one-rubric queue).

    Queues share items, so a label on an item of a shared queue may have been given
    in another queue: only those who opened the queue are listed under it (who
    labeled its items, for a queue opened before openings were recorded).
    Adjudications are nobody's remaining work (:meth:`Store.queue_progress`).

    With ``annotator`` only that person's rows: what an annotator's token may see.
    ``sessions`` is how many browser sessions of ``judgekit serve`` are open on the
    queue as that annotator now (0 when no server runs on the store).
    """
    from judgekit.serve.live_sessions import open_sessions

    match = QueueMatch.of([rubric]) if isinstance(rubric, str) else rubric
    live = open_sessions(store)
    rows: list[dict[str, Any]] = []
    for head in store.queue_heads(match):
        assignee = head.params.get("annotator")
        if annotator is not None and assignee is not None and assignee != annotator:
            continue  # another annotator's queue: not even counted
        openers = None if assignee is not None else store.queue_openers(head.name)
        counted = [assignee] if assignee is not None else openers  # None: everyone
        if annotator is not None:
            counted = [annotator] if counted is None or annotator in counted else []
        progress = store.queue_progress(head.name, head.rubric_hash, criteria=head.criteria,
                                        annotators=counted, total=head.size)
        people: list[str | None] = [assignee] if assignee is not None else [
            *_who_worked(openers, progress)]
        people = people or [None]
        for person in people:
            if annotator is not None and person != annotator:
                continue
            stats = progress.get(person) if person is not None else None
            if stats is None:
                stats = empty_progress(head, person or "")
            row = stats.to_dict()
            row.update(annotator=person, rubric_hash=head.rubric_hash,
                       strategy=head.strategy, assigned=assignee is not None,
                       sessions=live.get((head.name, person or ""), 0))
            rows.append(row)
    return rows


def _who_worked(openers: list[str] | None, progress: dict[str, QueueProgress]) -> list[str]:
    """The annotators listed under an unassigned queue (see :func:`queue_rows`)."""
    if openers is None:
        return sorted(progress)
    return openers


def criteria_left(row: dict[str, Any]) -> str:
    """``coherence 3 left, fluency 5 left`` for a whole-file queue's row; '' for one rubric."""
    criteria = row.get("criteria") or {}
    return ", ".join(f"{name} {counts['remaining']} left" for name, counts in criteria.items())
