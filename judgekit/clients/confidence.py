"""The judge's confidence in its verdict, read from the token logprobs of its answer.

A verdict is a label on a small scale, and its first token is where the model
commits to one label over the others. So the confidence of a verdict is the
probability mass the model put, at the position where the verdict value starts,
on tokens that begin the chosen label, divided by the mass on tokens that begin
*any* label of the scale::

    confidence = P(tokens starting the verdict) / P(tokens starting some valid label)

Renormalising over the valid labels removes the mass spent on tokens no parser
would accept (``your``, a stray space), which a schema-constrained server never
emits anyway: llama.cpp reports logprobs of the unconstrained model. Only the
``top_logprobs`` alternatives the server returns are visible (judgekit asks for
5), so a label outside them counts as 0 and the figure is an upper bound when
many labels are close. With two or three labels, 5 alternatives see nearly all
of the mass.

The value's position is found with the parser's own patterns (``"verdict":
"pass"``, ``Score: 4``, ``[[A]]``): the last match whose value is the parsed
label. A token may start before the value (``"pass`` includes the opening
quote): then an alternative counts only if it has the same prefix, and what
follows the prefix decides its label. An alternative that could begin several
labels (``partial`` for ``partial`` and ``partially_correct``) counts toward the
total but toward no label, so the confidence errs low rather than high.

The result is None whenever it cannot be computed honestly: no logprobs, tokens
that do not spell the answer, a verdict whose first token begins several labels,
or a chosen token that does not begin the parsed label.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.parsing import FALLBACK_PATTERNS, normalize_label
from judgekit.types import Scale

#: Alternatives requested per token (``top_logprobs``); OpenAI allows up to 20.
TOP_LOGPROBS = 5


def verdict_confidence(
    text: str | None, logprobs: Any, scale: Scale, label: str | None, *,
    start: int | None = None,
) -> float | None:
    """P(verdict) renormalised over the scale's labels at the verdict's first token.

    ``logprobs`` is a chat completion choice's ``logprobs`` object
    (``{"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}, ...]}``).
    ``start``: where the verdict's value starts in ``text`` when the caller located it
    (one verdict among several in one answer); by default :func:`verdict_offset`.
    """
    if not text or label is None or not scale.is_valid(label):
        return None
    tokens = _content(logprobs)
    if not tokens:
        return None
    if start is None:
        start = verdict_offset(text, scale, label)
    if start is None:
        return None
    located = _token_at(tokens, text, start)
    if located is None:
        return None
    entry, prefix = located
    chosen = _label_for(entry.get("token"), prefix, scale)
    if chosen != label:
        return None
    masses = _label_masses(entry, prefix, scale)
    total = sum(masses.values()) + _ambiguous_mass(entry, prefix, scale)
    mass = masses.get(label, 0.0)
    if total <= 0.0 or mass <= 0.0:
        return None
    return min(1.0, mass / total)


def expected_score(
    text: str | None, logprobs: Any, scale: Scale, label: str | None, *,
    start: int | None = None,
) -> float | None:
    """The probability-weighted mean of the level values at the verdict's first token.

    G-Eval's score (Liu et al. 2023): sum over levels of P(level) * value, the
    probabilities renormalised over the levels the visible alternatives begin (a
    token that could begin several levels counts for none). Ordinal scales with
    level values only; None whenever :func:`verdict_confidence` would be None, so a
    verdict never gets a score its own token does not support. Stored as the
    judgment's ``score``; the report's correlations and means use it, kappa the label.
    """
    if scale.kind != "ordinal" or verdict_confidence(
            text, logprobs, scale, label, start=start) is None:
        return None
    assert text is not None and label is not None
    if start is None:
        start = verdict_offset(text, scale, label)
    located = None if start is None else _token_at(_content(logprobs), text, start)
    if located is None:
        return None
    entry, prefix = located
    values = {lv.label: lv.value for lv in scale.levels if lv.value is not None}
    masses = {k: m for k, m in _label_masses(entry, prefix, scale).items() if k in values}
    total = sum(masses.values())
    if total <= 0.0:
        return None
    return sum(m * float(values[k]) for k, m in masses.items()) / total


def verdict_offset(text: str, scale: Scale, label: str) -> int | None:
    """Character offset in ``text`` where the value read as ``label`` starts (last match)."""
    matches = [m for pattern in FALLBACK_PATTERNS for m in pattern.finditer(text)]
    for match in sorted(matches, key=lambda m: m.start(1), reverse=True):
        if normalize_label(match.group(1), scale) == label:
            return match.start(1)
    return None


def _content(logprobs: Any) -> list[Mapping[str, Any]]:
    if not isinstance(logprobs, Mapping):
        return []
    content = logprobs.get("content")
    if not isinstance(content, list):
        return []
    return [entry for entry in content if isinstance(entry, Mapping)]


def _token_bytes(entry: Mapping[str, Any]) -> bytes | None:
    """The token's bytes: the ``bytes`` field when given (OpenAI), else its UTF-8 text."""
    raw = entry.get("bytes")
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw)
    token = entry.get("token")
    if not isinstance(token, str):
        return None
    try:
        return token.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not text, so no alignment (and no crash)
        return None


def _token_at(
    tokens: Sequence[Mapping[str, Any]], text: str, start: int
) -> tuple[Mapping[str, Any], str] | None:
    """The token covering character ``start``, and the part of it before ``start``.

    Offsets are counted in bytes, so tokens that split a multi-byte character
    still line up; the tokens up to the verdict must spell ``text`` exactly,
    otherwise the alignment is unknown and None is returned.
    """
    encoded = text.encode("utf-8")
    target = len(text[:start].encode("utf-8"))
    offset = 0
    for entry in tokens:
        piece = _token_bytes(entry)
        if piece is None or encoded[offset:offset + len(piece)] != piece:
            return None
        if offset <= target < offset + len(piece):
            try:
                prefix = piece[: target - offset].decode("utf-8")
            except UnicodeDecodeError:
                return None
            return entry, prefix
        offset += len(piece)
    return None


def _candidates(entry: Mapping[str, Any]) -> dict[str, float]:
    """token -> probability over the top alternatives plus the chosen token."""
    found: dict[str, float] = {}
    alternatives = entry.get("top_logprobs")
    pairs = [*(alternatives if isinstance(alternatives, list) else []), entry]
    for alt in pairs:
        if not isinstance(alt, Mapping):
            continue
        token, logprob = alt.get("token"), alt.get("logprob")
        if isinstance(token, str) and isinstance(logprob, int | float) and math.isfinite(logprob):
            found.setdefault(token, math.exp(min(0.0, float(logprob))))
    return found


def _labels_begun(token: str, prefix: str, scale: Scale) -> set[str]:
    """Labels that ``token`` (which must start with ``prefix``) begins, case-insensitively."""
    if not token.startswith(prefix):
        return set()
    rest = token[len(prefix):].lower()
    if not rest or not rest[0].isalnum():
        return set()
    begun = set()
    for label in scale.labels:
        name = label.lower()
        extends = rest.startswith(name) and not _continues(rest[len(name):])
        if name.startswith(rest) or extends:
            begun.add(label)
    return begun


def _continues(tail: str) -> bool:
    """Whether ``tail`` would extend a label into another word (``pass`` -> ``passed``)."""
    return bool(tail) and (tail[0].isalnum() or tail[0] in "_-.")


def _label_for(token: Any, prefix: str, scale: Scale) -> str | None:
    if not isinstance(token, str):
        return None
    begun = _labels_begun(token, prefix, scale)
    return next(iter(begun)) if len(begun) == 1 else None


def _label_masses(entry: Mapping[str, Any], prefix: str, scale: Scale) -> dict[str, float]:
    masses: dict[str, float] = {}
    for token, prob in _candidates(entry).items():
        begun = _labels_begun(token, prefix, scale)
        if len(begun) == 1:
            label = next(iter(begun))
            masses[label] = masses.get(label, 0.0) + prob
    return masses


def _ambiguous_mass(entry: Mapping[str, Any], prefix: str, scale: Scale) -> float:
    return sum(
        prob for token, prob in _candidates(entry).items()
        if len(_labels_begun(token, prefix, scale)) > 1
    )
