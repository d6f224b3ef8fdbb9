"""docs/import.md's notebook example runs as written, against a test server on 127.0.0.1.

The block is taken from the document itself and run with top-level ``await`` (as a
notebook cell runs it) in an empty directory; the only change is the judge's URL,
which points at the test server instead of the placeholder.
"""

from __future__ import annotations

import ast
import os
import re
import types
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "import.md"
PLACEHOLDER = "http://127.0.0.1:8000/v1"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


async def test_the_notebook_example_runs(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    (block,) = python_blocks()
    assert PLACEHOLDER in block
    with OpenAIServer() as server:
        code = compile(block.replace(PLACEHOLDER, server.base_url), str(DOC), "exec",
                       flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        namespace: dict[str, object] = {}
        cwd = Path.cwd()
        os.chdir(tmp_path)
        try:
            result = eval(code, namespace)  # a coroutine when the block awaits
            if isinstance(result, types.CoroutineType):
                await result
        finally:
            os.chdir(cwd)
            store = namespace.get("store")
            if store is not None:
                store.close()  # type: ignore[attr-defined]
        assert namespace["summary"].judged == 2  # type: ignore[attr-defined]
        assert len(server.judge_requests()) == 2
    joined = namespace["report"].to_frame()  # type: ignore[attr-defined]
    assert len(joined) > 0
    assert (tmp_path / "judgekit.db").exists()
