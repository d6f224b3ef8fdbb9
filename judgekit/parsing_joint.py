"""One answer holding a verdict per criterion -> one :class:`~judgekit.types.Verdict` each.

A call that judges every criterion of a rubric file at once asks for one JSON
object, ``{"coherence": {"reasoning": "...", "verdict": "4"}, ...}``
(:mod:`judgekit.criteria_joint`). The rules are those of a single verdict
(:mod:`judgekit.parsing`), applied per criterion; failures are per criterion
whenever the answer allows it:

1. A refusal, a content filter, a truncation or an empty answer
   (:func:`~judgekit.parsing.answer_failure`): that status for every criterion.
2. The answer object: the whole text when it is a JSON object naming a
   criterion; else the object the answer opens with (bare or in a code fence)
   when it names one; else the *last* top-level object in the text that names
   one (a reasoning model's think block may draft objects before its answer,
   as the single parser's last-verdict rule allows). An object whose only entry
   is an object naming the criteria (``{"scores": {...}}``) is read through.
   Criterion names match case-insensitively.
3. Per criterion: an entry that is an object is read as a single verdict is
   (``verdict``/``label``/``score``... and ``reasoning``); a bare label
   (``"coherence": 4``) is read as that label. A missing entry, an entry with no
   verdict, or a label not on that criterion's scale is a ``parse_error`` of that
   criterion alone; the other criteria keep their verdicts.
4. No object naming any criterion: ``refusal`` when the text reads as one (the
   single parser's pattern), else ``parse_error`` for every criterion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from judgekit.parsing import (
    PARSER_VERSION,
    REFUSAL_RE,
    answer_failure,
    json_objects,
    leading_object,
    normalize_label,
    verdict_from_object,
)
from judgekit.types import Scale, Verdict

#: In the cache key of every verdict of a joint call: bumped when a rule above changes
#: (the single parser's version is part of it, since its rules read each entry).
JOINT_PARSER_VERSION = f"joint1+{PARSER_VERSION}"


@dataclass(frozen=True)
class JointVerdicts:
    """The verdict of each criterion, and where each criterion's entry sits in the text.

    ``spans``: criterion -> (start, end) offsets of its entry's value (for the
    logprobs of its verdict); absent when the entry could not be located.
    """

    verdicts: dict[str, Verdict]
    spans: dict[str, tuple[int, int]]


def _named(obj: Mapping[str, Any], names: Mapping[str, str]) -> bool:
    return any(str(key).lower() in names for key in obj)


def _answer_object(text: str, names: Mapping[str, str]) -> tuple[int, dict[str, Any]] | None:
    """(start offset, object) of the answer, by rule 2; None when no object names a criterion."""
    objects = [(start, obj) for start, _, obj in json_objects(text)]
    unwrapped = []
    for start, obj in objects:
        if not _named(obj, names) and len(obj) == 1:
            inner = next(iter(obj.values()))
            if isinstance(inner, dict) and _named(inner, names):
                obj = inner
        unwrapped.append((start, obj))
    candidates = [(start, obj) for start, obj in unwrapped if _named(obj, names)]
    if not candidates:
        return None
    # an answer that opens with the object has answered (json_objects starts at its brace)
    if leading_object(text) is not None and _named(unwrapped[0][1], names):
        return unwrapped[0]
    return candidates[-1]


def _entry(value: Any, name: str, scale: Scale, method: str) -> Verdict:
    """One criterion's verdict from its entry in the answer object."""
    if isinstance(value, dict):
        found = verdict_from_object(value, scale, method)
        if found is None:
            return Verdict(status="parse_error", method=method,
                           detail=f"criterion {name!r}: no verdict in its entry")
        if found.status != "ok":
            return replace(found, detail=f"criterion {name!r}: {found.detail}")
        return found
    label = normalize_label(value, scale)
    if label is None:
        return Verdict(status="parse_error", method=method,
                       detail=f"criterion {name!r}: {json.dumps(value)[:60]} is not on the "
                              f"scale ({', '.join(scale.labels)})")
    return Verdict(status="ok", label=label, method=method)


def _spans(text: str, start: int, names: Mapping[str, str],
           obj: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Where each criterion's entry value sits in ``text`` (inside the answer object).

    A key is a quote, the name and a quote followed by a colon; inside a JSON string
    every quote is escaped, so such a match is a key. The decoded value must equal
    the parsed entry, so a draft entry of another object is never taken.
    """
    decoder = json.JSONDecoder()
    found: dict[str, tuple[int, int]] = {}
    for key, value in obj.items():
        name = names.get(str(key).lower())
        if name is None:
            continue
        pattern = re.compile(r'"' + re.escape(str(key)) + r'"\s*:\s*')
        for match in pattern.finditer(text, start):
            try:
                decoded, end = decoder.raw_decode(text, match.end())
            except json.JSONDecodeError:
                continue
            if decoded == value:
                found[name] = (match.end(), end)
                break
    return found


def parse_joint(
    text: str | None,
    scales: Mapping[str, Scale],
    *,
    finish_reason: str | None = None,
    refusal: str | None = None,
    structured: bool = False,
) -> JointVerdicts:
    """Parse one answer into a verdict per criterion of ``scales`` (name -> scale)."""
    failed = answer_failure(text, finish_reason=finish_reason, refusal=refusal)
    if failed is not None:
        return JointVerdicts({name: failed for name in scales}, {})
    assert text is not None
    names = {name.lower(): name for name in scales}
    answer = _answer_object(text, names)
    if answer is None:
        if REFUSAL_RE.search(text):
            every = Verdict(status="refusal", detail=text.strip()[:500])
        else:
            every = Verdict(status="parse_error",
                            detail=f"no JSON object with an entry per criterion "
                                   f"({', '.join(scales)})")
        return JointVerdicts({name: every for name in scales}, {})
    start, obj = answer
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    method = "structured" if structured and isinstance(whole, dict) else "json"
    entries = {names[str(k).lower()]: v for k, v in obj.items() if str(k).lower() in names}
    verdicts = {
        name: _entry(entries[name], name, scale, method) if name in entries else Verdict(
            status="parse_error", method=method,
            detail=f"criterion {name!r} is missing from the answer")
        for name, scale in scales.items()
    }
    return JointVerdicts(verdicts, _spans(text, start, names, obj))


__all__ = ["JOINT_PARSER_VERSION", "JointVerdicts", "parse_joint"]
