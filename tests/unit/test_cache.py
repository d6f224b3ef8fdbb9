"""The cache key and the call-again rule."""

from __future__ import annotations

from typing import Any

import pytest

from judgekit.judging.cache import cache_key, needs_call
from judgekit.types import Judgment, SamplingParams

BASE: dict[str, Any] = dict(
    model="m", base_url="http://h/v1", rubric_hash="r" * 64, item_hash="i" * 64,
    sampling=SamplingParams().as_dict(), sample_index=0, parser_version="1",
    dataset="d", item_id="x",
)


def test_key_is_deterministic_hex() -> None:
    key = cache_key(**BASE)
    assert key == cache_key(**dict(BASE))
    assert len(key) == 64 and int(key, 16) >= 0
    # mapping order does not matter (canonical JSON)
    reordered = dict(BASE, sampling=dict(reversed(list(BASE["sampling"].items()))))
    assert cache_key(**reordered) == key


@pytest.mark.parametrize("field,value", [
    ("model", "m2"), ("base_url", "http://other/v1"), ("rubric_hash", "s" * 64),
    ("item_hash", "j" * 64), ("sample_index", 1), ("parser_version", "2"),
    ("dataset", "e"), ("item_id", "y"),
    ("sampling", SamplingParams(temperature=0.5).as_dict()),
    ("sampling", SamplingParams(seed=None).as_dict()),
    ("sampling", SamplingParams(max_tokens=100).as_dict()),
    ("sampling", SamplingParams(top_p=0.9).as_dict()),
])
def test_every_part_of_the_identity_changes_the_key(field: str, value: Any) -> None:
    assert cache_key(**dict(BASE, **{field: value})) != cache_key(**BASE)


def test_variant_and_level_order_change_the_key() -> None:
    keys = {
        cache_key(**BASE),
        cache_key(**BASE, variant="swapped"),
        cache_key(**BASE, variant="pad25"),
        cache_key(**BASE, reverse_levels=True),
    }
    assert len(keys) == 4


def test_negative_sample_index_rejected() -> None:
    with pytest.raises(ValueError, match="sample_index"):
        cache_key(**dict(BASE, sample_index=-1))


def judgment(status: str) -> Judgment:
    return Judgment(
        run_id="r", dataset="d", item_id="x", sample_index=0, status=status,  # type: ignore[arg-type]
        label=None, score=None, reasoning=None, raw_text=None, model_requested="m",
        model_returned=None, base_url="u", sampling={}, rubric_name="n", rubric_version="1",
        rubric_hash="h", cache_key="k",
    )


@pytest.mark.parametrize("status,plain,retry_failed,force", [
    ("ok", False, False, True),
    ("parse_error", False, True, True),
    ("refusal", False, True, True),
    ("truncated", False, True, True),
    ("rate_limited", True, True, True),
    ("timeout", True, True, True),
    ("api_error", True, True, True),
])
def test_needs_call(status: str, plain: bool, retry_failed: bool, force: bool) -> None:
    cached = judgment(status)
    assert needs_call(cached) is plain
    assert needs_call(cached, retry_failed=True) is retry_failed
    assert needs_call(cached, force=True) is force


def test_nothing_cached_needs_a_call() -> None:
    assert needs_call(None)
