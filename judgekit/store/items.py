"""Items, rubrics and endpoint capabilities: what a judge run reads before it calls.

Kept apart from runs and judgments because these tables are written once and
read by everyone (import, runner, annotate app, reports), while runs and
judgments grow with every call. Item imports are all or nothing, so a bad line
in a dataset never leaves half of it stored.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from judgekit.errors import InputError
from judgekit.store import rows as R
from judgekit.store._base import CHUNK, StoreBase, chunks, marks
from judgekit.store.columns import ITEM_FACTS_SELECT, ItemFacts, item_facts_reader
from judgekit.types import Item, Rubric


class ItemsRubricsMixin(StoreBase):
    """Items, rubrics and the capabilities cache (mixed into :class:`~judgekit.store.Store`)."""

    # -- items -------------------------------------------------------------
    def import_items(self, dataset: str, items: Sequence[Item], *, replace: bool = False) -> int:
        """Insert items atomically (all or nothing); returns how many were new/changed.

        Re-importing identical items is a no-op. An id whose content (content
        hash, slice or cluster) changed is an :class:`InputError` naming the id,
        unless ``replace=True``, which updates it in place.
        """
        return self.import_item_batches(dataset, [items], replace=replace)

    def import_item_batches(
        self, dataset: str, batches: Iterable[Sequence[Item]], *, replace: bool = False
    ) -> int:
        """:meth:`import_items` for items that arrive in batches (a file read in chunks).

        Every batch is written in one transaction, so memory stays flat however
        large the file and any error (a duplicate id in a later batch, a changed
        item) rolls all of them back.
        """
        seen: set[str] = set()
        now = R.utc_now()
        changed = 0
        with self._write() as conn:
            for items in batches:
                changed += self._import_batch(conn, dataset, items, now, seen, replace)
        return changed

    def _import_batch(
        self, conn: sqlite3.Connection, dataset: str, items: Sequence[Item], now: str,
        seen: set[str], replace: bool,
    ) -> int:
        for item in items:
            if item.id in seen:
                raise InputError(f"dataset {dataset!r}: duplicate item id {item.id!r}")
            seen.add(item.id)
        new_rows = [R.item_to_row(dataset, item, now) for item in items]
        existing: dict[str, tuple[Any, ...]] = {}
        ids = [row["id"] for row in new_rows]
        for chunk in chunks(ids):
            cursor = conn.execute(
                "SELECT id, content_hash, slice, cluster FROM items "
                f"WHERE dataset = ? AND id IN ({marks(len(chunk))})",
                [dataset, *chunk],
            )
            for item_id, content_hash, slice_, cluster in cursor:
                existing[item_id] = (content_hash, slice_, cluster)
        inserts, updates = [], []
        for row in new_rows:
            old = existing.get(row["id"])
            if old is None:
                inserts.append(row)
            elif old != R.item_fingerprint(row):
                if not replace:
                    raise InputError(
                        f"dataset {dataset!r}: item {row['id']!r} already exists with "
                        "different content (import it with --replace, or replace=True, "
                        "to update it)"
                    )
                updates.append(row)
        conn.executemany(R.insert_sql("items", R.ITEM_COLUMNS), inserts)
        conn.executemany(
            "UPDATE items SET input = :input, response = :response, "
            "response_a = :response_a, response_b = :response_b, reference = :reference, "
            "slice = :slice, cluster = :cluster, meta = :meta, "
            "content_hash = :content_hash, created_at = :created_at "
            "WHERE dataset = :dataset AND id = :id",
            updates,
        )
        return len(inserts) + len(updates)

    def get_item(self, dataset: str, item_id: str) -> Item | None:
        row = self._one("SELECT * FROM items WHERE dataset = ? AND id = ?", [dataset, item_id])
        return None if row is None else R.row_to_item(row)

    def items_by_ids(self, dataset: str, item_ids: Iterable[str]) -> dict[str, Item]:
        """Items of ``dataset`` among ``item_ids`` (missing ids are simply absent)."""
        wanted = list(dict.fromkeys(item_ids))
        found: dict[str, Item] = {}
        for chunk in chunks(wanted):
            for row in self._rows(
                f"SELECT * FROM items WHERE dataset = ? AND id IN ({marks(len(chunk))})",
                [dataset, *chunk],
            ):
                found[row["id"]] = R.row_to_item(row)
        return found

    def item_facts(self, dataset: str, item_ids: Iterable[str]) -> dict[str, ItemFacts]:
        """Identity, prompt and grouping fields (no responses) of ``dataset``'s items among
        ``item_ids``, in import order.

        Few ids are looked up in ``IN`` lists; many are read in one pass over the dataset.
        Each fact's ``id`` (and its key) is the string given in ``item_ids``, so a caller
        holding its ids does not hold a second copy of each.
        """
        wanted = {item_id: item_id for item_id in item_ids}
        if not wanted:
            return {}
        convert = item_facts_reader()
        out: dict[str, ItemFacts] = {}
        if len(wanted) <= 4 * CHUNK:
            ids = sorted(wanted)
            for chunk in chunks(ids):
                for page in self._paged(
                    f"SELECT {ITEM_FACTS_SELECT} FROM items WHERE dataset = ? "
                    f"AND id IN ({marks(len(chunk))}) ORDER BY rowid",
                    [dataset, *chunk],
                ):
                    for row in page:
                        item_id = wanted[row[1]]
                        out[item_id] = convert(row, item_id)
            return out
        for page in self._paged(
            f"SELECT {ITEM_FACTS_SELECT} FROM items WHERE dataset = ? ORDER BY rowid", [dataset]
        ):
            for row in page:
                found = wanted.get(row[1])
                if found is not None:
                    out[found] = convert(row, found)
        return out

    def item_ids(self, dataset: str) -> list[str]:
        """All item ids of ``dataset`` in import order (cheap: no item text is read)."""
        rows = self._rows("SELECT id FROM items WHERE dataset = ? ORDER BY rowid", [dataset])
        return [row["id"] for row in rows]

    def iter_items(self, dataset: str, *, page_size: int = 1000) -> Iterator[Item]:
        """Items in import order, read ``page_size`` at a time (flat memory for big datasets)."""
        last = -1
        while True:
            page = self._rows(
                "SELECT rowid AS _rowid, * FROM items WHERE dataset = ? AND rowid > ? "
                "ORDER BY rowid LIMIT ?",
                [dataset, last, page_size],
            )
            if not page:
                return
            for row in page:
                yield R.row_to_item(row)
            last = page[-1]["_rowid"]

    def count_items(self, dataset: str) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM items WHERE dataset = ?", [dataset])
        return 0 if row is None else int(row["n"])

    def items_marker(self) -> int:
        """The largest rowid of the items table: it grows whenever an item is added.

        Items are added or updated in place (same id, same rowid) but never
        deleted, so a cache of item ids that kept this marker is stale exactly
        when the marker moved. One B-tree lookup, whatever the store's size.
        (Deleting items would have to change this: SQLite may reuse the rowid
        of a deleted last row.)
        """
        row = self._one("SELECT MAX(rowid) AS last FROM items")
        return 0 if row is None or row["last"] is None else int(row["last"])

    def datasets(self) -> list[str]:
        return [row["dataset"] for row in self._rows(
            "SELECT DISTINCT dataset FROM items ORDER BY dataset")]

    def holds_dataset(self, dataset: str) -> bool:
        """Whether any item, judgment or label belongs to ``dataset``.

        Items first (their primary key answers at once); judgments and labels
        written without their items (through the Python API) count too.
        """
        return any(self._one(f"SELECT 1 FROM {table} WHERE dataset = ? LIMIT 1", [dataset])
                   is not None for table in ("items", "judgments", "labels"))

    # -- rubrics -----------------------------------------------------------
    def save_rubric(self, rubric: Rubric) -> None:
        """Store the rubric's full text once per sha256 (idempotent)."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO rubrics (sha256, name, version, text, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [rubric.sha256, rubric.name, rubric.version, rubric.source_text, R.utc_now()],
            )

    def get_rubric_text(self, sha256: str) -> str | None:
        row = self._one("SELECT text FROM rubrics WHERE sha256 = ?", [sha256])
        return None if row is None else str(row["text"])

    def list_rubrics(self) -> list[dict[str, Any]]:
        """Stored rubrics (sha256, name, version, created_at), oldest first; no text."""
        rows = self._rows(
            "SELECT sha256, name, version, created_at FROM rubrics ORDER BY created_at, sha256")
        return [dict(row) for row in rows]

    # -- capabilities cache -----------------------------------------------
    def get_capabilities(self, base_url: str, model: str) -> dict[str, Any] | None:
        row = self._one(
            "SELECT capabilities FROM capabilities WHERE base_url = ? AND model = ?",
            [R.strip_credentials(base_url), model],
        )
        return None if row is None else R.load_json(row["capabilities"])

    def set_capabilities(self, base_url: str, model: str, capabilities: Mapping[str, Any]) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO capabilities (base_url, model, capabilities, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (base_url, model) DO UPDATE SET "
                "capabilities = excluded.capabilities, updated_at = excluded.updated_at",
                [R.strip_credentials(base_url), model, R.dump_json(capabilities), R.utc_now()],
            )
