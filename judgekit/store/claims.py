"""Claims on calls, so that two runs on one store never pay for the same call twice.

Before a run calls the judge for a cache key it *claims* the key: a row in
``claims`` with the run's owner id, an expiry and the id of the finished
judgment the new outcome will replace (``supersedes``). A key claimed by
another live owner is not called; the run waits for that owner's outcome (see
:mod:`judgekit.judging.claims`). A claim ends when its outcome is recorded, when
its run ends, or when it expires or its owner's process is gone (``kill -9``):
then anyone may claim the key again.

The schema enforces the result: at most one *finished* outcome (``ok`` or an
answered failure) per cache key and predecessor (unique index
``judgments_one_outcome`` on ``(cache_key, supersedes)``, migration
``0006_one_outcome_per_call``). A run that lost its claim (it stalled past the
expiry and another run judged the key) has its duplicate refused instead of
stored; ``--force`` and ``--retry-failed`` add a new outcome that supersedes the
latest one, so history is kept.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from judgekit.store import rows as R
from judgekit.store._base import StoreBase, chunks, marks
from judgekit.types import Judgment

#: SQL list of the statuses that end a call for good (the model answered).
FINISHED_SQL = R.FINISHED_STATUSES_SQL


@dataclass
class ClaimResult:
    """What :meth:`ClaimsMixin.claim_calls` did with each key asked for.

    ``claimed`` maps each key now held to the finished judgment id its outcome
    supersedes (None: the first); ``busy`` maps keys held by another live owner
    to that owner; ``changed`` lists keys whose latest stored outcome is no longer
    the one the caller saw (someone recorded one meanwhile): not claimed, to be
    looked at again.
    """

    claimed: dict[str, int | None] = field(default_factory=dict)
    busy: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)


class ClaimsMixin(StoreBase):
    """Claims on cache keys and recording an outcome under a claim (mixed into the Store)."""

    def claim_calls(
        self,
        seen: Mapping[str, int | None],
        owner: str,
        *,
        ttl_s: float,
        owner_alive: Callable[[str], bool],
    ) -> ClaimResult:
        """Claim every key of ``seen`` (key -> latest judgment id the caller saw) it can.

        One transaction: a key is claimed unless another owner holds an unexpired
        claim and ``owner_alive(that owner)`` says it still runs, or its latest
        outcome changed since the caller looked.
        """
        result = ClaimResult()
        now = time.time()
        keys = list(seen)
        with self._write() as conn:
            conn.execute("DELETE FROM claims WHERE expires_at < ?", [now])
            for chunk in chunks(keys):
                holders = dict(conn.execute(
                    f"SELECT cache_key, owner FROM claims WHERE cache_key IN ({marks(len(chunk))})",
                    list(chunk)).fetchall())
                latest = dict(conn.execute(
                    f"SELECT cache_key, MAX(id) FROM judgments WHERE cache_key IN "
                    f"({marks(len(chunk))}) GROUP BY cache_key", list(chunk)).fetchall())
                finished = dict(conn.execute(
                    f"SELECT cache_key, MAX(id) FROM judgments WHERE cache_key IN "
                    f"({marks(len(chunk))}) AND status IN {FINISHED_SQL} GROUP BY cache_key",
                    list(chunk)).fetchall())
                rows = []
                for key in chunk:
                    holder = holders.get(key)
                    if holder is not None and holder != owner and owner_alive(holder):
                        result.busy[key] = holder
                    elif latest.get(key) != seen[key]:
                        result.changed.append(key)
                    else:
                        result.claimed[key] = finished.get(key)
                        rows.append((key, owner, now + ttl_s, finished.get(key)))
                conn.executemany(
                    "INSERT OR REPLACE INTO claims (cache_key, owner, expires_at, supersedes) "
                    "VALUES (?, ?, ?, ?)", rows)
        return result

    def renew_claims(self, owner: str, *, ttl_s: float) -> int:
        """Push the expiry of every claim of ``owner`` ``ttl_s`` s ahead; returns the count."""
        with self._write() as conn:
            cursor = conn.execute("UPDATE claims SET expires_at = ? WHERE owner = ?",
                                  [time.time() + ttl_s, owner])
            return cursor.rowcount

    def release_claims(self, owner: str) -> None:
        """Drop every claim of ``owner`` (its run ended, finished or not)."""
        with self._write() as conn:
            conn.execute("DELETE FROM claims WHERE owner = ?", [owner])

    def release_claim(self, cache_key: str, owner: str) -> None:
        """Drop ``owner``'s claim on one key (work done under it without storing a judgment)."""
        with self._write() as conn:
            conn.execute("DELETE FROM claims WHERE cache_key = ? AND owner = ?", [cache_key, owner])

    def claim_holders(self) -> dict[str, str]:
        """Every current claim: cache key -> owner (for tests and diagnostics)."""
        return dict(self._tuples("SELECT cache_key, owner FROM claims"))

    def record_claimed(self, judgment: Judgment, owner: str, supersedes: int | None) -> bool:
        """Store ``judgment`` and end ``owner``'s claim on its key, in one transaction.

        A finished outcome records ``supersedes`` (from the claim); if the key already
        has a finished outcome with that predecessor (the claim was lost to another
        run), the row is refused and False returned: the store keeps one outcome.
        """
        return self.record_claimed_many([(judgment, supersedes)], owner)[0]

    def record_claimed_many(
        self, outcomes: Sequence[tuple[Judgment, int | None]], owner: str
    ) -> list[bool]:
        """:meth:`record_claimed` for several outcomes of one call, in one transaction.

        A call that judged several criteria at once stores every criterion's
        judgment or none (a kill in between would lose a paid answer). Each is
        refused on its own when its key already has that outcome; returns which
        were stored.
        """
        stored: list[bool] = []
        with self._write() as conn:
            for judgment, supersedes in outcomes:
                row = R.judgment_to_row(judgment)
                row["supersedes"] = supersedes
                conn.execute("SAVEPOINT outcome")
                try:
                    conn.execute(R.CLAIMED_INSERT_SQL, row)
                    stored.append(True)
                except sqlite3.IntegrityError:
                    conn.execute("ROLLBACK TO outcome")
                    stored.append(False)
                conn.execute("RELEASE outcome")
                conn.execute("DELETE FROM claims WHERE cache_key = ? AND owner = ?",
                             [judgment.cache_key, owner])
        return stored


__all__ = ["FINISHED_SQL", "ClaimResult", "ClaimsMixin"]
