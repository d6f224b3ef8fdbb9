"""The labeling session: where the annotator is in the queue and what they decided.

No Textual here, so the rules (resume point, back/skip, flags and notes, timing,
agreement with the judge) are testable on their own and the app stays thin.
Writes are split in two so the app can commit in a worker: :meth:`decide`
builds the :class:`~judgekit.types.Label` row (no I/O), the app commits it with
``store.add_label``, then :meth:`apply` moves on. The next item is therefore
never shown before the label it follows is durable.

Rules:

- "Unlabeled" means no current label from this annotator (never labeled, or
  skipped). Labeling advances to the next unlabeled item, wrapping round to the
  skipped ones at the end; the queue is finished when every item has a label.
  A session opens the same way: at the first item neither labeled nor skipped,
  so skipped items come back after the rest, as they would have had the
  previous session not been closed (only skipped items left: the first of them).
- Pressing the label an item already has, in the same mode and with no change
  of note or flag, writes nothing (:meth:`is_repeat`): the label is already
  stored. The session still moves on.
- Skipping an unlabeled item records a skip row (label NULL, with the time
  spent); skipping an item that already has a label just moves on, because a
  skip row would withdraw that label.
- A flag or note is saved the moment it is given, as a new row (history is
  append-only; the latest row wins): on a labeled item the row repeats the
  label; on an unlabeled item it has no label and no time (a *note row*), so a
  killed app loses nothing. A note row does not count as a skip: the item stays
  unlabeled, and a later session opens at it like at any untouched item.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from judgekit.store import QueueEntry, Store
from judgekit.tui.figures import MIN_AGREEMENT_N, Agreement, Progress, agreement_of
from judgekit.tui.queue_cursor import Key, QueueCursor
from judgekit.types import ADJUDICATED_SOURCE, Item, Label, Rubric

__all__ = [
    "MIN_AGREEMENT_N", "Agreement", "JudgeView", "Key", "LabelingSession", "Progress",
]

#: Characters of two inputs that, when equal, make them one source (as queues group them:
#: judgekit.store.exports.GROUP_PREFIX).
OPENING = 200


def is_note_row(row: Label) -> bool:
    """A row with no label and no time: a note or flag on an item not yet labeled or skipped."""
    return row.label is None and row.seconds is None


@dataclass(frozen=True)
class JudgeView:
    """The judge's verdict on one item, as shown with ``--show-judge``."""

    label: str
    reasoning: str | None = None
    model: str = ""


class LabelingSession(QueueCursor):
    """State of one annotator working through one queue for one rubric."""

    def __init__(
        self,
        store: Store,
        rubric: Rubric,
        entries: Sequence[QueueEntry],
        *,
        annotator: str,
        blind: bool = True,
        judge: Mapping[Key, JudgeView] | None = None,
        clock: Callable[[], float] = time.monotonic,
        notices: Sequence[str] = (),
        opinions: Mapping[Key, str] | None = None,
    ) -> None:
        if not annotator.strip():
            raise ValueError("annotator must be a non-empty name")
        self.store = store
        self.rubric = rubric
        self.entries: list[QueueEntry] = list(entries)
        self.annotator = annotator
        self.blind = blind
        self.judge: Mapping[Key, JudgeView] = judge or {}
        #: what the annotator should know about the queue (shown in the app at start)
        self.notices: tuple[str, ...] = tuple(notices)
        #: adjudicating: each item's annotator labels and notes, as shown (never the judge's)
        self.opinions: Mapping[Key, str] | None = opinions
        self.adjudicating = opinions is not None
        self._source = ADJUDICATED_SOURCE if self.adjudicating else "annotate"
        self._clock = clock
        self._keys = [(e.dataset, e.item_id) for e in self.entries]
        in_queue = set(self._keys)
        datasets = sorted({e.dataset for e in self.entries})
        self.latest: dict[Key, Label] = {}
        self._all_labels: dict[Key, str] = {}  # this annotator's current labels, any item
        for dataset in datasets:
            for row in self._own_rows(dataset):
                key = (row.dataset, row.item_id)
                if key in in_queue:
                    self.latest[key] = row
                if row.label is not None:
                    self._all_labels[key] = row.label
        self._item_cache: tuple[Key, Item | None] | None = None
        self._origins: dict[Key, tuple[int, str, str | None] | None] = {}
        self._agreement_cache: tuple[int, Agreement | None] | None = None
        self._labels_version = 0  # bumped whenever a current label changes
        self.started_at = clock()
        self.session_labels = 0  # labels given this session (new and changed): the rate
        self.new_labels: set[Key] = set()  # items first labeled this session
        self.changed_labels: set[Key] = set()  # items whose earlier label was changed
        self.index = self._opening_position()
        self.shown_at = clock()

    def _own_rows(self, dataset: str) -> list[Label]:
        """The rows this session continues: the annotator's own, or the items' adjudications."""
        if self.adjudicating:
            return self.store.adjudicated_labels(self.rubric.sha256, dataset=dataset,
                                                 include_skips=True)
        return self.store.latest_labels(self.rubric.sha256, dataset=dataset,
                                        annotator=self.annotator, include_skips=True)

    def current_opinions(self) -> str | None:
        """When adjudicating: what each annotator said about the current item."""
        key = self.current_key
        if self.opinions is None or key is None:
            return None
        return self.opinions.get(key, "")

    # -- where we are ------------------------------------------------------
    @property
    def opens_guidelines(self) -> bool:
        """Whether to show the guidelines first: a queue not yet started, a rubric with text."""
        has_text = bool(self.rubric.description.strip() or self.rubric.guidelines.strip())
        return has_text and not self.latest

    def is_labeled(self, key: Key) -> bool:
        row = self.latest.get(key)
        return row is not None and row.label is not None

    @property
    def labeled_count(self) -> int:
        return sum(1 for key in self._keys if self.is_labeled(key))

    def current_item(self) -> Item | None:
        """The current item from the store (one indexed read, cached per position)."""
        key = self.current_key
        if key is None:
            return None
        if self._item_cache is None or self._item_cache[0] != key:
            self._item_cache = (key, self.store.get_item(*key))
        return self._item_cache[1]

    def current_label(self) -> Label | None:
        """This annotator's latest row for the current item (a skip has label None)."""
        key = self.current_key
        return None if key is None else self.latest.get(key)

    def current_note(self) -> str | None:
        row = self.current_label()
        return (row.note or None) if row is not None else None

    def current_flag(self) -> bool:
        row = self.current_label()
        return bool(row is not None and row.flagged)

    def is_skipped(self, key: Key) -> bool:
        """Whether the item's latest row is a skip (not a label, not a note row)."""
        row = self.latest.get(key)
        return row is not None and row.label is None and not is_note_row(row)

    def current_judge(self) -> JudgeView | None:
        """The judge's verdict on the current item; always None in blind mode."""
        key = self.current_key
        if self.blind or key is None:
            return None
        return self.judge.get(key)

    def context(self) -> str | None:
        """How the current item relates to the one before it in the queue, when it does:
        the same input, the same opening (one story, another question), or the same
        cluster. Queues keep such items together, so a story read once can be skimmed."""
        if self.finished or self.index == 0:
            return None
        here, before = self._origin(self._keys[self.index]), self._origin(
            self._keys[self.index - 1])
        if here is None or before is None:
            return None
        title = str(self.rubric.display.get("titles", {}).get("input", "input")).lower()
        if here[0] == before[0]:
            return f"same {title} as the previous item"
        if here[1] == before[1]:
            return f"{title} opens as the previous item's"
        if here[2] is not None and here[2] == before[2]:
            return "same cluster as the previous item"
        return None

    def _origin(self, key: Key) -> tuple[int, str, str | None] | None:
        """(hash of the input, its opening, cluster) of an item, read once per item."""
        if key not in self._origins:
            item = self.store.get_item(*key)
            self._origins[key] = None if item is None else (
                hash(item.input), item.input[:OPENING], item.cluster)
        return self._origins[key]

    # -- moving --------------------------------------------------------------
    def _first_unlabeled(self, start: int) -> int:
        """First unlabeled position at or after ``start``, wrapping; len() when none."""
        n = len(self._keys)
        for offset in range(n):
            position = (start + offset) % n
            if not self.is_labeled(self._keys[position]):
                return position
        return n

    def _opening_position(self) -> int:
        """Where a session opens: the first item without any row from this annotator.

        Skipped items come after those, as they do within a session; when only
        skipped items are left, the first of them; len() when all are labeled.
        """
        for position, key in enumerate(self._keys):
            row = self.latest.get(key)
            if row is None or (row.label is None and is_note_row(row)):
                return position
        return self._first_unlabeled(0)

    def _move_to(self, index: int) -> None:
        self.index = index
        self.shown_at = self._clock()

    def back(self) -> bool:
        """Go to the previous position (to change its label); False at the start."""
        if self.index == 0 or not self.entries:
            return False
        self._move_to(min(self.index, len(self.entries)) - 1)
        return True

    def step(self) -> None:
        """Move to the next position (skip, or review); past the end, the first unlabeled."""
        if self.finished:
            return
        following = self.index + 1
        self._move_to(following if following < len(self.entries) else self._first_unlabeled(0))

    def forward(self) -> None:
        """Move on after a label: the next unlabeled position (wrapping), or finished."""
        if self.finished:
            return
        self._move_to(self._first_unlabeled(self.index + 1))

    # -- deciding ------------------------------------------------------------
    def decide(self, label: str | None) -> Label:
        """The row recording ``label`` (None = skip) for the current item; no I/O."""
        key = self.current_key
        if key is None:
            raise ValueError("the queue is finished: there is no current item")
        if label is not None and not self.rubric.scale.is_valid(label):
            allowed = ", ".join(self.rubric.scale.labels)
            raise ValueError(f"{label!r} is not on the scale ({allowed})")
        return Label(
            dataset=key[0],
            item_id=key[1],
            rubric_hash=self.rubric.sha256,
            annotator=self.annotator,
            label=label,
            note=self.current_note(),
            flagged=self.current_flag(),
            blind=self.blind,
            seconds=round(max(0.0, self._clock() - self.shown_at), 3),
            source=self._source,
        )

    def is_repeat(self, row: Label) -> bool:
        """Whether ``row`` only repeats the item's stored label (nothing to write).

        True when the latest stored row has the same label, note and flag and was
        given in the same mode (blind or not): committing it would add an
        identical row. A label first given blind and pressed again with the judge
        shown is not a repeat: the new row records that the judge was on screen.
        """
        previous = self.latest.get((row.dataset, row.item_id))
        return (
            previous is not None
            and previous.label is not None
            and (previous.label, previous.note or None, bool(previous.flagged), previous.blind)
            == (row.label, row.note or None, bool(row.flagged), row.blind)
        )

    def skip_needs_row(self) -> bool:
        """Whether skipping the current item writes a row.

        Only an unlabeled item gets a skip row, and not when its latest row is
        already a skip with the same note and flag: that would add an identical row.
        """
        key = self.current_key
        if key is None or self.is_labeled(key):
            return False
        # the latest row already is a skip, with the note and flag shown: nothing to add
        return not self.is_skipped(key)

    def annotation_row(
        self, *, note: str | None = None, flagged: bool | None = None
    ) -> Label | None:
        """The row that saves a new note/flag on the current item (None: nothing changes).

        On a labeled item it repeats the label; on a skipped item it repeats the
        skip (its time included, so it still reads as skipped); on an untouched
        item it is a note row (no label, no time).
        """
        key = self.current_key
        if key is None:
            return None
        new_note = self.current_note() if note is None else (note.strip() or None)
        new_flag = self.current_flag() if flagged is None else flagged
        if (new_note, new_flag) == (self.current_note(), self.current_flag()):
            return None
        row = self.latest.get(key)
        if row is None:
            return Label(key[0], key[1], self.rubric.sha256, self.annotator, None,
                         note=new_note, flagged=new_flag, blind=self.blind, source=self._source)
        return replace(
            row,
            note=new_note,
            flagged=new_flag,
            blind=self.blind if row.label is not None else row.blind,
            seconds=row.seconds if row.label is None else None,
            created_at="",
            annotator=self.annotator,
            source=self._source,
        )

    def apply(self, row: Label, *, advance: bool = True) -> None:
        """Record a committed row in memory and (for labels and skips) move on."""
        key = (row.dataset, row.item_id)
        previous = self.latest.get(key)
        self.latest[key] = row
        if row.label is not None:
            if self._all_labels.get(key) != row.label:
                self._labels_version += 1
            self._all_labels[key] = row.label
            if previous is None or previous.label != row.label:
                self.session_labels += 1
                if previous is None or previous.label is None or key in self.new_labels:
                    self.new_labels.add(key)
                else:
                    self.changed_labels.add(key)
        if advance:
            if row.label is None:
                self.step()
            else:
                self.forward()

    # -- figures for the header ---------------------------------------------------
    def progress(self) -> Progress:
        labeled = self.labeled_count
        elapsed = self._clock() - self.started_at
        rate = None
        if self.session_labels and elapsed > 0:
            rate = self.session_labels / (elapsed / 60.0)
        left = len(self.entries) - labeled
        eta = (left / rate * 60.0) if rate and left > 0 else None
        return Progress(labeled, len(self.entries), self.session_labels, rate, eta)

    def agreement(self) -> Agreement | None:
        """Agreement with the judge once enough items overlap; None in blind mode.

        Percent agreement over every item both this annotator and the judge
        labeled (not only this queue), and Cohen's kappa (quadratic weights on an
        ordinal scale), each with its n and 95% interval. Recomputed only when a
        label changes.
        """
        if self.blind or not self.judge:
            return None
        if self._agreement_cache is not None and self._agreement_cache[0] == self._labels_version:
            return self._agreement_cache[1]
        pairs = [
            (human, self.judge[key].label)
            for key, human in self._all_labels.items()
            if key in self.judge
        ]
        result = None
        if len(pairs) >= MIN_AGREEMENT_N:
            result = agreement_of([h for h, _ in pairs], [j for _, j in pairs], self.rubric)
        self._agreement_cache = (self._labels_version, result)
        return result
