"""Live browser sessions: how many may run, who has them, and how each one ends.

Each browser session is one app process on the server (about 40 MB), so:

- **caps**: at most ``sessions_per_token`` live sessions per token and
  ``max_sessions`` in all (``judgekit serve --max-sessions``); one more is accepted
  and closed at once with code 4429 and the reason;
- **revocation**: every ``revocation_check_s`` seconds, and before every key press
  is passed on, the session's token is looked up again; once it is revoked no key
  reaches the app (so no label is written) and the session is closed with 4401
  within seconds (``judgekit tokens revoke`` promises "from the next request on");
- **idle**: a session without a key press or resize for ``idle_s`` is closed (4408);
- **size**: a ``resize`` is capped at :data:`~judgekit.serve.limits.MAX_COLUMNS` x
  :data:`~judgekit.serve.limits.MAX_ROWS` (6000 x 3000 used to cost 163 MB);
- **clean end**: a browser that goes away ends the relay quietly (the app is told
  to quit, and killed if it does not within seconds): one log line, no traceback.

The open sessions are written to the store (:mod:`.live_sessions`), so
``judgekit queues`` and ``GET /api/v1/queues`` can say how many are open.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from judgekit.serve.auth import StorePool
from judgekit.serve.limits import MAX_COLUMNS, MAX_ROWS, ServeLimits
from judgekit.serve.live_sessions import SESSIONS_KEY
from judgekit.store.access import TokenRecord

log = logging.getLogger("judgekit.serve")

#: Seconds the app process has to quit before it is killed.
STOP_S = 10.0
_ids = count(1)


@dataclass
class LiveSession:
    """One open browser session."""

    token_id: int
    annotator: str
    queue: str
    started: float = field(default_factory=time.time)
    last_input: float = field(default_factory=time.monotonic)
    id: int = field(default_factory=lambda: next(_ids))


class SessionRegistry:
    """The server's live sessions (touched from the event loop only: no lock needed)."""

    def __init__(self, pool: StorePool, limits: ServeLimits) -> None:
        self.pool, self.limits = pool, limits
        self.live: dict[int, LiveSession] = {}

    def refusal(self, token: TokenRecord) -> str | None:
        """Why one more session of ``token`` may not open, or None."""
        if len(self.live) >= self.limits.max_sessions:
            return (f"the server has {len(self.live)} open sessions, its limit "
                    "(judgekit serve --max-sessions); close one or try later")
        mine = sum(s.token_id == token.id for s in self.live.values())
        if mine >= self.limits.sessions_per_token:
            return (f"{token.name} has {mine} open sessions, the limit per token; "
                    "close one (another tab or browser) first")
        return None

    async def add(self, session: LiveSession) -> None:
        self.live[session.id] = session
        await self._publish()

    async def remove(self, session: LiveSession) -> None:
        if self.live.pop(session.id, None) is not None:
            await self._publish()

    async def _publish(self) -> None:
        rows = [{"queue": s.queue, "annotator": s.annotator, "started": s.started}
                for s in self.live.values()]
        text = json.dumps({"pid": os.getpid(), "sessions": rows})
        with suppress(Exception):  # a busy store must not end a session; the next change retries
            await run_in_threadpool(lambda: self.pool.get().set_meta(SESSIONS_KEY, text))

    def clear(self) -> None:
        """Forget sessions a previous server left in the store (it was killed, say)."""
        with suppress(Exception):
            self.pool.get().set_meta(SESSIONS_KEY, json.dumps({"pid": os.getpid(),
                                                               "sessions": []}))


class Relay:
    """Keys in, screen out, for one session, until the browser, the app, a revocation
    or the idle limit ends it."""

    def __init__(self, websocket: WebSocket, service: Any, session: LiveSession,
                 token: str, pool: StorePool, limits: ServeLimits) -> None:
        self.websocket, self.service, self.session = websocket, service, session
        self.token, self.pool, self.limits = token, pool, limits
        self.revoked = False

    async def run(self) -> None:
        watch = asyncio.create_task(self._watch())
        try:
            await self._relay()
        except (WebSocketDisconnect, RuntimeError, ValueError, KeyError, IndexError, TypeError):
            pass  # the browser closed, or sent something that is not the protocol
        finally:
            watch.cancel()
            with suppress(asyncio.CancelledError):
                await watch
            await self.stop()

    async def _relay(self) -> None:
        while True:
            envelope = json.loads(await self.websocket.receive_text())
            kind = envelope[0]
            data: Any = envelope[1] if len(envelope) > 1 else None
            if kind == "stdin":
                if not await self._still_allowed():
                    return
                self.session.last_input = time.monotonic()
                await self.service.send_bytes(str(data).encode("utf-8"))
            elif kind == "resize":
                self.session.last_input = time.monotonic()
                await self.service.set_terminal_size(*terminal_size(data["width"],
                                                                    data["height"]))
            elif kind == "ping":
                await self.websocket.send_text(json.dumps(["pong", data]))
            elif kind == "blur":
                await self.service.blur()
            elif kind == "focus":
                await self.service.focus()

    async def _still_allowed(self) -> bool:
        """Whether the token is still active (else the session ends, revoked)."""
        active = await run_in_threadpool(lambda: self.pool.get().token_for(self.token))
        if active is None:
            self.revoked = True
            await self.close(4401, "the token was revoked")
        return active is not None

    async def _watch(self) -> None:
        """End the session once its token is revoked or it has been idle too long."""
        while True:
            await asyncio.sleep(self.limits.revocation_check_s)
            if not await self._still_allowed():
                return
            if time.monotonic() - self.session.last_input > self.limits.idle_s:
                await self.close(4408, "closed after being idle; reload the page to go on")
                return

    async def close(self, code: int, reason: str) -> None:
        with suppress(WebSocketDisconnect, RuntimeError):
            await self.websocket.close(code=code, reason=reason)

    async def stop(self) -> None:
        """Tell the app to quit; kill it if it has not within :data:`STOP_S`."""
        try:
            await asyncio.wait_for(self.service.stop(), STOP_S)
        except (TimeoutError, WebSocketDisconnect, RuntimeError, OSError):
            process = getattr(self.service, "_process", None)
            if process is not None and process.returncode is None:
                with suppress(ProcessLookupError):
                    process.kill()


def terminal_size(width: Any, height: Any) -> tuple[int, int]:
    """A requested terminal size within 10..MAX (a malformed one is the default 80 x 24)."""
    try:
        return (max(10, min(int(width), MAX_COLUMNS)), max(5, min(int(height), MAX_ROWS)))
    except (TypeError, ValueError):
        return 80, 24


def quiet_writer(send: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
    """``send`` that drops what it cannot deliver (the browser went away)."""

    async def write(data: Any) -> None:
        with suppress(WebSocketDisconnect, RuntimeError):
            await send(data)

    return write


__all__ = ["LiveSession", "Relay", "SessionRegistry", "terminal_size"]
