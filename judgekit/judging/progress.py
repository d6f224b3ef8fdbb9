"""What a run shows its user: a live progress bar, and the summary at the end.

Kept apart from :mod:`judgekit.judging.runner` because it is presentation and
bookkeeping only: the runner calls :meth:`Progress.advance` once per call and
fills a :class:`RunSummary`; neither knows about endpoints or the store. The bar
is the CLI's rich bar (:mod:`judgekit.progress_bar`), with the rate, the time
left and the cached and failed calls added.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from judgekit.progress_bar import is_terminal, progress_setting, rich_bar
from judgekit.textsafe import terminal_safe
from judgekit.types import STATUSES

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress

#: Off a terminal (``JUDGEKIT_PROGRESS=1`` or ``--progress``), a line per this share of the run.
LINE_EVERY = 0.1


class Progress:
    """The run's bar on stderr: drawn by rich on a terminal or in a notebook.

    ``enabled=None`` means ``$JUDGEKIT_PROGRESS`` when set, else "only if the
    stream is a terminal or a notebook's output", so logs and CI stay clean;
    ``True`` shows it on any stream (off a terminal as a few plain lines: at the
    start, every tenth of the run, at the end), ``False`` never.
    """

    def __init__(self, total: int | None, *, enabled: bool | None = None,
                 stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        if enabled is None:
            setting = progress_setting()
            enabled = (is_terminal(self.stream) or _in_notebook(self.stream)
                       if setting is None else setting)
        self.enabled = enabled
        self.total, self.done, self.cached, self.failed = total, 0, 0, 0
        self._start = time.perf_counter()
        self._bar: RichProgress | None = None
        self._lines_shown = -1
        if not enabled:
            return
        if is_terminal(self.stream) or _in_notebook(self.stream):
            self._open_bar()
        else:
            self._line()

    def _open_bar(self) -> None:
        from rich.progress import TextColumn

        self._bar = rich_bar(self.stream, TextColumn("{task.fields[extra]}"), transient=False,
                             force_terminal=True)
        self._task = self._bar.add_task("judging", total=self.total, extra=self._extra())
        self._bar.start()

    def _extra(self) -> str:
        """Rate of new calls (cached ones are free), time left, cached and failed calls."""
        elapsed = time.perf_counter() - self._start
        rate = (self.done - self.cached) / elapsed if elapsed > 0 else 0.0
        eta = "?"
        if self.total and rate:
            left = max(0, self.total - self.done) / rate
            eta = f"{int(left) // 60}:{int(left) % 60:02d}"
        return f"{rate:.1f}/s ETA {eta}  cached {self.cached}  failed {self.failed}"

    def _line(self) -> None:
        """One plain line (no control codes) for a log: where the run is."""
        of = f"/{self.total}" if self.total else ""
        self.stream.write(f"judging {self.done}{of}  {self._extra()}\n")
        self.stream.flush()

    def advance(self, *, cached: bool = False, failed: bool = False) -> None:
        self.done += 1
        self.cached += cached
        self.failed += failed
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, extra=self._extra())
        elif self.enabled and self.total:
            tenth = int(self.done / self.total / LINE_EVERY)
            if tenth > self._lines_shown and self.done < self.total:
                self._lines_shown = tenth
                self._line()

    def note(self, message: str) -> None:
        """A line the user must see (waiting for another run, stopping), bar or not."""
        if self._bar is not None:  # printed above the live bar, which stays below
            self._bar.refresh()  # redrawn below the note as it is now, not as last drawn
            self._bar.console.print(terminal_safe(message), markup=False, highlight=False,
                                    emoji=False, soft_wrap=True)
            return
        self.stream.write(terminal_safe(message) + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, extra=self._extra())
            self._bar.stop()
            self._bar = None
        elif self.enabled:
            self._line()


@dataclass
class RunSummary:
    """What a run did. ``counts`` holds the final status of every unit (cached or new)."""

    run_id: str
    dataset: str
    rubric_name: str
    rubric_hash: str
    model: str
    base_url: str
    total: int = 0
    cached: int = 0
    judged: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    new_counts: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    response_format: str | None = None
    interrupted: bool = False
    error: str | None = None
    #: cached outcomes that a concurrent run on the same store made while this one waited
    by_other_runs: int = 0
    #: outcomes made here but refused by the store: a concurrent run had stored one already
    refused_duplicates: int = 0
    #: per URL of the judge (no credentials): attempts, failures, cool-downs, pacing waits
    replicas: list[dict[str, Any]] = field(default_factory=list)
    #: the calls the run was asked to make, when known in advance (None: an iterator)
    planned: int | None = None
    #: cached outcomes by the run that made the call (``answered_by_run``)
    answered_by: Counter[str] = field(default_factory=Counter)

    def add_cached(self, status: str, *, other_run: bool = False, made_by: str = "") -> None:
        """Count a call answered from the store (by an earlier run, or a concurrent one)."""
        self.cached += 1
        self.by_other_runs += other_run
        self.counts[status] += 1
        if made_by:
            self.answered_by[made_by] += 1

    @property
    def abandoned(self) -> int:
        """Calls neither made nor found made: left when the run stopped early."""
        wanted = max(self.total, self.planned or 0)
        return max(0, wanted - self.cached - self.judged - self.refused_duplicates)

    def add_judged(self, status: str, *, attempts: int, prompt_tokens: int | None,
                   completion_tokens: int | None, stored: bool) -> None:
        """Count a call made now (``stored`` False: refused as another run's duplicate)."""
        self.requests += attempts
        if stored:
            self.judged += 1
            self.counts[status] += 1
            self.new_counts[status] += 1
        else:
            self.refused_duplicates += 1
        self.prompt_tokens += prompt_tokens or 0
        self.completion_tokens += completion_tokens or 0

    @property
    def judgments_per_s(self) -> float:
        return self.judged / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": max(self.total, self.planned or 0),  # an interrupted run: all it had to do
            "cached": self.cached,
            "judged": self.judged,
            "counts": {s: self.counts[s] for s in STATUSES if self.counts[s]},
            "new_counts": {s: self.new_counts[s] for s in STATUSES if self.new_counts[s]},
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "elapsed_s": round(self.elapsed_s, 3),
            "judgments_per_s": round(self.judgments_per_s, 2),
            "response_format": self.response_format,
            "interrupted": self.interrupted,
            "error": self.error,
            "by_other_runs": self.by_other_runs,
            "abandoned": self.abandoned,
            "answered_by": dict(self.answered_by.most_common()),
            "refused_duplicates": self.refused_duplicates,
            **({"replicas": self.replicas} if self.replicas else {}),
        }

    def status_line(self) -> str:
        """The final status counts, e.g. ``ok 9, parse_error 1`` (``none`` for an empty run)."""
        return ", ".join(f"{s} {self.counts[s]}" for s in STATUSES if self.counts[s]) or "none"

    def format(self) -> str:
        """A few human-readable lines for the end of a command."""
        if self.abandoned:  # stopped early: what was made, found and left, never "40 judgments"
            head = (f"run {self.run_id}: {self.judged} judged now, {self.cached} cached, "
                    f"{self.abandoned} not made of {self.judged + self.cached + self.abandoned} "
                    f"({self.requests} requests)")
        else:
            head = (f"run {self.run_id}: {self.total} judgments ({self.cached} cached, "
                    f"{self.judged} judged now, {self.requests} requests)")
        lines = [
            head,
            f"  status: {self.status_line()}",
            f"  tokens: {self.prompt_tokens} prompt + {self.completion_tokens} completion",
            f"  elapsed {self.elapsed_s:.1f} s, {self.judgments_per_s:.1f} judgments/s",
        ]
        if self.answered_by:
            lines.append("  cached: " + _made_by(self.answered_by))
        if self.by_other_runs:
            lines.append(f"  {self.by_other_runs} cached judgment(s) were made meanwhile by "
                         "another run on this store")
        if self.refused_duplicates:
            lines.append(f"  {self.refused_duplicates} answer(s) not stored: another run had "
                         "stored the same call first")
        if self.response_format is not None:
            lines.append(f"  judge: {self.model} at {self.base_url} "
                         f"(structured output: {self.response_format})")
        if len(self.replicas) > 1:
            lines.extend(_replica_line(replica) for replica in self.replicas)
        paced = [r for r in self.replicas if r.get("waits")]
        if paced:
            waits = sum(sum(r["waits"].values()) for r in paced)
            seconds = sum(float(r.get("waited_s") or 0.0) for r in paced)
            lines.append(f"  paced: {waits} start(s) held back, {seconds:.1f} s in all "
                         "(--rpm, --tpm, rate-limit headers)")
        if self.interrupted:
            lines.append("  interrupted: rerun the same command to finish")
        if self.error:
            lines.append(f"  stopped: {self.error}")
        return "\n".join(lines)


def _made_by(counts: Counter[str], shown: int = 3) -> str:
    """``80 judged earlier by run X, 2 by run Y`` (the largest first, the rest summed)."""
    ranked = counts.most_common()
    parts = [f"{n} judged earlier by run {run}" if i == 0 else f"{n} by run {run}"
             for i, (run, n) in enumerate(ranked[:shown])]
    rest = sum(n for _, n in ranked[shown:])
    if rest:
        parts.append(f"{rest} by {len(ranked) - shown} other run(s)")
    return ", ".join(parts)


def _replica_line(replica: dict[str, Any]) -> str:
    cooled = f", {replica['cool_downs']} cool-down(s)" if replica.get("cool_downs") else ""
    return (f"  replica {replica['url']}: {replica['requests']} request(s), "
            f"{replica['failed']} failed{cooled}")


def _in_notebook(stream: TextIO) -> bool:
    """Whether ``stream`` is a Jupyter kernel's output (not a TTY, yet shown live)."""
    return type(stream).__module__.startswith("ipykernel")
