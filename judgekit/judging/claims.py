"""A run's claims on the calls it makes, so that concurrent runs never pay twice.

Two identical ``judgekit judge`` commands on one store used to make every call
twice. Now a run claims each call before making it (the store's side is
:mod:`judgekit.store.claims`): a call another live run has claimed is *deferred*,
and once this run has queued everything else it waits for those calls. When the
other run records an outcome that needs no call, it counts as cached here;
when the other run is gone (finished without it, interrupted, killed) or left a
transient failure, this run claims the call and makes it.

An owner is ``host:pid:token``. Claims expire after :data:`CLAIM_TTL_S` unless
renewed (every :data:`RENEW_EVERY_S` while the run lives); on the same host a
claim whose process is gone (``kill -9``) is taken over at once.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from judgekit.judging.cache import needs_call
from judgekit.judging.units import WorkUnit
from judgekit.store import Store
from judgekit.types import Judgment, canonical_json, sha256_text

_T = TypeVar("_T")

#: Seconds a claim lives without renewal (a hung run's claims free up after this).
CLAIM_TTL_S = 120.0
#: Seconds between renewals of a live run's claims.
RENEW_EVERY_S = 20.0
#: Seconds between looks at calls another run is making.
POLL_S = 0.25


def new_owner() -> str:
    """This run's owner id: ``host:pid:token``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_alive(owner: str) -> bool:
    """False only when the owner ran on this host and its process is gone."""
    host, _, rest = owner.partition(":")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(rest.partition(":")[0]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError):
        return True
    return True


@dataclass
class Call:
    """One call a run wants to make: its unit and sample, its key, the latest outcome seen."""

    unit: WorkUnit
    sample: int
    key: str
    seen_id: int | None
    seen: Judgment | None


class Claims:
    """The claims of one run on ``store`` (owner, renewals, deferred calls)."""

    def __init__(self, store: Store, *, ttl_s: float = CLAIM_TTL_S) -> None:
        self.store, self.ttl_s = store, ttl_s
        self.owner = new_owner()
        self.deferred: list[Call] = []
        self.holders: set[str] = set()

    def claim(self, calls: list[Call]) -> list[tuple[Call, int | None]]:
        """Claim ``calls``; returns those claimed with the outcome id each supersedes.

        The others (claimed by another live run, or answered since they were
        looked up) are deferred: see :meth:`settle`.
        """
        if not calls:
            return []
        result = self.store.claim_calls({c.key: c.seen_id for c in calls}, self.owner,
                                        ttl_s=self.ttl_s, owner_alive=owner_alive)
        self.holders.update(result.busy.values())
        claimed = [(c, result.claimed[c.key]) for c in calls if c.key in result.claimed]
        self.deferred.extend(c for c in calls if c.key not in result.claimed)
        return claimed

    def settle(self) -> tuple[list[tuple[Call, int | None]], list[tuple[int, Judgment]]]:
        """Look at the deferred calls again: (calls claimed now, outcomes another run stored,
        each with its row id).

        An outcome recorded since the call was first seen is someone else's
        answer: it is reused unless it is a transient failure (``force`` and
        ``retry_failed`` applied to what existed when this run looked, not to
        the other run's fresh answer). Calls still held elsewhere stay deferred.
        """
        calls, self.deferred = self.deferred, []
        outcomes = self.store.latest_judgments_by_key(c.key for c in calls)
        again: list[Call] = []
        answered: list[tuple[int, Judgment]] = []
        for call in calls:
            row_id, latest = outcomes.get(call.key, (None, None))
            if row_id == call.seen_id:
                again.append(call)
            elif row_id is not None and latest is not None and not needs_call(
                    latest, retry_failed=False):
                answered.append((row_id, latest))
            else:
                call.seen_id, call.seen = row_id, latest
                again.append(call)
        return self.claim(again), answered

    async def once(self, key: str, ready: Callable[[], bool],
                   make: Callable[[], Awaitable[_T]]) -> _T:
        """``make()`` under a claim on ``key``, unless ``ready()`` says it is stored already.

        For work every run on a store needs once and then reads from the store (the
        capability probe of a new endpoint): the first run claims ``key`` and does
        it; a run that finds the key claimed waits until the work is stored, or
        until the claim ends without it (that run failed), then tries again.
        ``make`` reads the stored answer when there is one.
        """
        while not ready():
            result = self.store.claim_calls({key: None}, self.owner, ttl_s=self.ttl_s,
                                            owner_alive=owner_alive)
            if key in result.claimed:
                try:
                    return await make()
                finally:
                    self.store.release_claim(key, self.owner)
            await asyncio.sleep(POLL_S)
        return await make()

    def waiting_note(self) -> str:
        """What the user is told while this run waits for calls made elsewhere."""
        return (f"{len(self.deferred)} call(s) are being made by another run on this store "
                f"({', '.join(sorted(self.holders))}): waiting for its answers")

    def record(self, judgment: Judgment, supersedes: int | None) -> bool:
        """Store an outcome made under this run's claim; False if refused as a duplicate."""
        return self.store.record_claimed(judgment, self.owner, supersedes)

    async def keep_alive(self) -> None:
        """Renew this run's claims until cancelled."""
        while True:
            await asyncio.sleep(RENEW_EVERY_S)
            self.store.renew_claims(self.owner, ttl_s=self.ttl_s)

    def release(self) -> None:
        """Drop every claim this run still holds (calls it did not make)."""
        self.store.release_claims(self.owner)


def capability_claim(base_url: str, model: str) -> str:
    """The claim key of an endpoint+model's capability probe (never a call's cache key)."""
    return f"capabilities:{sha256_text(canonical_json([base_url, model]))}"


__all__ = ["CLAIM_TTL_S", "POLL_S", "RENEW_EVERY_S", "Call", "Claims", "capability_claim",
           "new_owner", "owner_alive"]
