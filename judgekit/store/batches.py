"""Batch API work in the store: prepared batches, their files and calls, submitted jobs.

A prepared batch is written in one transaction with its files and its calls
(``batch_requests``: custom id = the call's cache key -> item, variant, sample),
so a file on disk that the store does not know, or a store entry without its
calls, cannot happen. Jobs are the provider's batches made from those files;
their state is refreshed by ``judgekit batch status``. Judgments themselves are
stored like any other (``runs.py``): a collected batch is one run whose id is
``batch:<id>``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from judgekit.store import rows as R
from judgekit.store._base import StoreBase, chunks, marks

__all__ = [
    "ACTIVE_JOB_STATES", "BatchFile", "BatchJob", "BatchRecord", "BatchRequest", "BatchWriter",
    "BatchesMixin", "SubmitIntent",
]

#: Provider states of a job that may still produce answers (its calls are not prepared again).
ACTIVE_JOB_STATES = ("validating", "in_progress", "finalizing", "cancelling")


@dataclass(frozen=True)
class BatchRecord:
    """One prepared batch: whose calls (judge, rubric, dataset) and how they were asked.

    ``base_url`` is the judge's endpoint identity as in cache keys (no credentials);
    ``request`` records the request shape (response format mode, logprobs).
    """

    id: str
    kind: str
    dataset: str
    rubric_hash: str
    model: str
    base_url: str
    sampling: Mapping[str, Any]
    request: Mapping[str, Any]
    created_at: str
    n_requests: int = 0


@dataclass(frozen=True)
class BatchFile:
    """One prepared JSONL file: its part number within the batch, size and sha256."""

    batch_id: str
    part: int
    path: str
    sha256: str
    n_requests: int
    bytes: int


@dataclass(frozen=True)
class BatchRequest:
    """One call of a prepared batch, found by its ``custom_id`` (the call's cache key)."""

    batch_id: str
    custom_id: str
    part: int
    item_id: str
    variant: str
    sample_index: int
    item_hash: str
    swap_labels: bool


@dataclass(frozen=True)
class BatchJob:
    """A provider batch made from one prepared file (``id`` is the provider's batch id)."""

    id: str
    batch_id: str
    part: int
    base_url: str
    input_file_id: str
    state: str
    submitted_at: str
    updated_at: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    request_counts: Mapping[str, Any] = field(default_factory=dict)
    collected_at: str | None = None


@dataclass(frozen=True)
class SubmitIntent:
    """A ``batch submit`` recorded before the provider is asked to create its batch.

    ``key`` goes into the provider batch's ``metadata`` (``judgekit_submit``), so a
    batch created by a submit that was interrupted before recording it can be found
    at the provider. ``state``: ``uploading`` (no create sent yet), ``creating``
    (the create was sent: the batch may exist), ``created`` (``job_id`` recorded)
    or ``not_created`` (refused by the provider, or never sent).
    """

    key: str
    batch_id: str
    part: int
    sha256: str
    base_url: str
    state: str
    created_at: str
    updated_at: str
    input_file_id: str | None = None
    job_id: str | None = None


_REQUEST_COLUMNS = ("batch_id", "custom_id", "part", "item_id", "variant", "sample_index",
                    "item_hash", "swap_labels")


class BatchWriter:
    """Adds calls and files to the batch being prepared (see :meth:`BatchesMixin.preparing_batch`).

    Calls are written a chunk per short transaction, so a long prepare never
    holds the store's write lock for long (a live run or the annotate app
    writing meanwhile only waits for one chunk).
    """

    def __init__(self, store: StoreBase, batch_id: str) -> None:
        self._store, self.batch_id = store, batch_id
        self.n_requests = 0
        self.files: list[BatchFile] = []

    def add_requests(self, requests: Sequence[BatchRequest]) -> None:
        if not requests:
            return
        with self._store._write() as conn:
            conn.executemany(
                f"INSERT INTO batch_requests ({', '.join(_REQUEST_COLUMNS)}) "
                f"VALUES ({marks(len(_REQUEST_COLUMNS))})",
                [(r.batch_id, r.custom_id, r.part, r.item_id, r.variant, r.sample_index,
                  r.item_hash, int(r.swap_labels)) for r in requests],
            )
        self.n_requests += len(requests)

    def add_file(self, file: BatchFile) -> None:
        """Recorded with the batch's last transaction, which makes the batch complete."""
        self.files.append(file)


#: A batch is complete (usable by submit and collect) once its files are recorded.
_COMPLETE = "batch_id IN (SELECT batch_id FROM batch_files)"


def _job(row: sqlite3.Row) -> BatchJob:
    return R.from_row(BatchJob, row, json_fields=frozenset({"request_counts"}))


class BatchesMixin(StoreBase):
    """Prepared batches and provider jobs (mixed into :class:`~judgekit.store.Store`)."""

    @contextmanager
    def preparing_batch(self, record: BatchRecord) -> Iterator[BatchWriter]:
        """Record ``record`` with the calls and files added in the block, all or nothing.

        The batch counts as prepared only when its files are recorded, in one
        transaction at the end of the block; an error in the block deletes what
        was written. Rows of a process killed meanwhile stay incomplete and are
        never matched by :meth:`batch_requests` or listed. SQLite's page cache stays at
        its default: a larger one fills with index pages in step with the calls.
        """
        with self._write() as conn:
            conn.execute(
                "INSERT INTO batches (id, kind, dataset, rubric_hash, model, base_url, "
                "sampling, request, n_requests, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                [record.id, record.kind, record.dataset, record.rubric_hash, record.model,
                 R.strip_credentials(record.base_url), R.dump_json(record.sampling),
                 R.dump_json(record.request), record.created_at],
            )
        writer = BatchWriter(self, record.id)
        try:
            yield writer
        except BaseException:
            with self._write() as conn:
                for table, column in (("batch_requests", "batch_id"),
                                      ("batch_files", "batch_id"), ("batches", "id")):
                    conn.execute(f"DELETE FROM {table} WHERE {column} = ?", [record.id])
            raise
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO batch_files (batch_id, part, path, sha256, n_requests, bytes) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [[f.batch_id, f.part, f.path, f.sha256, f.n_requests, f.bytes]
                 for f in writer.files],
            )
            conn.execute("UPDATE batches SET n_requests = ? WHERE id = ?",
                         [writer.n_requests, record.id])

    def get_batch(self, batch_id: str) -> BatchRecord | None:
        row = self._one("SELECT * FROM batches WHERE id = ?", [batch_id])
        if row is None:
            return None
        return R.from_row(BatchRecord, row, json_fields=frozenset({"sampling", "request"}))

    def list_batches(self) -> list[BatchRecord]:
        """Prepared batches, oldest first."""
        rows = self._rows("SELECT * FROM batches WHERE id IN (SELECT batch_id FROM batch_files) "
                          "ORDER BY created_at, rowid")
        return [R.from_row(BatchRecord, row, json_fields=frozenset({"sampling", "request"}))
                for row in rows]

    def batch_files(self, batch_id: str) -> list[BatchFile]:
        rows = self._rows("SELECT * FROM batch_files WHERE batch_id = ? ORDER BY part", [batch_id])
        return [R.from_row(BatchFile, row) for row in rows]

    def batch_file_by_sha256(self, sha256: str) -> BatchFile | None:
        """The prepared file with this content (the latest, if prepared twice)."""
        row = self._one("SELECT * FROM batch_files WHERE sha256 = ? ORDER BY rowid DESC LIMIT 1",
                        [sha256])
        return None if row is None else R.from_row(BatchFile, row)

    def batch_requests(
        self, custom_ids: Iterable[str], *, batch_id: str | None = None
    ) -> dict[str, BatchRequest]:
        """The prepared call of each known custom id (of ``batch_id``, else its latest batch).

        Only complete batches count (see :meth:`preparing_batch`).
        """
        ids = list(dict.fromkeys(custom_ids))
        found: dict[str, BatchRequest] = {}
        scope = f"AND {_COMPLETE} " if batch_id is None else "AND batch_id = ? "
        extra = [] if batch_id is None else [batch_id]
        for chunk in chunks(ids):
            for row in self._tuples(
                f"SELECT {', '.join(_REQUEST_COLUMNS)} FROM batch_requests "
                f"WHERE custom_id IN ({marks(len(chunk))}) {scope}ORDER BY rowid",
                [*chunk, *extra],
            ):
                batch, custom_id, part, item_id, variant, sample, item_hash, swap = row
                found[custom_id] = BatchRequest(  # later rows win: the latest batch
                    batch, custom_id, int(part), item_id, variant, int(sample), item_hash,
                    bool(swap),
                )
        return found

    def active_batch_calls(self, custom_ids: Iterable[str]) -> set[str]:
        """Custom ids among ``custom_ids`` in a submitted job that may still answer them."""
        ids = list(dict.fromkeys(custom_ids))
        states = list(ACTIVE_JOB_STATES)
        found: set[str] = set()
        for chunk in chunks(ids):
            found.update(row[0] for row in self._tuples(
                "SELECT r.custom_id FROM batch_requests r JOIN batch_jobs j "
                "ON j.batch_id = r.batch_id AND j.part = r.part "
                f"WHERE r.custom_id IN ({marks(len(chunk))}) "
                f"AND j.state IN ({marks(len(states))})",
                [*chunk, *states],
            ))
        return found

    def latest_statuses(self, cache_keys: Iterable[str]) -> dict[str, tuple[int, str, str]]:
        """Row id, run id and status of the latest judgment per cache key (light lookup)."""
        keys = list(dict.fromkeys(cache_keys))
        found: dict[str, tuple[int, str, str]] = {}
        for chunk in chunks(keys):
            for key, row_id, run_id, status in self._tuples(
                "SELECT cache_key, id, run_id, status FROM judgments WHERE id IN "
                f"(SELECT MAX(id) FROM judgments WHERE cache_key IN ({marks(len(chunk))}) "
                "GROUP BY cache_key)",
                list(chunk),
            ):
                found[key] = (int(row_id), str(run_id), str(status))
        return found

    def last_judgment_id(self) -> int:
        row = self._one("SELECT COALESCE(MAX(id), 0) AS n FROM judgments")
        return 0 if row is None else int(row["n"])

    # -- submits --------------------------------------------------------------
    def record_submit_intent(self, intent: SubmitIntent) -> None:
        """Record a submit before anything is sent (committed when this returns)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO batch_submits (key, batch_id, part, sha256, base_url, state, "
                "input_file_id, job_id, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [intent.key, intent.batch_id, intent.part, intent.sha256,
                 R.strip_credentials(intent.base_url), intent.state, intent.input_file_id,
                 intent.job_id, intent.created_at, intent.updated_at],
            )

    def pending_submits(self, *, batch_id: str | None = None,
                        part: int | None = None) -> list[SubmitIntent]:
        """Submits whose batch may exist at the provider but is not recorded, oldest first."""
        where: list[str] = ["state IN ('uploading', 'creating')"]
        params: list[Any] = []
        if batch_id is not None:
            where.append("batch_id = ?")
            params.append(batch_id)
        if part is not None:
            where.append("part = ?")
            params.append(part)
        rows = self._rows(f"SELECT * FROM batch_submits WHERE {' AND '.join(where)} "
                          "ORDER BY created_at, rowid", params)
        return [R.from_row(SubmitIntent, row) for row in rows]

    def set_submit_state(self, key: str, state: str, *,
                         input_file_id: str | None = None) -> None:
        """A submit's next step (``creating`` with its uploaded file), or ``not_created``."""
        with self._write() as conn:
            conn.execute(
                "UPDATE batch_submits SET state = ?, input_file_id = "
                "COALESCE(?, input_file_id), updated_at = ? WHERE key = ?",
                [state, input_file_id, R.utc_now(), key],
            )

    def record_submitted_job(self, key: str, job: BatchJob) -> None:
        """The provider batch of submit ``key``, and the submit marked created, in one write."""
        with self._write() as conn:
            self._insert_job(conn, job)
            conn.execute(
                "UPDATE batch_submits SET state = 'created', job_id = ?, input_file_id = ?, "
                "updated_at = ? WHERE key = ?",
                [job.id, job.input_file_id, R.utc_now(), key],
            )

    # -- jobs ----------------------------------------------------------------
    def record_job(self, job: BatchJob) -> None:
        with self._write() as conn:
            self._insert_job(conn, job)

    @staticmethod
    def _insert_job(conn: sqlite3.Connection, job: BatchJob) -> None:
        conn.execute(
            "INSERT INTO batch_jobs (id, batch_id, part, base_url, input_file_id, state, "
            "output_file_id, error_file_id, request_counts, submitted_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [job.id, job.batch_id, job.part, R.strip_credentials(job.base_url),
             job.input_file_id, job.state, job.output_file_id, job.error_file_id,
             R.dump_json(job.request_counts), job.submitted_at, job.updated_at],
        )

    def update_job(self, job_id: str, *, state: str, output_file_id: str | None,
                   error_file_id: str | None, request_counts: Mapping[str, Any]) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE batch_jobs SET state = ?, output_file_id = ?, error_file_id = ?, "
                "request_counts = ?, updated_at = ? WHERE id = ?",
                [state, output_file_id, error_file_id, R.dump_json(request_counts),
                 R.utc_now(), job_id],
            )

    def mark_job_collected(self, job_id: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE batch_jobs SET collected_at = ? WHERE id = ?",
                         [R.utc_now(), job_id])

    def get_job(self, job_id: str) -> BatchJob | None:
        row = self._one("SELECT * FROM batch_jobs WHERE id = ?", [job_id])
        return None if row is None else _job(row)

    def list_jobs(self, *, batch_id: str | None = None) -> list[BatchJob]:
        where = "" if batch_id is None else "WHERE batch_id = ? "
        rows = self._rows(f"SELECT * FROM batch_jobs {where}ORDER BY submitted_at, rowid",
                          [] if batch_id is None else [batch_id])
        return [_job(row) for row in rows]
