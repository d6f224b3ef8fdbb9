"""A report (and its estimate) reads one state of the store while a judge writes to it.

A second process adds judgments of the reported judge one transaction at a time, as
a judge run does, while reports are built from the same file; every count of each
report must describe the same rows.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from judgekit.report import ReportOptions, build_report
from judgekit.types import Item
from tests.integration.test_report_support import BINARY, REPO, Row, open_fresh, populate, rubric

N_ITEMS = 3000
JUDGED = 300

WRITER = """
import sys
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item
from tests.integration.test_report_support import make_judgment

rub = load_rubric(sys.argv[2])
with open_store(sys.argv[1]) as store:
    items = {i.id: i for i in store.iter_items("ds")}
    for k in range(int(sys.argv[3]), int(sys.argv[4])):
        item = items[f"i{k}"]
        store.record_judgment(make_judgment(rub, "run-1", "ds", item, "pass"))
"""


def test_every_count_of_a_report_describes_one_state_of_the_store(tmp_path: Path) -> None:
    rub = rubric(BINARY)
    store = open_fresh(tmp_path)
    rows = [Row(f"i{k}", "pass" if k % 3 else "fail", {"ann": "pass" if k % 4 else "fail"})
            for k in range(JUDGED)]
    populate(store, rub, rows)
    store.import_items("ds", [Item(id=f"i{k}", input=f"question i{k}", response="a response")
                              for k in range(JUDGED, N_ITEMS)])
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(store.path), str(BINARY), str(JUDGED), str(N_ITEMS)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE)
    try:
        start = store.count_judgments()
        deadline = time.monotonic() + 60
        while store.count_judgments() == start and time.monotonic() < deadline:
            time.sleep(0.01)  # the writer is under way
        seen = []
        while writer.poll() is None and len(seen) < 12:
            report = build_report(store, rub, ReportOptions(n_resamples=20))
            assert report.estimate is not None
            counts = (report.provenance.n_judgments, report.health.total,
                      report.estimate.n_judged)
            seen.append(counts)
            assert len(set(counts)) == 1, counts
        assert len(seen) >= 2 and len({c[0] for c in seen}) >= 2, seen  # it did read mid-write
    finally:
        writer.kill()
        writer.communicate()
        store.close()
