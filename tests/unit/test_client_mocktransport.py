"""The client adapter with httpx2's MockTransport as the seam (no sockets)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from judgekit.clients import JudgeClient, JudgeSpec, public_base_url, redact, response_format_for
from judgekit.clients.capabilities import probe_capabilities
from judgekit.errors import EndpointError, InputError
from judgekit.types import SamplingParams, Scale, ScaleLevel

SCALE = Scale("binary", (ScaleLevel("pass", "p"), ScaleLevel("fail", "f")))
KEY = "sk-mock-Secret-0123456789"


def completion(content: str | None, *, finish: str = "stop", refusal: str | None = None,
               model: str = "served-model") -> dict[str, Any]:
    return {
        "id": "c1", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content, "refusal": refusal}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def client_for(handler: Any, **spec_kw: Any) -> JudgeClient:
    spec = JudgeSpec(base_url="http://judge.test/v1", model="m", api_key=KEY, **spec_kw)
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return JudgeClient(spec, http_client=http)


async def test_request_carries_explicit_sampling_and_format() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=completion('{"reasoning": "r", "verdict": "fail"}'))

    fmt = response_format_for("json_schema", {"type": "object"})
    async with client_for(handler, sampling=SamplingParams(0.3, 99, 0.8, None)) as client:
        result = await client.judge([{"role": "user", "content": "q"}], SCALE,
                                    response_format=fmt)
    body = json.loads(seen[0].content)
    assert body["temperature"] == 0.3 and body["max_tokens"] == 99 and body["top_p"] == 0.8
    assert "seed" not in body  # seed None is omitted, everything else always sent
    assert body["response_format"]["type"] == "json_schema"
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert result.status == "ok" and result.verdict is not None
    assert result.verdict.label == "fail" and result.verdict.method == "structured"
    assert (result.prompt_tokens, result.completion_tokens) == (11, 7)
    assert result.model_returned == "served-model" and result.finish_reason == "stop"
    assert result.latency_ms is not None and result.attempts == 1


@pytest.mark.parametrize("reply,status", [
    (completion('{"reasoning": "x", "verdict": "pa', finish="length"), "truncated"),
    (completion(None, refusal="I cannot judge this."), "refusal"),
    (completion("no idea"), "parse_error"),
    (completion('{"verdict": "maybe"}'), "parse_error"),
    (completion("reasoning... verdict: pass"), "ok"),
])
async def test_answered_outcomes(reply: dict[str, Any], status: str) -> None:
    async with client_for(lambda request: httpx2.Response(200, json=reply)) as client:
        result = await client.judge([{"role": "user", "content": "q"}], SCALE)
    assert result.status == status and result.failure is None
    if status != "ok":
        assert result.verdict is not None and result.verdict.label is None


async def test_own_retries_only_and_secret_redacted() -> None:
    calls = 0

    def handler(request: httpx2.Request) -> httpx2.Response:
        nonlocal calls
        calls += 1
        return httpx2.Response(400, json={"error": {"message": f"bad key {KEY}"}})

    async with client_for(handler, max_retries=5) as client:
        result = await client.judge([{"role": "user", "content": "q"}], SCALE)
    assert calls == 1  # 400 is not retried, and the openai client's own retries are off
    assert result.status == "api_error" and result.failure is not None
    assert KEY not in result.failure.message and "***" in result.failure.message

    calls = 0

    def server_error(request: httpx2.Request) -> httpx2.Response:
        nonlocal calls
        calls += 1
        return httpx2.Response(500, json={"error": {"message": "oops"}},
                               headers={"retry-after-ms": "1"})

    async with client_for(server_error, max_retries=2) as client:
        result = await client.judge([{"role": "user", "content": "q"}], SCALE)
    assert calls == 3 and result.status == "api_error" and result.attempts == 3


async def test_probe_llamacpp_style_server() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema":
            return httpx2.Response(500, json={"error": {"message": "Input should be 'text'"}})
        if body.get("logprobs"):
            return httpx2.Response(200, json=completion("{}"))  # ignored: no logprobs back
        return httpx2.Response(200, json=completion('{"verdict": "yes"}'))

    async with client_for(handler) as client:
        caps = await probe_capabilities(client)
    assert (caps.json_schema, caps.json_object, caps.logprobs) == (False, True, False)
    assert caps.response_format_mode == "json_object"


async def test_probe_unusable_endpoint() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(404, json={"error": {"message": "model not found"}})

    async with client_for(handler) as client:
        with pytest.raises(EndpointError, match=r"404.*model 'm'"):
            await probe_capabilities(client)


def test_public_base_url_and_redact() -> None:
    assert public_base_url("https://api.example.com/v1/") == "https://api.example.com/v1"
    assert public_base_url("http://u:p@h:8080/v1?api-key=x&mode=1") == "http://h:8080/v1?mode=1"
    assert redact("key sk-abc123 here", ["sk-abc123", None, ""]) == "key *** here"


def test_spec_rejects_credentials_in_url_and_hides_key() -> None:
    with pytest.raises(InputError):
        JudgeSpec(base_url="https://u:secret@h/v1", model="m")
    spec = JudgeSpec(base_url="https://h/v1", model="m", api_key=KEY)
    assert KEY not in repr(spec) and KEY not in str(spec)
    with pytest.raises(ValueError, match="concurrency"):
        JudgeSpec(base_url="https://h/v1", model="m", concurrency=0)
