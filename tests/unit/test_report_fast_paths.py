"""The report's batched paths against the item-by-item code they replace, on random inputs.

Each fast path must give exactly what the plain per-item code gives: the families
of each response's model (worked out once per distinct meta), the one-dimensional
check of ``as_1d`` and the missing-value mask (on the distinct types), the code
counts of a resample plan, and the distinct rows of a bootstrap's patterns.
Edges: one item, a constant column, all values missing, a single cluster.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from judgekit.families import model_family, response_models
from judgekit.report.self_preference import response_families
from judgekit.stats._plan import code_counts
from judgekit.stats._resample import chunk_rows, unique_rows
from judgekit.stats._validate import as_1d, encode, missing_mask
from judgekit.store.columns import ItemFacts
from judgekit.types import Item

MODELS = ["gpt-4o", "claude-3-5-sonnet", "llama-3.1-8b", " qwen2.5 ", "", "sim-judge", None, 4]


def _facts(rng: random.Random, i: int, pairwise: bool, metas: list[str]) -> ItemFacts:
    return ItemFacts("d", f"i{i}", "q", None, None, rng.choice(metas), pairwise)


def _metas(rng: random.Random) -> list[str]:
    out = ["{}"]
    for _ in range(12):
        meta = {}
        for field in ("model", "author", "model_a", "author_a", "model_b", "author_b"):
            if rng.random() < 0.5:
                value = rng.choice(MODELS)
                if value != 4:
                    meta[field] = value
        out.append(json.dumps(meta))
    return out


def _per_item(item: Item | ItemFacts | None) -> tuple[str | None, ...]:
    """The code :func:`response_families` replaces: every item parsed on its own."""
    if item is None:
        return ()
    return tuple(model_family(m) if m else None for m in response_models(item))


@pytest.mark.parametrize("seed", range(5))
def test_response_families_match_the_per_item_code(seed: int) -> None:
    rng = random.Random(seed)
    metas = _metas(rng)
    items: list[Item | ItemFacts | None] = []
    for i in range(400):
        roll = rng.random()
        if roll < 0.1:
            items.append(None)
        elif roll < 0.2:  # a full item, whose meta is a dict
            meta = json.loads(rng.choice(metas))
            if rng.random() < 0.5:
                items.append(Item(id=f"f{i}", input="q", response="r", meta=meta))
            else:
                items.append(Item(id=f"f{i}", input="q", response_a="a", response_b="b", meta=meta))
        else:
            items.append(_facts(rng, i, rng.random() < 0.5, metas))
    assert response_families(items) == [_per_item(item) for item in items]


def test_response_families_of_one_item_and_none() -> None:
    one = ItemFacts("d", "i", "q", None, None, '{"model_a": "gpt-4o"}', True)
    assert response_families([one]) == [("gpt", None)]
    assert response_families([]) == []
    assert response_families([None]) == [()]


def test_a_nested_value_is_still_refused() -> None:
    for bad in ([["a"], "b"], ["a", ("b",)], ["a", np.array([1])]):
        with pytest.raises(ValueError, match="one-dimensional"):
            as_1d(bad, "labels")
    assert as_1d(["a", None, 1.5, True], "labels").tolist() == ["a", None, 1.5, True]


def _code_counts_per_resample(codes: np.ndarray, n_codes: int, n_resamples: int,
                              rng: np.random.Generator, units: np.ndarray | None) -> np.ndarray:
    """Code counts the plain way: draw every resample's indices, count their codes."""
    n = codes.size
    out = np.zeros((n_resamples, n_codes), dtype=np.int64)
    if units is None:
        step = max(1, min(n_resamples, 2_000_000 // max(n, 1)))
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            idx = rng.integers(0, n, size=(rows, n))
            for r in range(rows):
                for i in idx[r]:
                    out[start + r, codes[i]] += 1
        return out
    members = [np.flatnonzero(units == u) for u in range(int(units.max()) + 1)]
    step = chunk_rows(n_resamples, n)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        picked = rng.integers(0, len(members), size=(rows, len(members)))
        for r in range(rows):
            for unit in picked[r]:
                for i in members[unit]:
                    out[start + r, codes[i]] += 1
    return out


@pytest.mark.parametrize(("n", "n_codes", "clustered"), [
    (1, 1, False), (1, 4, False), (7, 4, False), (300, 16, False), (50, 1, False),
    (40, 9, True), (25, 4, "one"),
])
def test_code_counts_match_the_per_resample_count(n: int, n_codes: int,
                                                  clustered: bool | str) -> None:
    rng = np.random.default_rng(n * 31 + n_codes)
    codes = np.zeros(n, dtype=np.int64) if n_codes == 1 else rng.integers(0, n_codes, n)
    units = None
    if clustered == "one":
        units = np.zeros(n, dtype=np.int64)
    elif clustered:
        units = np.sort(rng.integers(0, 6, n))
        units = np.unique(units, return_inverse=True)[1].astype(np.int64)
    ours = code_counts(codes, n_codes, 120, np.random.default_rng(5), units)
    plain = _code_counts_per_resample(codes, n_codes, 120, np.random.default_rng(5), units)
    assert np.array_equal(ours, plain)
    assert (ours.sum(axis=1) == n).all() or units is not None


def _missing_per_value(arr: np.ndarray) -> list[bool]:
    return [v is None or (isinstance(v, float | np.floating) and math.isnan(v)) for v in arr]


@pytest.mark.parametrize("pool", [
    ["a", "b"], ["a", None], [None], ["a", None, 1.5], ["a", float("nan"), None],
    [np.float64("nan"), 2, None], [True, None, "x"],
])
def test_missing_mask_matches_the_per_value_check(pool: list[object]) -> None:
    rng = random.Random(len(pool))
    for n in (1, 2, 50):
        arr = np.empty(n, dtype=object)
        arr[:] = [rng.choice(pool) for _ in range(n)]
        assert missing_mask(arr).tolist() == _missing_per_value(arr)


def test_an_infinite_label_is_refused_among_strings_and_none() -> None:
    for values in (["a", None, float("inf")], [np.float64("-inf"), "b"]):
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        with pytest.raises(ValueError, match="infinite"):
            encode([("judge", arr)], None)
    arr = np.empty(3, dtype=object)
    arr[:] = ["b", None, "a"]
    codes, categories = encode([("judge", arr)], None)
    assert categories == ("a", "b") and codes[0].tolist() == [1, -1, 0]


@pytest.mark.parametrize("seed", range(6))
def test_unique_rows_is_numpys_unique_over_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = [(1, 1), (1, 3), (200, 1), (500, 4), (300, 9), (1000, 2)][seed]
    shapes = [
        rng.integers(0, 3, size=(n, k)).astype(np.float64),  # ties: few distinct rows
        rng.normal(size=(n, k)),  # all distinct, negatives
        np.full((n, k), 0.25),  # constant
        rng.integers(-2, 2, size=(n, k)),  # integers
        np.where(rng.random((n, k)) < 0.3, -0.0, rng.integers(0, 2, (n, k)).astype(float)),
        np.where(rng.random((n, k)) < 0.2, np.nan, rng.integers(0, 2, (n, k)).astype(float)),
    ]
    for rows in shapes:
        ours, counts = unique_rows(rows)
        found, expected = np.unique(rows, axis=0, return_counts=True)
        assert ours.dtype == found.dtype and ours.tobytes() == found.tobytes()
        assert counts.tolist() == expected.tolist()
