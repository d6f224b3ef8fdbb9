"""Browser login: a token typed into a form becomes an HttpOnly cookie.

Browsers cannot send an ``Authorization`` header when they open a page, so
``GET /login`` shows a form and ``POST /login`` trades the token for a cookie
and redirects to ``next``. The token never travels in a URL: proxies log query
strings and a login URL sits in the browser history, so ``/login?token=…`` no
longer logs anyone in (it shows the form). The form is a state-changing request
like any other: the guard refuses it from a foreign ``Origin`` (no login CSRF).

The cookie is ``HttpOnly`` and ``SameSite=Strict``, and ``Secure`` when the
request came over https (directly, or through a proxy in ``--forwarded-allow-ips``
that says so) or the server listens beyond loopback (where TLS must be in front).
"""

from __future__ import annotations

import html
from urllib.parse import parse_qs

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from judgekit.serve.auth import COOKIE_NAME, StorePool
from judgekit.serve.lead import login_target
from judgekit.serve.limits import ServeLimits

router = APIRouter()

_FORM = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>judgekit: log in</title></head>
<body style="font-family: sans-serif; max-width: 32em; margin: 3em auto">
<h1>judgekit</h1>{message}
<form method="post" action="/login">
<label>Your token <input type="password" name="token" autocomplete="current-password"
  required autofocus size="48"></label>
<input type="hidden" name="next" value="{next}">
<button type="submit">Log in</button>
</form></body></html>
"""


def safe_next(target: str | None) -> str:
    """``target`` if it is a path on this server, else ``/`` (no open redirect), which
    sends each role to its own page (:func:`judgekit.serve.lead.login_target`)."""
    if (target and target.startswith("/") and not target.startswith(("//", "/\\"))
            and "\\" not in target[:2] and not any(c in target for c in "\r\n")):
        return target
    return "/"


def _form(next_path: str, message: str = "", status: int = 200) -> HTMLResponse:
    note = f"<p><strong>{html.escape(message)}</strong></p>" if message else ""
    return HTMLResponse(_FORM.format(message=note, next=html.escape(next_path)),
                        status_code=status)


@router.get("/login", include_in_schema=False)
def login_form(next: str | None = None, token: str | None = None) -> HTMLResponse:
    """The login form; a token in the URL is not used (it would be logged and kept)."""
    message = ("Tokens are no longer accepted in the address: paste yours below."
               if token is not None else "")
    return _form(safe_next(next), message)


@router.post("/login", include_in_schema=False)
async def login(request: Request) -> Response:
    """Trade the form's token for an HttpOnly cookie, then go to ``next``."""
    fields = parse_qs((await request.body()).decode("utf-8", "replace"))
    token = (fields.get("token") or [""])[0].strip()
    asked = safe_next((fields.get("next") or [""])[0])
    pool: StorePool = request.app.state.pool
    try:
        target = await run_in_threadpool(
            lambda: login_target(pool.get(), token or None, asked))
    except HTTPException as exc:
        message = ("That token is not valid (revoked, mistyped, or from another server)."
                   if exc.status_code == 401 else str(exc.detail))
        return _form(asked, message, exc.status_code)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE_NAME, token, httponly=True, samesite="strict",
                        secure=secure_cookie(request))
    return response


def secure_cookie(request: Request) -> bool:
    """Whether the login cookie gets ``Secure`` (https, or listening beyond loopback)."""
    limits: ServeLimits = request.app.state.limits
    return request.url.scheme == "https" or bool(limits.secure_cookie)


__all__ = ["router", "safe_next", "secure_cookie"]
