"""The browser session processes refuse what the store no longer holds: one line, no traceback.

The web bridge starts ``judgekit.serve.session`` and ``judgekit.serve.adjudicate_session``
after its own checks, but a queue or rubric can be gone by the time the process opens the
store (another process, a lead). Each must then print one ``error:`` line and exit with
the error's code, without building the app.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.store import open_store
from tests.support.annotate import make_items, rubric


def start(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    with open_store(path) as store:
        store.import_items("d", make_items("binary", 3))
        store.save_rubric(rubric("binary"))
    return path


@pytest.mark.parametrize(("module", "option", "value", "message"), [
    ("judgekit.serve.session", "--queue", "gone", "error: no labeling queue named 'gone'"),
    ("judgekit.serve.adjudicate_session", "--rubric", "f" * 64,
     "error: no rubric with sha256 ffffffffffff in the store"),
    ("judgekit.serve.adjudicate_session", "--rubric", "",
     "error: nothing to adjudicate for rubric 'correct': no item has disagreeing annotators "
     "or a flag"),
])
def test_a_session_on_what_the_store_does_not_hold_is_one_line(
        db: Path, module: str, option: str, value: str, message: str) -> None:
    if not value:
        value = rubric("binary").sha256
    done = start(module, "--db", str(db), option, value, "--annotator", "ana")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == message
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("module", ["judgekit.serve.session", "judgekit.serve.adjudicate_session"])
def test_a_session_needs_its_three_options(db: Path, module: str) -> None:
    done = start(module, "--db", str(db), "--annotator", "ana")
    assert done.returncode == 2 and "the following arguments are required" in done.stderr
