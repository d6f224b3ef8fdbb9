"""Batch API files line by line: request lines out, output and error lines in.

The format is OpenAI's Batch API, which ``vllm run-batch`` reads and writes too.
A request line is ``{"custom_id", "method": "POST", "url", "body"}``; an output
or error line is ``{"id", "custom_id", "response": {"status_code", "request_id",
"body"} | null, "error": {"code", "message"} | null}`` (``vllm run-batch``
writes its errors into the output file, with ``error`` a string or its error
response and no body).

:class:`PartWriter` splits requests over files at the documented limits of one
input file (50,000 requests, 200 MB); :func:`read_output_lines` streams a file
and names ``file:line`` for a line that is not an output line;
:func:`line_result` reads one line into the :class:`CallResult` a live call
would have produced, through the same answer parser and failure categories.
This is the shared parser of Batch API output for every part of judgekit that
reads such files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from judgekit.errors import InputError
from judgekit.types import Scale

if TYPE_CHECKING:
    from judgekit.clients.openai_client import CallResult

__all__ = [
    "CHAT_COMPLETIONS_URL", "MAX_FILE_BYTES", "MAX_FILE_REQUESTS", "OutputLine", "PartWriter",
    "WrittenPart", "line_result", "parse_output_line", "read_output_lines", "request_line",
]

#: The endpoint every request line names (the Batch API's and ``vllm run-batch``'s).
CHAT_COMPLETIONS_URL = "/v1/chat/completions"
#: Documented limits of one Batch API input file: 50,000 requests and 200 MB.
MAX_FILE_REQUESTS = 50_000
MAX_FILE_BYTES = 200 * 1000 * 1000


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One request line (UTF-8, newline-terminated) for the chat completions endpoint."""
    line = {"custom_id": custom_id, "method": "POST", "url": CHAT_COMPLETIONS_URL, "body": body}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


@dataclass(frozen=True)
class WrittenPart:
    """One finished input file: part number (1-based), path, request count, size, sha256."""

    part: int
    path: Path
    n_requests: int
    bytes: int
    sha256: str


def part_path(first: Path, part: int) -> Path:
    """``req.jsonl`` for part 1, then ``req.2.jsonl``, ``req.3.jsonl``..."""
    return first if part == 1 else first.with_name(f"{first.stem}.{part}{first.suffix}")


class PartWriter:
    """Writes request lines to ``first``, starting a new file before a limit is passed.

    Streams: one open file and its running hash, nothing per line is kept.
    :meth:`discard` removes every file written (a failed prepare leaves none).
    """

    def __init__(self, first: Path, *, max_requests: int = MAX_FILE_REQUESTS,
                 max_bytes: int = MAX_FILE_BYTES) -> None:
        if max_requests < 1 or max_bytes < 1:
            raise ValueError("file limits must be >= 1")
        self.first, self.max_requests, self.max_bytes = first, max_requests, max_bytes
        self.parts: list[WrittenPart] = []
        self._handle: IO[bytes] | None = None
        self._part = 0
        self._n = 0
        self._bytes = 0
        self._hash = hashlib.sha256()

    @property
    def part(self) -> int:
        """The part the next line goes to, once :meth:`write` has chosen it."""
        return self._part

    def write(self, line: bytes) -> int:
        """Write one line; returns the part (file number) it went to."""
        if len(line) > self.max_bytes:
            raise InputError(f"one request is {len(line)} bytes, more than the "
                             f"{self.max_bytes} a batch file may hold")
        if (self._handle is None or self._n >= self.max_requests
                or self._bytes + len(line) > self.max_bytes):
            self._finish_part()
            self._part += 1
            path = part_path(self.first, self._part)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = path.open("wb")
        self._handle.write(line)
        self._hash.update(line)
        self._n += 1
        self._bytes += len(line)
        return self._part

    def _finish_part(self) -> None:
        if self._handle is None:
            return
        self._handle.close()
        self.parts.append(WrittenPart(self._part, part_path(self.first, self._part), self._n,
                                      self._bytes, self._hash.hexdigest()))
        self._handle, self._n, self._bytes, self._hash = None, 0, 0, hashlib.sha256()

    def close(self) -> list[WrittenPart]:
        """Finish the last file; the parts written."""
        self._finish_part()
        return self.parts

    def discard(self) -> None:
        """Close and delete every file written so far."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        for part in range(1, self._part + 1):
            part_path(self.first, part).unlink(missing_ok=True)
        self.parts = []


@dataclass(frozen=True)
class OutputLine:
    """One line of a Batch API output or error file."""

    custom_id: str
    status_code: int | None
    body: Any
    error: dict[str, Any] | None
    where: str


def parse_output_line(text: str, where: str) -> OutputLine:
    """Parse one output/error line; ``where`` (``file:line``) starts any error message."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(data).__name__}")
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        raise InputError(f"{where}: no custom_id")
    response, error = data.get("response"), _error_object(data.get("error"))
    if response is not None and not isinstance(response, dict):
        raise InputError(f"{where}: response must be an object or null")
    if response is None and error is None:
        raise InputError(f"{where}: neither a response nor an error")
    status = response.get("status_code") if response is not None else None
    if response is not None and (not isinstance(status, int) or isinstance(status, bool)):
        raise InputError(f"{where}: response.status_code must be an integer")
    body = response.get("body") if response is not None else None
    return OutputLine(custom_id, status, body, error, where)


def _error_object(error: Any) -> dict[str, Any] | None:
    """A line's ``error`` as ``{"code", "message"}``, whatever shape the engine wrote.

    OpenAI writes ``{"code", "message"}``; ``vllm run-batch`` writes a plain
    string, or its error response (``{"error": {...}}`` or ``{"object":
    "error", "message", "code"}``).
    """
    if error is None:
        return None
    if isinstance(error, dict):
        inner = error.get("error")
        found = inner if isinstance(inner, dict) else error
        return {"code": found.get("code") or found.get("type"),
                "message": str(found.get("message") or "")}
    return {"code": None, "message": str(error)}


def read_output_lines(path: Path) -> Iterator[OutputLine]:
    """Stream the lines of an output or error file (blank lines skipped).

    A line that is not UTF-8 (a raw surrogate's bytes among them) is named by
    its number; JSON-escaped text of any kind is read, and made safe to store
    where it is stored.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path}:{number}: not UTF-8 text (byte "
                                 f"0x{raw[exc.start]:02x} at column {exc.start + 1})") from None
            if text.strip():
                yield parse_output_line(text, f"{path}:{number}")


#: Error codes of lines the provider never ran, and the category each is stored as.
_NOT_RUN = {
    "batch_expired": ("timeout", "the batch expired before this request ran"),
    "batch_cancelled": ("api_error", "the batch was cancelled before this request ran"),
}


def line_result(line: OutputLine, scale: Scale, *, structured: bool,
                secrets: Sequence[str | None] = ()) -> CallResult:
    """What one output line says about its call, as a live call's :class:`CallResult`.

    A 200 answer is parsed like a live answer (status, label, reasoning, tokens,
    confidence); an error status is categorised like the live HTTP error (429
    rate_limited, 408 timeout, others api_error); a request the provider never
    ran (expired, cancelled) is a transient failure, judged again next time.
    ``secrets`` (the API key) are masked in every text kept, as on the live path.
    """
    import httpx2
    import openai

    from judgekit.clients.openai_client import CallResult, completion_result
    from judgekit.clients.retry import Failure, classify

    if line.status_code == 200 and isinstance(line.body, dict):
        return completion_result(line.body, scale, structured=structured, secrets=secrets)
    if line.status_code is not None and line.status_code != 200:
        request = httpx2.Request("POST", f"http://batch{CHAT_COMPLETIONS_URL}")
        body = line.body if isinstance(line.body, dict) else (
            {"error": line.error} if line.error is not None else None)
        exc = openai.APIStatusError(
            f"HTTP {line.status_code}", response=httpx2.Response(line.status_code,
                                                                 request=request),
            body=body,
        )
        return CallResult(None, classify(exc).redacted(secrets))
    error = line.error or {}
    code = str(error.get("code") or "error")
    message = str(error.get("message") or "")
    status, meaning = _NOT_RUN.get(code, ("api_error", "the batch did not answer this request"))
    detail = f"{meaning} ({code}{': ' + message[:300] if message else ''})"
    failure = Failure(status, detail, retryable=True)  # type: ignore[arg-type]
    return CallResult(None, failure.redacted(secrets))
