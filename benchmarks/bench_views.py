"""The browsing views (``latest_judgments``, ``latest_labels``, ``judge_vs_human``) at scale.

Datasette gives up on a query after 1 s. A store of J judgments (two judges, a rerun of
a tenth of the calls superseding the first outcome) and L labels (two annotators, a
relabel of a tenth) is written with bare ``sqlite3`` into judgekit's schema; then the
queries a Datasette page runs on ``judge_vs_human`` (a count, the facets by judge and
by annotator, a page of rows) are timed on the views as migration 0005 defined them
(``id IN (SELECT MAX(id) ... GROUP BY ...)``) and as ``0007_views_use_indexes``
defines them (``NOT EXISTS`` a later row of the same key, one index probe per row), and
both are checked to give the same rows.

    python benchmarks/bench_views.py                 # 200,000 judgments, 10,000 labels
    python benchmarks/bench_views.py --quick         # 20,000 x 2,000
    python benchmarks/bench_views.py --old-timeout 5 # stop an old-view query after 5 s

Prints one row per query: seconds on the old views (or ``> T`` when stopped), on the new
ones, and the row count. Results are recorded in docs/store.md.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.store import open_store

#: The first views (migration 0005), with the source value adjudications are stored
#: with (0005 compared with 'adjudicated'; migration 0011 fixed that in the views).
OLD_VIEWS = """
CREATE VIEW old_latest_judgments AS
    SELECT * FROM judgments
    WHERE id IN (SELECT MAX(id) FROM judgments GROUP BY cache_key);
CREATE VIEW old_latest_labels AS
    SELECT * FROM labels
    WHERE id IN (
        SELECT MAX(id) FROM labels
        GROUP BY rubric_hash, dataset, item_id, annotator, source = 'adjudicate'
    );
CREATE VIEW old_judge_vs_human AS
    SELECT j.rubric_name, j.rubric_version, j.rubric_hash, j.dataset, j.item_id,
           j.model_requested AS judge_model, j.base_url AS judge_endpoint,
           j.run_id, j.label AS judge_label, j.score AS judge_score,
           l.annotator, l.source AS label_source, l.blind, l.label AS human_label,
           CASE WHEN l.label IS NULL THEN NULL ELSE j.label = l.label END AS agree
    FROM old_latest_judgments j
    JOIN old_latest_labels l
      ON l.rubric_hash = j.rubric_hash AND l.dataset = j.dataset
     AND l.item_id = j.item_id
    WHERE j.status = 'ok' AND j.variant = '' AND j.sample_index = 0
"""

QUERIES = {
    "count(*)": "SELECT count(*) FROM {v}",
    "facet judge_model": "SELECT judge_model, count(*), sum(agree) FROM {v} GROUP BY judge_model",
    "facet annotator": "SELECT annotator, count(*) FROM {v} GROUP BY annotator",
    "first page": "SELECT * FROM {v} ORDER BY dataset, item_id LIMIT 100",
}


def build(db: Path, judgments: int, labels: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with open_store(db):
        pass  # the schema, every migration applied
    conn = sqlite3.connect(db)
    conn.executescript(OLD_VIEWS)
    items = judgments // 2
    rows = []
    for judge in ("judge-a", "judge-b"):
        for n in range(items):
            rows.append(("run-" + judge, "d", f"i{n}", "h", "", 0, "ok",
                         rng.choice(("pass", "fail")), judge, "http://x", "r", "1", "R",
                         f"{judge}-{n}", "2026-01-01", None))
    for n in range(items // 10):  # reruns: a later outcome of the same call wins
        rows.append(("run-2", "d", f"i{n}", "h", "", 0, "ok", "pass", "judge-a", "http://x",
                     "r", "1", "R", f"judge-a-{n}", "2026-01-02", n + 1))  # supersedes row n+1
    conn.executemany(
        "INSERT INTO judgments (run_id, dataset, item_id, item_hash, variant, sample_index, "
        "status, label, model_requested, base_url, rubric_name, rubric_version, rubric_hash, "
        "cache_key, created_at, supersedes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    labelled = labels // 2
    step = max(1, items // labelled)
    label_rows = [("d", f"i{n * step}", "R", who, rng.choice(("pass", "fail")), "2026-01-01")
                  for who in ("ana", "bo") for n in range(labelled)]
    label_rows += [("d", f"i{n * step}", "R", "ana", "pass", "2026-01-02")
                   for n in range(labelled // 10)]
    conn.executemany("INSERT INTO labels (dataset, item_id, rubric_hash, annotator, label, "
                     "created_at) VALUES (?,?,?,?,?,?)", label_rows)
    conn.commit()
    conn.close()


def timed(conn: sqlite3.Connection, sql: str, limit: float | None) -> tuple[float | None, list]:
    start = time.perf_counter()
    if limit is not None:
        conn.set_progress_handler(lambda: int(time.perf_counter() - start > limit), 10_000)
    try:
        rows = conn.execute(sql).fetchall()
    except sqlite3.OperationalError:  # interrupted
        return None, []
    finally:
        conn.set_progress_handler(None, 0)
    return time.perf_counter() - start, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 judgments, 2,000 labels")
    parser.add_argument("--old-timeout", type=float, default=60.0,
                        help="seconds before an old-view query is stopped (default 60)")
    args = parser.parse_args()
    judgments, labels = (20_000, 2_000) if args.quick else (200_000, 10_000)
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "views.db"
        build(db, judgments, labels)
        conn = sqlite3.connect(db)
        print(f"{judgments:,} judgments, {labels:,} labels")
        print(f"{'query':20} {'old views s':>12} {'new views s':>12} {'rows':>8}  same")
        for name, sql in QUERIES.items():
            old, old_rows = timed(conn, sql.format(v="old_judge_vs_human"), args.old_timeout)
            new, new_rows = timed(conn, sql.format(v="judge_vs_human"), None)
            shown = f"> {args.old_timeout:g}" if old is None else f"{old:.3f}"
            same = "-" if old is None else ("yes" if sorted(map(repr, old_rows)) == sorted(
                map(repr, new_rows)) else "NO")
            print(f"{name:20} {shown:>12} {new or 0:>12.3f} {len(new_rows):>8}  {same}")
        for view in ("latest_judgments", "latest_labels"):
            old, old_rows = timed(conn, f"SELECT id FROM old_{view}", args.old_timeout)
            new, new_rows = timed(conn, f"SELECT id FROM {view}", None)
            same = "-" if old is None else ("yes" if sorted(old_rows) == sorted(new_rows)
                                            else "NO")
            shown = f"> {args.old_timeout:g}" if old is None else f"{old:.3f}"
            print(f"{view + ' ids':20} {shown:>12} {new or 0:>12.3f} {len(new_rows):>8}  {same}")
        conn.close()


if __name__ == "__main__":
    main()
