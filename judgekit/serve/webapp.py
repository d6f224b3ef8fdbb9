"""The annotate app in a browser: the same Textual app, one process per session.

textual-serve's terminal bridge (its ``AppService`` and the xterm.js page) runs
``python -m judgekit.serve.session`` for each browser session and relays the
screen over a websocket. The server, not the browser, decides who labels: the
annotator is the name of the session's token (from the ``/login`` cookie) and
the queue must be assigned to them, so nobody types a name and nobody opens
another person's queue. The session is always blind.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from judgekit.serve.auth import COOKIE_NAME, StorePool, check_token, presented_token
from judgekit.serve.caches import ServeCaches
from judgekit.serve.session_launch import session_command
from judgekit.serve.sessions import (
    LiveSession,
    Relay,
    SessionRegistry,
    quiet_writer,
    terminal_size,
)
from judgekit.store import Store
from judgekit.store.access import TokenRecord

router = APIRouter()
log = logging.getLogger("judgekit.serve")


def textual_serve_static() -> Path:
    """textual-serve's bundled xterm.js page assets."""
    import textual_serve

    return Path(textual_serve.__file__).parent / "static"


class TokenStaticFiles(StaticFiles):
    """The page assets, for holders of an active token only (like every other route).

    The assets are public code, but a service that answers strangers tells them what
    it is; the browser sends the login cookie with them anyway.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            pool: StorePool = request.app.state.pool
            if await run_in_threadpool(_active, pool, presented_token(request)) is None:
                response = JSONResponse(
                    {"detail": "a valid token is required"}, status_code=401,
                    headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def _active(pool: StorePool, token: str | None) -> object | None:
    return pool.get().token_for(token) if token else None


def assigned_queues(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Every assigned queue's metadata by annotator, newest first (reads every entry)."""
    by_annotator: dict[str, list[dict[str, Any]]] = {}
    for name in reversed(store.list_queues()):
        found = store.get_queue(name)
        annotator = None if found is None else found[0]["params"].get("annotator")
        if found is not None and isinstance(annotator, str):
            by_annotator.setdefault(annotator, []).append(found[0])
    return by_annotator


def my_queues(store: Store, annotator: str,
              caches: ServeCaches | None = None) -> list[dict[str, Any]]:
    """The queues assigned to ``annotator``, newest rubric version first.

    With ``caches`` (the server's) they are read again only after a queue changed.
    """
    if caches is None:
        return assigned_queues(store).get(annotator, [])
    return caches.assigned_queues(store, annotator, assigned_queues)


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/static/textual/css/xterm.css">
<script>{script}</script>
<script src="/static/textual/js/textual.js"></script>
<style>body {{ background: #0c181f; margin: 0; }} #terminal {{ height: 100vh; }}
#judgekit-notice {{ position: fixed; top: 0; left: 0; right: 0; padding: .6em 1em; z-index: 10;
  background: #f4d35e; color: #111; font: 16px sans-serif; }}</style>
</head><body>
<div id="judgekit-notice" role="status" hidden><span></span>
  <a href="{back}">{back_text}</a></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{ws_url}"
     data-font-size="16"></div>
</body></html>
"""

#: The page's own script, before textual.js: focus the terminal once the session is open
#: (keys used to go nowhere until a click), and say how the session ended instead of
#: leaving a page that looks live: 1000 is the app quitting (every key is saved as it
#: is pressed), 4xxx a refusal with its reason, a handshake refused a refusal (no reload
#: loop), anything else a lost server (reload once it answers again). textual.js keeps its
#: websocket to itself, hence the subclass.
_SESSION_JS = """(function () {
  var Native = window.WebSocket;
  function show(text) {
    var box = document.getElementById("judgekit-notice");
    box.querySelector("span").textContent = text + " ";
    box.hidden = false;
  }
  function focusTerminal(tries) {
    var area = document.querySelector("#terminal .xterm-helper-textarea");
    if (area) { area.focus(); } else if (tries > 0) { setTimeout(focusTerminal, 100, tries - 1); }
  }
  function whenBack() {
    fetch(location.href, {cache: "no-store"}).then(function (r) {
      if (r.ok) { location.reload(); }
      else if (r.status === 401 || r.status === 403) {
        show("The server is back but no longer accepts your token: log in again.");
      } else { setTimeout(whenBack, 2000); }
    }, function () { setTimeout(whenBack, 2000); });
  }
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      var opened = false;
      this.addEventListener("open", function () { opened = true; focusTerminal(50); });
      this.addEventListener("close", function (e) {
        if (e.code === 1000) { show("Saved; you can close this tab."); }
        else if (e.code >= 4000) { show(e.reason || "The session was closed."); }
        else if (!opened) { show("The server refused the session (reload to try again)."); }
        else { show("Disconnected, reconnecting..."); setTimeout(whenBack, 1000); }
      });
    }
  };
})();"""

_LIST = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>judgekit: your queues</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 2em auto">
<h1>{name}'s labeling queues</h1>{body}</body></html>
"""


@router.get("/annotate", include_in_schema=False)
def annotate_page(request: Request, queue: str | None = None) -> HTMLResponse:
    """The terminal page for one of the caller's queues (a list when there are several)."""
    pool: StorePool = request.app.state.pool
    store = pool.get()
    token = check_token(store, presented_token(request), "annotate")
    queues = my_queues(store, token.name, request.app.state.caches)
    if queue is None and len(queues) == 1:
        queue = queues[0]["name"]
    if queue is None:
        items = "".join(
            f'<li><a href="/annotate?queue={quote(q["name"])}">{html.escape(q["name"])}</a> '
            f'({q["size"]} items)</li>' for q in queues
        ) or "<p>No queue is assigned to you yet (ask your lead: judgekit queue assign).</p>"
        body = f"<ul>{items}</ul>" if queues else items
        if token.may("read") or token.may("adjudicate"):
            body += '<p><a href="/lead">The lead page</a>: progress, agreement, adjudication.</p>'
        return HTMLResponse(_LIST.format(name=html.escape(token.name), body=body))
    if queue not in {q["name"] for q in queues}:
        raise HTTPException(403, detail=f"queue {queue!r} is not assigned to {token.name}")
    scheme = "wss" if request.url.scheme == "https" else "ws"
    ws_url = f"{scheme}://{request.url.netloc}/annotate/ws/{quote(queue, safe='')}"
    return terminal_page(f"judgekit: {queue}", ws_url, "/annotate", "Back to your queues")


def terminal_page(title: str, ws_url: str, back: str, back_text: str) -> HTMLResponse:
    """The xterm.js page of one app session, with a link back shown once it has ended."""
    return HTMLResponse(_PAGE.format(title=html.escape(title), ws_url=html.escape(ws_url),
                                     script=_SESSION_JS, back=html.escape(back),
                                     back_text=html.escape(back_text)))


@router.websocket("/annotate/ws/{queue:path}")
async def annotate_socket(websocket: WebSocket, queue: str) -> None:
    """One app session (its Origin was checked by the guard): see :mod:`.sessions`."""
    pool: StorePool = websocket.app.state.pool
    store = pool.get()
    presented = websocket.cookies.get(COOKIE_NAME)
    try:
        token = check_token(store, presented, "annotate")
    except HTTPException:
        await websocket.close(code=4401)
        return
    if queue not in {q["name"] for q in my_queues(store, token.name,
                                                  websocket.app.state.caches)}:
        await websocket.close(code=4403)
        return
    assert presented is not None
    command = session_command("judgekit.serve.session", pool.path, "queue", queue, token.name)
    await run_app_session(websocket, token, presented, queue, command)


async def run_app_session(websocket: WebSocket, token: TokenRecord, presented: str,
                          queue: str, command: str) -> None:
    """Accept the (already authorised) websocket and relay ``command``'s app over it,
    within the session caps, as ``token``'s session on ``queue``."""
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager

    pool: StorePool = websocket.app.state.pool
    registry: SessionRegistry = websocket.app.state.sessions
    await websocket.accept()
    refusal = registry.refusal(token)
    if refusal is not None:
        log.info("session refused for %s: %s", token.name, refusal)
        await websocket.close(code=4429, reason=refusal[:120])
        return
    session = LiveSession(token.id, token.name, queue)
    close = quiet_writer(lambda _: websocket.close())
    service = AppService(
        command,
        write_bytes=quiet_writer(websocket.send_bytes), write_str=quiet_writer(websocket.send_text),
        close=lambda: close(None), download_manager=DownloadManager(),
    )
    await registry.add(session)
    try:
        await service.start(*terminal_size(websocket.query_params.get("width", 80),
                                           websocket.query_params.get("height", 24)))
        await Relay(websocket, service, session, presented, pool,
                    websocket.app.state.limits).run()
    finally:
        await registry.remove(session)
