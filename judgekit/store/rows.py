"""Row <-> domain type conversion, kept apart so the SQL in the store's mixins stays readable.

Rows come from ``sqlite3.Row`` (indexable by column name). JSON columns hold
canonical JSON so two equal mappings are stored as equal text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from judgekit.redaction import public_url
from judgekit.types import Item, Judgment, Label, canonical_json

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")

def utc_now() -> str:
    """ISO 8601 UTC timestamp with microseconds: sorts as text, parses everywhere."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def dump_json(value: Mapping[str, Any] | None) -> str:
    return canonical_json(dict(value)) if value else "{}"


def load_json(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    loaded = json.loads(text)
    return loaded if isinstance(loaded, dict) else {"value": loaded}


def strip_credentials(base_url: str) -> str:
    """``base_url`` without credentials (:func:`judgekit.redaction.public_url`).

    The store has no column for API keys; this is the last defence against a key
    smuggled in through the URL (``https://user:sk-...@host/v1``, ``?api_key=``,
    ``/v1;k=KEY``, ``/KEY/v1``). Non-URL values such as ``imported:file.jsonl`` or
    ``local:model.gguf`` pass through unchanged.
    """
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return base_url
    if not parts.scheme or not parts.netloc:
        return base_url
    return public_url(base_url)


# -- items ---------------------------------------------------------------

ITEM_COLUMNS = (
    "dataset", "id", "input", "response", "response_a", "response_b", "reference",
    "slice", "cluster", "meta", "content_hash", "created_at",
)


def item_to_row(dataset: str, item: Item, created_at: str) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "id": item.id,
        "input": item.input,
        "response": item.response,
        "response_a": item.response_a,
        "response_b": item.response_b,
        "reference": item.reference,
        "slice": item.slice,
        "cluster": item.cluster,
        "meta": dump_json(item.meta),
        "content_hash": item.content_hash,
        "created_at": created_at,
    }


def item_fingerprint(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Everything that makes two stored items "the same" (content hash + grouping fields)."""
    return (row["content_hash"], row["slice"], row["cluster"])


def from_row(
    cls: type[T],
    row: sqlite3.Row,
    *,
    json_fields: Collection[str] = (),
    bool_fields: Collection[str] = (),
) -> T:
    """A dataclass whose fields are named like the row's columns.

    One rule for every table read by column name: JSON columns are parsed and
    0/1 integer columns become booleans; everything else is taken as stored.
    """
    values: dict[str, Any] = {}
    for spec in fields(cls):
        value = row[spec.name]
        if spec.name in json_fields:
            value = load_json(value)
        elif spec.name in bool_fields:
            value = bool(value)
        values[spec.name] = value
    return cls(**values)


def row_to_item(row: sqlite3.Row) -> Item:
    return from_row(Item, row, json_fields=("meta",))


# -- judgments -------------------------------------------------------------

JUDGMENT_COLUMNS = (
    "run_id", "dataset", "item_id", "item_hash", "variant", "sample_index", "status",
    "label", "score", "reasoning", "raw_text", "model_requested", "model_returned",
    "base_url", "sampling", "rubric_name", "rubric_version", "rubric_hash", "cache_key",
    "prompt_tokens", "completion_tokens", "latency_ms", "finish_reason", "error",
    "judgekit_version", "created_at", "imported", "confidence",
)


#: The statuses of a finished call (the model answered), as an SQL list.
FINISHED_STATUSES_SQL = "('ok', 'parse_error', 'refusal', 'truncated')"
_JUDGMENT_NAMES = ", ".join(JUDGMENT_COLUMNS)
_JUDGMENT_PARAMS = ", ".join(f":{column}" for column in JUDGMENT_COLUMNS)
#: Insert a judgment; a finished one supersedes the key's latest finished outcome
#: (read in the same statement, so rows written one after another chain up).
JUDGMENT_INSERT_SQL = (
    f"INSERT INTO judgments ({_JUDGMENT_NAMES}, supersedes) VALUES ({_JUDGMENT_PARAMS}, "
    f"CASE WHEN :status IN {FINISHED_STATUSES_SQL} THEN (SELECT MAX(id) FROM judgments "
    f"WHERE cache_key = :cache_key AND status IN {FINISHED_STATUSES_SQL}) END)"
)
_STATUS_AT = JUDGMENT_COLUMNS.index("status") + 1
_KEY_AT = JUDGMENT_COLUMNS.index("cache_key") + 1
#: :data:`JUDGMENT_INSERT_SQL` for a tuple of values in ``JUDGMENT_COLUMNS`` order (bulk
#: imports: no dict per row).
JUDGMENT_VALUES_INSERT_SQL = (
    f"INSERT INTO judgments ({_JUDGMENT_NAMES}, supersedes) VALUES "
    f"({', '.join(f'?{i}' for i in range(1, len(JUDGMENT_COLUMNS) + 1))}, "
    f"CASE WHEN ?{_STATUS_AT} IN {FINISHED_STATUSES_SQL} THEN (SELECT MAX(id) FROM judgments "
    f"WHERE cache_key = ?{_KEY_AT} AND status IN {FINISHED_STATUSES_SQL}) END)"
)
#: Insert a judgment made under a claim: it supersedes what the claim saw (``:supersedes``),
#: so a duplicate of a concurrent run's outcome breaks the unique index instead of chaining.
CLAIMED_INSERT_SQL = (
    f"INSERT INTO judgments ({_JUDGMENT_NAMES}, supersedes) VALUES ({_JUDGMENT_PARAMS}, "
    f"CASE WHEN :status IN {FINISHED_STATUSES_SQL} THEN :supersedes END)"
)


def judgment_to_row(judgment: Judgment) -> dict[str, Any]:
    return {
        "run_id": judgment.run_id,
        "dataset": judgment.dataset,
        "item_id": judgment.item_id,
        "item_hash": judgment.item_hash,
        "variant": judgment.variant,
        "sample_index": judgment.sample_index,
        "status": judgment.status,
        "label": judgment.label,
        "score": judgment.score,
        "reasoning": judgment.reasoning,
        "raw_text": judgment.raw_text,
        "model_requested": judgment.model_requested,
        "model_returned": judgment.model_returned,
        "base_url": strip_credentials(judgment.base_url),
        "sampling": dump_json(judgment.sampling),
        "rubric_name": judgment.rubric_name,
        "rubric_version": judgment.rubric_version,
        "rubric_hash": judgment.rubric_hash,
        "cache_key": judgment.cache_key,
        "prompt_tokens": judgment.prompt_tokens,
        "completion_tokens": judgment.completion_tokens,
        "latency_ms": judgment.latency_ms,
        "finish_reason": judgment.finish_reason,
        "error": judgment.error,
        "judgekit_version": judgment.judgekit_version,
        "created_at": judgment.created_at or utc_now(),
        "imported": int(judgment.imported),
        "confidence": judgment.confidence,
    }


#: Column list for reading judgments; :func:`row_to_judgment` takes rows in this order.
JUDGMENT_SELECT = ", ".join(JUDGMENT_COLUMNS)


@lru_cache(maxsize=256)
def _parsed_json(text: str) -> dict[str, Any]:
    return load_json(text)


def row_to_judgment(row: Sequence[Any]) -> Judgment:
    """A judgment from a plain tuple in ``JUDGMENT_COLUMNS`` order.

    Positional access and a memoised JSON parse (sampling repeats across a run)
    keep reading 100k judgments for a report around a second.
    """
    (run_id, dataset, item_id, item_hash, variant, sample_index, status, label, score,
     reasoning, raw_text, model_requested, model_returned, base_url, sampling, rubric_name,
     rubric_version, rubric_hash, cache_key, prompt_tokens, completion_tokens, latency_ms,
     finish_reason, error, judgekit_version, created_at, imported, confidence) = row
    return Judgment(
        run_id=run_id,
        dataset=dataset,
        item_id=item_id,
        sample_index=sample_index,
        status=status,
        label=label,
        score=score,
        reasoning=reasoning,
        raw_text=raw_text,
        model_requested=model_requested,
        model_returned=model_returned,
        base_url=base_url,
        sampling=dict(_parsed_json(sampling)),  # a private copy: callers may mutate it
        rubric_name=rubric_name,
        rubric_version=rubric_version,
        rubric_hash=rubric_hash,
        cache_key=cache_key,
        variant=variant,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        latency_ms=latency_ms,
        finish_reason=finish_reason,
        error=error,
        judgekit_version=judgekit_version,
        created_at=created_at,
        item_hash=item_hash,
        imported=bool(imported),
        confidence=confidence,
    )


# -- labels ----------------------------------------------------------------

LABEL_COLUMNS = (
    "dataset", "item_id", "rubric_hash", "annotator", "label", "note", "flagged",
    "blind", "seconds", "created_at", "source",
)


def label_to_row(label: Label) -> dict[str, Any]:
    return {
        "dataset": label.dataset,
        "item_id": label.item_id,
        "rubric_hash": label.rubric_hash,
        "annotator": label.annotator,
        "label": label.label,
        "note": label.note,
        "flagged": int(label.flagged),
        "blind": int(label.blind),
        "seconds": label.seconds,
        "created_at": label.created_at or utc_now(),
        "source": label.source,
    }


def row_to_label(row: sqlite3.Row) -> Label:
    return from_row(Label, row, bool_fields=("flagged", "blind"))


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """``INSERT INTO table (cols) VALUES (:cols)`` for named-parameter rows."""
    names = ", ".join(columns)
    params = ", ".join(f":{column}" for column in columns)
    return f"INSERT INTO {table} ({names}) VALUES ({params})"
