"""The body of one judge call: the one function that builds a chat completions request.

The live client posts it and ``judgekit batch prepare`` writes it into a Batch
API file, so a call judged live and the same call judged in a batch send the
same model, messages, sampling, response format and logprobs: the cache key
that names them both then also describes one request. No HTTP here (the
``openai`` client is not imported), so preparing a batch file stays fast.

What an endpoint accepts of the sampling parameters (:class:`ParamSupport`,
learnt by the capability probe) shapes the body: OpenAI's reasoning models
(gpt-5.x, o1/o3/o4-mini) refuse ``max_tokens`` ("Use 'max_completion_tokens'
instead") and a non-default ``temperature``, ``top_p``, ``seed`` or
``logprobs``; the limit is then sent as ``max_completion_tokens`` and the rest
left out. :func:`sent_sampling` is the sampling provenance recorded on runs and
judgments: what the request carried, ``"not sent (unsupported)"`` for what was
left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.clients.confidence import TOP_LOGPROBS
from judgekit.clients.spec import JudgeSpec, ResponseFormatMode
from judgekit.types import SamplingParams

__all__ = [
    "DROPPABLE", "NOT_SENT", "ParamSupport", "chat_request", "response_format_for",
    "sent_sampling", "stored_support",
]

#: Parameters a request may leave out when the endpoint refuses them (reasoning models).
DROPPABLE = ("temperature", "top_p", "seed", "reasoning_effort")
#: How a parameter the endpoint refuses shows in the sampling provenance.
NOT_SENT = "not sent (unsupported)"


@dataclass(frozen=True)
class ParamSupport:
    """Which sampling parameters an endpoint+model accepts (found by the capability probe).

    ``token_param``: ``max_tokens`` or ``max_completion_tokens``, the name the
    answer-length limit is sent under; ``unsupported``: parameters of
    :data:`DROPPABLE` the endpoint refused, left out of every request.
    ``accepted``: parameters a probe request carried and the endpoint took; a
    parameter in neither set has not been tried (a cached probe is redone).
    """

    token_param: str = "max_tokens"
    unsupported: frozenset[str] = field(default_factory=frozenset)
    accepted: frozenset[str] = field(default_factory=frozenset)

    def as_dict(self) -> dict[str, Any]:
        return {"token_param": self.token_param, "unsupported": sorted(self.unsupported),
                "accepted": sorted(self.accepted)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ParamSupport:
        """From stored capabilities. Those stored before parameters were probed accept
        ``max_tokens``, ``temperature``, ``top_p`` and ``seed``: that probe sent the
        first three, and every judge call sent all four."""
        unsupported = data.get("unsupported")
        accepted = data.get("accepted")
        return cls(
            token_param=str(data.get("token_param") or "max_tokens"),
            unsupported=frozenset(str(p) for p in unsupported) if isinstance(
                unsupported, list) else frozenset(),
            accepted=frozenset(str(p) for p in accepted) if isinstance(accepted, list)
            else frozenset({"temperature", "top_p", "seed"}),
        )

    def untried(self, sampling: SamplingParams) -> list[str]:
        """Parameters ``sampling`` would send that no probe has tried on this endpoint."""
        known = self.accepted | self.unsupported
        return [name for name in _asked(sampling) if name not in known]


def _asked(sampling: SamplingParams) -> list[str]:
    """The droppable parameters ``sampling`` asks to send."""
    asked = ["temperature", "top_p"]
    if sampling.seed is not None:
        asked.append("seed")
    if sampling.reasoning_effort is not None:
        asked.append("reasoning_effort")
    return asked


def stored_support(stored: Mapping[str, Any] | None) -> ParamSupport | None:
    """The :class:`ParamSupport` inside stored capabilities (None when nothing is stored)."""
    return None if stored is None else ParamSupport.from_dict(stored)


def sent_sampling(sampling: SamplingParams, support: ParamSupport | None) -> dict[str, Any]:
    """The sampling provenance of a judge's calls: what its requests carry.

    Equal to :meth:`SamplingParams.as_dict` for an endpoint that takes every
    parameter (so such judges keep their identity); otherwise a refused
    parameter reads :data:`NOT_SENT` and the answer-length limit is named as sent.
    """
    found = sampling.as_dict()
    if support is None:
        return found
    if sampling.max_completion_tokens is None and support.token_param != "max_tokens":
        found[support.token_param] = found.pop("max_tokens")
    for name in support.unsupported:
        if name in found:
            found[name] = NOT_SENT
    return found


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
    support: ParamSupport | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The JSON body of one judge call to ``/chat/completions``.

    Sampling parameters are always explicit (servers' defaults differ), except
    those ``support`` says the endpoint refuses; the seed and the reasoning
    effort only when set. The limit goes as ``max_completion_tokens`` when given
    so (``--max-completion-tokens``) or when the endpoint takes only that name.
    ``logprobs`` asks for the top alternatives of every answer token, from which
    :func:`~judgekit.clients.confidence.verdict_confidence` is read.
    ``spec.sampling.extra_body`` is merged last. ``max_tokens`` overrides the
    limit (the capability probe asks for a few tokens).
    """
    sampling = spec.sampling
    refused = support.unsupported if support is not None else frozenset()
    body: dict[str, Any] = {"model": spec.model, "messages": list(messages)}
    if "temperature" not in refused:
        body["temperature"] = sampling.temperature
    if sampling.max_completion_tokens is not None:
        body["max_completion_tokens"] = max_tokens or sampling.max_completion_tokens
    else:
        token_param = support.token_param if support is not None else "max_tokens"
        body[token_param] = max_tokens or sampling.max_tokens
    if "top_p" not in refused:
        body["top_p"] = sampling.top_p
    if sampling.seed is not None and "seed" not in refused:
        body["seed"] = sampling.seed
    if sampling.reasoning_effort is not None and "reasoning_effort" not in refused:
        body["reasoning_effort"] = sampling.reasoning_effort
    if response_format is not None:
        body["response_format"] = response_format
    if logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = TOP_LOGPROBS
    if sampling.extra_body is not None:
        body.update(json.loads(sampling.extra_body))
    return body
