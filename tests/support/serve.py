"""A real ``judgekit serve`` process on 127.0.0.1 for tests, and a store to serve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

from judgekit.store import Store

ROOT = Path(__file__).resolve().parents[2]
_LISTENING = re.compile(r"serving .* on (http://127\.0\.0\.1:\d+)")


@dataclass
class Service:
    """A running server: its base URL, its log so far, and an HTTP client."""

    url: str
    process: subprocess.Popen[str]
    log_path: Path

    def get(self, path: str, token: str | None = None, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, headers=_auth(token), timeout=60, **kw)

    def post(self, path: str, body: Any, token: str | None = None) -> httpx.Response:
        return httpx.post(self.url + path, json=body, headers=_auth(token), timeout=60)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@contextmanager
def running_service(db: Path, tmp: Path, timeout_s: float = 60.0) -> Iterator[Service]:
    """``judgekit serve --port 0`` on ``db``; stopped (SIGINT, then kill) on exit."""
    log_path = tmp / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "judgekit", "serve", "--db", str(db), "--port", "0"],
            stdout=log, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp,
        )
    try:
        deadline = time.monotonic() + timeout_s
        url = None
        while url is None:
            found = _LISTENING.search(log_path.read_text())
            if found:
                url = found.group(1)
            elif process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"judgekit serve did not start:\n{log_path.read_text()}")
            else:
                time.sleep(0.05)
        yield Service(url, process, log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def token(store: Store, name: str, role: str) -> str:
    created, _ = store.create_token(name, role)
    return created
