"""The local judge shuts down promptly: `serve-local` on Ctrl-C or SIGTERM, `judge` on Ctrl-C.

Nothing here depends on the machine's speed: the limits below only keep a hung
process from hanging the suite (they are far above what a loaded machine needs),
and the test checks what happened (the lines printed, the exit code, the port
closed), never how long it took.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

#: Hang guards, not expectations: loading the model on a loaded machine, and stopping.
START_LIMIT_S = 600
STOP_LIMIT_S = 300


def _ignore_sigint() -> None:
    """What a shell does to a command it starts in the background: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("stop_signal", "started_in_background"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
)
def test_serve_local_answers_and_stops_on_a_signal(
    stop_signal: signal.Signals, started_in_background: bool
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgekit", "serve-local", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_ignore_sigint if started_in_background else None,
    )
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:  # ends when the process exits: never waits forever
            found = re.search(r"serving at (http://127\.0\.0\.1:\d+/v1)", line)
            if found:
                url = found.group(1)
                break
        assert url, "serve-local never said where it serves"
        with urllib.request.urlopen(f"{url}/models", timeout=START_LIMIT_S) as response:
            models = json.load(response)
        assert models["data"], models
        proc.send_signal(stop_signal)
        rest, _ = proc.communicate(timeout=STOP_LIMIT_S)
        assert proc.returncode == 0, rest
        assert "stopping the local judge" in rest and "local judge stopped" in rest
        with pytest.raises(OSError):
            urllib.request.urlopen(f"{url}/models", timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.e2e
def test_ctrl_c_during_a_local_judge_run_stores_answers_and_stops_the_server(
    tmp_path: Path,
) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(
        json.dumps({"id": f"i{k}", "input": f"What is {k}+1?", "response": str(k + 1),
                    "reference": str(k + 1)}) + "\n"
        for k in range(200)), encoding="utf-8")
    db = tmp_path / "j.db"
    # its own session, signalled as a group: what a Ctrl-C at a terminal does
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", "-r", "rubrics/correctness.toml",
         "--data", str(data), "--db", str(db), "--no-progress", "--no-logprobs"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            found = re.search(r"local judge ready at (http://127\.0\.0\.1:\d+/v1)", line)
            if found:
                url = found.group(1)
                break
        assert url, "the local judge never came up"
        while _stored(db) == 0 and proc.poll() is None:
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=STOP_LIMIT_S)
        assert proc.returncode == 130, err
        assert "stopping: no new calls" in err
        stored = _stored(db)
        assert 0 < stored < 200
        with pytest.raises(OSError):  # the server went down with the command
            urllib.request.urlopen(f"{url}/models", timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0
