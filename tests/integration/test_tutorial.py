"""docs/tutorial.md tells the truth: its commands run again here, and its outputs must match.

The commands are read from the document and run in its order, in a folder holding
the files of docs/examples/tutorial, against a real store file and a real
OpenAI-compatible server on 127.0.0.1 that answers as the tutorial's
``support_judge.py`` does (the server code is executed from the document itself). ana's
30 labels are given in the real annotate app, driven by Textual's pilot: she passes the
answers that give a concrete step, which in this example are the odd-numbered items.
Every line of an output block that is not elided (``...``) must be a line the command
prints now, once run ids, timestamps, the folder and the server's port are put in a
neutral form. A change that moves a figure of the tutorial fails here; regenerate the
document's outputs with it.

The steps that need the bundled local judge (SmolLM2-135M through llama.cpp) are not
run: they are recognised and counted, so a new command in the document is either run
here or noticed.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli.annotate import PreparedQueue, exit_line, prepare_queue
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.tui.app import make_app
from judgekit.tui.dialogs import HelpScreen
from tests.support.annotate import screen_text
from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
EXAMPLES = ROOT / "docs" / "examples" / "tutorial"
#: The document's folder, URL and model, replaced by this test's own.
DOC_FOLDER = "/tmp/tut"
DOC_URL = "http://127.0.0.1:18091/v1"
#: The report the document shows after ana's first 8 labels (its verdict block).
REPORT = "judgekit report -r resolves --model support-judge-large"
#: How many of the document's commands need the local judge (and are not run here).
LOCAL_JUDGE_COMMANDS = 5
#: Polls (0.05 s apart) for the guidelines to open: a loaded machine draws slowly.
OPEN_POLLS = 1200
RUN_ID = re.compile(r"\b\d{8}T\d{6}-[0-9a-f]{8}\b")


@dataclass
class Block:
    """A fenced block of the tutorial: its info string, lines and the prose just before it."""

    info: str
    lines: list[str]
    before: str


@dataclass
class Step:
    """One ``$ command`` of a shell block and the output the document shows for it."""

    command: str
    expected: list[str] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    found: list[Block] = []
    lines = text.splitlines()
    i, prose = 0, ""
    while i < len(lines):
        if lines[i].startswith("```"):
            info, body = lines[i][3:].strip(), []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            found.append(Block(info, body, prose))
            prose = ""
        else:
            prose += lines[i] + "\n"
        i += 1
    return found


def steps(block: Block) -> list[Step]:
    """The commands of a shell block (continuation lines joined) with their outputs."""
    found: list[Step] = []
    lines = iter(block.lines)
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1].rstrip() + " " + next(lines).strip()
            found.append(Step(command))
        elif found:
            found[-1].expected.append(line)
    return found


def doc_steps() -> tuple[list[Step], list[Block]]:
    every = blocks(TUTORIAL.read_text(encoding="utf-8"))
    shell = [step for block in every if block.info == "bash" for step in steps(block)]
    return shell, every


class Tutorial:
    """A folder where the tutorial is followed, and what each of its commands printed."""

    def __init__(self, folder: Path, base_url: str, shim: Path) -> None:
        self.folder, self.base_url, self.shim = folder, base_url, shim
        self.env: dict[str, str] = {}
        self.runs: dict[str, str] = {}  # the document's run id -> this run's
        self.outputs: list[tuple[Step, list[str]]] = []
        self.skipped: list[str] = []
        self.extra: dict[str, list[str]] = {}  # outputs of steps the document shows as prose

    def norm(self, line: str) -> str:
        line = line.replace(str(self.folder), DOC_FOLDER).replace(self.base_url, DOC_URL)
        line = RUN_ID.sub("RUN", line)
        line = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00", "TIME", line)
        line = re.sub(r"elapsed [\d.]+ s, [\d.]+ judgments/s", "elapsed", line)
        line = re.sub(r"· [\d.]+/min · ETA \S+", "· RATE", line)
        return line.rstrip()

    def argv(self, command: str) -> tuple[dict[str, str], list[str]]:
        """Environment assignments and arguments, with the document's run ids mapped."""
        for doc_id, real in self.runs.items():
            command = command.replace(doc_id, real)
        words = shlex.split(command)
        env: dict[str, str] = {}
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        expanded = [re.sub(r"\$(\w+)", lambda m: {**self.env, **env}[m.group(1)], w)
                    for w in words]
        return env, expanded

    def needs_local_judge(self, command: str) -> bool:
        words = shlex.split(command)
        unmapped = [r for r in RUN_ID.findall(command) if r not in self.runs]
        return bool(
            unmapped
            or words[:2] == ["judgekit", "runs"]  # lists the local judge's run
            or (words[:2] == ["judgekit", "judge"] and "--base-url" not in words)
            or words == ["judgekit", "report", "-r", "resolves"]  # refuses: two judges
        )

    def run(self, step: Step) -> list[str]:
        command = step.command
        if command.startswith("export "):
            name, value = shlex.split(command[len("export "):])[0].split("=", 1)
            self.env[name] = self.base_url if value == DOC_URL else value
            return []
        if command.startswith("head "):
            _, count, name = shlex.split(command)
            text = (self.folder / name).read_text(encoding="utf-8")
            return text.splitlines()[: int(count.lstrip("-"))]
        if "bash gate.sh" in command:
            for doc_id, real in self.runs.items():
                command = command.replace(doc_id, real)
            env = {**os.environ, **self.env, "PATH": f"{self.shim}{os.pathsep}{os.environ['PATH']}"}
            done = subprocess.run(["bash", "-c", command], cwd=self.folder, env=env,
                                  capture_output=True, text=True, timeout=120, check=False)
            return (done.stderr + done.stdout).splitlines()
        env, words = self.argv(command)
        assert words[0] == "judgekit", command
        with pytest.MonkeyPatch.context() as patch:
            for name, value in {**self.env, **env}.items():
                patch.setenv(name, value)
            code, out, err = run_cli(*words[1:])
        lines = (err + out).splitlines()
        return [*lines, f"exit {code}"]

    def record_runs(self, step: Step, lines: list[str]) -> None:
        doc = [m.group(1) for x in step.expected if (m := re.match(r"run (\S+):", x))]
        real = [m.group(1) for x in lines if (m := re.match(r"run (\S+):", x))]
        self.runs.update(zip(doc, real, strict=False))


async def label(folder: Path, queue: PreparedQueue, upto: int) -> tuple[str, str]:
    """ana labels the queue in the app until ``upto`` are labeled: (exit line, last screen)."""
    store = open_store(folder / "judgekit.db")
    app = make_app(store, load_rubric("resolves"), queue.entries, annotator="ana")
    screen = ""
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            session = app.session
            if session.opens_guidelines:  # a queue not yet started opens on its guidelines
                for _ in range(OPEN_POLLS):
                    if isinstance(app.screen, HelpScreen):
                        break
                    await pilot.pause(0.05)
                assert isinstance(app.screen, HelpScreen), "the guidelines did not open"
                await pilot.press("escape")
            for _ in range(upto):
                if session.labeled_count >= upto:
                    break
                key = session.current_key
                assert key is not None
                if session.labeled_count == upto - 1:
                    await pilot.pause()
                    screen = screen_text(app)
                await pilot.press("p" if int(key[1][-2:]) % 2 else "f")
                await app.label_screen.settled()
            assert session.labeled_count == upto
            await pilot.press("q")
        line = exit_line(app.session, queue.name, str(store.path))
    finally:
        store.close()
    return line, screen


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tutorial]:
    shell, every = doc_steps()
    folder = tmp_path_factory.mktemp("tut")
    for name in ("outputs.jsonl", "bo-labels.csv", "gate.sh"):
        shutil.copy(EXAMPLES / name, folder / name)
    shutil.copytree(EXAMPLES / "rubrics", folder / "rubrics")
    (folder / "typo.jsonl").write_text(
        '{"id": "acc-01", "input": "Hi", "respnse": "Hello"}\n', encoding="utf-8")
    shim = folder / "bin"
    shim.mkdir()
    (shim / "judgekit").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m judgekit "$@"\n')
    (shim / "judgekit").chmod(stat.S_IRWXU)
    code = next(b for b in every if b.info == "python" and "support_judge.py" in b.lines[0])
    source = "\n".join(code.lines).split("\ntry:")[0].replace("port=18091", "port=0")
    key = next(shlex.split(s.command)[1].split("=", 1)[1] for s in shell
               if s.command.startswith("export SUPPORT_JUDGE_KEY="))
    namespace: dict[str, Any] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv("SUPPORT_JUDGE_KEY", key)
        patch.setenv("JUDGEKIT_PROGRESS", "0")
        patch.delenv("JUDGEKIT_DB", raising=False)
        patch.delenv("JUDGEKIT_BASE_URL", raising=False)
        exec(compile(source, "support_judge.py", "exec"), namespace)
        server = namespace["server"]
        tutorial = Tutorial(folder, server.base_url, shim)
        try:
            for step in shell:
                if tutorial.needs_local_judge(step.command):
                    tutorial.skipped.append(step.command)
                    continue
                if step.command.startswith("judgekit annotate"):
                    annotate(tutorial)
                    continue
                lines = tutorial.run(step)
                tutorial.record_runs(step, lines)
                tutorial.outputs.append((step, lines))
            yield tutorial
        finally:
            server.stop()


def annotate(tutorial: Tutorial) -> None:
    """ana's two sessions of the tutorial, with the report after her first 8 labels."""
    store = open_store(tutorial.folder / "judgekit.db")
    try:
        prepared = prepare_queue(store, load_rubric("resolves"), dataset="support-bot",
                                 strategy="stratified", sample=30, seed=0)
    finally:
        store.close()
    first, screen = asyncio.run(label(tutorial.folder, prepared, 8))
    tutorial.extra["first session"] = [f"drew queue {prepared.name} ({prepared.size} items)",
                                       first]
    tutorial.extra["screen"] = screen.splitlines()
    tutorial.extra["report after 8"] = tutorial.run(Step(REPORT))
    second, _ = asyncio.run(label(tutorial.folder, prepared, 30))
    tutorial.extra["second session"] = [f"resuming queue {prepared.name} ({prepared.size} items)",
                                        second]


def missing(tutorial: Tutorial, expected: list[str], actual: list[str]) -> list[str]:
    """Lines of ``expected`` that ``actual`` does not print (a trailing ' ...' is a prefix)."""
    have = [tutorial.norm(line) for line in actual]
    gone = []
    for line in expected:
        want = tutorial.norm(line)
        if not want.strip() or want.strip() == "...":
            continue
        if want.endswith(" ..."):
            if not any(h.startswith(want[:-4]) for h in have):
                gone.append(line)
        elif want not in have:
            gone.append(line)
    return gone


def test_every_shown_output_line_is_printed_by_the_command(followed: Tutorial) -> None:
    problems = [
        f"$ {step.command}\n    not printed: {line!r}"
        for step, actual in followed.outputs
        for line in missing(followed, step.expected, actual)
    ]
    assert not problems, "docs/tutorial.md is out of date:\n" + "\n".join(problems)


def test_the_steps_the_tutorial_shows_without_a_command_are_true(followed: Tutorial) -> None:
    _, every = doc_steps()
    plain = [b for b in every if b.info == ""]
    sessions = [b for b in plain if b.lines and b.lines[0].startswith(("drew", "resuming"))]
    assert len(sessions) == 2
    assert missing(followed, sessions[0].lines, followed.extra["first session"]) == []
    assert missing(followed, sessions[1].lines, followed.extra["second session"]) == []
    screen = next(b for b in plain if b.lines and "· ana · blind" in b.lines[0])
    assert missing(followed, screen.lines, followed.extra["screen"]) == []
    eight = next(b for b in plain if "first 8 labels" in b.before)
    assert missing(followed, eight.lines, followed.extra["report after 8"]) == []


def test_only_the_local_judge_steps_are_left_out(followed: Tutorial) -> None:
    assert len(followed.skipped) == LOCAL_JUDGE_COMMANDS, followed.skipped
    assert len(followed.outputs) >= 15


def test_the_check_fails_on_a_moved_figure(followed: Tutorial) -> None:
    step, actual = next((s, a) for s, a in followed.outputs if s.command == REPORT)
    kappa = next(line for line in step.expected if "Cohen's kappa (primary)" in line)
    moved = [line.replace(kappa, kappa.replace("0.933", "0.934")) for line in step.expected]
    assert missing(followed, moved, actual) == [kappa.replace("0.933", "0.934")]
