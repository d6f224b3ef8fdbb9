"""Field coercion shared by the label and verdict readers, and item ids -> datasets.

Values arrive as JSON values (JSONL, parquet, a DataFrame) or as text (CSV,
TSV); these helpers accept both spellings and raise ``ValueError`` with a
message that the caller reports at ``file:line``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgekit.store import Store


def text_field(record: Mapping[str, Any], name: str) -> str | None:
    """A string field; integers are accepted as their decimal text (ids, ordinal labels).

    Raises ``ValueError`` with a message for a wrong type or a blank value.
    """
    value = record.get(name)
    if value is None:
        return None
    if type(value) is str and value.strip() is value and value:
        return value  # the common case first: text with no surrounding space
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ValueError(f"{name!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name!r} must not be blank")
    return value


def bool_field(record: Mapping[str, Any], name: str, default: bool) -> bool:
    """A JSON boolean, or CSV text true/false/1/0/yes/no."""
    value = record.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"{name!r} must be true or false, got {value!r}")


def item_dataset_index(store: Store, dataset: str | None) -> dict[str, list[str]]:
    """item id -> datasets holding it (only ``dataset`` when given)."""
    index: dict[str, list[str]] = {}
    for name in [dataset] if dataset is not None else store.datasets():
        for item_id in store.item_ids(name):
            index.setdefault(item_id, []).append(name)
    return index


def resolve_dataset(
    item_id: str,
    given: str | None,
    index: Mapping[str, list[str]],
) -> str:
    """The dataset of ``item_id``: the one named, else the only one holding that id."""
    holders = index.get(item_id, [])
    if given is not None:
        if given not in holders:
            raise ValueError(f"unknown item id {item_id!r} in dataset {given!r}")
        return given
    if not holders:
        raise ValueError(f"unknown item id {item_id!r} (import the dataset first)")
    if len(holders) > 1:
        raise ValueError(
            f"item id {item_id!r} is in several datasets ({', '.join(holders)}); "
            "name one with --dataset or a 'dataset' field"
        )
    return holders[0]
