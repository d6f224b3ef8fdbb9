"""Runs and the judgments they record: the store's append-only judging history.

Every judgment row points at its run, so each verdict stays traceable to the
model, endpoint, sampling and judgekit version that produced it. Rows are never
updated: a later row with the same cache key supersedes an earlier one, and
"latest wins" is a query over autoincrement ids.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

from judgekit.errors import StoreError
from judgekit.store import rows as R
from judgekit.store._base import StoreBase, chunks, marks, where_clause
from judgekit.store.judges import JudgmentFilters, JudgmentSelection, selection_of
from judgekit.types import Judgment


@dataclass(frozen=True)
class RunRecord:
    """One invocation of the runner (a judge run, a probe run, or an import)."""

    id: str
    kind: str  # "judge" | "probe:position" | "probe:length" | "probe:consistency" | "import"
    dataset: str
    rubric_hash: str
    model: str
    base_url: str
    sampling: Mapping[str, Any]
    capabilities: Mapping[str, Any]
    judgekit_version: str
    started_at: str
    finished_at: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunOutcomeCounts:
    """A run's outcomes counted from the rows: those it made, those it stands for."""

    made: Mapping[str, int]
    #: run that made the calls -> status -> count
    stood_for: Mapping[str, Mapping[str, int]]

    @property
    def n_made(self) -> int:
        return sum(self.made.values())

    @property
    def n_stood_for(self) -> int:
        return sum(sum(counts.values()) for counts in self.stood_for.values())

    def status_counts(self) -> dict[str, int]:
        """Every outcome the run holds, made or stood for, by status."""
        out = dict(self.made)
        for counts in self.stood_for.values():
            for status, n in counts.items():
                out[status] = out.get(status, 0) + n
        return out


#: The JSON columns of ``runs``.
_RUN_JSON_FIELDS = frozenset({"sampling", "capabilities", "summary"})


def judgments_sql(columns: str, where: str, *, latest_only: bool) -> str:
    """``columns`` of the judgments a selection's ``where`` picks, without an ORDER BY.

    With ``latest_only``, the filters apply first, then the latest row per cache key
    among what is left. One statement for :meth:`RunsJudgmentsMixin.judgments` and the
    exports' paged read, so both select the same rows.
    """
    if latest_only:
        return (f"SELECT {columns} FROM judgments WHERE id IN "
                f"(SELECT MAX(id) FROM judgments {where} GROUP BY cache_key)")
    return f"SELECT {columns} FROM judgments {where}"


def _row_to_run(row: sqlite3.Row) -> RunRecord:
    return R.from_row(RunRecord, row, json_fields=_RUN_JSON_FIELDS)


class RunsJudgmentsMixin(StoreBase):
    """Runs and judgments (mixed into :class:`~judgekit.store.Store`)."""

    # -- runs --------------------------------------------------------------
    def create_run(self, run: RunRecord) -> None:
        """Record a run; its id must be new. Credentials in ``base_url`` are stripped."""
        with self._write() as conn:
            self._insert_run(conn, run)

    @staticmethod
    def _insert_run(conn: sqlite3.Connection, run: RunRecord) -> None:
        try:
            conn.execute(
                "INSERT INTO runs (id, kind, dataset, rubric_hash, model, base_url, sampling, "
                "capabilities, judgekit_version, started_at, finished_at, summary) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run.id, run.kind, run.dataset, run.rubric_hash, run.model,
                    R.strip_credentials(run.base_url), R.dump_json(run.sampling),
                    R.dump_json(run.capabilities), run.judgekit_version,
                    run.started_at or R.utc_now(), run.finished_at, R.dump_json(run.summary),
                ],
            )
        except sqlite3.IntegrityError as exc:
            # Only the id's uniqueness means "already exists"; anything else (a CHECK, a
            # trigger installed on the store) is reported as what SQLite said.
            if "UNIQUE constraint failed: runs.id" in str(exc):
                raise StoreError(f"run {run.id!r} already exists") from exc
            raise StoreError(f"cannot record run {run.id!r}: {exc}") from exc

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE runs SET finished_at = ?, summary = ? WHERE id = ?",
                [R.utc_now(), R.dump_json(summary), run_id],
            )
            if cursor.rowcount == 0:
                raise StoreError(f"unknown run {run_id!r}")

    def set_run_capabilities(
        self, run_id: str, capabilities: Mapping[str, Any],
        sampling: Mapping[str, Any] | None = None,
    ) -> None:
        """Record what the endpoint accepts on a run created before it was asked.

        ``sampling``, when given, replaces the run's sampling provenance with what
        its requests carry once the endpoint said which parameters it takes.
        """
        with self._write() as conn:
            conn.execute("UPDATE runs SET capabilities = ? WHERE id = ?",
                         [R.dump_json(capabilities), run_id])
            if sampling is not None:
                conn.execute("UPDATE runs SET sampling = ? WHERE id = ?",
                             [R.dump_json(sampling), run_id])

    def stand_for(self, run_id: str, judgment_ids: Iterable[int]) -> int:
        """Record that run ``run_id`` stands for these judgments other runs made; one transaction.

        A run whose call was answered earlier (the cache is shared between runs)
        pays nothing and writes no row; this link makes the outcome its own for
        every selection by run or run kind, while the judgment's ``run_id`` keeps
        the run that made the call. Returns how many links were new.
        """
        rows = [(run_id, int(judgment_id)) for judgment_id in judgment_ids]
        if not rows:
            return 0
        with self._write() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO run_outcomes (run_id, judgment_id) VALUES (?, ?)", rows)
            return conn.total_changes - before

    def run_outcome_counts(self, run_id: str) -> RunOutcomeCounts:
        """What run ``run_id`` holds, counted from the rows (never from its summary).

        ``made``: status counts of the outcomes it wrote; ``stood_for``: status counts
        of the outcomes other runs made that it stands for, by the run that made them.
        A run killed before it wrote its summary is counted right all the same.
        """
        made = {str(status): int(n) for status, n in self._tuples(
            "SELECT status, COUNT(*) FROM judgments WHERE run_id = ? GROUP BY status", [run_id])}
        stood: dict[str, dict[str, int]] = {}
        for writer, status, n in self._tuples(
            "SELECT j.run_id, j.status, COUNT(*) FROM run_outcomes o "
            "JOIN judgments j ON j.id = o.judgment_id WHERE o.run_id = ? "
            "GROUP BY j.run_id, j.status ORDER BY MIN(j.id)", [run_id],
        ):
            stood.setdefault(str(writer), {})[str(status)] = int(n)
        return RunOutcomeCounts(made, stood)

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._one("SELECT * FROM runs WHERE id = ?", [run_id])
        return None if row is None else _row_to_run(row)

    def list_runs(
        self, *, rubric_hash: str | None = None, kind: str | None = None
    ) -> list[RunRecord]:
        """Runs in start order, optionally filtered."""
        where, params = where_clause({"rubric_hash": rubric_hash, "kind": kind})
        rows = self._rows(f"SELECT * FROM runs {where} ORDER BY started_at, rowid", params)
        return [_row_to_run(row) for row in rows]

    # -- judgments ---------------------------------------------------------
    def record_judgment(self, judgment: Judgment) -> None:
        """Commit one judgment immediately (its own transaction). A later row with
        the same cache_key supersedes an earlier one (history is kept).

        The run must exist (:meth:`create_run` first): every row stays traceable
        to its run. ``base_url`` is stored without credentials.
        """
        self.record_judgments([judgment])

    def record_judgments(self, judgments: Sequence[Judgment]) -> int:
        """Commit many judgments in one transaction (all or nothing); returns the count."""
        if not judgments:
            return 0
        with self._write() as conn:
            self._insert_judgments(conn, judgments)
        return len(judgments)

    def record_import(self, run: RunRecord, judgments: Sequence[Judgment]) -> int:
        """Create ``run`` and insert its ``judgments`` in one transaction (for imports)."""
        return self.record_imports([(run, judgments)])

    def record_imports(self, batches: Sequence[tuple[RunRecord, Sequence[Judgment]]]) -> int:
        """Several (run, judgments) pairs in one transaction: all stored or none."""
        with self._write() as conn:
            for run, judgments in batches:
                self._insert_run(conn, run)
                self._insert_judgments(conn, judgments)
        return sum(len(judgments) for _, judgments in batches)

    @staticmethod
    def _insert_judgments(conn: sqlite3.Connection, judgments: Sequence[Judgment]) -> None:
        try:
            conn.executemany(R.JUDGMENT_INSERT_SQL, [R.judgment_to_row(j) for j in judgments])
        except sqlite3.IntegrityError as exc:
            runs = sorted({j.run_id for j in judgments})
            raise StoreError(
                f"cannot record judgments of run(s) {', '.join(runs)}: {exc} "
                "(create the run with create_run first)"
            ) from exc

    def cached_judgments(self, cache_keys: Iterable[str]) -> dict[str, Judgment]:
        """Latest judgment per cache key among ``cache_keys`` (any status)."""
        found: dict[str, Judgment] = {}
        for row in self._latest_rows(cache_keys, R.JUDGMENT_SELECT):
            judgment = R.row_to_judgment(row)
            found[judgment.cache_key] = judgment
        return found

    def latest_judgments_by_key(
        self, cache_keys: Iterable[str]
    ) -> dict[str, tuple[int, Judgment]]:
        """Latest judgment per cache key among ``cache_keys`` with its row id (any status).

        The id tells a run whether an outcome was recorded since it looked (claims).
        """
        found: dict[str, tuple[int, Judgment]] = {}
        for row in self._latest_rows(cache_keys, f"{R.JUDGMENT_SELECT}, id"):
            judgment = R.row_to_judgment(row[:-1])
            found[judgment.cache_key] = (row[-1], judgment)
        return found

    def _latest_rows(self, cache_keys: Iterable[str], columns: str) -> Iterator[tuple[Any, ...]]:
        """``columns`` of the latest row per cache key, one query per chunk of keys."""
        keys = list(dict.fromkeys(cache_keys))
        for chunk in chunks(keys):
            yield from self._tuples(
                f"SELECT {columns} FROM judgments WHERE id IN (SELECT MAX(id) "
                f"FROM judgments WHERE cache_key IN ({marks(len(chunk))}) GROUP BY cache_key)",
                list(chunk),
            )

    def judgments(
        self,
        *,
        latest_only: bool = True,
        status: str | None = None,
        **filters: Unpack[JudgmentFilters],
    ) -> list[Judgment]:
        """Judgments filtered by the given fields; ``latest_only`` keeps the latest per cache key.

        Filters apply first, then "latest per cache key" among what is left (so
        ``run_id=X`` gives run X's own latest rows). ``model`` matches the model
        as requested; ``status`` is applied after the latest row is chosen.
        ``endpoint``, ``sampling`` and ``run_kinds`` select a judge and the kinds of
        run that wrote the rows (see :class:`~judgekit.store.judges.JudgmentSelection`).
        Rows come in insertion order.
        """
        where, params = selection_of(filters).where()
        sql = judgments_sql(R.JUDGMENT_SELECT, where, latest_only=latest_only)
        if status is not None:
            sql += (" AND" if latest_only or where else " WHERE") + " status = ?"
            params.append(status)
        rows = self._tuples(sql + " ORDER BY id", params)
        return [R.row_to_judgment(row) for row in rows]

    def judgments_for_items(
        self,
        rubric_hash: str,
        dataset: str,
        item_ids: Iterable[str],
        *,
        variant: str | None = None,
        run_id: str | None = None,
        model: str | None = None,
        endpoint: str | None = None,
        sampling: Mapping[str, Any] | None = None,
        run_kinds: Sequence[str] | None = None,
    ) -> dict[str, list[Judgment]]:
        """Latest judgments per cache key for the given items, grouped by item id.

        For the annotate app (judge verdict next to an item), disagreement
        sampling and reports, without loading every judgment of a large dataset.
        ``variant``, ``run_id``, ``model`` (as requested), ``endpoint``, ``sampling``
        and ``run_kinds`` filter like :meth:`judgments`; each item's rows come in
        insertion order.
        """
        ids = list(dict.fromkeys(item_ids))
        grouped: dict[str, list[Judgment]] = {}
        extra, extra_params = JudgmentSelection(
            run_id=run_id, variant=variant, model=model, endpoint=endpoint, sampling=sampling,
            run_kinds=None if run_kinds is None else tuple(run_kinds),
        ).where()
        extra = extra.replace("WHERE", "AND", 1)
        for chunk in chunks(ids):
            rows = self._tuples(
                f"SELECT {R.JUDGMENT_SELECT} FROM judgments WHERE id IN (SELECT MAX(id) "
                "FROM judgments WHERE rubric_hash = ? AND dataset = ? "
                f"AND item_id IN ({marks(len(chunk))}) "
                f"{extra} GROUP BY cache_key) ORDER BY id",
                [rubric_hash, dataset, *chunk, *extra_params],
            )
            for row in rows:
                judgment = R.row_to_judgment(row)
                grouped.setdefault(judgment.item_id, []).append(judgment)
        return grouped

    def count_judgments(self, *, rubric_hash: str | None = None, run_id: str | None = None) -> int:
        """Number of judgment rows (history included) matching the filters."""
        where, params = where_clause({"rubric_hash": rubric_hash, "run_id": run_id})
        row = self._one(f"SELECT COUNT(*) AS n FROM judgments {where}", params)
        return 0 if row is None else int(row["n"])

