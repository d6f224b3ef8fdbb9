"""docs/align.md's worked example tells the truth: its commands run here and print its output.

The commands of the example's first shell block are run in order, in a copy of
docs/examples/align, against the example's ``lenient_judge.py`` responder on a real
server on 127.0.0.1. Every output line the document shows (``...`` elides) must be
printed, in order, once the folder and the server's URL are put in the document's form.
"""

from __future__ import annotations

import runpy
import shlex
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "align.md"
EXAMPLE = ROOT / "docs" / "examples" / "align"
DOC_FOLDER = "/tmp/align"
DOC_URL = "http://127.0.0.1:18092/v1"


def example_steps() -> list[tuple[str, list[str]]]:
    text = DOC.read_text(encoding="utf-8").split("## A worked example", 1)[1]
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_worked_example_prints_what_the_document_shows(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "align"
    shutil.copytree(EXAMPLE, folder)
    responder = runpy.run_path(str(folder / "lenient_judge.py"))["responder"]
    steps = example_steps()
    assert [command.split()[:2] for command, _ in steps] == [
        ["cd", "docs/examples/align"], ["judgekit", "import"], ["judgekit", "labels"],
        ["judgekit", "align"], ["judgekit", "judge"]]
    with OpenAIServer(responder, model="lenient-judge", keep_bodies=False) as server:
        monkeypatch.chdir(folder)
        for command, expected in steps[1:]:
            words = shlex.split(command.replace(DOC_URL, server.base_url))
            code, out, err = run_cli(*words[1:])
            assert code == 0, (command, err)
            printed = [line.replace(str(folder), DOC_FOLDER).replace(server.base_url, DOC_URL)
                       .rstrip() for line in (err + out).splitlines()]
            at = 0
            for line in expected:
                if line.strip() == "..." or not line.strip():
                    continue
                assert line.rstrip() in printed[at:], (command, line, printed)
                at = printed.index(line.rstrip(), at) + 1
