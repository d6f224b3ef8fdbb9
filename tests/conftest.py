"""Fixtures shared by every test folder: a real OpenAI-compatible server and a fresh store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.store import Store, open_store
from tests.support.openai_server import OpenAIServer


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A real HTTP server on 127.0.0.1 speaking the chat completions API."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def tmp_db(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store file in a temporary directory."""
    store = open_store(tmp_path / "judgekit.db")
    try:
        yield store
    finally:
        store.close()
