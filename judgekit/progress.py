"""Named phases of long library calls, for whoever shows progress (the CLI's bar).

A report, a comparison or an import over 100,000 items takes seconds; the library
announces each phase with :func:`phase` (and, where a phase walks rows it can
count, :func:`advance` every few thousand rows) and knows nothing of terminals.
A caller that wants to show progress runs the call inside :func:`reporting` with
a :class:`Listener`; without one, :func:`phase` and :func:`advance` do nothing
but read one context variable, so they cost nothing measurable.

    with reporting(listener):          # the CLI: judgekit.cli._progress.progress_bar
        import_labels(store, path, rubric)

    def import_labels(...):            # the library
        phase("reading", total=n_lines)
        for i, line in enumerate(lines):
            ...
            if i % 5000 == 4999:
                advance(5000)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Listener(Protocol):
    """Receives the phases and counts announced inside :func:`reporting`."""

    def phase(self, name: str, total: int | None) -> None:
        """A new phase ``name`` starts; ``total`` units if known (rows, items), else None."""

    def advance(self, units: int) -> None:
        """``units`` more units of the current phase are done."""


_listener: ContextVar[Listener | None] = ContextVar("judgekit_progress", default=None)


def phase(name: str, total: int | None = None) -> None:
    """Announce that the running call starts ``name`` (e.g. "reading labels")."""
    listener = _listener.get()
    if listener is not None:
        listener.phase(name, total)


def advance(units: int = 1) -> None:
    """Announce ``units`` more units done in the current phase (call it per chunk, not per row)."""
    listener = _listener.get()
    if listener is not None:
        listener.advance(units)


@contextmanager
def reporting(listener: Listener) -> Iterator[None]:
    """Send every :func:`phase` and :func:`advance` announced inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


__all__ = ["Listener", "advance", "phase", "reporting"]
