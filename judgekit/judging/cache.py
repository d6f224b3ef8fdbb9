"""The cache key of a judge call, and the rule that decides whether to call again.

A judge call is identified by everything that can change its outcome: the model
as requested, the endpoint (credentials removed), the rubric's sha256, the
content hash of the item as presented, the presentation variant, the sampling
parameters, the sample index and the parser version. Dataset and item id are
part of the key too, so two items that happen to have identical content still
get one row each. Equal inputs give an equal key, so a rerun repeats no paid
call, and any change re-judges exactly the calls it affects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgekit.types import ANSWERED_FAILURES, Judgment, canonical_json, sha256_text

#: Bump when the meaning of the key's fields changes (invalidates every cache entry).
CACHE_KEY_VERSION = 1


def cache_key(
    *,
    model: str,
    base_url: str,
    rubric_hash: str,
    item_hash: str,
    sampling: Mapping[str, Any],
    sample_index: int,
    parser_version: str,
    dataset: str,
    item_id: str,
    variant: str = "",
    reverse_levels: bool = False,
) -> str:
    """sha256 (hex) of the canonical JSON of a call's full identity.

    ``base_url`` must already be free of credentials (see
    :func:`judgekit.clients.public_base_url`); ``sampling`` is
    :meth:`SamplingParams.as_dict` output, so every parameter counts.
    """
    if sample_index < 0:
        raise ValueError(f"sample_index must be >= 0, got {sample_index}")
    identity = {
        "v": CACHE_KEY_VERSION,
        "model": model,
        "base_url": base_url,
        "rubric": rubric_hash,
        "item": item_hash,
        "dataset": dataset,
        "item_id": item_id,
        "variant": variant,
        "reverse_levels": reverse_levels,
        "sampling": dict(sampling),
        "sample": sample_index,
        "parser": parser_version,
    }
    return sha256_text(canonical_json(identity))


def needs_call(cached: Judgment | None, *, force: bool = False, retry_failed: bool = False) -> bool:
    """Whether a call must be made given the latest stored outcome for its key.

    - nothing stored, or a transient failure (rate_limited, timeout, api_error:
      the model never answered): call.
    - ``ok``: reuse unless ``force``.
    - an answered failure (parse_error, refusal, truncated: a paid call): reuse
      unless ``retry_failed`` or ``force``.
    """
    if cached is None or force:
        return True
    if cached.status == "ok":
        return False
    if cached.status in ANSWERED_FAILURES:
        return retry_failed
    return True  # transient failure: the model never answered
