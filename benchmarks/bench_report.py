"""Report speed: 100,000 judgments and 2,000 human labels, 1,000 bootstrap resamples.

Target on a 2-core machine: under 5 s for the whole report (store reads, every
statistic with its interval, slices, ceiling, rendering all four formats).
Filling the store is not timed. Prints one row per configuration.

    python benchmarks/bench_report.py
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

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


def run(name: str, rubric_file: str, *, clusters: bool) -> float:
    rub = load_rubric(REPO / "rubrics" / rubric_file)
    with tempfile.TemporaryDirectory(prefix="judgekit-bench-") as tmp:
        path = Path(tmp) / "bench.db"
        fill(path, rub, clusters=clusters)
        start = time.perf_counter()
        store = open_store(path)
        report = build_report(store, rub, ReportOptions(n_resamples=1000, annotator="h1"))
        built = time.perf_counter() - start
        sizes = {fmt: len(render(report, fmt)) for fmt in FORMATS}
        total = time.perf_counter() - start
        store.close()
    ag = report.agreement
    assert ag is not None and ag.n_items > 1900 and report.health.total == N_JUDGMENTS
    print(
        f"| {name:<28} | {report.health.total:>9,} | {ag.n_items:>6,} | {built:>7.2f} | "
        f"{total:>7.2f} | {'yes' if total < TARGET_S else 'NO':>6} | {sizes['html'] // 1024:>5} |"
    )
    return total


def main() -> None:
    print(
        f"report on {N_JUDGMENTS:,} judgments / {N_LABELS:,} labels, 1,000 resamples; "
        f"target < {TARGET_S:.0f} s"
    )
    print(
        "| configuration                | judgments | pairs  | build s | total s "
        "| < 5 s  | HTML kB |"
    )
    print(
        "|------------------------------|-----------|--------|---------|---------|--------|---------|"
    )
    run("binary, item bootstrap", "correctness.toml", clusters=False)
    run("ordinal, item bootstrap", "helpfulness.toml", clusters=False)
    run("ordinal, cluster bootstrap", "helpfulness.toml", clusters=True)


if __name__ == "__main__":
    main()
