"""Every criterion of an item on one screen: the queue position they share and the focus.

A multi-criteria rubric file (:mod:`judgekit.criteria`) stands for one derived
rubric per criterion, and a criterion's labels are ordinary label rows under its
derived rubric. This session keeps one :class:`LabelingSession` per criterion over
the same queue (their rules for rows stay theirs: what a label, a repeat, a skip,
a note or a flag writes) and adds what one screen for every criterion needs: the
item they all show, which criterion has the focus, and when an item is done.

Rules (with one criterion they are exactly the single-criterion session's):

- An item is *complete* when every criterion has a label. Progress counts
  complete items; each criterion says how many of its labels are missing.
- Arriving at an item, the criteria still to do this visit are the unlabeled ones
  (``pending``). The focus goes to the first that has no row at all, else the first
  pending one (a skipped criterion comes back), else the first criterion.
- A level key labels the focused criterion (one row, committed before anything
  moves); the focus then goes to the next pending criterion, and when none is left
  the session moves to the next incomplete item, wrapping round, as a single label
  does. Skipping a criterion (``s``) writes its skip row and moves on the same way,
  but to the next position, as a single skip does; skipping the item (``S``) skips
  every pending criterion in one transaction.
- Back (``u``) steps through (item, criterion) cells: to the previous criterion of
  the item, from the first criterion to the last one of the previous item.
- A session opens at the first item where some criterion has no row (an item
  left half done when the app was killed opens there, asking for the rest), else
  at the first incomplete item.
- The time stored with a criterion's label runs from the item appearing, or from
  the previous criterion's key on it, so the times of an item add up to the time
  spent on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from judgekit.store import QueueEntry, Store
from judgekit.tui.figures import Progress
from judgekit.tui.queue_cursor import Key, QueueCursor
from judgekit.tui.session import LabelingSession, is_note_row
from judgekit.types import Item, Label, Rubric


@dataclass(frozen=True)
class Criterion:
    """One criterion as the screen shows it: its name and its derived rubric."""

    name: str
    rubric: Rubric


class CriteriaSession(QueueCursor):
    """One annotator, one queue, every criterion of a multi-criteria rubric file."""

    def __init__(
        self,
        store: Store,
        title: Rubric,
        criteria: Sequence[Criterion],
        entries: Sequence[QueueEntry],
        *,
        annotator: str,
        clock: Callable[[], float] = time.monotonic,
        notices: Sequence[str] = (),
    ) -> None:
        if not criteria:
            raise ValueError("a criteria session needs at least one criterion")
        self.store = store
        #: the file as a whole: its name and version for the header, the first
        #: criterion's rubric otherwise (the display of items)
        self.title = title
        self.criteria = tuple(criteria)
        self.annotator = annotator
        self.notices = tuple(notices)
        self.blind = True
        self.entries = list(entries)
        self._clock = clock
        self.parts = [LabelingSession(store, c.rubric, self.entries, annotator=annotator,
                                      clock=clock, notices=notices) for c in self.criteria]
        self._keys: list[Key] = [(e.dataset, e.item_id) for e in self.entries]
        self._count_cache: tuple[int, list[int]] | None = None  # cleared by every row applied
        self.started_at = clock()
        self.index = self._opening_position()
        self.focus = 0
        self.pending: list[int] = []
        self._arrive()

    # -- where we are --------------------------------------------------------

    @property
    def focused(self) -> LabelingSession:
        """The focused criterion's session (its rows, its scale)."""
        return self.parts[self.focus]

    @property
    def started(self) -> bool:
        """Whether this annotator has any row under any criterion of the queue."""
        return any(part.latest for part in self.parts)

    @property
    def opens_guidelines(self) -> bool:
        has_text = any(c.rubric.description.strip() or c.rubric.guidelines.strip()
                       for c in self.criteria) or bool(self.title.guidelines.strip())
        return has_text and not self.started

    def current_item(self) -> Item | None:
        return self.parts[0].current_item()

    def is_complete(self, key: Key) -> bool:
        return all(part.is_labeled(key) for part in self.parts)

    def _untouched(self, part: LabelingSession, key: Key) -> bool:
        row = part.latest.get(key)
        return row is None or is_note_row(row)

    def row(self, criterion: int) -> Label | None:
        """This annotator's latest row of ``criterion`` on the current item."""
        key = self.current_key
        return None if key is None else self.parts[criterion].latest.get(key)

    def labeled_here(self) -> int:
        """How many criteria of the current item have a label."""
        key = self.current_key
        return 0 if key is None else sum(part.is_labeled(key) for part in self.parts)

    def _counts(self) -> tuple[int, list[int]]:
        """(complete items, labeled items per criterion), one pass over the queue per change."""
        if self._count_cache is None:
            per = [0] * len(self.parts)
            complete = 0
            for key in self._keys:
                labeled = [part.is_labeled(key) for part in self.parts]
                complete += all(labeled)
                for c, done in enumerate(labeled):
                    per[c] += done
            self._count_cache = (complete, per)
        return self._count_cache

    def left(self, criterion: int) -> int:
        """Items of the queue still without a label of ``criterion``."""
        return self.total - self._counts()[1][criterion]

    @property
    def labeled_count(self) -> int:
        return self._counts()[0]

    @property
    def session_labels(self) -> int:
        return sum(part.session_labels for part in self.parts)

    def progress(self) -> Progress:
        """Complete items of the queue; the rate in items per minute (criterion labels per
        minute over the number of criteria) and the time left for the missing labels."""
        elapsed = self._clock() - self.started_at
        given = self.session_labels
        per_minute = given / (elapsed / 60.0) if given and elapsed > 0 else None
        missing = sum(self.left(c) for c in range(len(self.parts)))
        eta = missing / per_minute * 60.0 if per_minute and missing else None
        rate = per_minute / len(self.parts) if per_minute is not None else None
        return Progress(self.labeled_count, self.total, given, rate, eta)

    # -- moving --------------------------------------------------------------
    def _first_incomplete(self, start: int) -> int:
        n = len(self._keys)
        for offset in range(n):
            position = (start + offset) % n
            if not self.is_complete(self._keys[position]):
                return position
        return n

    def _opening_position(self) -> int:
        for position, key in enumerate(self._keys):
            if any(self._untouched(part, key) for part in self.parts):
                return position
        return self._first_incomplete(0)

    def _sync(self) -> None:
        """Every criterion's session on the current position, its clock started now."""
        now = self._clock()
        for part in self.parts:
            part.index = self.index
            part.shown_at = now

    def _arrive(self, *, last: bool = False) -> None:
        """A new item on screen: what is pending, where the focus goes."""
        self._sync()
        key = self.current_key
        if key is None:
            self.pending = []
            self.focus = len(self.parts) - 1 if last else 0
            return
        self.pending = [c for c, part in enumerate(self.parts) if not part.is_labeled(key)]
        fresh = [c for c in self.pending if self._untouched(self.parts[c], key)]
        if last:
            self.focus = len(self.parts) - 1
        else:
            self.focus = (fresh or self.pending or [0])[0]

    def _move_to(self, index: int, *, last: bool = False) -> None:
        self.index = index
        self._arrive(last=last)

    def move_focus(self, delta: int) -> bool:
        """Focus the criterion ``delta`` rows away (no wrap); False at either end."""
        target = self.focus + delta
        if self.finished or not 0 <= target < len(self.parts):
            return False
        self.focus = target
        return True

    def back(self) -> bool:
        """The previous (item, criterion) cell; False at the very first one."""
        if not self.finished and self.focus > 0:
            self.focus -= 1
            return True
        if self.index == 0 or not self.entries:
            return False
        self._move_to(min(self.index, len(self.entries)) - 1, last=True)
        return True

    def _next_pending(self, after: int) -> int | None:
        n = len(self.parts)
        for offset in range(1, n + 1):
            candidate = (after + offset) % n
            if candidate in self.pending:
                return candidate
        return None

    def _done_with(self, criterion: int, *, labeled: bool) -> None:
        """After ``criterion`` was labeled (or skipped): the next pending one, else move on."""
        if criterion in self.pending:
            self.pending.remove(criterion)
        following = self._next_pending(criterion)
        if following is not None:
            self.focus = following
            now = self._clock()
            for part in self.parts:  # the next criterion's time starts at this key
                part.shown_at = now
            return
        if labeled:
            self._move_to(self._first_incomplete(self.index + 1))
        else:
            following_item = self.index + 1
            self._move_to(following_item if following_item < len(self.entries)
                          else self._first_incomplete(0))

    # -- deciding ------------------------------------------------------------
    def label_for_key(self, key: str) -> str | None:
        """The focused criterion's label for a level key, None when its scale has no such key."""
        for level in self.focused.rubric.scale.levels:
            if level.key == key:
                return level.label
        return None

    def decide(self, label: str) -> Label | None:
        """The row labeling the focused criterion, or None when it only repeats the stored one."""
        row = self.focused.decide(label)
        return None if self.focused.is_repeat(row) else row

    def labeled(self, row: Label | None) -> None:
        """The focused criterion's label is stored (or was already): record it, move on."""
        criterion = self.focus
        if row is not None:
            self.parts[criterion].apply(row, advance=False)
            self._count_cache = None
        self._done_with(criterion, labeled=True)

    def skip_row(self) -> Label | None:
        """The skip row of the focused criterion, or None when a skip writes nothing."""
        part = self.focused
        return part.decide(None) if part.skip_needs_row() else None

    def skipped(self, row: Label | None) -> None:
        criterion = self.focus
        if row is not None:
            self.parts[criterion].apply(row, advance=False)
            self._count_cache = None
        self._done_with(criterion, labeled=False)

    def item_skip_rows(self) -> list[Label]:
        """Skip rows for every pending criterion of the item that a skip would change."""
        return [self.parts[c].decide(None) for c in self.pending
                if self.parts[c].skip_needs_row()]

    def item_skipped(self, rows: Sequence[Label]) -> None:
        by_hash = {part.rubric.sha256: part for part in self.parts}
        for row in rows:
            by_hash[row.rubric_hash].apply(row, advance=False)
        self._count_cache = None
        self.pending = []
        following = self.index + 1
        self._move_to(following if following < len(self.entries) else self._first_incomplete(0))

    def annotation_row(self, *, note: str | None = None,
                       flagged: bool | None = None) -> Label | None:
        """The row saving a note or flag on the focused criterion (None: nothing changes)."""
        return self.focused.annotation_row(note=note, flagged=flagged)

    def annotated(self, row: Label) -> None:
        self.focused.apply(row, advance=False)
        self._count_cache = None

    # -- what was done -------------------------------------------------------------
    def exit_line(self, queue: str, path: str) -> str:
        """What the session did, per item and per criterion, as ``annotate`` prints it."""
        new = sum(len(part.new_labels) for part in self.parts)
        changed = sum(len(part.changed_labels) for part in self.parts)
        done = f"{new} new" + (f", {changed} changed" if changed else "")
        left = ", ".join(f"{c.name} {self.left(i)} left"
                         for i, c in enumerate(self.criteria))
        return (f"{self.annotator}: {self.labeled_count}/{self.total} items labeled on every "
                f"criterion in queue {queue} ({left}; {done} label(s) this session); "
                f"saved in {path}")


__all__ = ["CriteriaSession", "Criterion"]
