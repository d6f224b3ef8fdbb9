"""The presentation variants probes judge: swapped or level-reversed items, padded responses.

Everything here is pure and deterministic (no store, no endpoint), so the unit
tests can render each variant's prompt and check that it shows what it claims:
the swapped prompt really puts B's text under "Response A", padding adds only
content-free filler and lands on its target length. Cache keys depend on these
variants, so the same item always pads the same way (rotation by a hash of its id).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from judgekit.errors import InputError
from judgekit.judging.units import WorkUnit, unit_for
from judgekit.types import Item, Rubric

DEFAULT_LEVELS: tuple[int, ...] = (25, 50, 100)
#: Content-free sentences appended to pad a response; ``{input}`` = the item's input.
DEFAULT_FILLER: tuple[str, ...] = (
    "I hope this helps.",
    "Let me know if anything above should be clarified.",
    "To restate the request: {input}",
    "The answer above is given as plainly as possible.",
    "Please feel free to ask a follow-up question.",
    "Thank you for the question.",
    "This response addresses the request as it was stated.",
    "Nothing further needs to be added to the answer above.",
)


def load_filler(path: str | Path) -> tuple[str, ...]:
    """Filler templates from a file: one per line; blank lines and ``#`` comments ignored."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read filler file: {exc.strerror}") from None
    lines = [line.strip() for line in text.splitlines()]
    templates = tuple(line for line in lines if line and not line.startswith("#"))
    if not templates:
        raise InputError(f"{path}: no filler templates (one sentence per line)")
    return templates


def check_levels(levels: Sequence[int]) -> tuple[int, ...]:
    """Padding levels as percentages of the original length: positive integers, no repeats."""
    out = tuple(levels)
    if not out or any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in out):
        raise InputError(f"padding levels must be positive whole percentages, got {list(out)}")
    if len(set(out)) != len(out):
        raise InputError(f"padding levels repeat: {list(out)}")
    return out


def padding_variant(level: int) -> str:
    """The variant name of a padding level (``pad25``, ``pad50``, ``pad100``)."""
    return f"pad{level}"


def _hash_int(item: Item) -> int:
    return int(hashlib.sha256(item.id.encode("utf-8")).hexdigest()[:8], 16)


def padded_side(item: Item) -> str:
    """Which side of a pair gets the filler, ``"a"`` or ``"b"``, alternating by item id hash."""
    return "a" if _hash_int(item) % 2 == 0 else "b"


def pad_text(text: str, level: int, filler: Sequence[str], *, input_text: str = "",
             start: int = 0) -> str:
    """``text`` plus filler sentences making it ``level`` percent longer (to the next word end).

    Sentences are taken in order from ``filler[start]`` (cycling), joined by
    spaces after a blank line; ``{input}`` is replaced literally, nothing is
    evaluated. An empty text stays empty: a percentage of nothing is nothing.
    """
    if not filler:
        raise InputError("filler has no templates")
    target = -(-len(text) * level // 100)  # ceil
    if target == 0:
        return text
    sentences = [t.replace("{input}", input_text) for t in filler]
    added = "\n\n"
    i = start
    while len(added) < target:
        added += ("" if added == "\n\n" else " ") + sentences[i % len(sentences)]
        i += 1
    cut = added.find(" ", target)
    return text + (added if cut == -1 else added[:cut])


def pad_item(item: Item, level: int, filler: Sequence[str] = DEFAULT_FILLER) -> Item:
    """``item`` with filler appended to its response (pointwise) or to one side (pairwise)."""
    start = _hash_int(item) % len(filler) if filler else 0
    if not item.is_pairwise:
        padded = pad_text(item.response or "", level, filler, input_text=item.input, start=start)
        return replace(item, response=padded)
    if padded_side(item) == "a":
        return replace(item, response_a=pad_text(item.response_a or "", level, filler,
                                                  input_text=item.input, start=start))
    return replace(item, response_b=pad_text(item.response_b or "", level, filler,
                                              input_text=item.input, start=start))


def added_chars(item: Item, level: int, filler: Sequence[str] = DEFAULT_FILLER) -> int:
    """How many characters padding at ``level`` adds to ``item``."""
    return int(abs(item_length(pad_item(item, level, filler)) - item_length(item)))


def item_length(item: Item) -> float:
    """Characters of the response; for a pair, len(A) - len(B)."""
    if item.is_pairwise:
        return float(len(item.response_a or "") - len(item.response_b or ""))
    return float(len(item.response or ""))


def position_units(items: Sequence[Item], rubric: Rubric) -> list[WorkUnit]:
    """Each item as written plus its swapped pair (pairwise) or reversed levels (pointwise)."""
    other = "swapped" if rubric.scale.kind == "pairwise" else "reversed_levels"
    return [unit_for(item, variant) for item in items for variant in ("", other)]


def length_units(items: Sequence[Item], levels: Sequence[int],
                 filler: Sequence[str]) -> list[WorkUnit]:
    """Each item as written plus one padded copy per level (variant ``pad<level>``)."""
    units: list[WorkUnit] = []
    for item in items:
        units.append(WorkUnit(item))
        for level in levels:
            units.append(WorkUnit(pad_item(item, level, filler), padding_variant(level),
                                  source_hash=item.content_hash))
    return units
