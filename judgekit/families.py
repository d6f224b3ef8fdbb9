"""Which model wrote a response, and which model family a name belongs to.

Self-preference (a judge favouring outputs of its own model family) can only be
measured when items say who wrote each response. Items name it in plain fields,
kept under ``meta`` like every extra field: ``model`` (pointwise; ``author`` is
accepted too) and ``model_a``/``model_b`` (pairwise, alongside
``response_a``/``response_b``; ``author_a``/``author_b`` accepted). The names
follow the Chatbot Arena and MT-Bench human-judgment files, which use
``model_a``/``model_b``.

Judge and response names are compared by *family*, not by exact name, because
self-preference is a family trait (a GPT-4o judge also favours GPT-4o-mini
text). The rule (documented in docs/probes.md) is deliberately simple and
applied to both sides alike: lowercase, keep the part after the last ``/``
(``meta-llama/Llama-3.1-8B`` -> ``llama-3.1-8b``), then the first family in
:data:`FAMILIES` whose prefix starts the name and is not followed by a letter;
any other name's family is its leading run of letters and digits up to the
first separator (``sim-judge`` -> ``sim``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from judgekit.types import Item

if TYPE_CHECKING:
    from judgekit.store.columns import ItemFacts

#: family -> name prefixes, tried in this order.
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpt", ("gpt", "chatgpt", "o1", "o3", "o4", "text-davinci", "davinci")),
    ("claude", ("claude",)),
    ("llama", ("llama", "codellama")),
    ("qwen", ("qwen", "qwq")),
    ("mistral", ("mistral", "mixtral", "ministral", "codestral", "magistral")),
    ("gemini", ("gemini",)),
    ("gemma", ("gemma",)),
    ("deepseek", ("deepseek",)),
    ("phi", ("phi",)),
    ("command", ("command", "c4ai-command")),
    ("grok", ("grok",)),
)

#: Item fields naming the model of each response: (preferred, also accepted) per slot.
POINTWISE_MODEL_FIELDS = (("model", "author"),)
PAIRWISE_MODEL_FIELDS = (("model_a", "author_a"), ("model_b", "author_b"))
MODEL_FIELDS = tuple(name for pair in POINTWISE_MODEL_FIELDS + PAIRWISE_MODEL_FIELDS
                     for name in pair)

_FALLBACK = re.compile(r"[a-z0-9]+")


def model_family(name: str, family_map: Mapping[str, str] | None = None) -> str | None:
    """The family of a model name by the rule above; None for a blank name.

    ``family_map`` (``report --family-map FILE``: model name -> family, names compared
    as the rule compares them) overrides the rule for the names it lists.
    """
    return family_rule(name, family_map)[0]


def normal_name(name: str) -> str:
    """A model name as the family rule compares it: lowercase, what follows the last ``/``."""
    return name.strip().lower().rsplit("/", 1)[-1].strip()


def family_rule(
    name: str, family_map: Mapping[str, str] | None = None
) -> tuple[str | None, str]:
    """The family of ``name`` and the rule that gave it, in words (shown by self-preference)."""
    text = normal_name(name)
    if not text:
        return None, "blank name"
    if family_map:
        mapped = {normal_name(k): v for k, v in family_map.items()}.get(text)
        if mapped is not None:
            return mapped.strip().lower(), "--family-map"
    for family, prefixes in FAMILIES:
        for prefix in prefixes:
            if text.startswith(prefix) and not text[len(prefix):len(prefix) + 1].isalpha():
                return family, f"prefix {prefix!r}"
    found = _FALLBACK.match(text)
    return (found.group(0) if found else text), "leading letters and digits"


def is_known_family(name: str) -> bool:
    """Whether a model name matches one of :data:`FAMILIES` (not just the fallback)."""
    family = model_family(name)
    return family is not None and family in {f for f, _ in FAMILIES}


def response_models(item: Item | ItemFacts) -> tuple[str | None, ...]:
    """The model named for each response: ``(model,)`` or ``(model_a, model_b)``."""
    slots = PAIRWISE_MODEL_FIELDS if item.is_pairwise else POINTWISE_MODEL_FIELDS
    meta = item.meta  # parsed once: ItemFacts parses its JSON on every access
    out: list[str | None] = []
    for names in slots:
        value = next((meta[n] for n in names if _given(meta.get(n))), None)
        out.append(value.strip() if isinstance(value, str) else None)
    return tuple(out)


def _given(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def model_field_problem(meta: Mapping[str, Any]) -> str | None:
    """Why an item's model fields are unusable (not text), or None when they are fine."""
    for name in MODEL_FIELDS:
        value = meta.get(name)
        if value is not None and not isinstance(value, str):
            return f"field {name!r} names a model and must be a string, got {type(value).__name__}"
    return None


__all__ = [
    "FAMILIES",
    "MODEL_FIELDS",
    "PAIRWISE_MODEL_FIELDS",
    "POINTWISE_MODEL_FIELDS",
    "family_rule",
    "is_known_family",
    "model_family",
    "model_field_problem",
    "response_models",
]
