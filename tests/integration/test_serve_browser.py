"""The annotate app in a real browser: headless chromium labels an item over the websocket."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import (
    FIRST_BYTE,
    chromium_page,
    needs_chromium,
    press_until_labeled,
    seed_assigned_queue,
)
from tests.support.serve import running_service

pytestmark = needs_chromium


def test_browser_session_labels_as_the_tokens_annotator(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    rub, ana = seed_assigned_queue(db, 6)

    with running_service(db, tmp_path) as service, chromium_page() as page:
        page.goto(f"{service.url}/login")
        page.fill("input[name=token]", ana)
        page.click("button[type=submit]")
        page.wait_for_url(f"{service.url}/annotate", timeout=60_000)
        assert ana not in page.url
        page.wait_for_selector(FIRST_BYTE, state="attached", timeout=60_000)
        page.click("#terminal")
        label = press_until_labeled(page, db, rub.sha256)
    assert label.annotator == "ana"
    assert label.label == "pass"
    assert label.blind is True
    assert label.source == "annotate"

