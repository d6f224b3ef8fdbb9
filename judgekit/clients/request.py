"""The body of one judge call: the one function that builds a chat completions request.

The live client posts it and ``judgekit batch prepare`` writes it into a Batch
API file, so a call judged live and the same call judged in a batch send the
same model, messages, sampling, response format and logprobs: the cache key
that names them both then also describes one request. No HTTP here (the
``openai`` client is not imported), so preparing a batch file stays fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgekit.clients.confidence import TOP_LOGPROBS
from judgekit.clients.spec import JudgeSpec, ResponseFormatMode

__all__ = ["chat_request", "response_format_for"]


def response_format_for(mode: ResponseFormatMode, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` request field for a structured-output mode.

    ``json_object`` carries the schema the way llama.cpp's server accepts it.
    """
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": schema, "strict": True},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def chat_request(
    spec: JudgeSpec,
    messages: Sequence[dict[str, str]],
    *,
    response_format: dict[str, Any] | None = None,
    logprobs: bool = False,
) -> dict[str, Any]:
    """The JSON body of one judge call to ``/chat/completions``.

    Sampling parameters are always explicit (servers' defaults differ); the seed
    only when set. ``logprobs`` asks for the top alternatives of every answer
    token, from which :func:`~judgekit.clients.confidence.verdict_confidence`
    is read.
    """
    sampling = spec.sampling
    body: dict[str, Any] = {
        "model": spec.model,
        "messages": list(messages),
        "temperature": sampling.temperature,
        "max_tokens": sampling.max_tokens,
        "top_p": sampling.top_p,
    }
    if sampling.seed is not None:
        body["seed"] = sampling.seed
    if response_format is not None:
        body["response_format"] = response_format
    if logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = TOP_LOGPROBS
    return body
