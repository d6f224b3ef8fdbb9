"""Report builds inside the server: a few at a time, each within a time limit.

The gate, the estimate and the reports build the whole calibration report, whose
cost grows with the store (one legal POST of 100,000 labels by 100,000 annotators
once made a report cost minutes and gigabytes). A request must not be able to tie
the server up that way, so builds run on a small pool of their own:

- at most ``max_builds`` at once; one more request is answered ``503`` at once
  with the reason and a ``Retry-After``;
- a build that takes longer than ``timeout_s`` is answered ``503`` with the reason
  (the build itself cannot be interrupted: it finishes in the background and
  holds its place in the pool until then, so runaway builds stay bounded too).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from fastapi import HTTPException

from judgekit.serve.auth import StorePool
from judgekit.store import Store

T = TypeVar("T")
#: Defaults of ``judgekit serve --report-timeout`` and ``--max-report-builds``.
DEFAULT_REPORT_TIMEOUT_S = 120.0
DEFAULT_MAX_BUILDS = 2


class ReportBuilds:
    """The server's report-building pool (its threads keep one store connection each)."""

    def __init__(self, pool: StorePool, *, timeout_s: float = DEFAULT_REPORT_TIMEOUT_S,
                 max_builds: int = DEFAULT_MAX_BUILDS) -> None:
        self.pool, self.timeout_s, self.max_builds = pool, timeout_s, max_builds
        self._slots = threading.BoundedSemaphore(max_builds)
        self._executor = ThreadPoolExecutor(max_builds, thread_name_prefix="judgekit-report")

    def run(self, build: Callable[[Store], T]) -> T:
        """``build(store)`` on the pool within the limits, else ``HTTPException(503)``."""
        if not self._slots.acquire(blocking=False):
            raise HTTPException(503, detail=(
                f"{self.max_builds} reports are being built already, the server's limit "
                "(judgekit serve --max-report-builds); try again shortly"),
                headers={"Retry-After": "10"})

        def work() -> T:
            try:
                return build(self.pool.get())
            finally:
                self._slots.release()

        future = self._executor.submit(work)
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            raise HTTPException(503, detail=(
                f"the report took longer than {self.timeout_s:g} s, the server's limit "
                "(judgekit serve --report-timeout); build it with `judgekit report` instead, "
                "or narrow it (dataset=, judge_run=)"), headers={"Retry-After": "60"}) from None

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


__all__ = ["DEFAULT_MAX_BUILDS", "DEFAULT_REPORT_TIMEOUT_S", "ReportBuilds"]
