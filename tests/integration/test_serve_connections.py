"""Slow and many connections to a real server on 127.0.0.1.

400 half-open requests used to stay open 70 s; with 256 file descriptors, 300 of
them made the server unreachable for valid tokens and wrote hundreds of thousands
of "Too many open files" lines.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import ExitStack, suppress
from pathlib import Path

import httpx2 as httpx

from judgekit.store import open_store
from tests.support.annotate import seed_store
from tests.support.serve import Service, running_service, token


def _store(tmp: Path) -> tuple[Path, str]:
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        seed_store(store, "binary", 3)
        return db, token(store, "ci", "read")


def slow_client(service: Service, stop: threading.Event, answers: list[bytes]) -> None:
    """Send a request's headers a line every half second, forever; record what comes back."""
    host, port = service.url.removeprefix("http://").split(":")
    try:
        sock = socket.create_connection((host, int(port)), timeout=30)
    except OSError:
        answers.append(b"refused")
        return
    with sock:
        sock.settimeout(0.5)
        with suppress(OSError):
            sock.sendall(b"GET /api/v1/rubrics HTTP/1.1\r\nHost: x\r\n")
        while not stop.is_set():
            try:
                data = sock.recv(4096)
                answers.append(data)  # b"": closed by the server
                return
            except TimeoutError:
                with suppress(OSError):
                    sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                answers.append(b"reset")
                return
        answers.append(b"still open")


def ok_within(service: Service, tok: str, seconds: float) -> float:
    """Seconds until a valid request is answered 200 (retrying refused connections)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        with suppress(httpx.HTTPError):
            if httpx.get(service.url + "/api/v1/rubrics", timeout=5,
                         headers={"Authorization": f"Bearer {tok}"}).status_code == 200:
                return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"no valid request got through in {seconds} s")


def run_slow_clients(service: Service, n: int, hold_s: float) -> list[bytes]:
    stop = threading.Event()
    answers: list[bytes] = []
    threads = [threading.Thread(target=slow_client, args=(service, stop, answers), daemon=True)
               for _ in range(n)]
    for thread in threads:
        thread.start()
    time.sleep(hold_s)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    return answers


def test_slow_clients_are_timed_out_and_capped(tmp_path: Path) -> None:
    db, ci = _store(tmp_path)
    args = ("--request-timeout", "2", "--max-connections", "30")
    with running_service(db, tmp_path, args=args) as service:
        answers = run_slow_clients(service, 60, 8.0)
        assert len(answers) == 60
        assert b"still open" not in answers
        timed_out = [a for a in answers if a.startswith(b"HTTP/1.1 408")]
        assert len(timed_out) >= 20, answers[:5]
        assert ok_within(service, ci, 10.0) < 10.0
    assert "Traceback" not in service.log()


def test_running_out_of_file_descriptors_is_logged_once(tmp_path: Path) -> None:
    db, ci = _store(tmp_path)
    args = ("--request-timeout", "3", "--max-connections", "1000")
    with running_service(db, tmp_path, args=args, open_files=256) as service:
        with ExitStack() as stack:
            host, port = service.url.removeprefix("http://").split(":")
            for _ in range(300):  # idle connections: each holds one of the server's descriptors
                sock = stack.enter_context(socket.create_connection((host, int(port)), timeout=5))
                sock.sendall(b"GET / HTTP/1.1\r\n")
            time.sleep(6.0)
        assert ok_within(service, ci, 20.0) < 20.0
        time.sleep(1.0)
    log = service.log()
    lines = [line for line in log.splitlines() if "open files" in line]
    assert 1 <= len(lines) <= 3, len(lines)
    assert "resource error" in lines[0]
    assert "Traceback" not in log
