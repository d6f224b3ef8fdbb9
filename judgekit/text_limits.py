"""How long a human label's text fields may be, wherever labels come in (API or file).

A label's note is stored once and then read by every report and export, so a 50 MB
note costs every later command; an annotator's name is shown in every per-annotator
table. The limits are far above what a person types and are the same for
``POST /api/v1/labels`` and ``judgekit labels import`` (docs/serve.md, "Security model").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Longest text, in characters, per label field.
MAX_LABEL_TEXT: dict[str, int] = {
    "note": 10_000,
    "annotator": 200,
    "label": 200,
    "item_id": 1_000,
    "dataset": 1_000,
    "created_at": 64,
    "source": 32,
}


def too_long(record: Mapping[str, Any]) -> str | None:
    """The problem with the first text field of ``record`` over its limit, or None."""
    for name, limit in MAX_LABEL_TEXT.items():
        value = record.get(name)
        if isinstance(value, str) and len(value) > limit:
            return f"field {name!r} is longer than {limit:,} characters ({len(value):,})"
    return None


__all__ = ["MAX_LABEL_TEXT", "too_long"]
