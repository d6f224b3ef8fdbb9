"""Tokens on every request: ``Authorization: Bearer <token>``, or the login cookie.

A missing or unknown token is 401 (with ``WWW-Authenticate: Bearer``); a known
token whose role lacks the permission is 403. Browsers cannot send a header when
they open a page, so the ``/login`` form trades the token for an HttpOnly cookie
(:mod:`judgekit.serve.login`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from judgekit.store import Store, open_store
from judgekit.store.access import TokenRecord

#: The cookie ``/login`` sets for browser sessions.
COOKIE_NAME = "judgekit_token"


class StorePool:
    """One store connection per worker thread (SQLite connections are cheap, locks are not).

    FastAPI runs plain ``def`` endpoints in a thread pool; a connection per thread
    lets reads run side by side while writes queue on SQLite's busy timeout, as
    they do between processes.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[Store] = []
        self._lock = threading.Lock()

    def get(self) -> Store:
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = open_store(self.path)
            self._local.store = store
            with self._lock:
                self._all.append(store)
        return store

    def close(self) -> None:
        with self._lock:
            for store in self._all:
                store.close()
            self._all.clear()


def store_dependency(request: Request) -> Iterator[Store]:
    pool: StorePool = request.app.state.pool
    yield pool.get()


def presented_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE_NAME)


def check_token(store: Store, token: str | None, permission: str) -> TokenRecord:
    """The token's record if it is active and grants ``permission``; else 401 or 403."""
    record = store.token_for(token) if token else None
    if record is None:
        raise HTTPException(
            status_code=401,
            detail="a valid token is required (Authorization: Bearer <token>, or log in at "
            "/login)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not record.may(permission):
        raise HTTPException(status_code=403,
                            detail=f"a {record.role!r} token may not {permission} here")
    return record


def require(permission: str) -> Callable[..., TokenRecord]:
    """A dependency: the caller's token, which must grant ``permission``."""

    def check(request: Request, store: Annotated[Store, Depends(store_dependency)]) -> TokenRecord:
        return check_token(store, presented_token(request), permission)

    return check


def check_any(store: Store, token: str | None, permissions: tuple[str, ...]) -> TokenRecord:
    """:func:`check_token` satisfied by any one of ``permissions``: a missing or unknown
    token is 401 at once; a token no permission admits gets the last refusal (403)."""
    refused: HTTPException | None = None
    for permission in permissions:
        try:
            return check_token(store, token, permission)
        except HTTPException as exc:
            if exc.status_code == 401:
                raise
            refused = exc
    assert refused is not None
    raise refused


def require_any(*permissions: str) -> Callable[..., TokenRecord]:
    """Like :func:`require`, satisfied by any one of ``permissions``."""

    def check(request: Request, store: Annotated[Store, Depends(store_dependency)]) -> TokenRecord:
        return check_any(store, presented_token(request), permissions)

    return check
