"""Where a labeling session stands in its queue: shared by the one-rubric session and the
session over every criterion of a file, which walk a queue the same way."""

from __future__ import annotations

from collections.abc import Sequence

from judgekit.store import QueueEntry

Key = tuple[str, str]  # (dataset, item_id)


class QueueCursor:
    """``entries`` in queue order, their ``_keys``, and ``index``, the entry shown."""

    entries: Sequence[QueueEntry]
    _keys: Sequence[Key]
    index: int

    @property
    def total(self) -> int:
        return len(self.entries)

    @property
    def finished(self) -> bool:
        return self.index >= len(self.entries)

    @property
    def current(self) -> QueueEntry | None:
        return None if self.finished else self.entries[self.index]

    @property
    def current_key(self) -> Key | None:
        return None if self.finished else self._keys[self.index]
