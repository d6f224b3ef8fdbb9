"""Every ```python block in docs/ runs as written, so a reader who copies one is not the
first to find it broken. Each block runs in a fresh namespace in an empty directory; a
block that calls a judge endpoint runs against the test server on 127.0.0.1 (the URL in
the block is swapped for the server's); top-level ``await`` is allowed, as in a notebook.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

#: Blocks not run here, each with the reason (file name, index of the block in the file).
SKIPPED = {
    ("tutorial.md", 0): "serves until interrupted; tests/integration/test_tutorial.py runs it",
}

#: URLs a block calls a judge at, swapped for the test server's (docs/judging.md's replica
#: URLs only build a JudgeSpec, which calls nothing, so they stay as written).
ENDPOINTS = ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8080/v1")


def _blocks() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(DOCS.glob("*.md")):
        for index, match in enumerate(BLOCK.finditer(path.read_text(encoding="utf-8"))):
            found.append((path.name, index, match.group(1)))
    return found


BLOCKS = _blocks()


def test_the_docs_have_python_blocks_and_every_skip_names_one() -> None:
    keys = {(name, index) for name, index, _ in BLOCKS}
    assert len(BLOCKS) >= 6
    assert set(SKIPPED) <= keys  # a skip left behind by an edited document is an error


@pytest.mark.parametrize(("name", "index", "source"), BLOCKS,
                         ids=[f"{name}#{index}" for name, index, _ in BLOCKS])
def test_block_runs(name: str, index: int, source: str, tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch, openai_server: OpenAIServer) -> None:
    if (name, index) in SKIPPED:
        pytest.skip(SKIPPED[name, index])
    calls_a_judge = any(url in source for url in ENDPOINTS)
    for url in ENDPOINTS:
        source = source.replace(url, openai_server.base_url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEKIT_DB", raising=False)
    code = compile(source, f"docs/{name} block {index}", "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, object] = {"__name__": "__doc_block__"}
    result = eval(code, namespace)  # the project's own documentation
    if inspect.iscoroutine(result):
        asyncio.run(result)
    if calls_a_judge:  # the judge was really asked, not skipped on the way
        assert openai_server.judge_requests(), f"docs/{name} block {index} judged nothing"
