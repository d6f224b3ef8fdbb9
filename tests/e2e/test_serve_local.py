"""`judgekit serve-local` serves the bundled judge until Ctrl-C, then stops it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest


@pytest.mark.e2e
def test_serve_local_answers_and_stops_on_ctrl_c() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgekit", "serve-local", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 180
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            found = re.search(r"serving at (http://127\.0\.0\.1:\d+/v1)", line)
            if found:
                url = found.group(1)
                break
        assert url, "serve-local never said where it serves"
        with urllib.request.urlopen(f"{url}/models", timeout=30) as response:
            models = json.load(response)
        assert models["data"], models
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        with pytest.raises(OSError):
            urllib.request.urlopen(f"{url}/models", timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
