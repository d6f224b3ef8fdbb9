"""Labeling queues as a lead lists them: which queues stand for a rubric, and how far people got.

A queue drawn for a whole multi-criteria rubric file (``annotate --rubric FILE``,
``queue assign --rubric FILE``) is labeled on every criterion on one screen, each
criterion's label a row under its own derived rubric. Its ``rubric_hash`` column
holds the first criterion's hash (the draw ranks items by that criterion); the
criteria it stands for are in ``params["criteria"]`` (``[[name, sha256], ...]``).
Counting such a queue by its ``rubric_hash`` alone would call an item done once
its first criterion was labeled, and listing queues by it would hide the queue
from every other criterion; :class:`QueueHead` and
:meth:`QueueCountsMixin.queue_progress` read the whole queue instead.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.store import rows as R
from judgekit.store._base import StoreBase
from judgekit.types import ADJUDICATED_SOURCE

#: The queue parameter naming a whole-file queue's criteria: [[name, sha256], ...].
CRITERIA_PARAM = "criteria"
#: The queue parameter naming the rubric file a whole-file queue was drawn for.
CRITERIA_FILE_PARAM = "criteria_file"


@dataclass(frozen=True)
class QueueHead:
    """A queue's metadata and size, read without its entries."""

    name: str
    rubric_hash: str
    strategy: str
    seed: int | None
    params: dict[str, Any]
    created_at: str
    size: int

    @property
    def criteria(self) -> tuple[tuple[str, str], ...]:
        """(criterion, sha256) of a whole-file queue, in file order; () for one rubric."""
        listed = self.params.get(CRITERIA_PARAM)
        if not isinstance(listed, list):
            return ()
        return tuple((str(pair[0]), str(pair[1])) for pair in listed
                     if isinstance(pair, list) and len(pair) == 2)

    @property
    def criteria_file(self) -> str | None:
        """The name of the rubric file a whole-file queue was drawn for."""
        found = self.params.get(CRITERIA_FILE_PARAM)
        return str(found) if found is not None and self.criteria else None

    @property
    def rubric_hashes(self) -> tuple[str, ...]:
        """Every rubric whose labels the queue collects (each criterion's, or its one)."""
        return tuple(sha for _, sha in self.criteria) or (self.rubric_hash,)


@dataclass(frozen=True)
class QueueMatch:
    """Which queues a rubric reference picks: those collecting labels of any of ``hashes``
    (a whole-file queue through any of its criteria), and whole-file queues drawn for a
    file named in ``files``."""

    hashes: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()

    @classmethod
    def of(cls, hashes: Collection[str] = (), files: Collection[str] = ()) -> QueueMatch:
        return cls(frozenset(hashes), frozenset(files))

    def picks(self, head: QueueHead) -> bool:
        return (not self.hashes.isdisjoint(head.rubric_hashes)
                or (head.criteria_file is not None and head.criteria_file in self.files))


@dataclass(frozen=True)
class CriterionProgress:
    """One annotator's progress on one criterion of a whole-file queue."""

    name: str
    rubric_hash: str
    total: int
    labeled: int = 0
    skipped: int = 0
    flagged: int = 0

    @property
    def done(self) -> int:
        return self.labeled + self.skipped

    @property
    def remaining(self) -> int:
        return self.total - self.done

    def to_dict(self) -> dict[str, object]:
        return {"rubric_hash": self.rubric_hash, "labeled": self.labeled,
                "skipped": self.skipped, "flagged": self.flagged, "done": self.done,
                "remaining": self.remaining}


@dataclass(frozen=True)
class QueueProgress:
    """One annotator's progress through one queue.

    ``labeled + skipped + remaining == total``; ``flagged`` overlaps them. On a
    whole-file queue an item is done once every criterion has a label or a skip
    from the annotator: ``labeled`` when every criterion has a label, ``skipped``
    when some criterion was skipped; it is flagged when any criterion is, and
    ``criteria`` holds each criterion's own counts (empty for a one-rubric queue).
    """

    queue: str
    annotator: str
    total: int
    labeled: int
    skipped: int
    flagged: int
    criteria: tuple[CriterionProgress, ...] = field(default=())

    @property
    def remaining(self) -> int:
        return self.total - self.labeled - self.skipped

    def to_dict(self) -> dict[str, object]:
        """The row's fields; ``criteria`` is None for a one-rubric queue, else an object
        of each criterion's counts by name."""
        return {
            "queue": self.queue, "annotator": self.annotator, "total": self.total,
            "labeled": self.labeled, "skipped": self.skipped, "flagged": self.flagged,
            "remaining": self.remaining,
            "criteria": {c.name: c.to_dict() for c in self.criteria} if self.criteria else None,
        }


class QueueCountsMixin(StoreBase):
    """Queue listings and per-annotator progress (mixed into the Store)."""

    def queue_heads(self, match: QueueMatch | None = None) -> list[QueueHead]:
        """Every queue (or those ``match`` picks) with its size, oldest first; one query."""
        rows = self._tuples(
            "SELECT q.name, q.rubric_hash, q.strategy, q.seed, q.params, q.created_at, "
            "(SELECT COUNT(*) FROM queue_items i WHERE i.queue = q.name) "
            "FROM queues q ORDER BY q.created_at, q.name")
        heads = [QueueHead(name, sha, strategy, seed, R.load_json(params), created, int(size))
                 for name, sha, strategy, seed, params, created, size in rows]
        return heads if match is None else [h for h in heads if match.picks(h)]

    def queue_progress(
        self, queue: str, rubric_hash: str, *, criteria: Sequence[tuple[str, str]] = (),
        annotators: Collection[str] | None = None, total: int | None = None,
    ) -> dict[str, QueueProgress]:
        """Progress of every annotator with a label on an item of ``queue``, in one query.

        With ``criteria`` (a whole-file queue's (name, sha256) pairs) the labels of
        every criterion count, each item once (see :class:`QueueProgress`), and each
        criterion's counts come from the same pass. ``annotators`` limits the count to
        those people (an assigned queue's assignee): the query then reads only their
        labels. ``total`` is the queue's size when the caller has it (:class:`QueueHead`),
        else counted. Adjudications are not counted: they settle items, they are not an
        annotator's work through the queue.
        """
        if total is None:
            total_row = self._one("SELECT COUNT(*) FROM queue_items WHERE queue = ?", [queue])
            total = int(total_row[0]) if total_row is not None else 0
        if annotators is not None and not annotators:
            return {}
        pairs = list(criteria) or [("", rubric_hash)]
        hashes = list(dict.fromkeys(sha for _, sha in pairs))
        k = len(hashes)
        sql = _progress_sql(k, None if annotators is None else len(annotators))
        found = self._tuples(sql, [*hashes, queue, ADJUDICATED_SOURCE, *(annotators or ())])
        out: dict[str, QueueProgress] = {}
        for name, labeled, skipped, flagged, *per in found:
            counts = {sha: (int(per[3 * i + 1]), int(per[3 * i]) - int(per[3 * i + 1]),
                            int(per[3 * i + 2])) for i, sha in enumerate(hashes)}
            out[name] = QueueProgress(
                queue, name, total, int(labeled), int(skipped), int(flagged),
                criteria=tuple(CriterionProgress(c, sha, total, *counts[sha])
                               for c, sha in criteria))
        return out


def _progress_sql(k: int, n_annotators: int | None) -> str:
    """The one query of :meth:`QueueCountsMixin.queue_progress` over ``k`` rubrics.

    Parameters: ``?1..?k`` the rubrics' hashes, then the queue, the adjudication
    source and the annotators. ``latest`` is each annotator's latest non-adjudication
    row per criterion and queue position (SQLite takes the bare columns of a
    ``MAX()`` group from the row holding the maximum); ``items`` folds an item's rows
    into whether every criterion has one (all labels: labeled; some skip: skipped)
    and, per criterion, whether it has a row, a label, a flag.
    """
    rubrics = ", ".join(f"?{i + 1}" for i in range(k))
    who = ("" if n_annotators is None else " AND l.annotator IN ("
           + ", ".join(f"?{k + 3 + i}" for i in range(n_annotators)) + ")")
    per_item = "".join(f", MAX(rubric_hash = ?{i + 1}) AS r{i}, "
                       f"MAX(rubric_hash = ?{i + 1} AND labeled) AS l{i}, "
                       f"MAX(rubric_hash = ?{i + 1} AND flagged) AS f{i}" for i in range(k))
    sums = "".join(f", SUM(r{i}), SUM(l{i}), SUM(f{i})" for i in range(k))
    return (
        "WITH latest AS (SELECT q.position AS position, l.annotator AS annotator, "
        "l.rubric_hash AS rubric_hash, MAX(l.id), l.label IS NOT NULL AS labeled, "
        "l.flagged AS flagged FROM queue_items q JOIN labels l "
        f"ON l.rubric_hash IN ({rubrics}) AND l.dataset = q.dataset AND l.item_id = q.item_id"
        f"{who} WHERE q.queue = ?{k + 1} AND l.source != ?{k + 2} "
        "GROUP BY q.position, l.rubric_hash, l.annotator), "
        "items AS (SELECT annotator, COUNT(*) AS n, SUM(labeled) AS n_labeled, "
        f"MAX(flagged) AS flagged{per_item} FROM latest GROUP BY annotator, position) "
        f"SELECT annotator, SUM(n = {k} AND n_labeled = n), SUM(n = {k} AND n_labeled < n), "
        f"SUM(flagged){sums} FROM items GROUP BY annotator ORDER BY annotator"
    )


def empty_progress(head: QueueHead, annotator: str) -> QueueProgress:
    """The progress of someone with no label on the queue yet."""
    return QueueProgress(head.name, annotator, head.size, 0, 0, 0,
                         criteria=tuple(CriterionProgress(c, sha, head.size)
                                        for c, sha in head.criteria))


__all__ = ["CRITERIA_FILE_PARAM", "CRITERIA_PARAM", "CriterionProgress", "QueueCountsMixin",
           "QueueHead", "QueueMatch", "QueueProgress", "empty_progress"]
