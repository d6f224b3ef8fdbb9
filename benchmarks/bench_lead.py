"""How long ``/lead`` takes to build, by store size and bootstrap resamples.

Run: ``python benchmarks/bench_lead.py [--sizes 500,2000,5000] [--quick]``. For each size,
a fresh store of that many judged items is shared out to four annotators with
``--overlap 0.2`` (so people vs people has items), every queue is labeled (one
annotator disagreeing with the judge on every fifth item), and the page is built
(:func:`judgekit.serve.lead_view.lead_html`, what every visit to ``/lead`` runs) with
the page's :data:`~judgekit.serve.lead_view.LEAD_RESAMPLES` and, the baseline, with the
report's 1000. The two builds run in turn, ``--repeats`` pairs per size; prints the median
build of each and the ratio page / 1000-resample build (median and spread over the pairs),
then one ``GET /lead`` through a real ``judgekit serve`` on 127.0.0.1 at the largest size.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import header, on_path, paired, ratio_line, ratio_text, table

ROOT = on_path()

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


def builder(db: Path, sha: str, resamples: int) -> Callable[[], None]:
    """A call that builds the page once with ``resamples`` bootstrap resamples."""
    from judgekit.serve.api import stored_rubric

    def build() -> None:
        lead_view.LEAD_RESAMPLES = resamples
        with open_store(db) as store:
            record = store.token_for(store_token[0])
            assert record is not None
            lead_view.lead_html(store, record, store.list_rubrics(), stored_rubric(store, sha))

    return build


store_token: list[str] = [""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500,2000,5000")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of builds per size")
    parser.add_argument("--quick", action="store_true", help="sizes 200,1000, 2 pairs")
    args = parser.parse_args()
    sizes = [200, 1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeats = 2 if args.quick else args.repeats
    page = lead_view.LEAD_RESAMPLES
    header(f"/lead page build: {page} resamples against the report's 1000 (the baseline)")
    rows, lines = [], []
    with tempfile.TemporaryDirectory() as tmp:
        last: tuple[Path, str] | None = None
        for n in sizes:
            db = Path(tmp) / f"lead-{n}.db"
            sha, store_token[0] = make_store(db, n)
            with open_store(db) as store:
                n_labels = len(store.latest_labels(sha))
            pairs = paired(builder(db, sha, page), builder(db, sha, 1000), repeats)
            rows.append((n, n_labels, f"{pairs.candidate_median:.2f}s",
                         f"{pairs.baseline_median:.2f}s", ratio_text(pairs.ratios)))
            lines.append(ratio_line(f"lead page / 1000-resample build (time), {n} items",
                                    pairs.ratios))
            last = (db, store_token[0])
        lead_view.LEAD_RESAMPLES = page
        print(table(("items", "labels", f"{page} resamples", "1000 resamples",
                     "page / 1000 (spread)"), rows))
        assert last is not None
        with running_service(last[0], Path(tmp)) as service:
            service.get("/lead", last[1])  # the first request imports the report code
            start = time.perf_counter()
            answer = service.get("/lead", last[1])
            took = time.perf_counter() - start
        print(f"GET /lead over HTTP at {sizes[-1]} items: {answer.status_code} in {took:.2f}s")
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
