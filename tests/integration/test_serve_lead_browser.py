"""The browser session in headless chromium: focus on load, and a page that says when it ended.

Keys used to do nothing until the page was clicked once, and after ``q`` or a stopped
server the page still looked live. Now the terminal has the focus as soon as the
session opens, ``q`` leaves "Saved; you can close this tab." with a link back, and a
lost server leaves "Disconnected, reconnecting...". An admin adjudicates from the
lead page in the same app.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.store import open_store
from judgekit.types import ADJUDICATED_SOURCE
from tests.integration.test_serve_browser import CHROMIUM, CHROMIUM_ARGS, _press_until_labeled
from tests.integration.test_serve_lead import browser_login, seed_lead_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import running_service, token

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

#: The terminal's keyboard input: xterm.js's hidden textarea.
FOCUSED = ("() => document.activeElement !== null && "
           "document.activeElement.classList.contains('xterm-helper-textarea')")


def _notice(page: Any, text: str, timeout_ms: int = 60_000) -> str:
    """The notice's text once it shows ``text``."""
    page.wait_for_selector("#judgekit-notice:not([hidden])", timeout=timeout_ms)
    page.wait_for_function(
        "t => document.getElementById('judgekit-notice').textContent.includes(t)", arg=text,
        timeout=timeout_ms)
    return str(page.inner_text("#judgekit-notice"))


def test_terminal_has_focus_on_load_and_a_stopped_server_says_so(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", 4)
        record_judgments(store, rub, [judgment(rub, "d", item.id, "fail") for item in items])
        ana = token(store, "ana", "annotate")
    result = CliRunner().invoke(cli, ["queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                                      "--annotators", "ana", "--overlap", "0"])
    assert result.exit_code == 0, result.output

    with running_service(db, tmp_path) as service, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            browser_login(page, service, ana)
            page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
            page.wait_for_function(FOCUSED, timeout=10_000)  # no click
            assert page.is_hidden("#judgekit-notice")
            label = _press_until_labeled(page, db, rub.sha256)  # keys reach the app unclicked
            assert label.annotator == "ana"
            service.process.terminate()
            service.process.wait(timeout=30)
            text = _notice(page, "Disconnected")
            assert "reconnecting" in text and "Back to your queues" in text
            assert page.get_attribute("#judgekit-notice a", "href") == "/annotate"
            port = service.url.rsplit(":", 1)[1]
            again = tmp_path / "again"
            again.mkdir()
            with running_service(db, again, args=("--port", port)):
                # the page reloads itself once the server answers: a fresh, live session
                page.wait_for_selector("#judgekit-notice[hidden]", state="attached",
                                       timeout=60_000)
                page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
                page.wait_for_function(FOCUSED, timeout=10_000)
        finally:
            browser.close()


def test_admin_adjudicates_in_the_browser_and_q_says_saved(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "judgekit.db"
    sha, tokens, labels = seed_lead_store(db)
    with running_service(db, tmp_path) as service, sync_playwright() as pw:
        posted = service.post("/api/v1/labels", {"rubric": sha, "labels": labels},
                              tokens["write"])
        assert posted.status_code == 200, posted.text
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            browser_login(page, service, tokens["admin"])
            assert page.url == f"{service.url}/lead"
            page.click("text=Adjudicate in the browser")
            page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
            page.wait_for_function(FOCUSED, timeout=10_000)
            adjudication = _press_until_adjudicated(page, db, sha)
            page.keyboard.press("q")
            _notice(page, "Saved; you can close this tab.")
            assert page.get_attribute("#judgekit-notice a", "href") == f"/lead?rubric={sha}"
        finally:
            browser.close()
    assert adjudication == ("root", ADJUDICATED_SOURCE)


def _press_until_adjudicated(page: Any, db: Path, sha: str,
                             timeout_s: float = 60.0) -> tuple[str, str]:
    deadline = time.monotonic() + timeout_s
    pressed_at = 0.0
    while time.monotonic() < deadline:
        with open_store(db) as store:
            found = store.adjudicated_labels(sha)
        if found:
            return found[0].annotator, found[0].source
        if time.monotonic() - pressed_at > 5.0:
            page.keyboard.press("p")
            pressed_at = time.monotonic()
        time.sleep(0.2)
    raise AssertionError("no adjudication reached the store from the browser session")
