"""The annotate app in a real browser: headless chromium labels an item over the websocket."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.store import open_store
from judgekit.types import Label
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import running_service, token

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

#: Flags that keep headless chromium off the network (this machine has none).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def test_browser_session_labels_as_the_tokens_annotator(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", 6)
        record_judgments(store, rub, [judgment(rub, "d", item.id, "fail") for item in items])
        ana = token(store, "ana", "annotate")
    result = CliRunner().invoke(cli, ["queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                                      "--annotators", "ana", "--overlap", "0"])
    assert result.exit_code == 0, result.output

    with running_service(db, tmp_path) as service, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{service.url}/login")
            page.fill("input[name=token]", ana)
            page.click("button[type=submit]")
            page.wait_for_url(f"{service.url}/annotate", timeout=60_000)
            assert ana not in page.url
            page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
            page.click("#terminal")
            label = _press_until_labeled(page, db, rub.sha256)
        finally:
            browser.close()
    assert label.annotator == "ana"
    assert label.label == "pass"
    assert label.blind is True
    assert label.source == "annotate"


def _press_until_labeled(page: Any, db: Path, rubric_hash: str, timeout_s: float = 60.0) -> Label:
    """Press ``p`` once the app listens (its first screen may take a moment to mount)."""
    deadline = time.monotonic() + timeout_s
    pressed_at = 0.0
    while time.monotonic() < deadline:
        with open_store(db) as store:
            labels = store.latest_labels(rubric_hash)
        if labels:
            assert {lb.annotator for lb in labels} == {"ana"}, labels
            return labels[0]
        if time.monotonic() - pressed_at > 5.0:
            page.keyboard.press("p")
            pressed_at = time.monotonic()
        time.sleep(0.2)
    raise AssertionError("no label reached the store from the browser session")
