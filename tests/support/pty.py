"""Run a command with stderr a pseudo-terminal, as a user sees it, and stdout a pipe.

What a progress bar draws depends on whether stderr is a terminal; the tests need a
real one (``os.openpty``) and the bytes drawn on it, read while the process runs so
a full terminal buffer never blocks it.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_on_a_terminal(args: Sequence[str], *, env: Mapping[str, str], columns: int,
                      cwd: Path | None = None, timeout: float = 120) -> tuple[int, bytes, bytes]:
    """Run ``args`` with stderr a ``columns``-wide xterm: exit code, bytes drawn, stdout."""
    leader, follower = os.openpty()
    try:
        proc = subprocess.Popen(list(args), stdout=subprocess.PIPE, stderr=follower,
                                stdin=subprocess.DEVNULL, cwd=cwd,
                                env={**env, "TERM": "xterm", "COLUMNS": str(columns)})
        os.close(follower)
        follower = -1
        drawn = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                drawn += chunk
            elif proc.poll() is not None:
                break
        out, _ = proc.communicate(timeout=timeout)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    return proc.returncode, drawn, out
