"""The checks every request passes before the application reads a byte of its body.

FastAPI reads (and parses) a request's body before it runs the route's token
check, so a 150 MB POST without a token used to cost the server half a gigabyte
before its 401. :class:`RequestGuard` sits in front of the application, as plain
ASGI, and for every request that can change something (any method but GET, HEAD
and OPTIONS) and every websocket handshake:

1. refuses an ``Origin`` that is neither the server's own (scheme and ``Host``) nor
   one of ``--allow-origin``: 403 for a request, a refused handshake for a websocket.
   Browsers always send ``Origin`` on these, so a page on another port or a sibling
   subdomain cannot use an annotator's cookie (SameSite does not look at ports).
   A client that sends no ``Origin`` (curl, CI, the ``openai`` client) is not a
   browser and carries its own token;
2. refuses a request without an active token with 401 (``POST /login`` carries
   its token in the body it is about);
3. refuses a body over ``--max-body`` with 413 naming the limit: at once when
   ``Content-Length`` says so, else as soon as the streamed body passes it.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judgekit.serve.auth import COOKIE_NAME, StorePool
from judgekit.serve.limits import LOGIN_MAX_BODY, ServeLimits, describe_size

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class ErrorResponse(JSONResponse):
    """An error as ASCII JSON: a lone surrogate echoed from a request (``"\\ud800"``) stays
    an escape instead of failing the UTF-8 encoding of the answer with a 500."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def origin_allowed(scope: Scope, limits: ServeLimits) -> bool:
    """Whether the request's ``Origin`` (if any) is the server's own or an allowed one."""
    headers = Headers(scope=scope)
    origin = headers.get("origin")
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme", "http"),
                                                  scope.get("scheme", "http"))
    own = f"{scheme}://{headers.get('host', '')}".lower()
    return origin == own or origin in {o.rstrip("/").lower() for o in limits.allowed_origins}


def presented(scope: Scope) -> str | None:
    """The token of a bearer header or the login cookie (as :func:`auth.presented_token`)."""
    headers = Headers(scope=scope)
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE_NAME and value:
            return value
    return None


class RequestGuard:
    """Origin, token and body-size checks before the application (see the module doc)."""

    def __init__(self, app: ASGIApp, pool: StorePool, limits: ServeLimits) -> None:
        self.app, self.pool, self.limits = app, pool, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if not origin_allowed(scope, self.limits):
                await receive()  # the handshake's websocket.connect
                await send({"type": "websocket.close", "code": 4403})  # 403 to the client
                return
        elif scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            refusal = await self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            receive = self._capped(receive, self._limit(scope))
        await self.app(scope, receive, send)

    def _limit(self, scope: Scope) -> int:
        return LOGIN_MAX_BODY if scope["path"] == "/login" else self.limits.max_body

    async def _refusal(self, scope: Scope) -> ErrorResponse | None:
        if not origin_allowed(scope, self.limits):
            origin = Headers(scope=scope).get("origin", "")[:100]
            return ErrorResponse({"detail": f"origin {origin!r} may not send this request "
                                  "(judgekit serve --allow-origin)"}, status_code=403)
        if scope["path"] != "/login":
            token = presented(scope)
            record = None if token is None else await run_in_threadpool(self._active, token)
            if record is None:
                return ErrorResponse(
                    {"detail": "a valid token is required (Authorization: Bearer <token>)"},
                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
        length = Headers(scope=scope).get("content-length")
        limit = self._limit(scope)
        if length is not None and (not length.strip().isdigit() or int(length) > limit):
            return _too_large(limit)
        return None

    def _active(self, token: str) -> object | None:
        return self.pool.get().token_for(token)

    @staticmethod
    def _capped(receive: Receive, limit: int) -> Receive:
        """``receive`` that refuses with 413 once more than ``limit`` body bytes arrived."""
        seen = 0

        async def capped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, detail=_too_large_text(limit))
            return message

        return capped


def _too_large_text(limit: int) -> str:
    return (f"the request body is over the limit of {describe_size(limit)} "
            "(judgekit serve --max-body); send fewer records per request")


def _too_large(limit: int) -> ErrorResponse:
    return ErrorResponse({"detail": _too_large_text(limit)}, status_code=413,
                         headers={"Connection": "close"})


__all__ = ["SAFE_METHODS", "ErrorResponse", "RequestGuard", "origin_allowed"]
