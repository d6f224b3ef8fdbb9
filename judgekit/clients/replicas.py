"""Several URLs serving one judge: which replica takes the next attempt, and which rest.

A judge given several base URLs (``--base-url`` more than once with one
``--endpoint-name``) is one judge: one cache key, one endpoint in every stored
row. Only the transport is spread: each attempt goes to the replica with the
fewest attempts in hand (in flight or waiting for its pacer), ties taken in
turn (round-robin), a replica whose pacer is holding back only when none is
free. A replica that fails an attempt (connection error, timeout, 5xx, a body
that is not JSON) is avoided for that call's retry when another is available,
and after :data:`TRIP_AFTER` failures in a row it is taken out for a cool-down
(:data:`COOL_DOWN_S`, doubling on every further trip up to
:data:`MAX_COOL_DOWN_S`); a success puts it back to normal. With one URL
nothing here changes what a call does.

No HTTP in this module: a replica carries its client as an opaque object.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.clients.pacing import Pacer

__all__ = ["COOL_DOWN_S", "MAX_COOL_DOWN_S", "TRIP_AFTER", "Replica", "ReplicaPool"]

log = logging.getLogger("judgekit.replicas")

#: Failures in a row that take a replica out (when another one is left).
TRIP_AFTER = 3
#: The first cool-down, in seconds; each further trip doubles it.
COOL_DOWN_S = 30.0
MAX_COOL_DOWN_S = 300.0


@dataclass(eq=False)
class Replica:
    """One URL of a judge: its client, its pacer, and what it did in this run."""

    #: the URL as stored and shown (no credentials)
    public_url: str
    client: Any
    pacer: Pacer
    #: attempts chosen for it and not finished (in flight or waiting for the pacer)
    busy: int = 0
    failures_in_row: int = 0
    trips: int = 0
    cool_until: float = -math.inf
    requests: int = 0
    failed: int = 0
    cool_downs: int = 0

    def stats(self) -> dict[str, Any]:
        return {"url": self.public_url, "requests": self.requests, "failed": self.failed,
                "cool_downs": self.cool_downs, **self.pacer.stats()}


class ReplicaPool:
    """Chooses a replica per attempt and keeps their health (see the module docstring)."""

    def __init__(self, replicas: Sequence[Replica], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not replicas:
            raise ValueError("a replica pool needs at least one replica")
        self.replicas = list(replicas)
        self._clock = clock
        self._turn = 0

    def __len__(self) -> int:
        return len(self.replicas)

    def _rank(self, index: int, avoid: Collection[Replica], now: float) -> tuple[Any, ...]:
        replica = self.replicas[index]
        return (replica.cool_until > now, replica in avoid, replica.pacer.free_at > now,
                replica.busy, (index - self._turn) % len(self.replicas))

    def choose(self, avoid: Collection[Replica] = ()) -> Replica:
        """The replica for the next attempt, counted busy until :meth:`release`.

        Cooling and ``avoid`` (the replicas that already failed this call) are
        taken only when nothing else is left; among the rest, the least busy.
        """
        now = self._clock()
        index = min(range(len(self.replicas)), key=lambda i: self._rank(i, avoid, now))
        self._turn = (index + 1) % len(self.replicas)
        replica = self.replicas[index]
        replica.busy += 1
        return replica

    def take(self, replica: Replica) -> Replica:
        """``replica`` for the next attempt, whatever its rank (counted busy until released)."""
        replica.busy += 1
        return replica

    def can_fail_over(self, avoid: Collection[Replica]) -> bool:
        """Whether a retry could go at once to a replica not in ``avoid`` that is not cooling."""
        now = self._clock()
        return any(r not in avoid and r.cool_until <= now and r.pacer.free_at <= now
                   for r in self.replicas)

    def release(self, replica: Replica, *, sent: bool, fault: bool = False) -> None:
        """An attempt chosen for ``replica`` ended; ``fault``: the replica failed it."""
        replica.busy -= 1
        if not sent:
            return
        replica.requests += 1
        if not fault:
            replica.failures_in_row = 0
            replica.trips = 0
            return
        replica.failed += 1
        replica.failures_in_row += 1
        if len(self.replicas) > 1 and replica.failures_in_row >= TRIP_AFTER:
            replica.failures_in_row = 0
            replica.trips += 1
            replica.cool_downs += 1
            pause = min(MAX_COOL_DOWN_S, COOL_DOWN_S * 2.0 ** (replica.trips - 1))
            replica.cool_until = self._clock() + pause
            log.info("replica %s failed %d attempts in a row: no calls for %.0f s",
                     replica.public_url, TRIP_AFTER, pause)

    def stats(self) -> list[dict[str, Any]]:
        return [replica.stats() for replica in self.replicas]
