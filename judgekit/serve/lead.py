"""The lead's pages of ``judgekit serve``: a landing page, and adjudication in the browser.

``/`` sends a browser to its page: ``/login`` without a token, ``/annotate`` for
an ``annotate`` token, ``/lead`` for everyone else. ``/lead`` shows a ``read``
token (and ``admin``) per-annotator progress, agreement so far and a link to the
HTML report; it shows every role that may read or adjudicate the items to
adjudicate. ``/adjudicate`` opens ``annotate --adjudicate``'s app in the browser
(the same xterm.js bridge as ``/annotate``) for a token that may adjudicate, under
the token's name. An ``annotate`` token gets none of it: it labels blind and must
not see how its colleagues or the judge labeled.

The page is rendered here, on the server, with every stored string escaped
(:mod:`judgekit.serve.lead_view`); there is no script on it.
"""

from __future__ import annotations

import html
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Request, WebSocket
from fastapi.responses import HTMLResponse, RedirectResponse

from judgekit.serve.api import stored_rubric
from judgekit.serve.auth import (
    COOKIE_NAME,
    StorePool,
    check_any,
    check_token,
    presented_token,
    require,
    require_any,
    store_dependency,
)
from judgekit.serve.lead_view import lead_html
from judgekit.serve.session_launch import session_command
from judgekit.serve.webapp import run_app_session, terminal_page
from judgekit.store import Store
from judgekit.store.access import TokenRecord

router = APIRouter()

#: Any one of these lets a token open ``/lead``.
LEAD_PERMISSIONS = ("read", "adjudicate")

StoreDep = Annotated[Store, Depends(store_dependency)]


def landing_path(record: TokenRecord) -> str:
    """Where a token's browser lands after logging in."""
    return "/lead" if any(record.may(p) for p in LEAD_PERMISSIONS) else "/annotate"


def check_login(store: Store, token: str | None, target: str) -> TokenRecord:
    """The token's record if it may open ``target`` after ``/login``; else 401 or 403.

    ``/`` needs only an active token (it sends each role to its own page); the
    annotate pages need ``annotate``, the lead's pages ``read`` or ``adjudicate``,
    anything else ``read``.
    """
    if target == "/" or target.startswith("/?"):
        record = store.token_for(token) if token else None
        return record if record is not None else check_token(store, None, "read")
    if target.startswith("/annotate"):
        return check_token(store, token, "annotate")
    if target.startswith(("/lead", "/adjudicate")):
        return check_any(store, token, LEAD_PERMISSIONS)
    return check_token(store, token, "read")


def login_target(store: Store, token: str | None, target: str) -> str:
    """Where ``/login`` sends ``token`` asked for ``target`` (``/``: the role's own page),
    once :func:`check_login` lets it in (else 401 or 403)."""
    record = check_login(store, token, target)
    return landing_path(record) if target == "/" else target


@router.get("/", include_in_schema=False)
def root(request: Request, store: StoreDep) -> RedirectResponse:
    """To ``/login`` without an active token, else to the token's page."""
    token = presented_token(request)
    record = store.token_for(token) if token else None
    return RedirectResponse("/login" if record is None else landing_path(record), status_code=303)


@router.get("/lead", include_in_schema=False, response_class=HTMLResponse)
def lead_page(request: Request, store: StoreDep,
              token: Annotated[TokenRecord, Depends(require_any(*LEAD_PERMISSIONS))],
              rubric: str | None = None) -> HTMLResponse:
    """Progress, agreement, the report and the items to adjudicate, as the role may see."""
    rows = list({r["sha256"]: r for r in store.list_rubrics()}.values())  # one row per version
    chosen = None
    if rubric is not None:
        chosen = stored_rubric(store, rubric)
    elif len(rows) == 1:
        chosen = stored_rubric(store, rows[0]["sha256"])
    return HTMLResponse(lead_html(store, token, rows, chosen, request.app.state.report_builds))


@router.get("/adjudicate", include_in_schema=False, response_class=HTMLResponse)
def adjudicate_page(request: Request, store: StoreDep,
                    token: Annotated[TokenRecord, Depends(require("adjudicate"))],
                    rubric: str) -> HTMLResponse:
    """The terminal page of an adjudication session over the rubric's items to review
    (a note with a link back when there is none: the app would only print an error)."""
    from judgekit.review import review_items

    found = stored_rubric(store, rubric)
    if not review_items(store, found):
        return HTMLResponse(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>judgekit: nothing to "
            "adjudicate</title></head><body style=\"font-family: sans-serif\"><p>Nothing to "
            f"adjudicate for {html.escape(found.name)}: no item has disagreeing annotators or "
            f'a flag.</p><p><a href="/lead?rubric={quote(found.sha256)}">Back to the lead '
            "page</a></p></body></html>\n")
    scheme = "wss" if request.url.scheme == "https" else "ws"
    ws_url = f"{scheme}://{request.url.netloc}/adjudicate/ws/{quote(found.sha256, safe='')}"
    back = f"/lead?rubric={quote(found.sha256)}"
    return terminal_page(f"judgekit: adjudicate {found.name}", ws_url, back,
                         "Back to the lead page")


@router.websocket("/adjudicate/ws/{rubric_hash}")
async def adjudicate_socket(websocket: WebSocket, rubric_hash: str) -> None:
    """One adjudication session: the cookie's token must adjudicate (Origin: the guard)."""
    pool: StorePool = websocket.app.state.pool
    store = pool.get()
    presented = websocket.cookies.get(COOKIE_NAME)
    try:
        token = check_token(store, presented, "adjudicate")
    except HTTPException as exc:
        await websocket.close(code=4000 + exc.status_code)
        return
    if rubric_hash not in {r["sha256"] for r in store.list_rubrics()}:
        await websocket.close(code=4404)
        return
    assert presented is not None
    command = session_command("judgekit.serve.adjudicate_session", pool.path, "rubric",
                              rubric_hash, token.name)
    await run_app_session(websocket, token, presented, f"adjudicate:{rubric_hash[:12]}",
                          command)


__all__ = ["LEAD_PERMISSIONS", "check_login", "landing_path", "login_target", "router"]
