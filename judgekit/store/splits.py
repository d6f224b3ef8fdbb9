"""Train/dev/test splits for ``judgekit align``, the record of every look at them, and the
optimizer's stored answers.

A split is drawn once per rubric and dataset scope and never redrawn: items keep their
part for good, and newly labeled items are added (``add_split_items``), never moved.
Each evaluation on a part is appended to ``split_uses`` (who, when, which candidates,
the result), so ``align`` can say how often the test split has been looked at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.store import rows as R
from judgekit.store._base import StoreBase

#: The parts of a split, in the order they are drawn and shown.
PARTS: tuple[str, ...] = ("train", "dev", "test")


@dataclass(frozen=True)
class SplitRecord:
    """One stored split: its rubric, scope (a dataset, or ``''`` for all), seed, fractions."""

    id: int
    rubric_hash: str
    scope: str
    seed: int
    fractions: Mapping[str, float]
    created_at: str


@dataclass(frozen=True)
class SplitItem:
    """An item's part, the group it moves with (prompt or cluster) and its stratum."""

    dataset: str
    item_id: str
    part: str
    group: str
    stratum: str | None = None


@dataclass(frozen=True)
class SplitUse:
    """One evaluation on a part: who ran it, when, on which candidates, and what it gave."""

    id: int
    part: str
    who: str
    created_at: str
    candidates: list[dict[str, Any]]
    result: dict[str, Any]


class SplitsMixin(StoreBase):
    """Splits, their items and uses; the optimizer's answers by request hash."""

    def get_split(self, rubric_hash: str, scope: str) -> SplitRecord | None:
        row = self._one("SELECT * FROM splits WHERE rubric_hash = ? AND scope = ?",
                        (rubric_hash, scope))
        if row is None:
            return None
        return SplitRecord(row["id"], row["rubric_hash"], row["scope"], row["seed"],
                           json.loads(row["fractions"]), row["created_at"])

    def create_split(
        self, rubric_hash: str, scope: str, seed: int, fractions: Mapping[str, float],
        items: Sequence[SplitItem],
    ) -> SplitRecord:
        """Store a new split and its items in one transaction (a split exists whole or not)."""
        now = R.utc_now()
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO splits (rubric_hash, scope, seed, fractions, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (rubric_hash, scope, seed, R.canonical_json(dict(fractions)), now))
            split_id = int(cursor.lastrowid or 0)
            self._insert_items(conn, split_id, items, now)
        found = self.get_split(rubric_hash, scope)
        assert found is not None
        return found

    def add_split_items(self, split_id: int, items: Sequence[SplitItem]) -> None:
        """Add newly labeled items to a split; an item already in it keeps its part."""
        if items:
            with self._write() as conn:
                self._insert_items(conn, split_id, items, R.utc_now())

    @staticmethod
    def _insert_items(conn: Any, split_id: int, items: Sequence[SplitItem], now: str) -> None:
        conn.executemany(
            "INSERT OR IGNORE INTO split_items "
            "(split_id, dataset, item_id, part, grp, stratum, added_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(split_id, i.dataset, i.item_id, i.part, i.group, i.stratum, now) for i in items])

    def split_items(self, split_id: int) -> list[SplitItem]:
        rows = self._tuples(
            "SELECT dataset, item_id, part, grp, stratum FROM split_items WHERE split_id = ? "
            "ORDER BY dataset, item_id", (split_id,))
        return [SplitItem(*row) for row in rows]

    def record_split_use(
        self, split_id: int, part: str, who: str, candidates: Sequence[Mapping[str, Any]],
        result: Mapping[str, Any],
    ) -> int:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO split_uses (split_id, part, who, created_at, candidates, result) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (split_id, part, who, R.utc_now(), json.dumps([dict(c) for c in candidates]),
                 json.dumps(dict(result), allow_nan=False, default=str)))
            return int(cursor.lastrowid or 0)

    def split_uses(self, split_id: int, part: str | None = None) -> list[SplitUse]:
        sql = "SELECT * FROM split_uses WHERE split_id = ?"
        params: list[Any] = [split_id]
        if part is not None:
            sql += " AND part = ?"
            params.append(part)
        return [
            SplitUse(row["id"], row["part"], row["who"], row["created_at"],
                     json.loads(row["candidates"]), json.loads(row["result"]))
            for row in self._rows(sql + " ORDER BY id", params)
        ]

    def get_proposal(self, request_hash: str) -> tuple[str, str | None, str | None] | None:
        """A stored optimizer answer: (status, text, error), or None if never asked."""
        row = self._one("SELECT status, text, error FROM align_proposals WHERE request_hash = ?",
                        (request_hash,))
        return None if row is None else (row["status"], row["text"], row["error"])

    def save_proposal(self, request_hash: str, model: str, endpoint: str, status: str,
                      text: str | None, error: str | None) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO align_proposals "
                "(request_hash, model, endpoint, status, text, error, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (request_hash, model, endpoint, status, text, error, R.utc_now()))
