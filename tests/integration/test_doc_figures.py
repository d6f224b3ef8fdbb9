"""Figures the docs print beside a command or an expression are the ones the code gives.

docs/reports.md lists ``judgekit plan`` commands with the number of labels each
prints (``# 196``); docs/estimate.md has a Python example whose comments give each
result (``# 0.763``). Both are rerun here, so a change of method that moves one of
them fails until the document says the new figure.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.cli import run_cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def code_blocks(text: str, info: str) -> list[list[str]]:
    """The lines of every fenced block whose info string is ``info``."""
    found, current = [], None
    for line in text.splitlines():
        if current is None and line.strip() == f"```{info}":
            current = []
        elif current is not None and line.startswith("```"):
            found.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return found


def plan_lines() -> list[tuple[str, list[str]]]:
    """``judgekit plan`` lines of docs/reports.md that state their result: (args, numbers)."""
    text = (DOCS / "reports.md").read_text(encoding="utf-8")
    found = []
    for block in code_blocks(text, ""):
        for line in block:
            command, _, comment = line.partition("#")
            if command.startswith("judgekit plan") and NUMBER.match(comment.strip()):
                found.append((command.strip(), NUMBER.findall(comment)))
    return found


@pytest.mark.parametrize(("command", "numbers"), plan_lines(), ids=lambda v: str(v))
def test_plan_commands_print_the_documented_sizes(command: str, numbers: list[str]) -> None:
    code, out, err = run_cli(*command.split()[1:])
    assert code == 0, err
    assert out.startswith(f"{numbers[0]} labels "), (command, out)
    for figure in numbers[1:]:  # e.g. "(labels only: 897)"
        assert f"labels only: {figure}" in out, (command, out)


def test_reports_md_states_some_plan_sizes() -> None:
    assert len(plan_lines()) >= 4


def flat(value: object) -> list[float]:
    if isinstance(value, tuple | list):
        return [x for v in value for x in flat(v)]
    assert isinstance(value, int | float), value
    return [float(value)]


def test_the_estimate_example_prints_its_comments() -> None:
    text = (DOCS / "estimate.md").read_text(encoding="utf-8")
    block = next(b for b in code_blocks(text, "python") if any("ppi_mean(" in x for x in b))
    namespace: dict[str, object] = {}
    checked = 0
    for line in block:
        code, _, comment = line.partition("#")
        if not code.strip():
            continue
        if "=" in code.replace("==", "") or code.startswith(("from ", "import ")):
            exec(code, namespace)  # the example's own definitions, in its order
            continue
        expected = NUMBER.findall(comment.split(":")[0])
        actual = flat(eval(code, namespace))  # an expression whose result the comment gives
        assert len(actual) == len(expected), (line, actual)
        for value, figure in zip(actual, expected, strict=True):
            places = len(figure.partition(".")[2])
            assert round(value, places) == pytest.approx(float(figure)), (line, value, figure)
        checked += 1
    assert checked >= 6
