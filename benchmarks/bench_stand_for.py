"""What standing for another run's outcomes costs: links written, store size, report reads.

A judge run whose calls a probe answered first writes one ``run_outcomes`` row per call
instead of a judgment. This measures, on 100,000 judgments and 2,000 labels (the
``bench_report`` store):

- ``links``: recording 100,000 links for a fully cached rerun (one transaction per
  1,000, as the runner writes them), and the bytes they add to the file;
- ``report``: the whole report's time (200 resamples) when the judge run stands for a
  probe's rows, against the baseline of the same report when the judge run wrote its rows,
  the two built in turn (``--repeats`` pairs); the ratio is median and spread over the pairs.

    python benchmarks/bench_stand_for.py [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from _common import header, on_path, paired, ratio_line, ratio_text, table

REPO = on_path()

import bench_report  # noqa: E402

from judgekit.report import ReportOptions, build_report  # noqa: E402
from judgekit.rubrics import load_rubric  # noqa: E402
from judgekit.store import RunRecord, open_store  # noqa: E402

CHUNK = 1000


def _link(path: Path, rub_hash: str) -> float:
    """Make the writer a probe run, and a judge run that stands for every row; seconds."""
    with open_store(path) as store:
        store.db.execute("UPDATE runs SET kind = 'probe:injection' WHERE id = 'run'")
        store.db.conn.commit()
        store.create_run(RunRecord(
            id="judge", kind="judge", dataset="bench", rubric_hash=rub_hash, model="m",
            base_url="http://127.0.0.1:1/v1", sampling={}, capabilities={},
            judgekit_version="0.1.0", started_at="2025-01-01T00:00:02+00:00"))
        ids = [row[0] for row in store.db.execute("SELECT id FROM judgments ORDER BY id")]
        started = time.perf_counter()
        for start in range(0, len(ids), CHUNK):
            store.stand_for("judge", ids[start:start + CHUNK])
        elapsed = time.perf_counter() - started
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return elapsed


def _report(path: Path, rub_path: Path) -> int:
    rub = load_rubric(rub_path)
    with open_store(path) as store:
        return build_report(store, rub, ReportOptions(n_resamples=200)).provenance.n_judgments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="pairs of report builds")
    parser.add_argument("--quick", action="store_true", help="20,000 judgments, 2 pairs")
    args = parser.parse_args()
    if args.quick:
        bench_report.N_JUDGMENTS, args.repeats = 20_000, 2
    n = bench_report.N_JUDGMENTS
    header(f"Standing for another run's outcomes, {n:,} judgments")
    rub_path = REPO / "rubrics" / "correctness.toml"
    rub = load_rubric(rub_path)
    with tempfile.TemporaryDirectory() as tmp:
        own = Path(tmp) / "own.db"
        bench_report.fill(own, rub, clusters=False)
        with open_store(own) as store:
            store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        stood = Path(tmp) / "stood.db"
        shutil.copy(own, stood)
        before = stood.stat().st_size
        link_s = _link(stood, rub.sha256)
        added = stood.stat().st_size - before
        assert _report(own, rub_path) == _report(stood, rub_path) == n
        pairs = paired(lambda: _report(stood, rub_path), lambda: _report(own, rub_path),
                       args.repeats, warmup=False)
    print(table(("measure", "value"), [
        ("links written (1,000 per transaction)", f"{link_s:.2f} s ({n / link_s:,.0f}/s)"),
        ("bytes added by the links", f"{added / 1e6:.1f} MB ({added / n:.0f} B per link)"),
        ("report, judge run wrote its rows (baseline)", f"{pairs.baseline_median:.2f} s"),
        ("report, judge run stands for a probe's rows", f"{pairs.candidate_median:.2f} s"),
        ("stands for / wrote (time)", ratio_text(pairs.ratios)),
    ]))
    print()
    print(ratio_line("report, stands for / wrote its rows (time)", pairs.ratios))


if __name__ == "__main__":
    main()
