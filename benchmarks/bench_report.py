"""Report speed: 100,000 judgments and 2,000 human labels, 1,000 bootstrap resamples.

Target on a 2-core machine: under 5 s for the whole report (store reads, every
statistic with its interval, slices, ceiling, rendering all four formats).
Filling the store is not timed. Prints one row per configuration.

Baseline, measured in the same run on the same file: what a team would write by
hand for just the headline figure — load every judgment and label from the store,
pair them, and bootstrap the (weighted) kappa with ``scipy.stats.bootstrap`` and
scikit-learn's ``cohen_kappa_score`` (1,000 percentile resamples, items resampled
independently). The two run in turn on the same file, ``--repeats`` pairs; the ratio is
judgekit's whole report over that one figure, median and spread over the pairs.

    python benchmarks/bench_report.py [--repeats 3] [--quick]

``--quick``: 20,000 judgments and 500 labels, the binary configuration only, 2 pairs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from _common import header, on_path, paired, ratio_line, ratio_text, table

REPO = on_path()

from judgekit.report import FORMATS, ReportOptions, build_report, render  # noqa: E402
from judgekit.rubrics import load_rubric  # noqa: E402
from judgekit.store import RunRecord, open_store  # noqa: E402
from judgekit.types import Item, Judgment, Label, Rubric  # noqa: E402

N_JUDGMENTS = 100_000
N_LABELS = 2_000
TARGET_S = 5.0


def fill(path: Path, rub: Rubric, *, clusters: bool) -> None:
    rng = random.Random(0)
    store = open_store(path)
    store.save_rubric(rub)
    labels = list(rub.scale.labels)
    items = [
        Item(
            id=f"i{i}",
            input="q",
            response="r" * rng.randint(10, 800),
            slice=f"s{i % 6}",
            cluster=f"c{i // 4}" if clusters else None,
        )
        for i in range(N_JUDGMENTS)
    ]
    store.import_items("bench", items)
    store.create_run(
        RunRecord(
            id="run",
            kind="judge",
            dataset="bench",
            rubric_hash=rub.sha256,
            model="m",
            base_url="http://127.0.0.1:1/v1",
            sampling={},
            capabilities={},
            judgekit_version="0.1.0",
            started_at="2025-01-01T00:00:00+00:00",
        )
    )
    judgments, human = [], []
    for i, item in enumerate(items):
        h = rng.choice(labels)
        status = "parse_error" if rng.random() < 0.02 else "ok"
        j = (h if rng.random() < 0.75 else rng.choice(labels)) if status == "ok" else None
        judgments.append(
            Judgment(
                run_id="run",
                dataset="bench",
                item_id=item.id,
                sample_index=0,
                status=status,  # type: ignore[arg-type]
                label=j,
                score=None,
                reasoning=None,
                raw_text=j,
                model_requested="m",
                model_returned="m",
                base_url="http://127.0.0.1:1/v1",
                sampling={},
                rubric_name=rub.name,
                rubric_version=rub.version,
                rubric_hash=rub.sha256,
                cache_key=f"k{i}",
                created_at="2025-01-01T00:00:01+00:00",
            )
        )
        if i < N_LABELS:
            human.append(
                Label(
                    dataset="bench",
                    item_id=item.id,
                    rubric_hash=rub.sha256,
                    annotator="h1",
                    label=h,
                )
            )
            if i % 5 == 0:
                human.append(
                    Label(
                        dataset="bench",
                        item_id=item.id,
                        rubric_hash=rub.sha256,
                        annotator="h2",
                        label=h if rng.random() < 0.8 else rng.choice(labels),
                    )
                )
    store.record_judgments(judgments)
    store.add_labels(human)
    store.close()


def by_hand(path: Path, rub: Rubric) -> None:
    """The baseline: the primary kappa and its CI, computed the obvious way."""
    import numpy as np
    from scipy.stats import bootstrap
    from sklearn.metrics import cohen_kappa_score

    store = open_store(path)
    verdicts = {
        j.item_id: j.label for j in store.judgments(rubric_hash=rub.sha256) if j.status == "ok"
    }
    human = {
        lab.item_id: lab.label
        for lab in store.latest_labels(rub.sha256, annotator="h1")
    }
    store.close()
    ids = sorted(set(verdicts) & set(human))
    codes = {label: i for i, label in enumerate(rub.scale.labels)}
    judge = np.array([codes[verdicts[i]] for i in ids])
    people = np.array([codes[human[i]] for i in ids])  # type: ignore[index]
    weights = "quadratic" if rub.scale.kind == "ordinal" else None
    bootstrap(
        (judge, people),
        lambda a, b: cohen_kappa_score(a, b, weights=weights),
        paired=True,
        vectorized=False,
        n_resamples=1000,
        method="percentile",
        random_state=0,
    )


def run(name: str, rubric_file: str, *, clusters: bool, repeats: int) -> tuple[list[object], str]:
    """One configuration: its table row and its ratio line."""
    rub = load_rubric(REPO / "rubrics" / rubric_file)
    built: list[float] = []
    last: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="judgekit-bench-") as tmp:
        path = Path(tmp) / "bench.db"
        fill(path, rub, clusters=clusters)

        def whole_report() -> None:
            start = time.perf_counter()
            store = open_store(path)
            report = build_report(store, rub, ReportOptions(n_resamples=1000, annotator="h1"))
            built.append(time.perf_counter() - start)
            last["report"] = report
            last["sizes"] = {fmt: len(render(report, fmt)) for fmt in FORMATS}
            store.close()

        whole_report()  # warm-up: first imports, the file's pages in the cache
        built.clear()
        pairs = paired(whole_report, lambda: by_hand(path, rub), repeats, warmup=False)
    report = last["report"]
    sizes = last["sizes"]
    ag = report.agreement  # type: ignore[attr-defined]
    assert ag is not None and ag.n_items > N_LABELS * 0.95
    assert report.health.total == N_JUDGMENTS  # type: ignore[attr-defined]
    total = pairs.candidate_median
    row = [name, f"{report.health.total:,}", f"{ag.n_items:,}",  # type: ignore[attr-defined]
           f"{statistics.median(built):.2f}", f"{total:.2f}",
           "yes" if total < TARGET_S else "NO", sizes["html"] // 1024,  # type: ignore[index]
           f"{pairs.baseline_median:.2f}", ratio_text(pairs.ratios)]
    return row, ratio_line(f"whole report / by-hand kappa (time), {name}", pairs.ratios)


def main() -> None:
    global N_JUDGMENTS, N_LABELS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="pairs of report and baseline")
    parser.add_argument("--quick", action="store_true",
                        help="20,000 judgments, 500 labels, binary only, 2 pairs")
    args = parser.parse_args()
    configs = [("binary, item bootstrap", "correctness.toml", False),
               ("ordinal, item bootstrap", "helpfulness.toml", False),
               ("ordinal, cluster bootstrap", "helpfulness.toml", True)]
    if args.quick:
        N_JUDGMENTS, N_LABELS, args.repeats, configs = 20_000, 500, 2, configs[:1]
    header(f"report on {N_JUDGMENTS:,} judgments / {N_LABELS:,} labels, 1,000 resamples; "
           f"target < {TARGET_S:.0f} s")
    rows, lines = [], []
    for name, rubric_file, clusters in configs:
        row, line = run(name, rubric_file, clusters=clusters, repeats=args.repeats)
        rows.append(row)
        lines.append(line)
    print(table(("configuration", "judgments", "pairs", "build s", "total s", "< 5 s",
                 "HTML kB", "by hand s*", "ratio (spread)"), rows))
    print(
        "* by hand: load all judgments and labels, then only the primary kappa with a "
        "1,000-resample scipy.stats.bootstrap over scikit-learn's cohen_kappa_score"
    )
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
