"""A misbehaving OpenAI-compatible server on 127.0.0.1, for the adversarial tests.

:class:`~tests.support.openai_server.OpenAIServer` answers like a well-behaved
endpoint with queued faults; this one attacks the client at the HTTP level, the
way a broken proxy or a hostile gateway would. Its ``mode`` decides what every
judge call gets (capability probes are always answered normally, so a run gets
as far as judging):

================  ============================================================
mode              effect
================  ============================================================
``ok``            a normal answer (verdict from the request's schema, or pass)
``drip``          a normal answer sent ``drip_bytes`` bytes every ``drip_interval`` s
``endless``       a chunked body that never ends (stops after ``endless_seconds``)
``huge``          a valid answer whose reasoning is ``huge_bytes`` long
``huge_chunked``  the same without Content-Length (chunked)
``echo_key``      a valid answer that quotes the Authorization header and the
                  request path in its reasoning and model name
``unauthorized``  HTTP 401
``faulty``        at random (seeded): 500, 429 with Retry-After 0, a body that is
                  not JSON, or a normal answer (probability ``fault_rate`` of a fault)
================  ============================================================

``unauthorized_after=N`` answers 401 to every judge call after the first N.
Any path ending in ``/chat/completions`` is served, so URLs carrying a key in
the path (``/KEY/v1``, ``/v1;k=KEY``) work. The server counts judge requests
(``requests``; capability probes apart, in ``probe_requests``), and the answers
it delivered in full (``answered``: a 200 with a verdict, whose last byte was
written), per item, and the judge requests being
answered right now (``in_flight``): the item is the text after
``ITEM:`` in the prompt, or the whole last message.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer
from tests.support.openai_server import default_responder, is_probe

_ITEM_RE = re.compile(r"ITEM:(\S+)")


def item_of(body: dict[str, Any]) -> str:
    """The item a request is about: ``ITEM:<id>`` in any message, else the last message."""
    messages = body.get("messages") or [{}]
    for message in messages:
        found = _ITEM_RE.search(str(message.get("content") or ""))
        if found:
            return found.group(1)
    return str(messages[-1].get("content"))


def completion(content: str, model: str = "hostile-model") -> bytes:
    """A chat completion body answering ``content``."""
    return json.dumps({
        "id": "chatcmpl-hostile", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }).encode()


class HostileServer(LoopbackServer):
    """Background-thread server; use as a context manager. Attributes may change between calls."""

    def __init__(self, mode: str = "ok", *, seed: int = 0, latency: float = 0.0) -> None:
        self.mode = mode
        self.latency = latency
        self.drip_bytes, self.drip_interval = 4, 0.5
        self.endless_seconds = 60.0
        self.huge_bytes = 50 * 1024 * 1024
        self.fault_rate = 0.2
        self.unauthorized_after: int | None = None
        #: capability probes received, and how long each takes to answer
        self.probe_requests = 0
        self.probe_latency = 0.0
        self.requests: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.bytes_sent = 0
        #: judge requests being answered right now
        self.in_flight = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        super().__init__(self._handler(), quiet_errors=True)

    @property
    def request_count(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    def _choose(self, body: dict[str, Any]) -> str:
        """The behaviour for one judge request (and count it)."""
        item = item_of(body)
        with self._lock:
            self.requests[item] += 1
            total = sum(self.requests.values())
            if self.unauthorized_after is not None and total > self.unauthorized_after:
                return "unauthorized"
            if self.mode != "faulty":
                return self.mode
            if self._rng.random() >= self.fault_rate:
                return "ok"
            return self._rng.choice(["500", "429", "malformed"])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _head(self, status: int, headers: dict[str, str]) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()

            def _send(self, status: int, data: bytes, **headers: str) -> None:
                self._head(status, {"Content-Type": "application/json",
                                    "Content-Length": str(len(data)), **headers})
                self.wfile.write(data)
                self.wfile.flush()

            def _error(self, status: int, message: str, **headers: str) -> None:
                body = {"error": {"message": message, "type": "error", "code": None}}
                self._send(status, json.dumps(body).encode(), **headers)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": "hostile-model", "object": "model",
                                                        "created": 0, "owned_by": "test"}]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._error(404, "Not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                    self._error(404, "Not found")
                    return
                body = json.loads(raw or b"{}")
                try:
                    if is_probe(body):
                        with server._lock:
                            server.probe_requests += 1
                        time.sleep(server.probe_latency)
                        reply = default_responder(body)
                        self._send(200, completion(reply.content or ""))
                        return
                    mode = server._choose(body)
                    with server._lock:
                        server.in_flight += 1
                    try:
                        self._judge(body, mode)
                    finally:
                        with server._lock:
                            server.in_flight -= 1
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _judge(self, body: dict[str, Any], mode: str) -> None:
                if server.latency:
                    time.sleep(server.latency)
                answer = default_responder(body).content or ""
                if mode == "unauthorized":
                    self._error(401, "Incorrect API key provided.")
                elif mode == "500":
                    self._error(500, "The server had an error.")
                elif mode == "429":
                    self._error(429, "Rate limit reached.", **{"Retry-After": "0"})
                elif mode == "malformed":
                    self._send(200, b'{"id": "chatcmpl-x", "choices": [{')
                elif mode == "drip":
                    data = completion(answer)
                    self._head(200, {"Content-Type": "application/json",
                                     "Content-Length": str(len(data))})
                    for start in range(0, len(data), server.drip_bytes):
                        self.wfile.write(data[start:start + server.drip_bytes])
                        self.wfile.flush()
                        time.sleep(server.drip_interval)
                    self._delivered(body, len(data))
                elif mode == "endless":
                    self._head(200, {"Content-Type": "application/json",
                                     "Transfer-Encoding": "chunked"})
                    stop = time.monotonic() + server.endless_seconds
                    self._chunk(b'{"choices": [{"message": {"content": "')
                    while time.monotonic() < stop:
                        self._chunk(b"x" * 65536)
                        with server._lock:
                            server.bytes_sent += 65536
                    self.close_connection = True
                elif mode in ("huge", "huge_chunked"):
                    reasoning = "y" * server.huge_bytes
                    data = completion(json.dumps({"reasoning": reasoning, "verdict": "pass"}))
                    if mode == "huge":
                        self._send(200, data)
                    else:
                        self._head(200, {"Content-Type": "application/json",
                                         "Transfer-Encoding": "chunked"})
                        for start in range(0, len(data), 1 << 20):
                            self._chunk(data[start:start + (1 << 20)])
                        self._chunk(b"")
                    self._delivered(body, len(data))
                elif mode == "echo_key":
                    auth = self.headers.get("Authorization", "")
                    key = auth.removeprefix("Bearer ")
                    echoed = json.dumps({"reasoning": f"key {key} via {self.path} ({auth})",
                                         "verdict": json.loads(answer)["verdict"]})
                    self._send(200, completion(echoed, model=f"model-{key}"))
                    self._delivered(body, len(echoed))
                else:
                    data = completion(answer)
                    self._send(200, data)
                    self._delivered(body, len(data))

            def _delivered(self, body: dict[str, Any], size: int) -> None:
                with server._lock:
                    server.answered[item_of(body)] += 1
                    server.bytes_sent += size

        return Handler
