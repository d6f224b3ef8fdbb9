"""The progress bar: on stderr only, off when stderr is not a terminal unless asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.cli._progress import PROGRESS_ENV, progress_bar, progress_wanted
from judgekit.progress import advance, phase, reporting
from tests.support.pty import run_on_a_terminal

RUBRIC = "preference"


def _env(progress: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PROGRESS_ENV}
    if progress is not None:
        env[PROGRESS_ENV] = progress
    return env


def _judgekit(args: list[str], *, progress: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgekit", *args],
        capture_output=True, text=True, env=_env(progress), timeout=120, check=False,
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small pairwise store filled through the CLI: 12 items, two judges, three annotators."""
    folder = tmp_path_factory.mktemp("progress")
    items, verdicts, labels = (folder / f"{n}.jsonl" for n in ("items", "verdicts", "labels"))
    said = ["A", "B", "B", "A", "tie", "A", "A", "B", "tie", "B", "A", "B"]
    items.write_text("".join(
        json.dumps({"id": f"p{i}", "input": f"q{i}", "response_a": "a", "response_b": "b"}) + "\n"
        for i in range(len(said))
    ))
    verdicts.write_text("".join(
        json.dumps({"item_id": f"p{i}", "judge": judge, "label": label}) + "\n"
        for judge, given in (("judge-a", said), ("judge-b", said[::-1]))
        for i, label in enumerate(given)
    ))
    labels.write_text("".join(
        json.dumps({"item_id": f"p{i}", "annotator": who, "label": label}) + "\n"
        for who in ("ann1", "ann2", "ann3")
        for i, label in enumerate(said)
    ))
    db = folder / "store.db"
    for args in (
        ["import", str(items), "--name", "pairs", "--db", str(db)],
        ["judgments", "import", str(verdicts), "--rubric", RUBRIC, "--db", str(db)],
        ["labels", "import", str(labels), "--rubric", RUBRIC, "--db", str(db)],
    ):
        done = _judgekit(args, progress=None)
        assert done.returncode == 0, done.stderr
    return db


def _report_args(db: Path) -> list[str]:
    return ["report", "--rubric", RUBRIC, "--db", str(db), "--model", "judge-a",
            "--format", "json", "--resamples", "50"]


def _without_time(text: str) -> dict[str, object]:
    report = json.loads(text)
    report.get("provenance", {}).pop("generated_at", None)
    return dict(report)


def test_report_phases_on_stderr_when_asked_and_stdout_unchanged(store: Path) -> None:
    asked = _judgekit(_report_args(store), progress="1")
    plain = _judgekit(_report_args(store), progress=None)
    assert asked.returncode == plain.returncode
    assert plain.stderr == ""  # stderr is a pipe here: no bar unless asked
    lines = asked.stderr.splitlines()
    assert lines[0] == "report [1/10]: choosing the judge"
    assert "report [10/10]: rendering" in lines
    assert lines[-1].startswith("report: done in ")
    assert _without_time(asked.stdout) == _without_time(plain.stdout)


def test_compare_and_agree_announce_their_phases(store: Path, tmp_path: Path) -> None:
    runs = sqlite_runs(store)
    compare = _judgekit(
        ["compare", "judges", "--rubric", RUBRIC, "--db", str(store), "--run-a", runs["judge-a"],
         "--run-b", runs["judge-b"], "--format", "json", "--resamples", "50"],
        progress="yes",
    )
    assert compare.returncode == 0, compare.stderr
    assert "compare judges [2/5]: reading judge A" in compare.stderr.splitlines()
    assert json.loads(compare.stdout)["n_items"] == 12
    agree = _judgekit(["agree", "--rubric", RUBRIC, "--db", str(store), "--format", "json",
                       "--resamples", "50"], progress="on")
    assert agree.returncode == 0, agree.stderr
    assert agree.stderr.splitlines()[:2] == ["agree [1/5]: reading ratings",
                                             "agree [2/5]: Krippendorff's alpha"]
    assert json.loads(agree.stdout)["n_items"] == 12


def sqlite_runs(db: Path) -> dict[str, str]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT model, id FROM runs WHERE kind = 'import'").fetchall())
    finally:
        conn.close()


def test_off_when_turned_off(store: Path) -> None:
    assert _judgekit(_report_args(store), progress="0").stderr == ""


def _on_a_terminal(args: list[str]) -> tuple[int, bytes, bytes]:
    """Run judgekit with stderr a pseudo-terminal and stdout a pipe: exit code, drawn, stdout."""
    return run_on_a_terminal([sys.executable, "-m", "judgekit", *args], env=_env(None),
                             columns=100)


def test_bar_drawn_on_a_terminal_and_stdout_stays_json(store: Path) -> None:
    """stderr a pseudo-terminal, stdout a pipe: the bar reaches the terminal only."""
    code, drawn, out = _on_a_terminal(_report_args(store))
    assert code in (0, 1, 3)
    assert b"report" in drawn and b"\x1b[" in drawn  # drawn with terminal control codes
    assert "provenance" in json.loads(out)


def test_wanted_on_a_terminal_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = os.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as terminal:
            monkeypatch.delenv(PROGRESS_ENV, raising=False)
            assert progress_wanted(terminal)
            monkeypatch.setenv(PROGRESS_ENV, "0")
            assert not progress_wanted(terminal)
        with open(os.devnull, "w") as pipe_like:
            monkeypatch.delenv(PROGRESS_ENV, raising=False)
            assert not progress_wanted(pipe_like)
            monkeypatch.setenv(PROGRESS_ENV, "yes")
            assert progress_wanted(pipe_like)
    finally:
        os.close(leader)
        os.close(follower)


class _Heard:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def phase(self, name: str, total: int | None) -> None:
        self.events.append((name, total))

    def advance(self, units: int) -> None:
        self.events.append(("+", units))


def test_phases_reach_only_the_listener_of_their_block(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    heard = _Heard()
    phase("nobody listens")
    advance(3)
    with reporting(heard):
        phase("one")
        phase("two", total=10)
        advance(4)
    phase("after")
    assert heard.events == [("one", None), ("two", 10), ("+", 4)]
    monkeypatch.setenv(PROGRESS_ENV, "0")
    with progress_bar("quiet", 2):
        phase("not drawn")  # no listener installed: a no-op
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(PROGRESS_ENV, "1")
    with progress_bar("counted"):
        phase("rows", total=1234)
        advance(1000)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "counted: rows (1,234)"
    assert err[1].startswith("counted: done in ")


def test_imports_announce_their_phases_and_print_the_same_summary(tmp_path: Path) -> None:
    items, labels = tmp_path / "items.jsonl", tmp_path / "labels.jsonl"
    items.write_text("".join(
        json.dumps({"id": f"p{i}", "input": "q", "response_a": "a", "response_b": "b"}) + "\n"
        for i in range(5)
    ))
    labels.write_text("".join(
        json.dumps({"item_id": f"p{i}", "annotator": "ann1", "label": "A"}) + "\n"
        for i in range(5)
    ))
    db = tmp_path / "store.db"
    first = _judgekit(["import", str(items), "--name", "pairs", "--db", str(db)], progress="1")
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[:2] == ["import: checking items",
                                             "import: checking and writing items"]
    again = _judgekit(["import", str(items), "--name", "pairs", "--db", str(db)], progress=None)
    assert again.stderr == "" and "0 new or changed" in again.stdout
    asked = _judgekit(["labels", "import", str(labels), "--rubric", RUBRIC, "--db", str(db)],
                      progress="1")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.splitlines()[0] == "labels import: checking and writing rows"
    assert asked.stderr.splitlines()[-1].startswith("labels import: done in ")
    assert asked.stdout.startswith("imported 5 label(s)")


def test_bar_counts_rows_of_a_phase_of_unknown_size() -> None:
    """A streamed file's size in rows is not known ahead: the bar counts them, never overfills."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    from judgekit.cli._progress import _Bar

    progress = Progress(console=Console(file=io.StringIO(), force_terminal=True))
    task = progress.add_task("labels import", total=None)
    bar = _Bar("labels import", None, progress, task)
    bar.phase("checking and writing rows", None)
    bar.advance(5000)
    bar.advance(2500)
    shown = progress.tasks[0]
    assert shown.description == "labels import: checking and writing rows (7,500 rows)"
    assert shown.completed == 0
    bar.phase("counted", 10)
    bar.advance(4)
    assert progress.tasks[0].completed == 4


def _copy(db: Path, folder: Path) -> Path:
    """A copy of the shared store, for the commands that write to it."""
    import sqlite3

    target = folder / "copy.db"
    source, copy = sqlite3.connect(db), sqlite3.connect(target)
    with copy:
        source.backup(copy)
    source.close()
    copy.close()
    return target


def _phases(args: list[str]) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """The phase lines of ``args`` with JUDGEKIT_PROGRESS=1, after checking stdout is unchanged."""
    asked = _judgekit(args, progress="1")
    plain = _judgekit(args, progress=None)
    assert asked.returncode == plain.returncode == 0, asked.stderr
    assert asked.stdout == plain.stdout
    done = [line for line in asked.stderr.splitlines() if ": done in " in line]
    assert len(done) == 1, asked.stderr
    description = done[0].split(": done in ")[0]
    return [line for line in asked.stderr.splitlines() if line.startswith(f"{description} ")
            or line.startswith(f"{description}:")], asked


def test_every_long_store_command_announces_its_phases(store: Path, tmp_path: Path) -> None:
    """The commands that take seconds at 100,000 items (bench_scale), each with its phases."""
    db = ["--db", str(store)]
    rub = ["--rubric", RUBRIC]
    expected = {
        ("export", *rub, *db): ["export [1/2]: reading judgments", "export [2/2]: writing"],
        ("labels", "export", *rub, *db): ["labels export [1/2]: reading labels",
                                         "labels export [2/2]: writing"],
        ("labels", "disagreements", *rub, *db): [
            "labels disagreements [1/2]: reading labels",
            "labels disagreements [2/2]: finding disagreements"],
        ("estimate", *rub, *db, "--model", "judge-a"): ["estimate [1/10]: choosing the judge"],
        ("plan", "--estimate", "ppi", *rub, *db, "--model", "judge-a", "--half-width", "0.2"):
            ["plan [1/9]: choosing the judge"],
        ("queues", *db): ["queues [1/1]: counting labels per queue"],
    }
    for args, first in expected.items():
        lines, _ = _phases(list(args))
        assert lines[: len(first)] == first, (args, lines)
    estimate, _ = _phases(["estimate", *rub, *db, "--model", "judge-a"])
    assert "estimate [10/10]: rendering" in estimate


def test_store_writing_commands_announce_their_phases(store: Path, tmp_path: Path) -> None:
    db = ["--db", str(_copy(store, tmp_path))]
    rub = ["--rubric", RUBRIC]
    asked = _judgekit(["queue", "assign", *rub, *db, "--annotators", "ann1,ann2"], progress="1")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.splitlines()[:4] == ["queue assign [1/4]: reading item ids",
                                             "queue assign [2/4]: saving ann1's queue",
                                             "queue assign [3/4]: saving ann2's queue",
                                             "queue assign [4/4]: counting labels per queue"]
    assert asked.stdout.splitlines()[-1].startswith("12 items, ")
    out = tmp_path / "calls.jsonl"
    asked = _judgekit(["batch", "prepare", *rub, *db, "--dataset", "pairs", "--model", "m",
                       "--base-url", "http://127.0.0.1:9/v1", "--out", str(out)], progress="1")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.splitlines()[:2] == ["batch prepare: reading items",
                                             "batch prepare: writing requests"]
    assert len(out.read_text().splitlines()) == 12
    output = tmp_path / "answers.jsonl"
    output.write_text(json.dumps({"id": "x", "custom_id": "not-a-key", "error": None,
                                  "response": {"status_code": 200, "body": {}}}) + "\n")
    asked = _judgekit(["batch", "collect", "--output", str(output), *db], progress="1")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.splitlines()[:2] == ["batch collect [1/2]: checking files",
                                             "batch collect [2/2]: storing answers"]
    assert "not-a-key" in asked.stdout
    tasks = tmp_path / "tasks.json"
    for extra, reading in (([], "reading items"),
                           (["--with-judge-predictions", "--sample", "5"],
                            "reading items and the judge's verdicts")):
        lines, asked = _phases(["labels", "export-tasks", *rub, *db, "--out", str(tasks), *extra])
        assert lines[:3] == ["labels export-tasks [1/3]: drawing the queue",
                             f"labels export-tasks [2/3]: {reading}",
                             "labels export-tasks [3/3]: writing tasks"]
        assert lines[3].startswith("labels export-tasks: done in ")
        assert asked.stdout.startswith("wrote ")
    swapped = tmp_path / "ba.jsonl"
    said = ["A", "B", "tie"]
    swapped.write_text("".join(
        json.dumps({"item_id": f"p{i}", "judge": "judge-a", "label": said[i % 3],
                    "order": "BA"}) + "\n" for i in range(12)
    ))
    imported = _judgekit(["judgments", "import", str(swapped), *rub, *db], progress=None)
    assert imported.returncode == 0, imported.stderr
    asked = _judgekit(["probe", "position", "--imported", *rub, *db, "--dataset", "pairs",
                       "--judge", "judge-a"], progress="1")
    assert asked.returncode == 0, asked.stderr
    assert [line for line in asked.stderr.splitlines() if line.startswith("probe position [")] \
        == ["probe position [1/4]: finding the imported judge",
            "probe position [2/4]: reading both orders", "probe position [3/4]: measuring",
            "probe position [4/4]: saving the probe run"]


def test_export_bar_on_a_terminal_leaves_stdout_the_plain_export(store: Path) -> None:
    """stderr a pseudo-terminal, stdout a pipe: the bar is drawn there, stdout is the export."""
    args = ["export", "--rubric", RUBRIC, "--db", str(store)]
    plain = _judgekit(args, progress=None)
    code, drawn, out = _on_a_terminal(args)
    assert code == 0
    assert b"export" in drawn and b"\x1b[" in drawn
    assert out.decode() == plain.stdout and len(out.decode().splitlines()) == 24
