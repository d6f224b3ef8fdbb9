"""Browser login over real HTTP on 127.0.0.1: a POSTed form, never a token in a URL.

``GET /login?token=T`` used to log in: the token sat in proxy logs and the browser
history, and any page could log a victim in as someone else (login CSRF). The
cookie never had ``Secure`` behind a TLS proxy.
"""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx

from judgekit.serve.limits import ServeLimits
from judgekit.store import open_store
from tests.support.annotate import seed_store
from tests.support.serve import running_service, service_in_thread, token


def _store(tmp: Path) -> tuple[Path, str]:
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        seed_store(store, "binary", 3)
        return db, token(store, "ana", "annotate")


def test_the_token_goes_in_a_posted_form(tmp_path: Path) -> None:
    db, ana = _store(tmp_path)
    with running_service(db, tmp_path) as service:
        in_url = httpx.get(f"{service.url}/login?token={ana}", follow_redirects=False)
        assert in_url.status_code == 200 and "set-cookie" not in in_url.headers
        assert '<form method="post" action="/login">' in in_url.text
        assert "no longer accepted in the address" in in_url.text
        assert ana not in in_url.text

        posted = httpx.post(f"{service.url}/login", data={"token": ana},
                            follow_redirects=False)
        assert posted.status_code == 303 and posted.headers["location"] == "/annotate"
        cookie = posted.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert "Secure" not in cookie  # plain http on loopback: a Secure cookie is never sent

        wrong = httpx.post(f"{service.url}/login", data={"token": "jk_wrong"})
        assert wrong.status_code == 401 and "not valid" in wrong.text
        assert "set-cookie" not in wrong.headers
        for evil in ("//evil.example", "/\\evil.example", "https://evil.example"):
            away = httpx.post(f"{service.url}/login", data={"token": ana, "next": evil},
                              follow_redirects=False)
            assert away.headers["location"] == "/annotate", evil

        # login CSRF: another site's page POSTing the form with its own token
        forged = httpx.post(f"{service.url}/login", data={"token": ana},
                            headers={"Origin": "http://127.0.0.1:1"}, follow_redirects=False)
        assert forged.status_code == 403 and "set-cookie" not in forged.headers
        # behind a TLS proxy on this machine (trusted by default): Secure
        proxied = httpx.post(f"{service.url}/login", data={"token": ana},
                             headers={"X-Forwarded-Proto": "https"}, follow_redirects=False)
        assert proxied.status_code == 303 and "Secure" in proxied.headers["set-cookie"]
    assert ana not in service.log()


def test_the_cookie_is_secure_beyond_loopback(tmp_path: Path) -> None:
    db, ana = _store(tmp_path)
    with service_in_thread(db, limits=ServeLimits(secure_cookie=True)) as service:
        posted = httpx.post(f"{service.url}/login", data={"token": ana},
                            follow_redirects=False)
        assert posted.status_code == 303 and "Secure" in posted.headers["set-cookie"]
