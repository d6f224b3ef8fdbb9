"""The live bar of ``judgekit judge``: rich's bar on a terminal, nothing on a pipe.

judge runs as a real process against the test server on 127.0.0.1; its stderr is
a pseudo-terminal (what a user sees) or a pipe (a log), and stdout a pipe.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.progress_bar import PROGRESS_ENV
from tests.integration.test_cli_judge import write_items
from tests.support.openai_server import OpenAIServer
from tests.support.pty import run_on_a_terminal

N = 20
BAR = "━".encode()  # rich's bar character, never in the old hand-drawn ``[####  ]`` line


@pytest.fixture(scope="module")
def slow_server() -> Iterator[OpenAIServer]:
    """Answers take 50 ms, so a run of 20 calls lasts long enough to be drawn."""
    with OpenAIServer(latency=0.05) as server:
        yield server


def _args(server: OpenAIServer, folder: Path) -> list[str]:
    data = write_items(folder / "facts.jsonl", N)
    return [sys.executable, "-m", "judgekit", "judge", "-r", "rubrics/correctness.toml",
            "--data", str(data), "--db", str(folder / "j.db"), "--base-url", server.base_url,
            "--model", "m", "--concurrency", "2"]


def _env(progress: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PROGRESS_ENV}
    env["PYTHONPATH"] = str(Path(__file__).parents[2])
    if progress is not None:
        env[PROGRESS_ENV] = progress
    return env


def _on_a_terminal(args: list[str], progress: str | None = None) -> tuple[int, bytes, str]:
    """Run with stderr a pseudo-terminal and stdout a pipe: exit code, drawn, stdout."""
    code, drawn, out = run_on_a_terminal(args, env=_env(progress), columns=120,
                                         cwd=Path(__file__).parents[2])
    return code, drawn, out.decode()


def _on_a_pipe(args: list[str], progress: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=_env(progress),
                          cwd=Path(__file__).parents[2], timeout=120, check=False)


def test_bar_on_a_terminal_is_richs_with_the_cli_columns(slow_server: OpenAIServer,
                                                         tmp_path: Path) -> None:
    code, drawn, out = _on_a_terminal(_args(slow_server, tmp_path))
    assert code == 0, drawn.decode(errors="replace")
    assert BAR in drawn and b"\x1b[" in drawn  # rich's bar, drawn with control codes
    assert b"judging" in drawn and f"{N}/{N}".encode() in drawn  # done/total
    assert b"0:00:0" in drawn  # the time elapsed column of the CLI's bars
    assert b"cached 0" in drawn and b"failed 0" in drawn and b"/s ETA" in drawn
    assert b"[#" not in drawn  # not the old hand-drawn line
    assert f"{N} judgments (0 cached, {N} judged now" in out  # the summary stays on stdout
    assert "\x1b" not in out and "━" not in out


def test_nothing_but_the_summary_on_a_pipe(slow_server: OpenAIServer, tmp_path: Path) -> None:
    done = _on_a_pipe(_args(slow_server, tmp_path))
    assert done.returncode == 0, done.stderr
    # stderr: only the line naming the run; no bar, no counts, no control codes
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith(f"judging {N} item(s)"), done.stderr
    assert "━" not in done.stderr and "\r" not in done.stderr and "\x1b" not in done.stderr
    assert f"{N} judgments (0 cached, {N} judged now" in done.stdout


def test_plain_lines_for_a_log_when_asked(slow_server: OpenAIServer, tmp_path: Path) -> None:
    done = _on_a_pipe(_args(slow_server, tmp_path), progress="1")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()[1:]  # after the line naming the run
    assert "\r" not in done.stderr and "\x1b" not in done.stderr and "━" not in done.stderr
    assert lines[0].startswith(f"judging 0/{N} ") and lines[-1].startswith(f"judging {N}/{N} ")
    assert 3 <= len(lines) <= 12  # the start, every tenth of the run, the end
    assert all(line.startswith("judging ") and "failed 0" in line for line in lines)


def test_turned_off_on_a_terminal(slow_server: OpenAIServer, tmp_path: Path) -> None:
    code, drawn, out = _on_a_terminal(_args(slow_server, tmp_path), progress="0")
    assert code == 0, drawn.decode(errors="replace")
    assert BAR not in drawn and b"ETA" not in drawn
    assert f"{N} judgments" in out
    code, drawn, _ = _on_a_terminal([*_args(slow_server, tmp_path), "--no-progress"])
    assert code == 0 and BAR not in drawn and b"ETA" not in drawn


def test_a_note_is_printed_above_the_bar_and_the_bar_goes_on() -> None:
    """A note (waiting for another run, stopping) is a whole line; the bar is redrawn below it."""
    from judgekit.judging.progress import Progress

    leader, follower = os.openpty()
    try:
        with os.fdopen(follower, "w", encoding="utf-8", closefd=False) as terminal:
            bar = Progress(3, stream=terminal)
            assert bar.enabled
            bar.advance(cached=True)
            bar.note("waiting for run \x1b[2JX")
            bar.advance(failed=True)
            bar.close()
        drawn = b""
        while select.select([leader], [], [], 0.2)[0]:
            drawn += os.read(leader, 65536)
    finally:
        os.close(leader)
        os.close(follower)
    text = drawn.decode()
    after = text.split("waiting for run ", 1)[1]
    assert "━" in after and "judging" in after and "2/3" in after and "failed 1" in after
    assert "\x1b[2J" not in text  # the note's control codes are shown escaped
