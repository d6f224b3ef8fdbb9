"""A small, real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Integration tests drive the real ``openai`` client over real sockets against this
server, so retries, timeouts and connection handling are exercised exactly as in
production. It serves ``POST /v1/chat/completions`` and ``GET /v1/models``; a
pluggable ``responder(request_json) -> Reply | str`` decides what the "model"
says, and ``inject(kind, times=1, **kw)`` queues faults:

=================  ==========================================================
kind               effect (one request per ``times``)
=================  ==========================================================
``latency``        sleep ``seconds`` then answer normally
``rate_limit``     HTTP 429 with ``Retry-After: retry_after`` (default 1)
``quota``          HTTP 429 with error code ``insufficient_quota``
``server_error``   HTTP ``status`` (default 500)
``timeout``        sleep ``seconds`` (default 5) before answering
``malformed``      HTTP 200 whose body is not JSON
``truncated``      finish_reason ``length`` with half the content
``refusal``        ``message.refusal`` set, content null
``bad_request``    HTTP 400
``unauthorized``   HTTP 401
``status``         HTTP ``status`` with an error body
=================  ==========================================================

``mimic_llamacpp=True`` answers an unknown ``response_format`` type
(``json_schema``) with HTTP 500 like llama.cpp's server does, and accepts
``json_object`` with a ``schema``. A request with ``logprobs: true`` gets
OpenAI-shaped ``choices[0].logprobs.content``: the answer split into word and
punctuation tokens that spell it exactly, each with ``top_logprobs`` (as many as
asked); at the token where the ``"verdict"`` value starts the alternatives are
``Reply.alternatives`` (token -> probability), so tests control the confidence.
``response_headers`` (a dict, changeable between calls) are sent with every
answered chat completion, e.g. ``x-ratelimit-remaining-requests``.
``reasoning_model=True`` answers as OpenAI documents for its reasoning models
(gpt-5.x, o1/o3/o4-mini) on Chat Completions: HTTP 400 ``unsupported_parameter``
for ``max_tokens`` ("Use 'max_completion_tokens' instead"), ``logprobs`` and
``seed``, ``unsupported_value`` for a ``temperature`` or ``top_p`` other than 1,
each with ``error.param``; ``reasoning_effort`` is taken. Every answer spends
``reasoning_tokens`` first (reported in ``usage.completion_tokens_details``):
with a smaller ``max_completion_tokens`` the visible text is empty and
``finish_reason`` is ``length``. ``unsupported`` names more parameters to
refuse with ``unsupported_parameter`` (e.g. ``reasoning_effort`` for a model
that does not reason).
The server counts requests and keeps their bodies (``server.requests``). Run it
standalone for benchmarks with ``python tests/support/openai_server.py --latency 0.1``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from judgekit.clients.capabilities import PROBE_PROMPT
from tests.support.loopback import LoopbackServer


@dataclass
class Reply:
    """What the fake model answers to one chat completion request."""

    content: str | None
    finish_reason: str = "stop"
    refusal: str | None = None
    model: str | None = None
    prompt_tokens: int = 20
    completion_tokens: int = 10
    #: token -> probability at the verdict's first token (with logprobs); the
    #: chosen token gets the rest of the mass unless listed. None = the chosen
    #: token alone at probability 0.95.
    alternatives: dict[str, float] | None = None


Responder = Callable[[dict[str, Any]], "Reply | str"]


def is_probe(body: dict[str, Any]) -> bool:
    """Whether a request body is one of judgekit's capability probes."""
    messages = body.get("messages") or [{}]
    return messages[-1].get("content") == PROBE_PROMPT


def _verdict_labels(body: dict[str, Any]) -> list[str]:
    """The allowed verdicts if the request carried a JSON schema with an enum."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    props = schema.get("properties") or {}
    for name in ("verdict", "label", "score"):
        enum = (props.get(name) or {}).get("enum")
        if enum:
            return [str(v) for v in enum]
    for prop in props.values():
        if isinstance(prop, dict) and prop.get("enum"):
            return [str(v) for v in prop["enum"]]
    return []


_TOKEN_RE = re.compile(r"\s*[A-Za-z0-9]+|\s*[^A-Za-z0-9\s]+|\s+")
_VERDICT_VALUE_RE = re.compile(r'"verdict"\s*:\s*"')


def logprobs_for(content: str, top_n: int, alternatives: dict[str, float] | None) -> dict[str, Any]:
    """OpenAI-shaped ``logprobs`` for ``content``: tokens spelling it, ``top_n`` alternatives each.

    Every token is near-certain except the one where the ``"verdict"`` value
    starts, whose alternatives come from ``alternatives``.
    """
    values = list(_VERDICT_VALUE_RE.finditer(content))
    verdict_at = values[-1].end() if values else -1
    entries: list[dict[str, Any]] = []
    offset = 0
    for token in _TOKEN_RE.findall(content):
        if offset == verdict_at:
            probs = dict(alternatives or {})
            probs.setdefault(token, max(1e-6, 1.0 - sum(probs.values())) if alternatives
                             else 0.95)
        else:
            probs = {token: 0.99}
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])[:top_n]
        entries.append({
            "token": token,
            "logprob": math.log(probs[token]),
            "bytes": list(token.encode("utf-8", "surrogatepass")),
            "top_logprobs": [{"token": t, "logprob": math.log(p),
                              "bytes": list(t.encode("utf-8", "surrogatepass"))}
                             for t, p in ranked],
        })
        offset += len(token)
    return {"content": entries, "refusal": None}


def default_responder(body: dict[str, Any]) -> Reply:
    """Answer with the first allowed verdict (or ``pass``) as reasoning-first JSON."""
    labels = _verdict_labels(body)
    verdict = labels[0] if labels else "pass"
    return Reply(json.dumps({"reasoning": "The response looks right.", "verdict": verdict}))


@dataclass
class _Fault:
    kind: str
    remaining: int
    kw: dict[str, Any] = field(default_factory=dict)


class OpenAIServer(LoopbackServer):
    """Background-thread OpenAI-compatible server; use as a context manager."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        model: str = "test-model",
        mimic_llamacpp: bool = False,
        json_schema: bool = True,
        json_object: bool = True,
        logprobs: bool = True,
        api_key: str | None = None,
        port: int = 0,
        keep_bodies: bool = True,
        reasoning_model: bool = False,
        reasoning_tokens: int = 64,
        unsupported: tuple[str, ...] = (),
    ) -> None:
        self.reasoning_model = reasoning_model
        self.reasoning_tokens = reasoning_tokens
        self.unsupported = unsupported
        self.responder: Responder = responder or default_responder
        self.latency = latency
        self.model = model
        self.mimic_llamacpp = mimic_llamacpp
        self.json_schema = json_schema and not mimic_llamacpp
        self.json_object = json_object
        self.logprobs = logprobs
        self.api_key = api_key
        self.keep_bodies = keep_bodies
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.response_headers: dict[str, str] = {}
        self.request_count = 0
        self.models_count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        super().__init__(self._handler_class(), port=port)

    # -- public API ----------------------------------------------------------
    def inject(self, kind: str, times: int = 1, **kw: Any) -> None:
        """Queue ``times`` occurrences of a fault; faults apply in the order queued."""
        with self._lock:
            self._faults.append(_Fault(kind, times, kw))

    def clear(self) -> None:
        """Forget queued faults and recorded requests."""
        with self._lock:
            self._faults.clear()
            self.requests.clear()
            self.headers.clear()
            self.request_count = 0
            self.max_in_flight = 0

    def judge_requests(self) -> list[dict[str, Any]]:
        """Recorded request bodies that are not judgekit's capability probes."""
        with self._lock:
            return [b for b in self.requests if not is_probe(b)]

    def probe_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [b for b in self.requests if is_probe(b)]

    # -- internals -----------------------------------------------------------
    def _next_fault(self) -> _Fault | None:
        with self._lock:
            while self._faults and self._faults[0].remaining <= 0:
                self._faults.pop(0)
            if not self._faults:
                return None
            fault = self._faults[0]
            fault.remaining -= 1
            return fault

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.request_count += 1
            if self.keep_bodies:
                self.requests.append(body)
                self.headers.append(headers)

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """Status, extra headers and body bytes for one chat completion request."""
        fault = self._next_fault()
        kind = fault.kind if fault else ""
        kw = fault.kw if fault else {}
        if kind == "latency":
            time.sleep(float(kw.get("seconds", 0.5)))
        elif kind == "timeout":
            time.sleep(float(kw.get("seconds", 5.0)))
        elif kind == "rate_limit":
            after = kw.get("retry_after", 1)
            headers = {} if after is None else {"Retry-After": str(after)}
            return _error(429, "Rate limit reached.", "rate_limit_exceeded", headers)
        elif kind == "quota":
            return _error(429, "You exceeded your current quota.", "insufficient_quota")
        elif kind == "server_error":
            return _error(int(kw.get("status", 500)), "The server had an error.", None)
        elif kind == "bad_request":
            return _error(400, kw.get("message", "Invalid request."), "invalid_request_error")
        elif kind == "unauthorized":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        elif kind == "status":
            return _error(int(kw["status"]), kw.get("message", "error"), kw.get("code"))
        elif kind == "malformed":
            return 200, {"Content-Type": "application/json"}, b'{"id": "chatcmpl-x", "choices": [{'

        fmt = body.get("response_format")
        if isinstance(fmt, dict):
            ftype = fmt.get("type")
            if ftype == "json_schema" and not self.json_schema:
                if self.mimic_llamacpp:
                    return _error(500, "Unsupported response_format type", None)
                return _error(400, "response_format json_schema is not supported", None)
            if ftype == "json_object" and not self.json_object:
                return _error(500 if self.mimic_llamacpp else 400, "json_object unsupported", None)
            if ftype not in ("json_schema", "json_object", "text"):
                return _error(500 if self.mimic_llamacpp else 400, "bad response_format", None)
        if body.get("logprobs") and not self.logprobs:
            return _error(400, "logprobs are not supported", None)
        refused = self._refused(body)
        if refused is not None:
            return refused

        reply = self.responder(body)
        if isinstance(reply, str):
            reply = Reply(reply)
        content, finish, refusal = reply.content, reply.finish_reason, reply.refusal
        if kind == "truncated":
            content = (content or "")[: max(1, len(content or "") // 2)]
            finish = "length"
        elif kind == "refusal":
            content, refusal = None, kw.get("message", "I can't help with that.")
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": refusal},
            "finish_reason": finish,
            "logprobs": None,
        }
        if body.get("logprobs") and self.logprobs:
            top_n = int(body.get("top_logprobs") or 0)
            choice["logprobs"] = logprobs_for(content or "", top_n, reply.alternatives)
        usage_details: dict[str, Any] = {}
        if self.reasoning_model:
            budget = body.get("max_completion_tokens")
            spent = self.reasoning_tokens
            if isinstance(budget, int) and budget <= spent:
                choice["message"]["content"], choice["finish_reason"] = "", "length"
                spent = budget
            usage_details = {"completion_tokens_details": {"reasoning_tokens": spent}}
        payload = {
            "id": f"chatcmpl-{self.request_count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or self.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                **usage_details,
            },
        }
        headers = {"Content-Type": "application/json", **self.response_headers}
        return 200, headers, json.dumps(payload).encode()

    def _refused(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes] | None:
        """The 400 OpenAI gives a reasoning model for a parameter it does not take."""
        refuse = [*self.unsupported, *(("max_tokens", "logprobs", "top_logprobs", "seed")
                                       if self.reasoning_model else ())]
        for name in refuse:
            if name in body and body[name] is not None:
                tail = (" Use 'max_completion_tokens' instead." if name == "max_tokens" else "")
                return _error(400, f"Unsupported parameter: '{name}' is not supported with "
                                   f"this model.{tail}", "unsupported_parameter", param=name,
                              kind="invalid_request_error")
        for name in ("temperature", "top_p") if self.reasoning_model else ():
            if name in body and body[name] != 1:
                return _error(400, f"Unsupported value: '{name}' does not support "
                                   f"{body[name]} with this model. Only the default (1) value "
                                   "is supported.", "unsupported_value", param=name,
                              kind="invalid_request_error")
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output quiet

            def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _authorized(self) -> bool:
                if server.api_key is None:
                    return True
                return self.headers.get("Authorization") == f"Bearer {server.api_key}"

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/v1/models"):
                    server.models_count += 1
                    if not self._authorized():
                        self._send(*_error(401, "Incorrect API key provided.", "invalid_api_key"))
                        return
                    data = {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "test"}
                    ]}
                    self._send(200, {"Content-Type": "application/json"}, json.dumps(data).encode())
                elif self.path.rstrip("/").endswith("/v1/stats"):  # for benchmarks
                    data = {"requests": server.request_count}
                    self._send(200, {"Content-Type": "application/json"}, json.dumps(data).encode())
                else:
                    self._send(*_error(404, "Not found", None))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(*_error(404, "Not found", None))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(*_error(400, "Body is not JSON", None))
                    return
                server._record(body, {k.lower(): v for k, v in self.headers.items()})
                if not self._authorized():
                    self._send(*_error(401, "Incorrect API key provided.", "invalid_api_key"))
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.latency:
                        time.sleep(server.latency)
                    reply = server._completion(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self._send(*reply)

        return Handler


def _error(
    status: int, message: str, code: str | None, headers: dict[str, str] | None = None,
    *, param: str | None = None, kind: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"message": message, "type": kind or code or "server_error", "code": code,
                      "param": param}}
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return status, all_headers, json.dumps(body).encode()


def main() -> None:  # pragma: no cover - used by benchmarks
    parser = argparse.ArgumentParser(description="Run the test OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    server = OpenAIServer(latency=args.latency, port=args.port, keep_bodies=False)
    print(server.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":  # pragma: no cover
    main()
