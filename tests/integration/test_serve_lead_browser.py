"""The browser session in headless chromium: focus on load, and a page that says when it ended.

Keys used to do nothing until the page was clicked once, and after ``q`` or a stopped
server the page still looked live. Now the terminal has the focus as soon as the
session opens, ``q`` leaves "Saved; you can close this tab." with a link back, and a
lost server leaves "Disconnected, reconnecting...". An admin adjudicates from the
lead page in the same app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.store import open_store
from judgekit.types import ADJUDICATED_SOURCE
from tests.integration.test_serve_lead import seed_lead_store
from tests.support.browser import (
    FIRST_BYTE,
    browser_login,
    chromium_page,
    needs_chromium,
    press_until,
    press_until_labeled,
    seed_assigned_queue,
)
from tests.support.serve import running_service

pytestmark = needs_chromium

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
    db = tmp_path / "judgekit.db"
    rub, ana = seed_assigned_queue(db, 4)

    with running_service(db, tmp_path) as service, chromium_page() as page:
        browser_login(page, service, ana)
        page.wait_for_selector(FIRST_BYTE, state="attached", timeout=60_000)
        page.wait_for_function(FOCUSED, timeout=10_000)  # no click
        assert page.is_hidden("#judgekit-notice")
        label = press_until_labeled(page, db, rub.sha256)  # keys reach the app unclicked
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
            page.wait_for_selector(FIRST_BYTE, state="attached", timeout=60_000)
            page.wait_for_function(FOCUSED, timeout=10_000)


def test_admin_adjudicates_in_the_browser_and_q_says_saved(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    sha, tokens, labels = seed_lead_store(db)
    with running_service(db, tmp_path) as service, chromium_page() as page:
        posted = service.post("/api/v1/labels", {"rubric": sha, "labels": labels},
                              tokens["write"])
        assert posted.status_code == 200, posted.text
        browser_login(page, service, tokens["admin"])
        assert page.url == f"{service.url}/lead"
        page.click("text=Adjudicate in the browser")
        page.wait_for_selector(FIRST_BYTE, state="attached", timeout=60_000)
        page.wait_for_function(FOCUSED, timeout=10_000)
        adjudication = _press_until_adjudicated(page, db, sha)
        page.keyboard.press("q")
        _notice(page, "Saved; you can close this tab.")
        assert page.get_attribute("#judgekit-notice a", "href") == f"/lead?rubric={sha}"
    assert adjudication == ("root", ADJUDICATED_SOURCE)


def _press_until_adjudicated(page: Any, db: Path, sha: str) -> tuple[str, str]:
    def stored() -> tuple[str, str] | None:
        with open_store(db) as store:
            found = store.adjudicated_labels(sha)
        return (found[0].annotator, found[0].source) if found else None

    return press_until(page, stored, "adjudication")
