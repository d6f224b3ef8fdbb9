"""Bounds on one attempt: a total deadline and a maximum answer size.

An HTTP client's timeout bounds each read, so a server that sends a few bytes
every half second holds a call for as long as it likes, and an endless chunked
body grows memory until the process dies. judgekit bounds the attempt itself:

- :func:`deadline` ends an attempt that has not delivered its whole answer
  within ``--timeout`` seconds (:class:`AttemptDeadlineExceeded`, category
  ``timeout``, retried like any timeout);
- :func:`limit_response_size` makes the HTTP client stop reading once a body
  passes ``--max-response-bytes`` (:class:`ResponseTooLarge`, category
  ``api_error``, not retried within the run: the server would send it again).
  Bodies are requested uncompressed, so the bytes counted are the bytes kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import httpx2

T = TypeVar("T")


class AttemptDeadlineExceeded(TimeoutError):
    """The whole answer did not arrive within the attempt's deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s (--timeout bounds the "
                         "whole attempt)")
        self.seconds = seconds


class ResponseTooLarge(Exception):
    """The answer's body passed the size limit; reading stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response larger than {limit:,} bytes (--max-response-bytes); "
                         "reading stopped")
        self.limit = limit


async def deadline(seconds: float, attempt: Callable[[], Awaitable[T]]) -> T:
    """Run ``attempt`` (one request and its whole answer) within ``seconds`` or raise."""
    try:
        async with asyncio.timeout(seconds):
            return await attempt()
    except TimeoutError as exc:
        if isinstance(exc, AttemptDeadlineExceeded):
            raise
        raise AttemptDeadlineExceeded(seconds) from exc


class _BoundedStream(httpx2.AsyncByteStream):
    """A response body that raises :class:`ResponseTooLarge` once it passes ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner, self._limit, self._seen = inner, limit, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._seen += len(chunk)
            if self._seen > self._limit:
                raise ResponseTooLarge(self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def limit_response_size(client: httpx2.AsyncClient, limit: int) -> None:
    """Make ``client`` refuse any response body over ``limit`` bytes (a response hook).

    A ``Content-Length`` over the limit is refused before reading; otherwise the
    body stream counts bytes as they arrive, so an endless chunked body stops at
    the limit instead of filling memory.
    """

    async def bound(response: httpx2.Response) -> None:
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise ResponseTooLarge(limit)
        stream = response.stream
        if isinstance(stream, httpx2.AsyncByteStream):
            response.stream = _BoundedStream(stream, limit)

    client.event_hooks["response"] = [*client.event_hooks["response"], bound]
    client.headers["Accept-Encoding"] = "identity"


__all__ = ["AttemptDeadlineExceeded", "ResponseTooLarge", "deadline", "limit_response_size"]
