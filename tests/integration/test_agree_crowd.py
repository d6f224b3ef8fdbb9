"""``judgekit agree`` on a crowd: the figures from ratings as rows equal the raters x items
table's, and 20,000 annotators cost their labels, not annotators x items or their pairs."""

from __future__ import annotations

import csv
import itertools
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgekit import stats
from judgekit.compare import agree_rows
from judgekit.compare.agree import Rating, agreement_from_ratings
from judgekit.report.parity import judge_parity
from judgekit.report.stat_intervals import IntervalSpec, to_stat


def _ratings(seed: int, level: str) -> list[Rating]:
    """Raters who skip items at different rates (missing cells), on a scale of 2 to 5 values."""
    rng = random.Random(seed)
    n_items, n_raters = rng.randint(8, 50), rng.randint(3, 8)
    values = [1, 2, 3, 4, 5][: rng.choice([2, 3, 5])]
    out = []
    for r in range(n_raters):
        keep = rng.choice([0.3, 0.7, 1.0])
        for i in range(n_items):
            if r == 0 or rng.random() < keep:
                v = rng.choice(values)
                out.append(Rating(f"it{i}", f"r{r}", str(v) if level == "nominal" else float(v),
                                  "f:1"))
    return out


def _table_figures(ratings: list[Rating], level: Any, min_overlap: int,
                   spec: IntervalSpec) -> dict[str, Any]:
    """The figures the way a raters x items table gives them (None: not rated)."""
    by_item: dict[str, dict[str, Any]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, {})[r.rater] = r.label
    items, raters = sorted(by_item), sorted({r.rater for r in ratings})
    table = [[by_item[i].get(rater) for i in items] for rater in raters]
    alpha = to_stat(stats.krippendorff_alpha(table, level=level), spec)
    weights = None if level == "nominal" else "quadratic"
    domain = sorted({r.label for r in ratings})
    if level != "nominal":
        domain = [float(v) for v in range(int(domain[0]), int(domain[-1]) + 1)]
    pairs, skipped = [], 0
    for a, b in itertools.combinations(raters, 2):
        shared = [i for i in items if a in by_item[i] and b in by_item[i]]
        if len(shared) < min_overlap:
            skipped += 1
            continue
        kappa = stats.cohen_kappa([by_item[i][a] for i in shared], [by_item[i][b] for i in shared],
                                  weights=weights, labels=domain)
        pairs.append({"rater_a": a, "rater_b": b, **to_stat(kappa, spec).to_dict()})
    others = raters[1:]
    shared = [i for i in items if sum(r in by_item[i] for r in others) >= 2]
    judge = [by_item[i]["r0"] for i in shared]
    columns = {r: [by_item[i].get(r) for i in shared] for r in others}
    parity = judge_parity(judge, columns, spec,
                          numeric=None if level == "nominal" else (judge, columns))
    return {"alpha": alpha.to_dict(), "pairs": pairs, "skipped": skipped,
            "gap": parity.gap.to_dict(),
            "alt_test": None if parity.alt_test is None else parity.alt_test.to_dict(),
            "sentence": parity.sentence}


@pytest.mark.parametrize("seed", range(12))
def test_agree_figures_equal_the_raters_by_items_table(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if seed % 2:  # the rater pairs counted in many small blocks, merged
        monkeypatch.setattr(agree_rows, "PAIR_BLOCK", 7)
    level = ("nominal", "ordinal", "interval", "ratio")[seed % 4]
    ratings = _ratings(seed, level)
    min_overlap = (1, 5, 12)[seed % 3]
    spec = IntervalSpec(n_resamples=60, random_state=seed)
    got = agreement_from_ratings(ratings, level, min_overlap=min_overlap, n_resamples=60,
                                 random_state=seed, judge="r0").to_dict()
    expected = _table_figures(ratings, level, min_overlap, spec)
    assert got["krippendorff_alpha"] == expected["alpha"]
    assert got["pairwise_cohen_kappa"]["pairs"] == expected["pairs"]
    assert got["pairwise_cohen_kappa"]["pairs_skipped"] == expected["skipped"]
    parity = got["judge_parity"]
    assert parity["judge_minus_human_agreement"] == expected["gap"]
    assert parity["alt_test"] == expected["alt_test"]
    assert parity["sentence"] == expected["sentence"]


def test_agree_names_every_rater_pair_that_shares_enough_items() -> None:
    """Pairs in name order, the shared items in item order; the rest counted as skipped."""
    rows = [("i1", "a", "x"), ("i1", "b", "x"), ("i2", "a", "y"), ("i2", "b", "y"),
            ("i2", "c", "y"), ("i3", "c", "x"), ("i3", "a", "x"), ("i3", "d", "y")]
    ratings = [Rating(i, r, v, "f:1") for i, r, v in rows]
    result = agreement_from_ratings(ratings, min_overlap=2, n_resamples=20)
    assert [(p.rater_a, p.rater_b, p.stat.n) for p in result.pairs] == [
        ("a", "b", 2), ("a", "c", 2)]
    assert result.pairs_skipped == 4


def test_agree_on_a_crowd_of_20000_annotators_costs_its_labels(tmp_path: Path) -> None:
    """20,000 annotators x 1,000 items, 3 labels each: 200 million rater pairs and a
    20-million-cell table, of which the ratings fill 60,000 (hours through the table)."""
    rng = random.Random(7)
    items = [f"i{k:04d}" for k in range(1000)]
    truth = {i: rng.choice("abc") for i in items}
    path = tmp_path / "crowd.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "label"])
        for a in range(20_000):
            for i in rng.sample(items, 3):
                writer.writerow([i, f"a{a:05d}", truth[i] if rng.random() < 0.7
                                 else rng.choice("abc")])
        writer.writerows([i, "judge", truth[i]] for i in items)
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", "agree", str(path), "--judge", "judge",
         "--format", "json", "--resamples", "200"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["n_raters"], out["n_items"], out["n_ratings"]) == (20_001, 1000, 61_000)
    assert out["pairwise_cohen_kappa"]["pairs_skipped"] == 20_001 * 20_000 // 2
    assert np.isfinite(out["krippendorff_alpha"]["statistic"])
    parity = out["judge_parity"]
    assert parity["judge_minus_human_agreement"]["statistic"] > 0  # the judge gave the truth
    assert parity["alt_test"]["reason"].startswith("no annotator has 30")
