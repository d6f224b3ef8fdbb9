"""Which calls a run would make: its work units and the latest stored outcome of each call.

Kept apart from the runner so that the joint run of a criteria file
(:mod:`judgekit.judging.joint`) reads the store the same way, a chunk of cache
keys per query.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice

from judgekit.judging.claims import Call
from judgekit.judging.units import WorkUnit, unit_for
from judgekit.store import Store
from judgekit.types import Item

__all__ = ["CHUNK_SIZE", "lookup", "new_run_id", "units_of"]

#: Units whose cache keys are looked up per query.
CHUNK_SIZE = 1000


def new_run_id() -> str:
    """Sortable and unique: UTC timestamp plus random suffix."""
    return f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def units_of(items: Iterable[Item | WorkUnit], variants: Sequence[str]) -> Iterator[WorkUnit]:
    for entry in items:
        if isinstance(entry, WorkUnit):
            yield entry
        else:
            for variant in variants:
                yield unit_for(entry, variant)


def lookup(
    store: Store, units: Iterator[WorkUnit], samples: int, key_for: Callable[[WorkUnit, int], str]
) -> Iterator[Call]:
    """Every call (unit, sample) with its key and latest stored outcome, one query per chunk."""
    while chunk := list(islice(units, CHUNK_SIZE)):
        keyed = [(u, s, key_for(u, s)) for u in chunk for s in range(samples)]
        found = store.latest_judgments_by_key(k for _, _, k in keyed)
        for unit, sample, key in keyed:
            row_id, previous = found.get(key, (None, None))
            yield Call(unit, sample, key, row_id, previous)
