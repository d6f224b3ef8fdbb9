"""Rendering with each rubric's layout computed once gives the messages a fresh parse gives.

``render_messages`` keeps a rubric's parsed templates, placeholders, scale text and answer
line between calls (a batch of 100,000 calls renders one rubric 100,000 times). The
expected messages below are computed by the plain path every call used to take (parse the
templates, fill them, render the scale and the answer line), for every shipped rubric,
pointwise and pairwise items, both level orders, meta placeholders, a rubric edited between
two calls, and a template error that must be raised every time.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from judgekit.errors import RubricError
from judgekit.prompts import (
    ORDER_INSTRUCTION,
    format_instructions,
    parse_template,
    render_messages,
    render_scale,
)
from judgekit.rubrics import load_rubric, rubric_from_text
from judgekit.types import Item, Rubric, canonical_json
from tests.unit.test_rubrics import ORDINAL

SHIPPED = ("correctness", "helpfulness", "preference", "safety")

#: An ordinal rubric whose prompts use literal braces and meta fields.
META = ORDINAL.replace(
    'user = "Rate {response} for {input}.\\nLevels:\\n{scale}"',
    'system = "Grade {{carefully}} in {meta.lang}."\n'
    'user = "Q: {input}\\nA: {response}\\nContext: {meta.ctx}\\n{scale}"',
)
assert META != ORDINAL


def _fresh(rubric: Rubric, item: Item, reverse_levels: bool = False) -> list[dict[str, str]]:
    """The messages as a fresh parse of the templates renders them."""
    kind = rubric.scale.kind
    values = {"input": item.input, "response": item.response or "",
              "response_a": item.response_a or "", "response_b": item.response_b or "",
              "reference": item.reference or "",
              "scale": render_scale(rubric.scale, reverse_levels=reverse_levels)}

    def fill(text: str, field: str) -> str:
        parts = []
        for part, is_placeholder in parse_template(text, field, kind):
            if not is_placeholder:
                parts.append(part)
            elif part in values:
                parts.append(values[part])
            else:
                value = item.meta[part.removeprefix("meta.")]
                parts.append(value if isinstance(value, str) else canonical_json(value))
        return "".join(parts).rstrip()

    system = fill(rubric.system_prompt, "prompt.system")
    user = fill(rubric.user_prompt, "prompt.user")
    instructions = format_instructions(rubric.scale, reverse_levels=reverse_levels)
    return [{"role": "system",
             "content": f"{system} {ORDER_INSTRUCTION}" if system else ORDER_INSTRUCTION},
            {"role": "user", "content": f"{user}\n\n{instructions}"}]


def _items(pairwise: bool) -> list[Item]:
    if pairwise:
        return [Item(id=f"p{n}", input=f"question {n} {{input}}", response_a=f"first {n}",
                     response_b=f"second {{scale}} {n}") for n in range(3)]
    return [Item(id=f"i{n}", input=f"question {n}", response=f"answer {{response}} {n}",
                 reference=f"reference {n}") for n in range(3)]


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("reverse_levels", [False, True])
def test_shipped_rubrics_render_as_a_fresh_parse(name: str, reverse_levels: bool) -> None:
    rubric = load_rubric(name)
    for item in _items(rubric.scale.kind == "pairwise"):
        assert render_messages(rubric, item, reverse_levels=reverse_levels) == \
            _fresh(rubric, item, reverse_levels)


def test_meta_placeholders_and_an_edited_rubric() -> None:
    rubric = rubric_from_text(META)
    item = Item(id="m", input="q", response="r", meta={"lang": "en", "ctx": [1, {"b": 2}]})
    for reverse_levels in (False, True, False):
        assert render_messages(rubric, item, reverse_levels=reverse_levels) == \
            _fresh(rubric, item, reverse_levels)
    edited = replace(rubric, user_prompt="Only {input} and {meta.lang}", sha256="x" * 64)
    assert render_messages(edited, item) == _fresh(edited, item)
    assert "Context" not in render_messages(edited, item)[1]["content"]


def test_a_template_error_is_raised_on_every_call() -> None:
    broken = replace(rubric_from_text(META), user_prompt="Q: {input} {nonsense}")
    item = Item(id="m", input="q", response="r", meta={"lang": "en", "ctx": "c"})
    for _ in range(2):
        with pytest.raises(RubricError, match=r"prompt.user: unknown placeholder \{nonsense\}"):
            render_messages(broken, item)
