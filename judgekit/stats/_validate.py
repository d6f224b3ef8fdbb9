"""Argument checking and label encoding shared by every statistic.

Every public function funnels its input through here so that invalid input
fails the same way everywhere: a :class:`ValueError` whose message names the
argument and the problem. Missing values (``None`` or NaN) are *data*, not
errors; they are reported as a mask so each statistic can drop them and report
the ``n`` it actually used.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

RandomState = int | np.random.Generator | np.random.SeedSequence | None


def rng_from(random_state: RandomState) -> np.random.Generator:
    """A numpy Generator from a seed, a Generator (used as is) or None (fresh entropy)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, bool):
        raise ValueError("random_state must be an int, a numpy Generator or None, not a bool")
    return np.random.default_rng(random_state)


def check_confidence_level(confidence_level: float) -> float:
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(
            f"confidence_level must be strictly between 0 and 1, got {confidence_level!r}"
        )
    return level


def check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def check_choice(value: object, name: str, allowed: Sequence[object]) -> None:
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")


def as_1d(values: Iterable[Any] | npt.ArrayLike, name: str) -> np.ndarray:
    """A 1-D array view of ``values``; strings and scalars are rejected."""
    if isinstance(values, str | bytes):
        raise ValueError(f"{name} must be a sequence of values, not a single string")
    if isinstance(values, np.ndarray):
        arr = values
    else:
        items = list(values)  # type: ignore[arg-type]
        # the distinct types, in one pass in C: 100,000 labels are a handful of types
        if any(issubclass(t, list | tuple | np.ndarray) for t in set(map(type, items))):
            raise ValueError(f"{name} must be one-dimensional (one value per item)")
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    # Lists stay object arrays so labels keep their Python types (1 stays 1, True
    # stays True); numpy's own inference would silently turn ["a", 1] into strings.
    return arr


_NONE_TYPE = type(None)


def _value_types(arr: np.ndarray) -> set[type]:
    """The distinct Python types in an object array, in one pass in C (``map(type, ...)``).

    They let the per-value checks below be skipped on the common cases: 100,000
    string labels, or string labels with None for missing ones.
    """
    return set(map(type, arr.ravel().tolist()))


def _only_str(arr: np.ndarray) -> bool:
    """Whether an object array holds nothing but ``str`` (labels): no None, NaN or inf."""
    return arr.dtype.kind == "O" and _value_types(arr) <= {str}


def missing_mask(arr: np.ndarray) -> BoolArray:
    """True where a value is missing: ``None`` or a floating NaN."""
    kind = arr.dtype.kind
    if kind == "f":
        return np.asarray(np.isnan(arr), dtype=bool)
    types = _value_types(arr) if kind == "O" else set()
    if kind == "O" and types <= {str}:
        return np.zeros(arr.shape, dtype=bool)
    if kind == "O" and types <= {str, _NONE_TYPE} and arr.ndim == 1:
        # no float among them, so no NaN: missing is exactly ``is None``
        return np.fromiter(
            map(operator.is_, arr.tolist(), itertools.repeat(None)), dtype=bool, count=arr.size
        )
    if kind == "O":
        return np.fromiter(
            (v is None or (isinstance(v, float | np.floating) and math.isnan(v)) for v in arr),
            dtype=bool,
            count=arr.size,
        )
    return np.zeros(arr.shape, dtype=bool)


def check_same_length(*named: tuple[str, np.ndarray]) -> int:
    lengths = {name: len(arr) for name, arr in named}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ValueError(f"length mismatch: {detail}")
    n = next(iter(lengths.values()))
    if n == 0:
        raise ValueError(f"{named[0][0]} is empty")
    return n


def _sort_categories(found: list[Hashable]) -> list[Hashable]:
    try:
        return sorted(found)  # type: ignore[type-var]
    except TypeError as exc:
        types = sorted({type(v).__name__ for v in found})
        raise ValueError(
            f"labels mix types ({', '.join(types)}) and cannot be ordered; pass labels= explicitly"
        ) from exc


def check_labels(labels: Iterable[Hashable]) -> tuple[Hashable, ...]:
    declared = tuple(labels)
    if not declared:
        raise ValueError("labels is empty")
    if len(set(declared)) != len(declared):
        raise ValueError(f"labels contains duplicates: {declared!r}")
    for value in declared:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            raise ValueError("labels may not contain None or NaN")
    return declared


def _reject_infinite_labels(arr: np.ndarray, name: str) -> None:
    """An infinite value is a failed conversion upstream, never a category: say so."""
    if arr.dtype.kind == "f":
        bad = bool(np.isinf(arr).any())
    elif arr.dtype.kind == "O":
        # only a float can be infinite: no float type among the values, nothing to check
        floats = any(issubclass(t, float | np.floating) for t in _value_types(arr))
        bad = floats and any(
            isinstance(v, float | np.floating) and math.isinf(v) for v in arr.tolist()
        )
    else:
        bad = False
    if bad:
        raise ValueError(f"{name} contains an infinite value, which cannot be a label")


def encode(
    columns: Sequence[tuple[str, np.ndarray]],
    labels: Iterable[Hashable] | None,
) -> tuple[list[IntArray], tuple[Hashable, ...]]:
    """Integer codes (``-1`` = missing) for each column over one category list.

    With ``labels`` the categories and their order are the declared ones and any
    other value is an error; without, they are the sorted distinct values seen.
    """
    for name, arr in columns:
        _reject_infinite_labels(arr, name)
    kinds = {"U" if arr.dtype.kind == "U" else arr.dtype.kind in "biuf" for _, arr in columns}
    if labels is None and kinds in ({True}, {"U"}):
        return _encode_numpy([arr for _, arr in columns])
    python_values = []
    masks = []
    for _name, arr in columns:
        mask = missing_mask(arr)
        masks.append(mask)
        python_values.append(arr.tolist())
    if labels is not None:
        categories = check_labels(labels)
    else:
        seen: dict[Hashable, None] = {}
        for values, mask in zip(python_values, masks, strict=True):
            if not mask.any():
                seen.update(dict.fromkeys(values))
                continue
            for v, m in zip(values, mask.tolist(), strict=True):
                if not m:
                    seen[v] = None
        categories = tuple(_sort_categories(list(seen)))
    index = {c: i for i, c in enumerate(categories)}
    codes = []
    for (name, _arr), values, mask in zip(columns, python_values, masks, strict=True):
        if not mask.any():  # nothing missing: one C-level lookup per value
            out = np.fromiter(
                map(index.get, values, itertools.repeat(-2)), dtype=np.int64, count=len(values)
            )
        else:
            out = np.fromiter(
                (-1 if m else index.get(v, -2)
                 for v, m in zip(values, mask.tolist(), strict=True)),
                dtype=np.int64,
                count=len(values),
            )
        bad = np.flatnonzero(out == -2)
        if bad.size:
            examples = sorted({repr(values[i]) for i in bad[:5]})
            raise ValueError(
                f"{name} contains values outside the declared labels {categories!r}: "
                f"{', '.join(examples)}"
            )
        codes.append(out)
    return codes, categories


def _encode_numpy(arrays: list[np.ndarray]) -> tuple[list[IntArray], tuple[Hashable, ...]]:
    """Fast path of :func:`encode` for plain numeric/string arrays (sorted unique values)."""
    masks = [missing_mask(arr) for arr in arrays]
    present = np.concatenate([arr[~mask] for arr, mask in zip(arrays, masks, strict=True)])
    small = _encode_small_integers(arrays, masks, present)
    if small is not None:
        return small
    categories = np.unique(present)
    codes = []
    for arr, mask in zip(arrays, masks, strict=True):
        out = np.searchsorted(categories, arr).astype(np.int64)
        out[mask] = -1
        codes.append(out)
    return codes, tuple(categories.tolist())


#: Integer-valued data spanning fewer values than this is encoded by table lookup.
_SMALL_RANGE = 10_000


def _encode_small_integers(
    arrays: list[np.ndarray], masks: list[BoolArray], present: np.ndarray
) -> tuple[list[IntArray], tuple[Hashable, ...]] | None:
    """O(n) encoding for rating-like data (integers in a small range), else None.

    Sorting a million ratings to find five distinct values is most of the cost
    of a large Krippendorff's alpha; a lookup table over the range avoids it.
    """
    if present.size == 0 or present.dtype.kind not in "iuf":
        return None
    if present.dtype.kind == "f" and not np.array_equal(present, np.floor(present)):
        return None
    lo, hi = present.min(), present.max()
    if hi - lo >= _SMALL_RANGE:
        return None
    base = int(lo)
    seen = np.bincount((present - lo).astype(np.int64), minlength=int(hi - lo) + 1) > 0
    lookup = np.cumsum(seen) - 1
    codes = []
    for arr, mask in zip(arrays, masks, strict=True):
        out = np.full(arr.shape, -1, dtype=np.int64)
        out[~mask] = lookup[(arr[~mask] - base).astype(np.int64)]
        codes.append(out)
    values = (base + np.flatnonzero(seen)).astype(present.dtype)
    return codes, tuple(values.tolist())


def as_float_with_missing(values: Iterable[Any] | npt.ArrayLike, name: str) -> FloatArray:
    """Numbers as float64 with NaN for missing (None/NaN); infinities are an error."""
    arr = as_1d(values, name)
    if arr.dtype.kind in "iub":
        return arr.astype(np.float64)
    if arr.dtype.kind in "USa":
        raise ValueError(f"{name} must contain numbers (None/NaN for missing), not text")
    if arr.dtype.kind == "f":
        out = arr.astype(np.float64)
    else:
        mask = missing_mask(arr)
        text = [v for v in arr[~mask].tolist() if isinstance(v, str | bytes)]
        if text:
            raise ValueError(
                f"{name} must contain numbers (None/NaN for missing), not text such as {text[0]!r}"
            )
        out = np.full(arr.shape, np.nan)
        try:
            out[~mask] = np.asarray([float(v) for v in arr[~mask]], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must contain numbers (None/NaN for missing)") from exc
    if np.isinf(out).any():
        raise ValueError(f"{name} contains infinite values")
    return out


def as_binary(values: Iterable[Any] | npt.ArrayLike, name: str) -> FloatArray:
    """0/1 outcomes (bools or numbers equal to 0 or 1) as float; None/NaN -> NaN."""
    out = as_float_with_missing(values, name)
    finite = out[~np.isnan(out)]
    if not np.isin(finite, (0.0, 1.0)).all():
        bad = sorted(set(finite[~np.isin(finite, (0.0, 1.0))].tolist()))[:5]
        raise ValueError(f"{name} must contain only 0/1 or booleans; found {bad}")
    return out


def cluster_codes(
    clusters: Iterable[Any] | npt.ArrayLike, n: int, name: str = "clusters"
) -> IntArray:
    """Dense integer ids 0..G-1 for cluster labels (one per item); None is not allowed."""
    arr = as_1d(clusters, name)
    if len(arr) != n:
        raise ValueError(f"{name} has length {len(arr)} but there are {n} items")
    if missing_mask(arr).any():
        raise ValueError(f"{name} contains missing values; give every item a cluster id")
    index: dict[Hashable, int] = {}
    codes = np.fromiter(
        (index.setdefault(v, len(index)) for v in arr.tolist()), dtype=np.int64, count=n
    )
    return codes
