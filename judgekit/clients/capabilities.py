"""What an endpoint+model accepts: sampling parameters, structured output modes and logprobs.

Servers differ: OpenAI takes ``response_format`` ``json_schema``; llama.cpp's
server takes only ``json_object`` with a ``schema`` and answers an unknown type
with HTTP 500 (not 400); some servers take neither. judgekit asks once per
endpoint+model with tiny requests, caches the answer in the store, and uses the
best mode available (``json_schema`` > ``json_object`` + schema > plain prompt
with JSON extraction). The mode used is recorded on every run.

The first probe carries the judge's own sampling parameters. OpenAI's reasoning
models (gpt-5.x, o1/o3/o4-mini, also on Azure) answer it with HTTP 400
``unsupported_parameter`` for ``max_tokens`` ("Use 'max_completion_tokens'
instead") and ``unsupported_value``/``unsupported_parameter`` for a
non-default ``temperature`` or ``top_p`` (and ``seed``, ``reasoning_effort``
on some models): the probe learns from each such answer (the limit is then
sent as ``max_completion_tokens``, a refused parameter left out) and asks
again, and records the outcome (:class:`~judgekit.clients.request.ParamSupport`).

A probe of an optional feature that the server *rejects* (HTTP 400/422/5xx
after a plain request has worked) means "unsupported"; a server that cannot be
reached or refuses the key stops the run with an
:class:`~judgekit.errors.EndpointError`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import openai

from judgekit.clients.openai_client import JudgeClient, ResponseFormatMode, response_format_for
from judgekit.clients.request import DROPPABLE, ParamSupport, chat_request
from judgekit.clients.retry import Failure, with_retries
from judgekit.clients.spec import endpoint_hint
from judgekit.errors import EndpointError

#: Bump when the probe changes, so cached answers are re-probed.
PROBE_VERSION = 1

_PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "verdict": {"type": "string", "enum": ["yes", "no"]},
    },
    "required": ["reasoning", "verdict"],
    "additionalProperties": False,
}
#: The capability probe's only message (tests use it to tell probes from judge calls).
PROBE_PROMPT = 'Is 2 + 2 = 4? Reply in JSON: {"reasoning": "...", "verdict": "yes" or "no"}'
_PROBE_MESSAGES = [{"role": "user", "content": PROBE_PROMPT}]
#: The answer length a probe asks for (its answer is not read, only accepted or not).
_PROBE_TOKENS = 16
#: Parameters a 400 may refuse that the probe can do without (or, for max_tokens, rename).
_ADAPTABLE = frozenset({"max_tokens", *DROPPABLE})
_QUOTED = re.compile(r"'([a-z_]+)'")


@dataclass(frozen=True)
class Capabilities:
    """The probe's findings for one endpoint+model."""

    json_schema: bool
    json_object: bool
    logprobs: bool
    probed_at: str = ""
    version: int = PROBE_VERSION
    params: ParamSupport = field(default_factory=ParamSupport)

    @property
    def response_format_mode(self) -> ResponseFormatMode:
        """The best structured-output mode the endpoint accepts."""
        if self.json_schema:
            return "json_schema"
        if self.json_object:
            return "json_object"
        return "none"

    def as_dict(self) -> dict[str, Any]:
        return {
            "json_schema": self.json_schema,
            "json_object": self.json_object,
            "logprobs": self.logprobs,
            "probed_at": self.probed_at,
            "version": self.version,
            **self.params.as_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Capabilities:
        return cls(
            json_schema=bool(data.get("json_schema")),
            json_object=bool(data.get("json_object")),
            logprobs=bool(data.get("logprobs")),
            probed_at=str(data.get("probed_at", "")),
            version=int(data.get("version", 0)),
            params=ParamSupport.from_dict(data),
        )


@dataclass(frozen=True)
class _Rejected:
    """The server answered the probe with an error status: the feature is unsupported."""

    status: int


@dataclass(frozen=True)
class _Refused:
    """The server answered HTTP 400 naming a sampling parameter the model does not take."""

    param: str
    message: str


def refused_param(exc: openai.APIStatusError) -> str | None:
    """The parameter an HTTP 400 says the model does not support, when it names one.

    OpenAI's answer carries it in ``error.param`` with code ``unsupported_parameter``
    or ``unsupported_value``; other servers only name it in the message (quoted
    or not).
    """
    if exc.status_code != 400:
        return None
    message = str(exc.message)
    code = str(getattr(exc, "code", None) or "")
    if not code.startswith("unsupported") and "not supported" not in message \
            and "nsupported" not in message:
        return None
    param = getattr(exc, "param", None)
    names = ([param] if isinstance(param, str) else []) + _QUOTED.findall(message)
    names += sorted(name for name in _ADAPTABLE if re.search(rf"\b{name}\b", message))
    return next((name for name in names if name in _ADAPTABLE), None)


def _endpoint_error(client: JudgeClient, failure: Failure) -> EndpointError:
    where = client.spec.public_base_url
    hint = endpoint_hint(client.spec, failure.http_status)
    message = client.redact(failure.message)
    return EndpointError(f"judge endpoint {where} is not usable: {message}{hint}")


async def _probe(client: JudgeClient, support: ParamSupport, *, optional: bool = False,
                 **extra: Any) -> Any:
    """One probe request (retried) with the judge's own parameters as ``support`` sends them.

    A failure means the endpoint is unusable. ``optional`` marks the probe of an
    optional feature: an HTTP 400/422/5xx answer then means "unsupported" and
    comes back as :class:`_Rejected`. Otherwise a 400 refusing a sampling
    parameter comes back as :class:`_Refused`.
    """
    body = chat_request(client.spec, _PROBE_MESSAGES, support=support, max_tokens=_PROBE_TOKENS)
    params = {k: v for k, v in body.items() if k not in ("model", "messages")}

    async def attempt() -> Any:
        try:
            return await client.create(_PROBE_MESSAGES, **{**params, **extra})
        except openai.APIStatusError as exc:
            if optional and (exc.status_code in (400, 422) or exc.status_code >= 500):
                return _Rejected(exc.status_code)
            refused = None if optional else refused_param(exc)
            if refused is not None:
                return _Refused(refused, client.redact(str(exc.message)))
            raise

    outcome = await with_retries(attempt, client.spec.retry_policy)
    if outcome.failure is not None:
        raise _endpoint_error(client, outcome.failure)
    return outcome.value


async def _learn_params(client: JudgeClient) -> ParamSupport:
    """Send the judge's parameters until the endpoint takes them; what it took and refused.

    Each 400 naming a parameter changes one thing (``max_tokens`` becomes
    ``max_completion_tokens``; a refused temperature, top_p, seed or reasoning
    effort is left out), so there are at most five rounds.
    """
    sampling = client.spec.sampling
    support = ParamSupport()
    for _ in range(len(_ADAPTABLE) + 1):
        answer = await _probe(client, support)
        if not isinstance(answer, _Refused):  # taken: what it carried is accepted
            return replace(support, accepted=frozenset(support.untried(sampling)))
        if answer.param == "max_tokens" and support.token_param == "max_tokens" \
                and sampling.max_completion_tokens is None:
            support = replace(support, token_param="max_completion_tokens")
        elif answer.param in DROPPABLE and answer.param not in support.unsupported:
            support = replace(support, unsupported=support.unsupported | {answer.param})
        else:
            break
    raise EndpointError(f"judge endpoint {client.spec.public_base_url} refuses the request: "
                        f"{answer.message}")


async def probe_capabilities(client: JudgeClient) -> Capabilities:
    """Ask the endpoint what it accepts (2 to 4 tiny requests, more for a reasoning model)."""
    support = await _learn_params(client)
    schema_answer = await _probe(
        client, support, optional=True,
        response_format=response_format_for("json_schema", _PROBE_SCHEMA),
    )
    json_schema = not isinstance(schema_answer, _Rejected)
    json_object = False
    if not json_schema:
        object_answer = await _probe(
            client, support, optional=True,
            response_format=response_format_for("json_object", _PROBE_SCHEMA),
        )
        json_object = not isinstance(object_answer, _Rejected)
    logprob_answer = await _probe(client, support, optional=True, logprobs=True, top_logprobs=1)
    logprobs = not isinstance(logprob_answer, _Rejected) and _has_logprobs(logprob_answer)
    return Capabilities(
        json_schema=json_schema,
        json_object=json_object,
        logprobs=logprobs,
        probed_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        params=support,
    )


def _has_logprobs(completion: dict[str, Any]) -> bool:
    choices = completion.get("choices") or [{}]
    return bool(isinstance(choices[0], dict) and choices[0].get("logprobs"))


class CapabilityStore(Protocol):
    """The two store methods capability caching needs (``judgekit.store.Store`` has them)."""

    def get_capabilities(self, base_url: str, model: str) -> dict[str, Any] | None: ...

    def set_capabilities(
        self, base_url: str, model: str, capabilities: Mapping[str, Any]
    ) -> None: ...


async def capabilities_for(
    store: CapabilityStore, client: JudgeClient, *, reprobe: bool = False
) -> Capabilities:
    """Cached capabilities of the client's endpoint+model, probing on a miss.

    Cached ones are probed again when the judge would send a parameter no probe
    tried (a first ``--reasoning-effort``, say). The client then sends what the
    endpoint accepts (``client.support``).
    """
    base_url, model = client.spec.public_base_url, client.spec.model
    cached = None if reprobe else store.get_capabilities(base_url, model)
    found: Capabilities | None = None
    if cached is not None and int(cached.get("version", 0)) == PROBE_VERSION:
        found = Capabilities.from_dict(cached)
        if found.params.untried(client.spec.sampling):
            found = None
    if found is None:
        found = await probe_capabilities(client)
        store.set_capabilities(base_url, model, found.as_dict())
    client.support = found.params
    return found
