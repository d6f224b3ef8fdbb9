"""SQLite store: WAL mode, named migrations, one transaction per write.

CONTRACT (other modules code against these signatures; keep them stable):
every method below is implemented; domain types come from ``judgekit.types``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.types import Item, Judgment, Label, Rubric

DEFAULT_DB_ENV = "JUDGEKIT_DB"


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
class QueueEntry:
    """One item in a labeling queue, with the probability it had of being picked."""

    position: int
    dataset: str
    item_id: str
    inclusion_prob: float
    stratum: str | None = None


def open_store(path: str | Path | None = None) -> Store:
    """Open (creating and migrating) the store at ``path``, ``$JUDGEKIT_DB`` or ./judgekit.db."""
    raise NotImplementedError


class Store:
    """All persistence. Safe to use from several processes at once (WAL, busy timeout)."""

    path: Path

    def close(self) -> None:
        raise NotImplementedError

    # -- items -------------------------------------------------------------
    def import_items(self, dataset: str, items: Sequence[Item], *, replace: bool = False) -> int:
        """Insert items atomically (all or nothing); returns how many were new/changed."""
        raise NotImplementedError

    def get_item(self, dataset: str, item_id: str) -> Item | None:
        raise NotImplementedError

    def iter_items(self, dataset: str) -> Iterator[Item]:
        raise NotImplementedError

    def count_items(self, dataset: str) -> int:
        raise NotImplementedError

    def datasets(self) -> list[str]:
        raise NotImplementedError

    # -- rubrics -----------------------------------------------------------
    def save_rubric(self, rubric: Rubric) -> None:
        """Store the rubric's full text once per sha256 (idempotent)."""
        raise NotImplementedError

    def get_rubric_text(self, sha256: str) -> str | None:
        raise NotImplementedError

    # -- runs --------------------------------------------------------------
    def create_run(self, run: RunRecord) -> None:
        raise NotImplementedError

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def get_run(self, run_id: str) -> RunRecord | None:
        raise NotImplementedError

    def list_runs(self, *, rubric_hash: str | None = None, kind: str | None = None) -> list[RunRecord]:
        raise NotImplementedError

    # -- judgments ---------------------------------------------------------
    def record_judgment(self, judgment: Judgment) -> None:
        """Commit one judgment immediately (its own transaction). A later row with
        the same cache_key supersedes an earlier one (history is kept)."""
        raise NotImplementedError

    def cached_judgments(self, cache_keys: Iterable[str]) -> dict[str, Judgment]:
        """Latest judgment per cache key among ``cache_keys`` (any status)."""
        raise NotImplementedError

    def judgments(
        self,
        *,
        rubric_hash: str | None = None,
        run_id: str | None = None,
        dataset: str | None = None,
        variant: str | None = None,
        latest_only: bool = True,
    ) -> list[Judgment]:
        """Judgments filtered by the given fields; ``latest_only`` keeps the latest per cache key."""
        raise NotImplementedError

    # -- capabilities cache -----------------------------------------------
    def get_capabilities(self, base_url: str, model: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def set_capabilities(self, base_url: str, model: str, capabilities: Mapping[str, Any]) -> None:
        raise NotImplementedError

    # -- human labels ------------------------------------------------------
    def add_label(self, label: Label) -> int:
        """Append a label (committed before returning); returns its row id."""
        raise NotImplementedError

    def add_labels(self, labels: Sequence[Label]) -> int:
        """Append many labels in one transaction (all or nothing)."""
        raise NotImplementedError

    def latest_labels(
        self,
        rubric_hash: str,
        *,
        dataset: str | None = None,
        annotator: str | None = None,
    ) -> list[Label]:
        """Latest label per (dataset, item, annotator); skips (label None) excluded."""
        raise NotImplementedError

    def label_history(self, rubric_hash: str, dataset: str, item_id: str, annotator: str) -> list[Label]:
        raise NotImplementedError

    # -- labeling queues ---------------------------------------------------
    def save_queue(
        self,
        name: str,
        rubric_hash: str,
        strategy: str,
        seed: int | None,
        entries: Sequence[QueueEntry],
    ) -> None:
        raise NotImplementedError

    def get_queue(self, name: str) -> tuple[dict[str, Any], list[QueueEntry]] | None:
        """(queue metadata, entries in order) or None."""
        raise NotImplementedError

    # -- probe results -----------------------------------------------------
    def save_probe_result(self, run_id: str, probe: str, rubric_hash: str, result: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def probe_results(self, rubric_hash: str, probe: str | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError
