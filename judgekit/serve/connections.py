"""Connections: slow clients are dropped, their number is capped, resource errors logged once.

uvicorn keeps a connection that sends its request headers one byte at a time for
as long as the client likes (its keep-alive timer stops at the first byte), so 300
such connections used to hold every file descriptor of a server limited to 256,
shut out valid tokens, and make asyncio log "Too many open files" on every retry.
Here:

- :func:`protocol_class` gives uvicorn's h11 protocol a deadline: a request's
  headers and body must arrive within ``request_timeout`` seconds of the
  connection opening (or of the previous response); else the client gets ``408``
  and the connection is closed. Time the application spends answering does not
  count; websockets are not affected once upgraded;
- the same protocol closes a connection at once when ``max_connections`` are open
  already (the file descriptor is freed immediately, not after a timeout);
- :class:`ResourceErrorsOnce` lets one "out of file descriptors" error through,
  as one line, and drops the repeats for a minute (then says how many it dropped).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("judgekit.serve")

_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\n"
                     b"connection: close\r\ncontent-length: 47\r\n\r\n"
                     b"the request did not arrive in time; try again\r\n")
#: The client's h11 states once its request is entirely in (or the connection is over).
_REQUEST_IN = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.SWITCHED_PROTOCOL)
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def protocol_class(request_timeout: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a request deadline and a connection cap (see module doc)."""

    class DeadlineH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.close()  # connection_lost forgets it
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state in _REQUEST_IN:
                self._disarm()  # the whole request is in: the application's time is its own

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request on this connection has the same deadline

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(request_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE,
                                                                            h11.SEND_BODY):
                return
            started = self.cycle is not None and self.cycle.response_started
            if not started and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()

    return DeadlineH11Protocol


class ResourceErrorsOnce(logging.Filter):
    """Lets the first "too many open files" (or out-of-memory socket) error through as one
    line, then drops the same error for ``quiet_s`` seconds and counts what it dropped."""

    def __init__(self, quiet_s: float = 60.0) -> None:
        super().__init__()
        self.quiet_s = quiet_s
        self.until = 0.0
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        text = record.getMessage()
        resource = (isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS) or (
            "Too many open files" in text)
        if not resource:
            return True
        now = time.monotonic()
        if now < self.until:
            self.dropped += 1
            return False
        dropped, self.dropped = self.dropped, 0
        self.until = now + self.quiet_s
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else text
        record.msg = ("resource error: %s; new connections wait until some close (lower "
                      "--max-connections or raise the open-files limit); repeats are not "
                      "logged for %d s%s")
        record.args = (reason, int(self.quiet_s),
                       f" ({dropped} dropped since the last one)" if dropped else "")
        record.exc_info = None
        record.exc_text = None
        return True


def install_filter(names: tuple[str, ...] = ("", "uvicorn", "uvicorn.error", "asyncio")) -> None:
    """Put one :class:`ResourceErrorsOnce` on every handler of these loggers."""
    once = ResourceErrorsOnce()
    for name in names:
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(once)


__all__ = ["ResourceErrorsOnce", "install_filter", "protocol_class"]
