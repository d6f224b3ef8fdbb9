"""A progress bar on stderr for the commands that take seconds on a large store.

``report``, ``compare``, ``agree`` (and any command that wraps its work in
:func:`progress_bar`) show one bar whose steps are the phases the library
announces (:mod:`judgekit.progress`); a phase that counts its rows fills the bar
row by row. It is drawn on stderr only, so stdout (a JSON report, an export) is
never touched, and only when stderr is a terminal; ``JUDGEKIT_PROGRESS=1`` asks
for it anyway (then, off a terminal, one plain line per phase, for a CI log) and
``JUDGEKIT_PROGRESS=0`` turns it off (:mod:`judgekit.progress_bar`, shared with the
bar of a judging run). ``rich`` is imported only when a bar is drawn.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from judgekit.progress import reporting
from judgekit.progress_bar import PROGRESS_ENV, progress_wanted, rich_bar

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class _Lines:
    """Off a terminal: one line per phase on ``stream``, then the time taken."""

    def __init__(self, description: str, steps: int | None, stream: TextIO) -> None:
        self.description, self.steps, self.stream = description, steps, stream
        self.seen = 0
        self.start = time.perf_counter()

    def phase(self, name: str, total: int | None) -> None:
        self.seen += 1
        of = f" [{self.seen}/{max(self.steps, self.seen)}]" if self.steps else ""
        rows = f" ({total:,})" if total is not None else ""
        self._write(f"{self.description}{of}: {name}{rows}")

    def advance(self, units: int) -> None:
        """Counts are not printed off a terminal (a log wants one line a phase)."""

    def done(self) -> None:
        self._write(f"{self.description}: done in {time.perf_counter() - self.start:.1f} s")

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


class _Bar:
    """On a terminal: a rich bar of phases, filled unit by unit in a phase that counts."""

    def __init__(self, description: str, steps: int | None, bar: Progress, task: TaskID) -> None:
        self.description, self.steps = description, steps
        self.bar, self.task = bar, task
        self.seen = 0
        self.label, self.counting, self.rows = description, False, 0

    def phase(self, name: str, total: int | None) -> None:
        self.seen += 1
        steps = max(self.steps or 0, self.seen)
        of = f" [{self.seen}/{steps}]" if self.steps else ""
        self.label, self.counting, self.rows = f"{self.description}{of}: {name}", total is None, 0
        if total is not None:
            self.bar.update(self.task, description=self.label, total=max(total, 1), completed=0)
        else:
            self.bar.update(self.task, description=self.label, total=steps,
                            completed=self.seen - 1)

    def advance(self, units: int) -> None:
        """Fill a phase of known size; in a phase of unknown size (a streamed file) count rows."""
        if not self.counting:
            self.bar.advance(self.task, units)
            return
        self.rows += units
        self.bar.update(self.task, description=f"{self.label} ({self.rows:,} rows)")


@contextmanager
def progress_bar(description: str, steps: int | None = None) -> Iterator[None]:
    """Show the progress of the block on stderr (nothing when not wanted).

    ``steps`` is the number of phases the block is expected to announce (shown as
    ``[2/5]``); a phase announced with a total fills the bar by its units instead.
    """
    if not progress_wanted():
        yield
        return
    stream = sys.stderr
    if not stream.isatty():
        lines = _Lines(description, steps, stream)
        with reporting(lines):
            yield
        lines.done()
        return
    with rich_bar(stream) as bar:
        task = bar.add_task(description, total=steps or 1)
        with reporting(_Bar(description, steps, bar, task)):
            yield


__all__ = ["PROGRESS_ENV", "progress_bar", "progress_wanted"]
