"""Verdict confidence from token logprobs: the verdict's first token, renormalised over labels."""

from __future__ import annotations

import math
from typing import Any

import pytest

from judgekit.clients.confidence import verdict_confidence, verdict_offset
from judgekit.types import Scale, ScaleLevel

BINARY = Scale("binary", (ScaleLevel("pass", "p"), ScaleLevel("fail", "f")))
PAIRWISE = Scale("pairwise", (ScaleLevel("A", "a"), ScaleLevel("B", "b"), ScaleLevel("tie", "t")))
ORDINAL = Scale("ordinal", tuple(ScaleLevel(str(v), str(v), value=float(v)) for v in range(1, 6)))
CATEGORICAL = Scale("categorical", (ScaleLevel("partial", "1"),
                                    ScaleLevel("partially_wrong", "2"),
                                    ScaleLevel("wrong", "3")))


def entry(token: str, alternatives: dict[str, float] | None = None) -> dict[str, Any]:
    """One ``logprobs.content`` entry in llama.cpp's shape (no bytes)."""
    probs = alternatives or {token: 0.99}
    return {"token": token, "logprob": math.log(probs.get(token, 0.5)), "bytes": None,
            "top_logprobs": [{"token": t, "logprob": math.log(p), "bytes": None}
                             for t, p in probs.items()]}


def logprobs(tokens: list[str], at: int, alternatives: dict[str, float]) -> dict[str, Any]:
    return {"content": [entry(t, alternatives if i == at else None)
                        for i, t in enumerate(tokens)]}


# what SmolLM2 on llama.cpp actually answered, token by token
LLAMA_TOKENS = ['{"', 'reason', 'ing', '":', ' "', 'your', ' reason', '",', ' "', 'ver', 'dict',
                '":', ' "', 'pass', '"}']
LLAMA_TEXT = "".join(LLAMA_TOKENS)


def test_probability_renormalised_over_the_labels_first_tokens() -> None:
    # measured on the local judge: pass 0.73, fail 0.13, f 0.023 (starts "fail"),
    # "passed" and "your" begin no label and drop out
    alts = {"pass": 0.73, "fail": 0.13, "f": 0.023, "passed": 0.018, "your": 0.015}
    found = verdict_confidence(LLAMA_TEXT, logprobs(LLAMA_TOKENS, 13, alts), BINARY, "pass")
    assert found == pytest.approx(0.73 / (0.73 + 0.13 + 0.023))


def test_token_that_starts_before_the_value_keeps_its_prefix() -> None:
    # OpenAI-style tokenisation can merge the opening quote into the value: `"A`
    tokens = ['{"', 'verdict', '":', ' "A', '"}']
    text = "".join(tokens)
    alts = {' "A': 0.6, ' "B': 0.3, ' "t': 0.05, " {": 0.05}
    found = verdict_confidence(text, logprobs(tokens, 3, alts), PAIRWISE, "A")
    assert found == pytest.approx(0.6 / 0.95)


def test_free_text_verdicts_are_located_like_the_parser_does() -> None:
    tokens = ["The", " answer", " is", " right", ".", " Score", ":", " 4"]
    text = "".join(tokens)
    assert verdict_offset(text, ORDINAL, "4") == len(text) - 1
    alts = {" 4": 0.5, " 5": 0.3, " 3": 0.2}
    assert verdict_confidence(text, logprobs(tokens, 7, alts), ORDINAL, "4") == pytest.approx(0.5)


def test_multibyte_text_aligns_by_bytes() -> None:
    # OpenAI splits "é" over two tokens; their ``bytes`` spell it, their text does not
    text = '{"reasoning": "café", "verdict": "fail"}'
    pieces = [b'{"reasoning": "caf', "é".encode()[:1], "é".encode()[1:], b'", "verdict": "',
              b"fail", b'"}']
    content = [{"token": p.decode("utf-8", "replace"), "bytes": list(p), "logprob": -0.01,
                "top_logprobs": []} for p in pieces]
    content[4]["logprob"] = math.log(0.8)
    content[4]["top_logprobs"] = [{"token": "fail", "logprob": math.log(0.8)},
                                  {"token": "pass", "logprob": math.log(0.2)}]
    assert verdict_confidence(text, {"content": content}, BINARY, "fail") == pytest.approx(0.8)


def test_ambiguous_first_tokens_count_toward_no_label() -> None:
    tokens = ['{"', "verdict", '":', ' "', "partial", '"}']
    text = "".join(tokens)
    # the chosen token "partial" could begin "partial" or "partially_wrong": undefined
    alts = {"partial": 0.7, "wrong": 0.3}
    assert verdict_confidence(text, logprobs(tokens, 4, alts), CATEGORICAL, "partial") is None
    # chosen "wrong" is unambiguous; the ambiguous alternative stays in the total
    tokens[4] = "wrong"
    text = "".join(tokens)
    alts = {"wrong": 0.6, "partial": 0.4}
    assert verdict_confidence(text, logprobs(tokens, 4, alts), CATEGORICAL,
                              "wrong") == pytest.approx(0.6)


@pytest.mark.parametrize("case", ["no logprobs", "tokens do not spell the text", "no verdict",
                                  "label differs from the token", "invalid label"])
def test_none_when_it_cannot_be_computed(case: str) -> None:
    lp: Any = logprobs(LLAMA_TOKENS, 13, {"pass": 0.7, "fail": 0.3})
    text, label = LLAMA_TEXT, "pass"
    if case == "no logprobs":
        lp = None
    elif case == "tokens do not spell the text":
        text = LLAMA_TEXT.replace("your reason", "my reason!")
    elif case == "no verdict":
        text, lp = "I am not sure.", logprobs(["I", " am", " not", " sure", "."], 0, {})
    elif case == "label differs from the token":
        label = "fail"
    else:
        label = "maybe"
    assert verdict_confidence(text, lp, BINARY, label) is None
