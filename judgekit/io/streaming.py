"""Batches of a stream of records: how a large import is checked and written in flat memory.

The readers (:mod:`judgekit.io.records`) yield one record at a time; the
importers check each one and write the good ones a batch at a time into one
transaction (:meth:`judgekit.store.Store.importing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from judgekit.io.records import ErrorList, Record
from judgekit.progress import advance, phase

T = TypeVar("T")


def batched(values: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of ``size`` consecutive values (the last one shorter), for chunked imports."""
    batch: list[T] = []
    for value in values:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def write_checked(
    records: Iterable[Record], check: Callable[[Record], T | None],
    write: Callable[[list[T]], None], errors: ErrorList, size: int,
) -> None:
    """Check every record; ``write`` each batch of good rows until the first problem.

    After a problem nothing more is written but the rest is still checked, so the
    caller raises every problem at once (which rolls its transaction back).
    """
    phase("checking and writing rows")
    for batch in batched(records, size):
        rows = [row for row in map(check, batch) if row is not None]
        if not errors.errors:
            write(rows)
        advance(len(batch))
