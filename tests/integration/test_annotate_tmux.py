"""``judgekit annotate`` in a real terminal (tmux): a stratified blind queue, read off the screen.

Pilot drives the app inside the test process; this drives the command a user
types, in a tmux pane of 80x24, and reads the pane as the user would see it.
It skips when tmux is not installed (CI installs Debian's tmux).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgekit.store import Store
from tests.integration.test_annotate_blind import judge_derived, seed_judged
from tests.support.annotate import RUBRIC_TEXT

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
ROOT = Path(__file__).resolve().parents[2]


class Pane:
    """One tmux server of our own (its own socket), one pane; closed with the server."""

    def __init__(self, socket: str, command: str, size: tuple[int, int]) -> None:
        self.base = ["tmux", "-L", socket]
        width, height = size
        subprocess.run([*self.base, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                        "-x", str(width), "-y", str(height), command], check=True)
        subprocess.run([*self.base, "set-option", "-t", "t", "remain-on-exit", "on"],
                       check=True)

    def text(self) -> str:
        return subprocess.run([*self.base, "capture-pane", "-p", "-t", "t"], check=True,
                              capture_output=True, text=True).stdout

    def send(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "t", *keys], check=True)

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on screen after {timeout}s:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], check=False, capture_output=True)


def committed(path: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT label, blind, source FROM labels ORDER BY id").fetchall()


def test_stratified_blind_queue_in_tmux(tmp_path: Path, tmp_db: Store) -> None:
    rub = seed_judged(tmp_db)
    tmp_db.close()
    rubric_file = tmp_path / "correct.toml"
    rubric_file.write_text(RUBRIC_TEXT["binary"])
    command = (
        f"cd {ROOT} && {sys.executable} -m judgekit annotate --rubric {rubric_file} "
        f"--db {tmp_db.path} --annotator alice --strategy stratified --sample 12 --seed 4"
    )
    pane = Pane(f"judgekit-test-{tmp_path.name}", command, (80, 24))
    try:
        screen = pane.wait_for("q quit")  # the footer is drawn last
        assert "blind" in screen and "0/12 labeled" in screen
        assert "p/f label" in screen and "! flag" in screen
        seen = [screen]
        for key in ("p", "f", "!", "p"):
            pane.send(key)
            time.sleep(0.3)
            seen.append(pane.text())
        seen.append(pane.wait_for("3/12 labeled"))
        pane.send("?")
        seen.append(pane.wait_for("closes this help"))
        pane.send("?")  # closes it (a bare Escape waits to see if a sequence follows)
        pane.wait_for("item 4/")
        pane.send("q")
        final = "".join(pane.wait_for("saved in").split())  # the exit line wraps at 80
        assert "alice:3/12labeled" in final and "(3newthissession)" in final
        for text in seen:
            assert not judge_derived(text), text
    finally:
        pane.close()
    rows = committed(tmp_db.path)
    assert [r[0] for r in rows] == ["pass", "fail", None, "pass"]  # the flag: a note row
    assert all(blind == 1 and source == "annotate" for _, blind, source in rows)
    assert rub.sha256
