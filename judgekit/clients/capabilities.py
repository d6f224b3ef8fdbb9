"""What an endpoint+model accepts: structured output modes and logprobs.

Servers differ: OpenAI takes ``response_format`` ``json_schema``; llama.cpp's
server takes only ``json_object`` with a ``schema`` and answers an unknown type
with HTTP 500 (not 400); some servers take neither. judgekit asks once per
endpoint+model with tiny requests, caches the answer in the store, and uses the
best mode available (``json_schema`` > ``json_object`` + schema > plain prompt
with JSON extraction). The mode used is recorded on every run.

A probe that the server *rejects* (HTTP 400/422/5xx after a plain request has
worked) means "unsupported"; a server that cannot be reached or refuses the key
stops the run with an :class:`~judgekit.errors.EndpointError`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import openai

from judgekit.clients.openai_client import JudgeClient, ResponseFormatMode, response_format_for
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
_PROBE_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 16, "top_p": 1.0}


@dataclass(frozen=True)
class Capabilities:
    """The probe's findings for one endpoint+model."""

    json_schema: bool
    json_object: bool
    logprobs: bool
    probed_at: str = ""
    version: int = PROBE_VERSION

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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Capabilities:
        return cls(
            json_schema=bool(data.get("json_schema")),
            json_object=bool(data.get("json_object")),
            logprobs=bool(data.get("logprobs")),
            probed_at=str(data.get("probed_at", "")),
            version=int(data.get("version", 0)),
        )


@dataclass(frozen=True)
class _Rejected:
    """The server answered the probe with an error status: the feature is unsupported."""

    status: int


def _endpoint_error(client: JudgeClient, failure: Failure) -> EndpointError:
    where = client.spec.public_base_url
    hint = endpoint_hint(client.spec, failure.http_status)
    message = client.redact(failure.message)
    return EndpointError(f"judge endpoint {where} is not usable: {message}{hint}")


async def _probe(client: JudgeClient, *, optional: bool = False, **extra: Any) -> Any:
    """One probe request (retried); a failure means the endpoint is unusable.

    ``optional`` marks the probe of an optional feature: an HTTP 400/422/5xx
    answer then means "unsupported" and comes back as :class:`_Rejected`.
    """

    async def attempt() -> Any:
        try:
            return await client.create(_PROBE_MESSAGES, **_PROBE_PARAMS, **extra)
        except openai.APIStatusError as exc:
            if optional and (exc.status_code in (400, 422) or exc.status_code >= 500):
                return _Rejected(exc.status_code)
            raise

    outcome = await with_retries(attempt, client.spec.retry_policy)
    if outcome.failure is not None:
        raise _endpoint_error(client, outcome.failure)
    return outcome.value


async def probe_capabilities(client: JudgeClient) -> Capabilities:
    """Ask the endpoint what it accepts (2 to 4 tiny requests)."""
    await _probe(client)
    schema_answer = await _probe(
        client, optional=True, response_format=response_format_for("json_schema", _PROBE_SCHEMA)
    )
    json_schema = not isinstance(schema_answer, _Rejected)
    json_object = False
    if not json_schema:
        object_answer = await _probe(
            client, optional=True,
            response_format=response_format_for("json_object", _PROBE_SCHEMA),
        )
        json_object = not isinstance(object_answer, _Rejected)
    logprob_answer = await _probe(client, optional=True, logprobs=True, top_logprobs=1)
    logprobs = not isinstance(logprob_answer, _Rejected) and _has_logprobs(logprob_answer)
    return Capabilities(
        json_schema=json_schema,
        json_object=json_object,
        logprobs=logprobs,
        probed_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
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
    """Cached capabilities of the client's endpoint+model, probing on a miss."""
    base_url, model = client.spec.public_base_url, client.spec.model
    cached = None if reprobe else store.get_capabilities(base_url, model)
    if cached is not None and int(cached.get("version", 0)) == PROBE_VERSION:
        return Capabilities.from_dict(cached)
    found = await probe_capabilities(client)
    store.set_capabilities(base_url, model, found.as_dict())
    return found
