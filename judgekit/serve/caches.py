"""What ``POST /api/v1/labels`` would otherwise rebuild on every request.

A team labeling through the server posts one label per request; each request
used to parse the stored rubric's TOML again and read every item id of the
dataset to check the label's item. Both are now kept between requests:

- parsed rubrics by sha256: a stored rubric's text is its sha256's, so a parsed
  rubric never goes stale (the cache only bounds how many it keeps);
- the item-id index by dataset (or all datasets), with the store's
  :meth:`~judgekit.store.Store.items_marker` when it was built (the items
  table's last rowid): an import that adds items moves the marker and the next
  request rebuilds the index; updating items in place keeps their ids;
- who is assigned which queue, for the annotate pages and their websockets
  (every request used to read every queue with all its entries), with the
  store's :meth:`~judgekit.store.Store.queues_marker` when it was built: saving,
  replacing or deleting a queue moves the marker and the next request rebuilds it;
- the items of each annotator's queues (what an annotate token may label), under
  the same marker: each label an annotate token POSTed used to read every queue
  with all its entries (at 20,000 items, 4 labels/s).

Request threads share the caches (FastAPI runs plain endpoints in a thread
pool), so each is guarded by a lock; the values handed out are only read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from judgekit.store import Store
from judgekit.types import Rubric

#: Parsed rubrics kept (a store rarely holds more versions than this in use).
RUBRICS_KEPT = 64
#: Item-id indexes kept (one per dataset posted to, plus the all-datasets one).
INDEXES_KEPT = 16

_K = TypeVar("_K")
_V = TypeVar("_V")


class _Bounded(OrderedDict[_K, _V]):
    """An LRU dict of at most ``size`` entries (0: keeps nothing)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def keep(self, key: _K, value: _V) -> None:
        if self.size <= 0:
            return
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


class ServeCaches:
    """The server's caches; ``enabled=False`` computes everything per request (the baseline)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self._lock = threading.Lock()
        self._rubrics: _Bounded[str, Rubric] = _Bounded(RUBRICS_KEPT if enabled else 0)
        self._indexes: _Bounded[str | None, tuple[int, dict[str, list[str]]]] = _Bounded(
            INDEXES_KEPT if enabled else 0)
        self._enabled = enabled
        self._assigned: tuple[tuple[int, int, str], dict[str, list[dict[str, Any]]]] | None = None
        self._members_marker: tuple[int, int, str] | None = None
        self._members: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}

    def rubric(self, sha256: str, parse: Callable[[], Rubric]) -> Rubric:
        """The rubric of ``sha256``, parsed by ``parse`` only the first time."""
        with self._lock:
            found = self._rubrics.get(sha256)
            if found is not None:
                self._rubrics.move_to_end(sha256)
                return found
        parsed = parse()
        with self._lock:
            self._rubrics.keep(sha256, parsed)
        return parsed

    def item_index(self, store: Store, dataset: str | None) -> Mapping[str, list[str]]:
        """:func:`~judgekit.io.fields.item_dataset_index`, rebuilt only when items were added."""
        from judgekit.io import fields

        marker = store.items_marker()
        with self._lock:
            found = self._indexes.get(dataset)
            if found is not None and found[0] == marker:
                self._indexes.move_to_end(dataset)
                return found[1]
        index = fields.item_dataset_index(store, dataset)
        with self._lock:
            self._indexes.keep(dataset, (marker, index))
        return index

    def assigned_queues(
        self, store: Store, annotator: str,
        build: Callable[[Store], dict[str, list[dict[str, Any]]]],
    ) -> list[dict[str, Any]]:
        """The queues assigned to ``annotator``; ``build`` (every annotator's, from the
        store) runs again only when a queue was saved, replaced or deleted."""
        marker = store.queues_marker()
        with self._lock:
            found = self._assigned
            if found is not None and found[0] == marker:
                return found[1].get(annotator, [])
        by_annotator = build(store)
        if self._enabled:
            with self._lock:
                self._assigned = (marker, by_annotator)
        return by_annotator.get(annotator, [])

    def queue_members(
        self, store: Store, rubric_hash: str, annotator: str,
        build: Callable[[], set[tuple[str, str]]],
    ) -> frozenset[tuple[str, str]]:
        """(dataset, item id) of ``annotator``'s queues for the rubric; ``build`` (from the
        store) runs again only when a queue was saved, replaced or deleted."""
        marker = store.queues_marker()
        key = (rubric_hash, annotator)
        with self._lock:
            if self._members_marker != marker:
                self._members_marker, self._members = marker, {}
            found = self._members.get(key)
        if found is not None:
            return found
        members = frozenset(build())
        if self._enabled:
            with self._lock:
                if self._members_marker == marker:
                    self._members[key] = members
        return members


__all__ = ["INDEXES_KEPT", "RUBRICS_KEPT", "ServeCaches"]
