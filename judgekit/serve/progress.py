"""Per-annotator progress through labeling queues, as plain rows (CLI and API share it)."""

from __future__ import annotations

from typing import Any

from judgekit.store import Store
from judgekit.store.access import QueueProgress


def queue_rows(
    store: Store, rubric_hash: str | None = None, *, annotator: str | None = None
) -> list[dict[str, Any]]:
    """One row per (queue, annotator): the assignee of an assigned queue, else who opened it.

    Queues share items, so a label on an item of a shared queue may have been given
    in another queue: only those who opened the queue are listed under it (who
    labeled its items, for a queue opened before openings were recorded).
    Adjudications are nobody's remaining work (:meth:`Store.queue_progress`).

    With ``annotator`` only that person's rows: what an annotator's token may see.
    ``sessions`` is how many browser sessions of ``judgekit serve`` are open on the
    queue as that annotator now (0 when no server runs on the store).
    """
    from judgekit.serve.live_sessions import open_sessions

    live = open_sessions(store)
    rows: list[dict[str, Any]] = []
    for name in store.list_queues(rubric_hash):
        found = store.get_queue(name)
        if found is None:
            continue
        meta, entries = found
        progress = store.queue_progress(name, meta["rubric_hash"])
        assignee = meta["params"].get("annotator")
        people: list[str | None] = [assignee] if assignee is not None else [
            *_who_worked(store.queue_openers(name), progress)]
        people = people or [None]
        for person in people:
            if annotator is not None and person != annotator:
                continue
            stats = progress.get(person) if person is not None else None
            if stats is None:
                stats = QueueProgress(name, person or "", len(entries), 0, 0, 0)
            row = stats.to_dict()
            row.update(annotator=person, rubric_hash=meta["rubric_hash"],
                       strategy=meta["strategy"], assigned=assignee is not None,
                       sessions=live.get((name, person or ""), 0))
            rows.append(row)
    return rows


def _who_worked(openers: list[str] | None, progress: dict[str, QueueProgress]) -> list[str]:
    """The annotators listed under an unassigned queue (see :func:`queue_rows`)."""
    if openers is None:
        return sorted(progress)
    return openers
