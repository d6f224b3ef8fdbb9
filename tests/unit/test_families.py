"""The model-family rule self-preference compares judge and response names with."""

from __future__ import annotations

import pytest

from judgekit.families import is_known_family, model_family, model_field_problem, response_models
from judgekit.types import Item


@pytest.mark.parametrize(("name", "family"), [
    ("gpt-4o-mini", "gpt"), ("GPT-4", "gpt"), ("openai/gpt-4.1", "gpt"), ("o3-mini", "gpt"),
    ("chatgpt-4o-latest", "gpt"), ("claude-3-5-sonnet-20241022", "claude"),
    ("anthropic/claude-sonnet-4", "claude"), ("llama-3.1-8b", "llama"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama"), ("llama3.1:8b", "llama"),
    ("qwen2.5-7b-instruct", "qwen"), ("Qwen/Qwen2.5-72B", "qwen"), ("mixtral-8x7b", "mistral"),
    ("gemini-1.5-pro", "gemini"), ("gemma-2-9b", "gemma"), ("deepseek-v3", "deepseek"),
    ("phi-3-mini", "phi"), ("command-r-plus", "command"),
    # not a family prefix when a letter follows it
    ("phind-codellama", "phind"), ("olmo-7b", "olmo"), ("sim-judge", "sim"),
    ("gpt", "gpt"), ("  ", None),
])
def test_family_rule(name: str, family: str | None) -> None:
    assert model_family(name) == family


def test_known_families_and_fields() -> None:
    assert is_known_family("gpt-4o") and not is_known_family("sim-judge")
    pair = Item(id="p", input="q", response_a="a", response_b="b",
                meta={"model_a": "gpt-4o", "author_b": "llama-3-8b"})
    assert response_models(pair) == ("gpt-4o", "llama-3-8b")
    single = Item(id="i", input="q", response="r", meta={"author": " qwen2.5 ", "model": ""})
    assert response_models(single) == ("qwen2.5",)
    assert response_models(Item(id="x", input="q", response="r")) == (None,)
    assert model_field_problem({"model_a": 4}) == (
        "field 'model_a' names a model and must be a string, got int")
    assert model_field_problem({"model_a": "gpt", "other": 4}) is None
