"""How long ``/lead`` takes to build, by store size and bootstrap resamples.

Run: ``python benchmarks/bench_lead.py [--sizes 500,2000,5000] [--quick]``. For each size,
a fresh store of that many judged items is shared out to four annotators with
``--overlap 0.2`` (so people vs people has items), every queue is labeled (one
annotator disagreeing with the judge on every fifth item), and the page is built
(:func:`judgekit.serve.lead_view.lead_html`, what every visit to ``/lead`` runs) with
the page's :data:`~judgekit.serve.lead_view.LEAD_RESAMPLES` and with the report's
1000. Prints the median of three builds per cell, then one ``GET /lead`` through a
real ``judgekit serve`` on 127.0.0.1 at the largest size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from judgekit.cli.main import cli  # noqa: E402
from judgekit.serve import lead_view  # noqa: E402
from judgekit.store import open_store  # noqa: E402
from judgekit.types import Label  # noqa: E402
from tests.support.annotate import judgment, record_judgments, seed_store  # noqa: E402
from tests.support.serve import running_service, token  # noqa: E402


def make_store(db: Path, n: int) -> tuple[str, str]:
    """A store of ``n`` judged, fully labeled items; returns the rubric sha and a read token."""
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", n)
        said = {item.id: "pass" if i % 3 else "fail" for i, item in enumerate(items)}
        record_judgments(store, rub, [judgment(rub, "d", k, v) for k, v in said.items()])
        reader = token(store, "lead", "read")
    result = CliRunner().invoke(cli, ["queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                                      "--annotators", "ana,bo,cy,di", "--overlap", "0.2"])
    assert result.exit_code == 0, result.output
    with open_store(db) as store:
        labels = []
        for name in store.list_queues():
            meta, entries = store.get_queue(name) or ({}, [])
            who = meta["params"]["annotator"]
            for e in entries:
                flip = who == "bo" and int(e.item_id.split("-")[1]) % 5 == 0
                label = said[e.item_id] if not flip else ("fail" if said[e.item_id] == "pass"
                                                          else "pass")
                labels.append(Label("d", e.item_id, rub.sha256, who, label))
        store.add_labels(labels)
    return rub.sha256, reader


def build_seconds(db: Path, sha: str, resamples: int) -> float:
    from judgekit.serve.api import stored_rubric

    lead_view.LEAD_RESAMPLES = resamples
    times = []
    with open_store(db) as store:
        record = store.token_for(store_token[0])
        assert record is not None
        rub = stored_rubric(store, sha)
        rows = store.list_rubrics()
        for _ in range(3):
            start = time.perf_counter()
            lead_view.lead_html(store, record, rows, rub)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


store_token: list[str] = [""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500,2000,5000")
    parser.add_argument("--quick", action="store_true", help="sizes 200,1000")
    args = parser.parse_args()
    sizes = [200, 1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    page = lead_view.LEAD_RESAMPLES
    print(f"{'items':>6} {'labels':>7} {f'{page} resamples':>15} {'1000 resamples':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        last: tuple[Path, str] | None = None
        for n in sizes:
            db = Path(tmp) / f"lead-{n}.db"
            sha, store_token[0] = make_store(db, n)
            with open_store(db) as store:
                n_labels = len(store.latest_labels(sha))
            fast, full = build_seconds(db, sha, page), build_seconds(db, sha, 1000)
            print(f"{n:>6} {n_labels:>7} {fast:>14.2f}s {full:>14.2f}s")
            last = (db, store_token[0])
        lead_view.LEAD_RESAMPLES = page
        assert last is not None
        with running_service(last[0], Path(tmp)) as service:
            service.get("/lead", last[1])  # the first request imports the report code
            start = time.perf_counter()
            answer = service.get("/lead", last[1])
            took = time.perf_counter() - start
        print(f"GET /lead over HTTP at {sizes[-1]} items: {answer.status_code} in {took:.2f}s")


if __name__ == "__main__":
    main()
