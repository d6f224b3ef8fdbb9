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
    python benchmarks/bench_views.py --quick         # 5,000 x 1,000, old queries stopped at 10 s
    python benchmarks/bench_views.py --old-timeout 5 # stop an old-view query after 5 s

Prints one row per query: seconds on the old views (the baseline; ``> T`` when stopped), on
the new ones, the row count, and the ratio new / old: the two run in turn, ``--repeats`` pairs
(one when the old query was stopped: the ratio is then an upper bound, ``<``). Results are
recorded in docs/store.md and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from _common import header, on_path, ratio_line, ratio_text, table

on_path()

from judgekit.store import open_store  # noqa: E402

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


def compare(conn: sqlite3.Connection, old_sql: str, new_sql: str, limit: float,
            repeats: int) -> tuple[list[float | None], list[float], bool, int]:
    """Old and new query in turn; (old seconds, new seconds, same rows, row count)."""
    olds: list[float | None] = []
    news: list[float] = []
    same, count = True, 0
    for k in range(repeats):
        if k % 2:
            new, new_rows = timed(conn, new_sql, None)
            old, old_rows = timed(conn, old_sql, limit)
        else:
            old, old_rows = timed(conn, old_sql, limit)
            new, new_rows = timed(conn, new_sql, None)
        olds.append(old)
        news.append(new or 0.0)
        count = len(new_rows)
        if old is None:
            break  # stopped: one pair says enough (an upper bound)
        same = same and sorted(map(repr, old_rows)) == sorted(map(repr, new_rows))
    return olds, news, same, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="5,000 judgments, 1,000 labels, old queries stopped at 10 s, 2 pairs")
    parser.add_argument("--old-timeout", type=float, default=60.0,
                        help="seconds before an old-view query is stopped (default 60)")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of old and new queries")
    args = parser.parse_args()
    judgments, labels = (200_000, 10_000)
    if args.quick:
        judgments, labels, args.old_timeout, args.repeats = 5_000, 1_000, 10.0, 2
    header(f"Browsing views, {judgments:,} judgments, {labels:,} labels: migration 0007's "
           "against 0005's (the baseline)")
    cases = {name: (sql.format(v="old_judge_vs_human"), sql.format(v="judge_vs_human"))
             for name, sql in QUERIES.items()}
    for view in ("latest_judgments", "latest_labels"):
        cases[f"{view} ids"] = (f"SELECT id FROM old_{view}", f"SELECT id FROM {view}")
    rows, lines = [], []
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "views.db"
        build(db, judgments, labels)
        conn = sqlite3.connect(db)
        for name, (old_sql, new_sql) in cases.items():
            olds, news, same, count = compare(conn, old_sql, new_sql, args.old_timeout,
                                              args.repeats)
            new_s = statistics.median(news)
            if olds[-1] is None:
                rows.append((name, f"> {args.old_timeout:g}", f"{new_s:.3f}", count, "-",
                             f"< {new_s / args.old_timeout:.3g}x"))
                continue
            ratios = [n / o for n, o in zip(news, olds, strict=True) if o]
            rows.append((name, f"{statistics.median(o for o in olds if o):.3f}",
                         f"{new_s:.3f}", count, "yes" if same else "NO", ratio_text(ratios)))
            lines.append(ratio_line(f"new / old views (time), {name}", ratios))
        conn.close()
    print(table(("query", "old views s", "new views s", "rows", "same", "new / old (spread)"),
                rows))
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
