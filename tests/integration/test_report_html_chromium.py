"""The HTML report opened in headless Chromium with all networking disabled.

Skips when no Chromium is installed locally (CI installs Debian's ``chromium``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_report_formats import rich_store

from judgekit.report import render

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed"),
    pytest.mark.slow,
]

OFFLINE = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
    "--proxy-server=127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *OFFLINE, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_html_report_renders_its_plots_offline(tmp_path: Path) -> None:
    _, report = rich_store(tmp_path)
    page = tmp_path / "report.html"
    page.write_text(render(report, "html"), encoding="utf-8")
    result = chromium(tmp_path, "--dump-dom", page.as_uri())
    dom = result.stdout
    assert result.returncode == 0, result.stderr[-2000:]
    for plot in ("confusion-heatmap", "slice-forest", "length-scatter", "position-bars"):
        assert f'id="{plot}"' in dom, plot
    assert dom.count('class="cell"') == len(report.agreement.confusion.labels) ** 2  # type: ignore[union-attr]
    assert dom.count('class="bar"') == 3
    assert report.verdict.decision in dom

    shot = tmp_path / "shot.png"
    result = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,3000", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a blank page is a few KB
