"""The browsing views give the latest-wins rows from the indexes, fast enough for Datasette.

Migration 0007 rewrote ``latest_judgments``, ``latest_labels`` and ``judge_vs_human``
(``NOT EXISTS`` a later row of the key, instead of ``id IN (SELECT MAX(id) ... GROUP
BY ...)``). Here both definitions run on one store with reruns, relabels and
adjudications and must give the same rows, and a Datasette facet on ``judge_vs_human``
over 20,000 judgments must answer in seconds (the old views took 80 s).
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_views  # noqa: E402


def rows(conn: sqlite3.Connection, sql: str) -> list[str]:
    return sorted(map(repr, conn.execute(sql).fetchall()))


def test_new_views_give_the_old_rows(tmp_path: Path) -> None:
    db = tmp_path / "views.db"
    bench_views.build(db, 2_000, 400)
    conn = sqlite3.connect(db)
    try:
        conn.executemany(  # an adjudication and a later relabel of the same annotator
            "INSERT INTO labels (dataset, item_id, rubric_hash, annotator, label, created_at, "
            "source) VALUES (?,?,?,?,?,?,?)",
            [("d", "i0", "R", "ana", "fail", "2026-01-03", "adjudicate"),
             ("d", "i0", "R", "ana", "pass", "2026-01-04", "annotate")])
        conn.commit()
        for view in ("latest_judgments", "latest_labels", "judge_vs_human"):
            new = rows(conn, f"SELECT * FROM {view}")
            assert new == rows(conn, f"SELECT * FROM old_{view}"), view
            assert new
        assert conn.execute("SELECT count(*) FROM latest_labels WHERE item_id = 'i0' "
                            "AND annotator = 'ana'").fetchone()[0] == 2
    finally:
        conn.close()


def test_a_facet_on_judge_vs_human_answers_from_the_indexes(tmp_path: Path) -> None:
    db = tmp_path / "views.db"
    bench_views.build(db, 20_000, 2_000)
    conn = sqlite3.connect(db)
    try:
        start = time.perf_counter()
        found = conn.execute(bench_views.QUERIES["facet judge_model"].format(
            v="judge_vs_human")).fetchall()
        assert time.perf_counter() - start < 5  # 80 s with migration 0005's views
        assert {row[0] for row in found} == {"judge-a", "judge-b"}
        plan = " ".join(r[3] for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM judge_vs_human"))
        assert "judgments_by_cache_key" in plan and "labels_by_key" in plan
    finally:
        conn.close()
