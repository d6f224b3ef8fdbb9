"""Browser sessions over real websockets on 127.0.0.1: how they end, how many may run.

A revoked token's open session used to go on labeling (the token was checked at
the handshake only); one token could open any number of sessions (one app process
each); a session never ended while the tab stayed open; and every closed session
logged a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from click.testing import CliRunner
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from judgekit.cli.main import cli
from judgekit.serve.sessions import terminal_size
from judgekit.store import open_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import Service, assign_queues, running_service, token

Served = tuple[Service, dict[str, str], Path]


def _store(tmp: Path) -> tuple[Path, dict[str, str]]:
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", 30)
        record_judgments(store, rub, [judgment(rub, "d", it.id, "fail") for it in items])
        tokens = {name: token(store, name, "annotate") for name in ("ana", "bo", "cy")}
    assign_queues(db, rub.sha256, "ana,bo,cy", "--overlap", "0")
    return db, tokens


def open_session(service: Service, tok: str) -> ClientConnection:
    """A session of ``tok``'s queue (use it in a ``with``)."""
    page = service.get("/annotate", tok)
    assert page.status_code == 200, page.text
    url = page.text.split('data-session-websocket-url="')[1].split('"')[0]
    return connect(url + "?width=100&height=30", origin=service.url, open_timeout=60,
                   additional_headers={"Cookie": f"judgekit_token={tok}"})


def label_count(db: Path, annotator: str) -> int:
    with open_store(db) as store:
        row = store._one("SELECT COUNT(*) FROM labels WHERE annotator = ?", [annotator])
        return int(row[0])  # type: ignore[index]


def press_until_labeled(ws: ClientConnection, db: Path, annotator: str,
                        timeout_s: float = 90.0) -> None:
    """Press ``p`` (every few seconds, while the app mounts) until a label is stored."""
    deadline = time.monotonic() + timeout_s
    pressed = 0.0
    while time.monotonic() < deadline:
        if label_count(db, annotator):
            return
        if time.monotonic() - pressed > 4.0:
            ws.send(json.dumps(["stdin", "p"]))
            pressed = time.monotonic()
        _drain(ws, 0.2)
    raise AssertionError("the session never stored a label")


def _drain(ws: ClientConnection, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            ws.recv(timeout=max(0.01, end - time.monotonic()))
        except TimeoutError:
            return


def closed_with(ws: ClientConnection, timeout_s: float) -> int | None:
    """The close code once the server closes ``ws`` within ``timeout_s`` (None: still open)."""
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            try:
                ws.recv(timeout=0.5)
            except TimeoutError:
                continue
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else -1
    return None


def app_processes(service: Service) -> list[int]:
    """Pids of the server's children running a session app."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == service.process.pid and b"judgekit.serve.session" in cmdline:
            found.append(int(proc.name))
    return found


def test_revoking_a_token_ends_its_open_session(tmp_path: Path) -> None:
    db, tokens = _store(tmp_path)
    with running_service(db, tmp_path) as service:
        with ExitStack() as stack:
            ws = stack.enter_context(open_session(service, tokens["ana"]))
            press_until_labeled(ws, db, "ana")
            revoke_and_type(ws, db)
        wait_for_no_apps(service)
    assert "Traceback" not in service.log() and "Exception in ASGI" not in service.log()


def revoke_and_type(ws: ClientConnection, db: Path) -> None:
    """Revoke ana's token, go on typing: no key is stored, the session ends with 4401."""
    before = label_count(db, "ana")
    result = CliRunner().invoke(cli, ["tokens", "revoke", "--db", str(db), "--name", "ana"])
    assert result.exit_code == 0, result.output
    revoked_at = time.monotonic()
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(20):
            ws.send(json.dumps(["stdin", "p"]))
            _drain(ws, 0.5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    assert time.monotonic() - revoked_at < 10.0
    time.sleep(2.0)
    assert label_count(db, "ana") == before


def wait_for_no_apps(service: Service) -> None:
    deadline = time.monotonic() + 20
    while app_processes(service) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert app_processes(service) == []


def test_sessions_are_capped_per_token_and_in_all(tmp_path: Path) -> None:
    db, tokens = _store(tmp_path)
    args = ("--max-sessions", "2", "--sessions-per-token", "1")
    with running_service(db, tmp_path, args=args) as service:
        with ExitStack() as stack:
            first = stack.enter_context(open_session(service, tokens["ana"]))
            _drain(first, 1.0)
            second = stack.enter_context(open_session(service, tokens["ana"]))
            assert closed_with(second, 10.0) == 4429
            assert "limit per token" in (second.close_reason or "")
            bo = stack.enter_context(open_session(service, tokens["bo"]))
            _drain(bo, 1.0)
            cy = stack.enter_context(open_session(service, tokens["cy"]))
            assert closed_with(cy, 10.0) == 4429
            assert "--max-sessions" in (cy.close_reason or "")
            rows = service.get("/api/v1/queues", tokens["ana"]).json()
            assert [(r["annotator"], r["sessions"]) for r in rows] == [("ana", 1)]
            shown = subprocess.run([sys.executable, "-m", "judgekit", "queues", "--db", str(db),
                                    "--format", "json"], capture_output=True, text=True,
                                   timeout=120)
            counts = {r["annotator"]: r["sessions"] for r in json.loads(shown.stdout)}
            assert counts == {"ana": 1, "bo": 1, "cy": 0}
        wait_for_no_apps(service)
        with open_session(service, tokens["ana"]) as again:  # a closed session frees its place
            assert closed_with(again, 3.0) is None
    assert "Traceback" not in service.log() and "Exception in ASGI" not in service.log()


def test_an_idle_session_is_closed_and_a_huge_resize_is_capped(tmp_path: Path) -> None:
    db, tokens = _store(tmp_path)
    with running_service(db, tmp_path, args=("--idle-timeout", "4")) as service:
        with open_session(service, tokens["ana"]) as ws:
            ws.send(json.dumps(["resize", {"width": 6000, "height": 3000}]))
            assert closed_with(ws, 30.0) == 4408
            assert "idle" in (ws.close_reason or "")
        wait_for_no_apps(service)
    assert terminal_size(6000, 3000) == (400, 200)
    assert terminal_size("x", None) == (80, 24)
    assert "Traceback" not in service.log()
