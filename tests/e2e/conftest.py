"""End-to-end tests may skip on a laptop without the local judge, never in CI.

`.ci/run` sets ``JUDGEKIT_REQUIRE_E2E=1``; with it, a skipped e2e test is turned
into a failure so a missing install step cannot hide behind a green run.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if (
        report.skipped
        and os.environ.get("JUDGEKIT_REQUIRE_E2E")
        and item.get_closest_marker("e2e") is not None
    ):
        report.outcome = "failed"
        report.longrepr = f"e2e test skipped but JUDGEKIT_REQUIRE_E2E is set: {report.longrepr}"
