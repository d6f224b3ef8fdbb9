"""A real ``judgekit serve`` process on 127.0.0.1 for tests, and a store to serve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

from judgekit.store import Store, open_store

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
def running_service(db: Path, tmp: Path, timeout_s: float = 60.0,
                    args: tuple[str, ...] = (), open_files: int | None = None) -> Iterator[Service]:
    """``judgekit serve --port 0 [args]`` on ``db``; stopped (SIGINT, then kill) on exit.

    ``open_files`` limits the server's file descriptors (``RLIMIT_NOFILE``).
    """
    log_path = tmp / "serve.log"

    def limit_files() -> None:
        import resource

        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "judgekit", "serve", "--db", str(db), "--port", "0", *args],
            stdout=log, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp,
            preexec_fn=limit_files if open_files is not None else None,
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


@dataclass
class ThreadService:
    """The app served by uvicorn on a thread of this process (so a test can count calls in it)."""

    url: str

    def post(self, path: str, body: Any, token: str | None = None) -> httpx.Response:
        return httpx.post(self.url + path, json=body, headers=_auth(token), timeout=60)


@contextmanager
def service_in_thread(db: Path, *, cache: bool = True, timeout_s: float = 60.0,
                      limits: Any = None) -> Iterator[ThreadService]:
    """``make_server_app(db)`` behind a real uvicorn server on 127.0.0.1, on a thread."""
    import socket

    import uvicorn

    from judgekit.serve.app import make_server_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(make_server_app(db, cache=cache, limits=limits),
                            log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.02)
        yield ThreadService(f"http://127.0.0.1:{sock.getsockname()[1]}")
    finally:
        server.should_exit = True
        thread.join(timeout=timeout_s)
        sock.close()


def assign_queues(db: Path, rubric_hash: str, annotators: str, *options: str) -> None:
    """``judgekit queue assign`` on ``db``: the comma-separated ``annotators`` share the items."""
    from click.testing import CliRunner

    from judgekit.cli.main import cli

    result = CliRunner().invoke(cli, ["queue", "assign", "--db", str(db), "--rubric", rubric_hash,
                                      "--annotators", annotators, *options])
    assert result.exit_code == 0, result.output


def token(store: Store, name: str, role: str) -> str:
    created, _ = store.create_token(name, role)
    return created


#: A judge run writing to the store in another process until ``stop`` exists
#: (argv: db, rubric kind, item count, stop file); prints how many rows it wrote.
JUDGE_WRITER = """
import sys, time
from pathlib import Path
from judgekit.store import open_store
from tests.support.annotate import judgment, rubric
db, kind, n, stop = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = open_store(db)
rub = rubric(kind)
i = 0
while not stop.exists():
    store.record_judgment(judgment(rub, "d", f"item-{i % n:03d}", "pass", sample=i + 1,
                                   run_id="writer"))
    i += 1
    time.sleep(0.002)
store.close()
print(i)
"""


@contextmanager
def judge_writing(db: Path, tmp: Path, kind: str, n_items: int) -> Iterator[list[int]]:
    """Run :data:`JUDGE_WRITER` for the block; the list gets its row count afterwards."""
    stop = tmp / "stop-writer"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen([sys.executable, "-c", JUDGE_WRITER, str(db), kind, str(n_items),
                               str(stop)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    written: list[int] = []
    try:
        with open_store(db) as store:  # start the load once the run is really writing
            start = store.count_judgments()
            deadline = time.monotonic() + 60
            while store.count_judgments() < start + 10:
                if writer.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the judge writer did not start: {writer.stderr}")
                time.sleep(0.05)
        yield written
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=60)
        if writer.returncode != 0:
            raise RuntimeError(f"the judge writer failed: {err}")
        written.append(int(out))


def post_labels_concurrently(
    service: Service | ThreadService, work: dict[str, tuple[str, list[str]]], rubric: str,
    label: str = "pass",
) -> tuple[list[float], list[int]]:
    """Each annotator (token, item ids) POSTs one label at a time, all annotators at once.

    Returns every request's latency in seconds and every status code.
    """
    latencies: list[float] = []
    statuses: list[int] = []
    lock = threading.Lock()

    def annotator(token: str, item_ids: list[str]) -> None:
        with httpx.Client(base_url=service.url, timeout=60,
                          headers={"Authorization": f"Bearer {token}"}) as client:
            for item_id in item_ids:
                start = time.perf_counter()
                response = client.post("/api/v1/labels", json={
                    "rubric": rubric, "labels": [{"item_id": item_id, "label": label}]})
                elapsed = time.perf_counter() - start
                with lock:
                    latencies.append(elapsed)
                    statuses.append(response.status_code)

    threads = [threading.Thread(target=annotator, args=job) for job in work.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return latencies, statuses
