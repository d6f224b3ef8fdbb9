"""``judgekit annotate`` in a real terminal (tmux): a stratified blind queue, read off the screen.

Pilot drives the app inside the test process; this drives the command a user
types, in a tmux pane of 80x24, and reads the pane as the user would see it.
It skips when tmux is not installed (CI installs Debian's tmux).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from judgekit.store import Store
from tests.integration.test_annotate_blind import judge_derived, seed_judged
from tests.support.annotate import RUBRIC_TEXT

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
ROOT = Path(__file__).resolve().parents[2]


#: Tries at starting the tmux server and its session before the test fails, and the pause
#: between them (doubled each time): a loaded machine can be slow to fork the server.
START_ATTEMPTS = 4
START_PAUSE_S = 0.5
#: How long the app may take to draw its first screen (Python and Textual start under load).
FIRST_SCREEN_S = 120.0


class Pane:
    """One tmux server of our own (its own socket), one pane; closed with the server.

    The socket name is unique to this process and attempt: the suite may run in several
    checkouts at once on one machine, and two servers on one ``-L`` name would share a
    session called "t" (``duplicate session``, exit 1). ``remain-on-exit`` is set in the
    server's config, so it holds from the first instant even if the command dies at once.
    """

    def __init__(self, command: str, size: tuple[int, int], config_dir: Path) -> None:
        config = config_dir / "tmux.conf"
        config.write_text("set-option -g remain-on-exit on\n", encoding="utf-8")
        width, height = size
        failures: list[str] = []
        pause = START_PAUSE_S
        for attempt in range(1, START_ATTEMPTS + 1):
            self.base = ["tmux", "-L", f"jk-annotate-{os.getpid()}-{uuid.uuid4().hex[:12]}"]
            started = subprocess.run(
                [*self.base, "-f", str(config), "new-session", "-d", "-s", "t",
                 "-x", str(width), "-y", str(height), command],
                capture_output=True, text=True, timeout=60, check=False)
            if started.returncode == 0 and self._has_session():
                return
            failures.append(f"attempt {attempt}: exit {started.returncode}, "
                            f"{(started.stderr or started.stdout).strip() or 'no output'}")
            self.close()
            time.sleep(pause)
            pause *= 2
        raise AssertionError(f"tmux could not start a session in {START_ATTEMPTS} attempts "
                             f"(the app was never run): {'; '.join(failures)}")

    def _has_session(self) -> bool:
        """Whether the server answers on its socket and holds session "t"."""
        return subprocess.run([*self.base, "has-session", "-t", "t"], capture_output=True,
                              timeout=30, check=False).returncode == 0

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
    pane = Pane(command, (80, 24), tmp_path)
    try:
        screen = pane.wait_for("q quit", FIRST_SCREEN_S)  # the footer is drawn last
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


def test_three_items_of_one_story_labeled_with_search_in_tmux(
    tmp_path: Path, tmp_db: Store
) -> None:
    """Three questions on one 5,000-word story, as SQuALITY has them: the queue keeps them
    together, the annotator searches the story for the name the summary mentions, and each
    next item says it is the same story."""
    from judgekit.types import Item

    story = "\n\n".join(
        " ".join("Zorbatheon" if (p in (12, 33) and w == 40) else f"w{p}x{w}"  # + the answer
                 for w in range(100)) for p in range(50))
    items = [Item(id=f"story-1-q{i}", input=story,
                  response=f"Answer {i}: Zorbatheon leaves in chapter {12 + 21 * (i % 2)}.")
             for i in range(3)]
    items += [Item(id=f"other-{i}", input=f"Another story {i}.", response="Short.")
              for i in range(3)]
    tmp_db.import_items("d", items)
    tmp_db.close()
    rubric_file = tmp_path / "correct.toml"
    rubric_file.write_text(RUBRIC_TEXT["binary"])
    command = (
        f"cd {ROOT} && {sys.executable} -m judgekit annotate --rubric {rubric_file} "
        f"--db {tmp_db.path} --annotator alice --seed 1"
    )
    pane = Pane(command, (80, 24), tmp_path)
    story_at: list[int] = []
    try:
        pane.wait_for("q quit", FIRST_SCREEN_S)
        for position in range(1, 7):
            screen = pane.wait_for(f"item {position}/6")
            if "w0x0" in screen:  # an item of the long story
                if story_at:  # the one before was the same story, and it says so
                    assert "same input as the previous item" in screen
                story_at.append(position)
                if len(story_at) == 1:  # search the story once: the search stays on
                    pane.send("/")
                    pane.wait_for("Search the item")
                    pane.send("-l", "Zorbatheon")
                    pane.send("Enter")
                    screen = pane.wait_for("/Zorbatheon 1/3")
                else:
                    assert "/Zorbatheon: 3 (n)" in screen
                    pane.send("n")
                    screen = pane.wait_for("/Zorbatheon 1/3")
                assert "Zorbatheon" in screen.split(f"item {position}/6")[0]  # in view
                pane.send("n")
                pane.wait_for("/Zorbatheon 2/3")
            pane.send("p")
            pane.wait_for(f"{position}/6 labeled")
        pane.send("q")
        final = "".join(pane.wait_for("saved in").split())
        assert "alice:6/6labeled" in final
    finally:
        pane.close()
    assert len(story_at) == 3 and story_at == list(range(story_at[0], story_at[0] + 3))
    assert [r[0] for r in committed(tmp_db.path)] == ["pass"] * 6


FOUR_CRITERIA = """
name = "summeval"
version = "1"
per_call = true

[scale]
kind = "ordinal"
min = 1
max = 5

[scale.levels]
"1" = "Very poor: the summary fails on this criterion almost everywhere."
"2" = "Poor: more problems than strengths."
"3" = "Fair: as many strengths as problems."
"4" = "Good: small problems only."
"5" = "Very good: nothing to fault."

[prompt]
user = "Article: {input}\\n\\nSummary: {response}\\n\\n{scale}"

[criteria.coherence]
description = "COHERENCE"

[criteria.consistency]
description = "Every fact in the summary is supported by the article; nothing is hallucinated."

[criteria.fluency]
description = "Every sentence is grammatical and reads naturally."

[criteria.fluency.scale]
kind = "ordinal"
min = 1
max = 3
levels = { "1" = "Broken.", "2" = "Some slips.", "3" = "Fluent." }

[criteria.relevance]
description = "The summary keeps the important content of the article and leaves out the rest."
""".replace("COHERENCE", "The summary is well structured and organised: it builds from sentence "
            "to sentence to a coherent body of information about a topic.")


def test_every_criterion_on_one_screen_at_80x24_survives_a_kill(
    tmp_path: Path, tmp_db: Store
) -> None:
    """Four criteria at 80x24: every name, description, key range and the focused criterion's
    levels are on screen in full; a level keyed just before the process is killed is kept, and
    the restarted app asks for the criteria still to do."""
    from judgekit.types import Item

    tmp_db.import_items("news", [Item(id=f"s{i}", input=f"Article number {i}.",
                                      response=f"Summary number {i}.") for i in range(3)])
    tmp_db.close()
    rubric_file = tmp_path / "summeval.toml"
    rubric_file.write_text(FOUR_CRITERIA)
    command = (f"cd {ROOT} && {sys.executable} -m judgekit annotate --rubric {rubric_file} "
               f"--db {tmp_db.path} --annotator alice")

    def flat(text: str) -> str:
        return " ".join(text.split())

    pane = Pane(command, (80, 24), tmp_path)
    try:
        pane.wait_for("closes this help", FIRST_SCREEN_S)  # a new queue: the help first
        pane.send("?")
        pane.wait_for("item 1/3")
        needles = ("it builds from sentence to sentence to a coherent body of information "
                   "about a topic. (1-5; 3 left)",
                   "nothing is hallucinated. (1-5; 3 left)",
                   "reads naturally. (1-3; 3 left)",
                   "leaves out the rest. (1-5; 3 left)",
                   "1 Very poor: the summary fails on this criterion almost everywhere.",
                   "5 Very good: nothing to fault.")
        # the queue's notice covers the right of the screen for its 8 s: read once it is gone
        deadline = time.monotonic() + 30
        while True:
            screen = pane.text()
            text = flat(screen.split("item 1/3")[1]) if "item 1/3" in screen else ""
            if all(needle in text for needle in needles) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert "q quit" in screen and "Article number 0." in screen and "item 1/3" in screen
        for criterion in ("coherence", "consistency", "fluency", "relevance"):
            assert criterion in text
        for needle in needles:
            assert needle in text, screen
        assert "…" not in screen
        pane.send("4")
        pane.wait_for("1/4 criteria labeled")
        deadline = time.monotonic() + 30
        while len(committed(tmp_db.path)) < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        pane.close()  # the terminal goes away under the app: no quit, no save path
    assert [r[0] for r in committed(tmp_db.path)] == ["4"]
    pane = Pane(command, (80, 24), tmp_path)
    try:
        screen = pane.wait_for("q quit", FIRST_SCREEN_S)
        assert "item 1/3" in screen and "1/4 criteria labeled" in screen
        assert "closes this help" not in screen  # a started queue opens on the item
        rows = {line.split()[0]: line for line in screen.replace("▶", " ").splitlines()
                if line.split() and line.split()[0] in ("coherence", "consistency")}
        assert rows["coherence"].split()[1] == "4" and rows["consistency"].split()[1] == "–"
        assert "▶ consistency" in screen
        for key in ("5", "3", "2"):
            pane.send(key)
        pane.wait_for("item 2/3")
        pane.send("q")
        pane.wait_for("saved in")
    finally:
        pane.close()
    assert [r[0] for r in committed(tmp_db.path)] == ["4", "5", "3", "2"]


def test_the_serve_session_process_opens_a_whole_file_queue_in_a_terminal(
    tmp_path: Path, tmp_db: Store
) -> None:
    """The process ``judgekit serve`` runs behind each browser session, on a queue assigned
    from a whole multi-criteria file: every criterion on one screen, each level committed."""
    from judgekit.types import Item
    from tests.support.cli import run_cli

    tmp_db.import_items("news", [Item(id=f"s{i}", input=f"Article number {i}.",
                                      response=f"Summary number {i}.") for i in range(2)])
    tmp_db.close()
    rubric_file = tmp_path / "summeval.toml"
    rubric_file.write_text(FOUR_CRITERIA)
    code, out, err = run_cli("queue", "assign", "--rubric", str(rubric_file), "--db",
                             str(tmp_db.path), "--annotators", "ann")
    assert code == 0, err
    queue = out.splitlines()[0].rsplit(": ", 1)[0]
    command = (f"cd {ROOT} && {sys.executable} -m judgekit.serve.session --db {tmp_db.path} "
               f"--queue '{queue}' --annotator ann")
    pane = Pane(command, (80, 24), tmp_path)
    try:
        pane.wait_for("closes this help", FIRST_SCREEN_S)
        pane.send("?")
        screen = pane.wait_for("item 1/2")
        assert "▶ coherence" in screen and "relevance" in screen and "0/4 criteria" in screen
        for key in ("4", "5", "3", "2"):
            pane.send(key)
        pane.wait_for("item 2/2")
        pane.send("q")
        deadline = time.monotonic() + 30
        while "Pane is dead" not in pane.text() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        pane.close()
    assert [r[0] for r in committed(tmp_db.path)] == ["4", "5", "3", "2"]
