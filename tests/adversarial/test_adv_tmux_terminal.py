"""Item 7 in a real terminal: the annotate app under tmux, fed items full of escape sequences.

An OSC 2 sequence in an item used to rename the tmux pane, ``ESC[2J`` blanked the
screen and later items lost their titles; a crash in the app still exited 0.
Here tmux runs the real ``judgekit annotate`` and the test reads tmux's own
record of the pane title and the screen.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import run

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ESCAPES = ("\x1b]2;PWNED-TITLE\x07\x1b]0;PWNED-TITLE\x1b\\\x1b[2J\x1b[H\x1bc\x1b[31;1m"
           "\x08\x08\x9b2J\u202eRTL")
TITLE = "judgekit-test-pane"


class Tmux:
    """One private tmux server (its own socket), killed at the end."""

    def __init__(self, cwd: Path) -> None:
        self.socket = f"jk-{uuid.uuid4().hex[:10]}"
        self.cwd = cwd

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, timeout=30, check=False)
        return done.stdout

    def start(self, command: str) -> None:
        self("new-session", "-d", "-s", "t", "-x", "150", "-y", "40", "-c", str(self.cwd),
             f"{command}; echo EXIT=$?; sleep 120")
        self("select-pane", "-t", "t", "-T", TITLE)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "t")

    def title(self) -> str:
        return self("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def wait_for(self, found: Callable[[str], bool], what: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if found(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{what} did not appear; the screen shows:\n{self.screen()}")

    def kill(self) -> None:
        self("kill-server")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    server = Tmux(tmp_path)
    try:
        yield server
    finally:
        server.kill()


def _hostile_store(tmp_path: Path) -> Path:
    db = tmp_path / "t.db"
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({
        "id": f"item{n}{ESCAPES}", "input": f"Question {n}? {ESCAPES} end of question {n}",
        "response": f"answer {ESCAPES}", "reference": "ref", "slice": f"s\x08\x08{ESCAPES}",
    }) + "\n" for n in range(3)), encoding="utf-8")
    assert run("import", str(items), "--db", str(db)).code == 0
    return db


def _annotate(db: Path, annotator: str, prefix: str = "") -> str:
    env = f"cd {shlex.quote(os.getcwd())} && "
    python = prefix or f"{shlex.quote(sys.executable)} -m judgekit"
    return (env + f"{python} annotate -r correctness --db {shlex.quote(str(db))} "
            f"--annotator {shlex.quote(annotator)}")


def test_escape_sequences_leave_the_pane_title_and_header_intact(
    tmux: Tmux, tmp_path: Path
) -> None:
    db = _hostile_store(tmp_path)
    tmux.start(_annotate(db, "alice\x1b]2;PWNED-TITLE\x07"))
    # a new queue of a rubric with a description opens on the guidelines first
    tmux.wait_for(lambda s: "closes this help" in s, "the guidelines")
    assert tmux.title() == TITLE
    tmux("send-keys", "-t", "t", "?")
    screen = tmux.wait_for(lambda s: "item 1/3" in s and "Question" in s, "the first item")
    assert tmux.title() == TITLE
    header = screen.splitlines()[0]
    assert "correctness" in header and "alice" in header and "0/3 labeled" in header
    assert "\\x1b]2;PWNED-TITLE" in screen  # shown, not executed
    assert "end of question" in screen  # the text after the sequences is still there
    tmux("send-keys", "-t", "t", "p")
    screen = tmux.wait_for(lambda s: "item 2/3" in s, "the second item")
    assert "1/3 labeled" in screen.splitlines()[0]
    assert "Input" in screen and "Response" in screen  # section titles survive
    assert tmux.title() == TITLE
    tmux("send-keys", "-t", "t", "q")
    screen = tmux.wait_for(lambda s: "EXIT=" in s, "the exit code")
    assert "EXIT=0" in screen
    assert "PWNED" not in tmux.title()


def test_a_crash_in_the_app_exits_non_zero(tmux: Tmux, tmp_path: Path) -> None:
    """A fault injected into the app's mount handler stands for any bug that crashes it."""
    db = _hostile_store(tmp_path)
    crash = (
        "import sys; import judgekit.tui.app as a\n"
        "def boom(self): raise RuntimeError('injected crash')\n"
        "a.AnnotateApp.on_mount = boom\n"
        "from judgekit.cli.main import main; main(sys.argv[1:])"
    )
    script = tmp_path / "crash.py"
    script.write_text(crash, encoding="utf-8")
    tmux.start(_annotate(db, "bob", prefix=f"{shlex.quote(sys.executable)} {script}"))
    screen = tmux.wait_for(lambda s: "EXIT=" in s, "the exit code")
    assert "EXIT=0" not in screen, screen
    assert "annotate app stopped with an error" in screen
