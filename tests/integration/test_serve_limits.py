"""Bodies and origins over real HTTP on 127.0.0.1: token first, size capped, origin ours.

A POST without a token used to be read whole before its 401 (150 MB cost the
server half a gigabyte); any body of any size was read and a 50 MB note stored;
any page, from any origin, could POST with an annotator's cookie or open their
session's websocket.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import httpx2 as httpx
import pytest

from judgekit.store import open_store
from tests.support.annotate import RUBRIC_TEXT, seed_store
from tests.support.serve import Service, assign_queues, running_service, token

Served = tuple[Service, dict[str, str], Path]
ALLOWED = "https://judgekit.example"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("limits")
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 10)
        tokens = {"write": token(store, "lead", "write"), "ana": token(store, "ana", "annotate")}
    assign_queues(db, rub.sha256, "ana", "--overlap", "0")
    with running_service(db, tmp, args=("--max-body", "1MB", "--allow-origin", ALLOWED)) as s:
        yield s, tokens, db


def peak_rss_kib(service: Service) -> int:
    status = Path(f"/proc/{service.process.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("VmHWM:")))


def raw_post(service: Service, headers: dict[str, str], body_mb: int) -> int:
    """POST ``body_mb`` MB with these headers over a raw socket; the status line's code.

    The body is streamed from a thread while the answer is awaited (a server that
    answers early may close the connection mid-body; that is no error here).
    """
    host, port = service.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=120)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock.sendall(f"POST /api/v1/labels HTTP/1.1\r\nHost: {host}:{port}\r\n{head}\r\n".encode())

    def stream() -> None:
        chunk = b"x" * (1 << 20)
        with suppress(OSError):
            for _ in range(body_mb):
                sock.sendall(chunk)

    sender = threading.Thread(target=stream, daemon=True)
    sender.start()
    answer = b""
    with suppress(OSError):
        while b"\r\n" not in answer:
            data = sock.recv(4096)
            if not data:
                break
            answer += data
    sock.close()
    sender.join(timeout=60)
    return int(answer.split(b" ")[1])


def test_no_token_is_401_before_the_body_is_read(served: Served) -> None:
    service, _, _ = served
    before = peak_rss_kib(service)
    status = raw_post(service, {"Content-Type": "application/json",
                                "Transfer-Encoding": "chunked"}, 0)
    assert status == 401
    # 150 MB announced, no token: refused without reading it
    status = raw_post(service, {"Content-Type": "application/json",
                                "Content-Length": str(150 << 20)}, 150)
    assert status == 401
    assert peak_rss_kib(service) - before < 40_000


def test_a_body_over_the_cap_is_413_naming_the_limit(served: Served) -> None:
    service, tokens, db = served
    before = peak_rss_kib(service)
    big = json.dumps({"rubric": "correct", "labels": [
        {"item_id": "item-000", "label": "pass", "annotator": "x", "note": "n" * 9_000}] * 200})
    response = httpx.post(service.url + "/api/v1/labels", content=big, timeout=60, headers={
        "Authorization": f"Bearer {tokens['write']}", "Content-Type": "application/json"})
    assert response.status_code == 413
    assert "over the limit of 1 MiB" in response.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the streamed size is counted
        for _ in range(40):
            yield b" " * 100_000

    response = httpx.post(service.url + "/api/v1/labels", content=chunks(), timeout=60, headers={
        "Authorization": f"Bearer {tokens['write']}", "Content-Type": "application/json"})
    assert response.status_code == 413 and "1 MiB" in response.text
    status = raw_post(service, {"Authorization": f"Bearer {tokens['write']}",
                                "Content-Type": "application/json",
                                "Content-Length": str(100 << 20)}, 100)
    assert status == 413
    assert peak_rss_kib(service) - before < 40_000
    with open_store(db) as store:
        assert int(store._one("SELECT COUNT(*) FROM labels")[0]) == 0  # type: ignore[index]


def test_a_foreign_origin_may_not_post(served: Served) -> None:
    service, tokens, _ = served
    body = {"rubric": "correct", "labels": [{"item_id": "item-001", "label": "pass",
                                             "annotator": "x"}]}
    for origin, expected in (("http://127.0.0.1:1", 403), ("http://evil.example", 403),
                             ("null", 403), (service.url, 200), (ALLOWED, 200)):
        response = httpx.post(service.url + "/api/v1/labels", json=body, timeout=60, headers={
            "Authorization": f"Bearer {tokens['write']}", "Origin": origin})
        assert response.status_code == expected, (origin, response.text)
    assert "--allow-origin" in httpx.post(
        service.url + "/api/v1/labels", json=body, timeout=60,
        headers={"Authorization": f"Bearer {tokens['write']}", "Origin": "http://x"}).text


def test_a_foreign_origin_may_not_open_a_session(served: Served) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    service, tokens, _ = served
    page = service.get("/annotate", tokens["ana"])
    url = page.text.split('data-session-websocket-url="')[1].split('"')[0] + "?width=80&height=24"
    cookie = {"Cookie": f"judgekit_token={tokens['ana']}"}
    for origin in ("http://127.0.0.1:1", "https://sub.judgekit.example"):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=origin, additional_headers=cookie)  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403
    with connect(url, origin=service.url, additional_headers=cookie) as ws:  # type: ignore[arg-type]
        assert ws.recv(timeout=60)


def test_labels_import_caps_text_fields(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        seed_store(store, "binary", 3)
    rubric_file = tmp_path / "correct.toml"
    rubric_file.write_text(RUBRIC_TEXT["binary"])
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"item_id": "item-000", "annotator": "x", "label": "pass"}) + "\n"
                    + json.dumps({"item_id": "item-001", "annotator": "x", "label": "pass",
                                  "note": "n" * 10_001}) + "\n")
    result = subprocess.run([sys.executable, "-m", "judgekit", "labels", "import", "--db",
                             str(db), "--rubric", str(rubric_file), str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert f"{path}:2: field 'note' is longer than 10,000 characters" in result.stderr
    assert "Traceback" not in result.stderr
    with open_store(db) as store:
        assert int(store._one("SELECT COUNT(*) FROM labels")[0]) == 0  # type: ignore[index]
