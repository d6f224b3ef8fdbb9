"""Headless chromium for the browser tests of ``judgekit serve``, kept off the network.

The tests drive Debian's chromium through playwright (imported only when a test
runs, so collecting the tests needs neither) against a server on 127.0.0.1, and
skip cleanly where chromium is not installed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from judgekit.store import open_store
from judgekit.types import Label, Rubric
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import Service, assign_queues, token

T = TypeVar("T")

CHROMIUM = shutil.which("chromium")

#: The mark of every test that needs chromium.
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

#: Flags that keep headless chromium off the network (this machine has none).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

#: Present once the browser session's terminal has drawn its first bytes.
FIRST_BYTE = "body.-first-byte"


@contextmanager
def chromium_page() -> Iterator[Any]:
    """A 1280x800 page of a headless chromium, closed with its browser at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 800})
        finally:
            browser.close()


def browser_login(page: Any, service: Service, secret: str) -> None:
    """Log a chromium page in through the login form."""
    page.goto(f"{service.url}/login")
    page.fill("input[name=token]", secret)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def seed_assigned_queue(db: Path, n_items: int) -> tuple[Rubric, str]:
    """``n_items`` binary items judged ``fail``, all assigned to ``ana``: the rubric, her token."""
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", n_items)
        record_judgments(store, rub, [judgment(rub, "d", item.id, "fail") for item in items])
        ana = token(store, "ana", "annotate")
    assign_queues(db, rub.sha256, "ana", "--overlap", "0")
    return rub, ana


def press_until(page: Any, stored: Callable[[], T | None], what: str,
                timeout_s: float = 60.0) -> T:
    """Press ``p`` (every 5 s: the app's first screen may take a moment to mount) until
    ``stored()`` finds what the key should have written."""
    deadline = time.monotonic() + timeout_s
    pressed_at = 0.0
    while time.monotonic() < deadline:
        found = stored()
        if found:
            return found
        if time.monotonic() - pressed_at > 5.0:
            page.keyboard.press("p")
            pressed_at = time.monotonic()
        time.sleep(0.2)
    raise AssertionError(f"no {what} reached the store from the browser session")


def press_until_labeled(page: Any, db: Path, rubric_hash: str) -> Label:
    """Press ``p`` until ``ana``'s label is stored (and nobody else's)."""
    def stored() -> Label | None:
        with open_store(db) as store:
            labels = store.latest_labels(rubric_hash)
        assert {lb.annotator for lb in labels} <= {"ana"}, labels
        return labels[0] if labels else None

    return press_until(page, stored, "label")
