"""A small, real OpenAI Batch API server on 127.0.0.1 for tests and benchmarks.

Tests drive it with the real ``openai`` client (``files`` and ``batches``
resources), over real sockets. It serves:

- ``POST /v1/files`` (multipart upload, purpose ``batch``), ``GET /v1/files/{id}``
  and ``GET /v1/files/{id}/content``;
- ``POST /v1/batches``, ``GET /v1/batches`` (newest first, ``limit`` and ``after``
  as OpenAI pages them), ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``;
- ``POST /v1/chat/completions``, live, like the provider's own URL (counted in
  ``chat_requests``, bodies in ``chat_bodies``): live and batch judging of one
  judge share a base URL.

A batch moves one state per retrieve: ``validating`` -> ``in_progress`` -> its
final state, chosen by ``outcome`` (``completed``, ``failed``, ``expired``) or
by a cancel (``cancelling`` -> ``cancelled``). Validation checks every input
line against the documented request shape (:func:`request_line_problems`); a
bad line fails the batch with the line numbers in ``errors``. When the batch
runs, each request body is answered by an :class:`OpenAIServer`'s completion
logic (its ``responder`` and queued faults, e.g. ``inject("rate_limit")``), so
an answer here is what the live test server would say. Non-200 answers go to
the error file; for ``expired`` and ``cancelled`` only the first ``finish``
requests run and the rest are error lines with ``batch_expired`` /
``batch_cancelled`` (partial output).

To hit the windows of an interrupted ``batch submit``, ``delays`` holds seconds
to wait (outside the server's lock) in ``"upload"`` (before the file is stored)
and ``"create"`` (after the batch is made, before it is answered);
``create_errors`` answers that many creates with HTTP 500 *after* making the
batch (as a provider whose gateway fails late does). ``events`` logs
``upload``/``create``/``list`` as they start, so a test can kill its client at
a step.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer
from tests.support.openai_server import OpenAIServer, Responder

#: The documented limits of one input file.
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1000 * 1000
ENDPOINTS = ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions")


def request_line_problems(text: str) -> list[str]:
    """Why one input line does not match the documented request shape (empty if it does).

    ``{"custom_id": str, "method": "POST", "url": "/v1/...", "body": {"model": str,
    ...}}`` and nothing else; a chat completions body needs a non-empty
    ``messages`` list of ``{"role", "content"}`` objects.
    """
    try:
        line = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"not JSON: {exc.msg}"]
    if not isinstance(line, dict):
        return ["not a JSON object"]
    problems = [f"unknown field {k!r}" for k in line if k not in
                ("custom_id", "method", "url", "body")]
    if not isinstance(line.get("custom_id"), str) or not line.get("custom_id"):
        problems.append("custom_id must be a non-empty string")
    if line.get("method") != "POST":
        problems.append("method must be POST")
    if line.get("url") not in ENDPOINTS:
        problems.append(f"url must be one of {', '.join(ENDPOINTS)}")
    body = line.get("body")
    if not isinstance(body, dict):
        return [*problems, "body must be an object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("body.model must be a non-empty string")
    if line.get("url") == "/v1/chat/completions":
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            problems.append("body.messages must be a non-empty list")
        elif not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                     and isinstance(m.get("content"), str) for m in messages):
            problems.append("every message needs a string role and content")
    return problems


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    metadata: dict[str, Any]
    created_at: int
    outcome: str
    finish: int | None
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"total": 0, "completed": 0,
                                                            "failed": 0})

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "object": "batch", "endpoint": self.endpoint,
            "input_file_id": self.input_file_id, "completion_window": "24h",
            "status": self.status, "created_at": self.created_at,
            "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "request_counts": self.counts, "metadata": self.metadata or None,
        }


class BatchServer(LoopbackServer):
    """Background-thread Batch API server; use as a context manager.

    ``outcome`` is the final state of the next batches (``completed``,
    ``failed``, ``expired``); ``finish`` is how many requests run before an
    expiry or cancel (default half). ``completions`` answers each request
    (default: an :class:`OpenAIServer` with ``responder``); queue faults on it.
    """

    def __init__(self, responder: Responder | None = None, *, outcome: str = "completed",
                 finish: int | None = None, api_key: str | None = None) -> None:
        self.completions = OpenAIServer(responder, keep_bodies=False)
        self.outcome, self.finish, self.api_key = outcome, finish, api_key
        self.files: dict[str, tuple[str, bytes]] = {}
        self.batches: dict[str, _Batch] = {}
        self.uploads = 0
        self.delays: dict[str, float] = {}
        self.create_errors = 0
        self.events: list[str] = []
        self.chat_requests = 0
        self.chat_bodies: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        super().__init__(self._handler_class())

    def stop(self) -> None:
        super().stop()
        self.completions.close_socket()  # never started: only its socket to close

    # -- behaviour -----------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def _store_file(self, name: str, data: bytes, purpose: str) -> dict[str, Any]:
        file_id = self._new_id("file")
        self.files[file_id] = (name, data)
        return {"id": file_id, "object": "file", "bytes": len(data), "filename": name,
                "purpose": purpose, "created_at": int(time.time()), "status": "processed"}

    def _validate(self, batch: _Batch) -> None:
        data = self.files.get(batch.input_file_id, ("", b""))[1]
        lines = [t for t in data.decode("utf-8", "replace").splitlines() if t.strip()]
        seen: set[str] = set()
        models: set[str] = set()
        for number, text in enumerate(lines, start=1):
            problems = request_line_problems(text)
            if not problems:
                line = json.loads(text)
                if line["custom_id"] in seen:
                    problems.append(f"duplicate custom_id {line['custom_id']!r}")
                if line["url"] != batch.endpoint:
                    problems.append(f"url {line['url']} is not the batch's {batch.endpoint}")
                seen.add(line["custom_id"])
                models.add(line["body"]["model"])
            batch.errors += [{"code": "invalid_request", "message": p, "line": number}
                             for p in problems]
        if len(models) > 1:
            batch.errors.append({"code": "mixed_models", "message": "one model per file"})
        if len(lines) > MAX_REQUESTS or len(data) > MAX_BYTES:
            batch.errors.append({"code": "too_large", "message": "file over the limits"})
        batch.counts["total"] = len(lines)

    def _run(self, batch: _Batch, final: str) -> None:
        """Answer the batch's requests (all, or the first ``finish`` ones) into its files."""
        data = self.files[batch.input_file_id][1]
        lines = [json.loads(t) for t in data.decode().splitlines() if t.strip()]
        runs = len(lines) if final == "completed" else (
            self.finish if self.finish is not None else len(lines) // 2)
        out: list[str] = []
        errors: list[str] = []
        for index, line in enumerate(lines):
            entry: dict[str, Any] = {"id": self._new_id("batch_req"),
                                     "custom_id": line["custom_id"]}
            if index >= runs:
                code = "batch_expired" if final == "expired" else "batch_cancelled"
                entry |= {"response": None, "error": {"code": code, "message": f"{code}."}}
                errors.append(json.dumps(entry))
                batch.counts["failed"] += 1
                continue
            status, _, raw = self.completions._completion(line["body"])
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {"error": {"message": "bad body"}}
                status = 500
            entry |= {"response": {"status_code": status, "request_id": entry["id"],
                                   "body": body}, "error": None}
            (out if status == 200 else errors).append(json.dumps(entry))
            batch.counts["completed" if status == 200 else "failed"] += 1
        if out:
            batch.output_file_id = self._store_file("output.jsonl",
                                                    ("\n".join(out) + "\n").encode(),
                                                    "batch_output")["id"]
        if errors:
            batch.error_file_id = self._store_file("errors.jsonl",
                                                   ("\n".join(errors) + "\n").encode(),
                                                   "batch_output")["id"]
        batch.status = final

    def _advance(self, batch: _Batch) -> None:
        """One step of the state machine per retrieve."""
        if batch.status == "validating":
            self._validate(batch)
            if batch.outcome == "failed":
                batch.errors.append({"code": "invalid_request", "message": "rejected"})
            batch.status = "failed" if batch.errors else "in_progress"
        elif batch.status == "in_progress":
            self._run(batch, batch.outcome)
        elif batch.status == "cancelling":
            self._run(batch, "cancelled")

    # -- HTTP ----------------------------------------------------------------
    def _handle(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "Incorrect API key provided.",
                                   "code": "invalid_api_key"}}
        parts = [p for p in path.split("?")[0].split("/") if p][1:]  # drop "v1"
        with self._lock:
            if method == "POST" and parts == ["chat", "completions"]:
                self.chat_requests += 1
                body = json.loads(raw or b"{}")
                self.chat_bodies.append(body)
                status, _, data = self.completions._completion(body)
                return status, data
            if method == "POST" and parts == ["files"]:
                self.uploads += 1
                return 200, self._upload(headers.get("Content-Type", ""), raw)
            if method == "GET" and parts == ["batches"]:
                self.events.append("list")
                return 200, self._list(path)
            if method == "GET" and len(parts) == 3 and parts[0] == "files" and \
                    parts[2] == "content" and parts[1] in self.files:
                return 200, self.files[parts[1]][1]
            if method == "GET" and len(parts) == 2 and parts[0] == "files" and \
                    parts[1] in self.files:
                name, data = self.files[parts[1]]
                return 200, {"id": parts[1], "object": "file", "bytes": len(data),
                             "filename": name, "purpose": "batch", "created_at": 0,
                             "status": "processed"}
            if method == "POST" and parts == ["batches"]:
                status, made = self._create(json.loads(raw or b"{}"))
                if status == 200 and self.create_errors > 0:
                    self.create_errors -= 1
                    return 500, {"error": {"message": "The server had an error.", "code": None}}
                return status, made
            if len(parts) >= 2 and parts[0] == "batches" and parts[1] in self.batches:
                batch = self.batches[parts[1]]
                if method == "GET" and len(parts) == 2:
                    self._advance(batch)
                    return 200, batch.as_json()
                if method == "POST" and parts[2:] == ["cancel"]:
                    if batch.status in ("validating", "in_progress"):
                        batch.status = "cancelling"
                    return 200, batch.as_json()
        return 404, {"error": {"message": f"no route {method} {path}", "code": None}}

    def _list(self, path: str) -> dict[str, Any]:
        query = dict(p.split("=", 1) for p in path.partition("?")[2].split("&") if "=" in p)
        newest = list(reversed(self.batches.values()))
        if "after" in query:
            ids = [b.id for b in newest]
            newest = newest[ids.index(query["after"]) + 1:] if query["after"] in ids else []
        limit = int(query.get("limit", 20))
        page = newest[:limit]
        return {"object": "list", "data": [b.as_json() for b in page],
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None, "has_more": len(newest) > limit}

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            payload = part.get_payload(decode=True)
            fields[str(part.get_param("name", header="content-disposition"))] = (
                part.get_filename(), payload if isinstance(payload, bytes) else b"")
        name, data = fields.get("file", (None, b""))
        purpose = fields.get("purpose", (None, b""))[1].decode()
        return self._store_file(name or "upload.jsonl", data, purpose)

    def _create(self, request: dict[str, Any]) -> tuple[int, Any]:
        if request.get("input_file_id") not in self.files:
            return 400, {"error": {"message": "unknown input_file_id", "code": "invalid"}}
        if request.get("completion_window") != "24h":
            return 400, {"error": {"message": "completion_window must be 24h", "code": None}}
        batch = _Batch(self._new_id("batch"), request["input_file_id"],
                       str(request.get("endpoint")), dict(request.get("metadata") or {}),
                       int(time.time()), self.outcome, self.finish)
        self.batches[batch.id] = batch
        return 200, batch.as_json()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _respond(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                step = {"/v1/files": "upload", "/v1/batches": "create"}.get(
                    self.path.rstrip("/")) if method == "POST" else None
                if step is not None:
                    server.events.append(step)
                if step == "upload":
                    time.sleep(server.delays.get("upload", 0.0))
                status, payload = server._handle(method, self.path, self.headers, raw)
                if step == "create":
                    time.sleep(server.delays.get("create", 0.0))
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                kind = "application/octet-stream" if isinstance(payload, bytes) and \
                    not self.path.endswith("/chat/completions") else "application/json"
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed
                    self.close_connection = True

            def do_GET(self) -> None:
                self._respond("GET")

            def do_POST(self) -> None:
                self._respond("POST")

        return Handler
