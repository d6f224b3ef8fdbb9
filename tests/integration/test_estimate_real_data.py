"""PPI++ on real human ratings: hold most items out, estimate, compare with the truth on all.

SQuALITY (../shared/data/squality_human_eval): 300 story summaries, each rated 0-100 by
three annotators. The "human" is the alphabetically first annotator of an item (pass =
rating >= 50); the "judge" is the mean of the other two (>= 50): an informative but
imperfect rater, as a judge is. The truth is the human pass rate over all 300 items.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_report_support import BINARY, Row, open_fresh, populate, rubric

from judgekit import stats
from judgekit.cli.main import cli
from tests.support.shared_data import SHARED_DATA

SOURCE = SHARED_DATA / "squality_human_eval" / "squality_human_eval.jsonl"
pytestmark = pytest.mark.shared_data


def human_and_judge() -> list[tuple[str, str, str]]:
    if not SOURCE.exists():
        pytest.skip("../shared/data/squality_human_eval is absent")
    out = []
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ratings = sorted((h["annotator"], float(h["label"])) for h in row["human_labels"])
        if len(ratings) < 3:
            continue
        human = "pass" if ratings[0][1] >= 50 else "fail"
        judge = "pass" if np.mean([r for _, r in ratings[1:]]) >= 50 else "fail"
        out.append((row["id"], human, judge))
    return out


def test_ppi_from_a_small_sample_covers_the_truth_on_all_items(tmp_path: Path) -> None:
    rows = human_and_judge()
    assert len(rows) == 300
    truth = float(np.mean([h == "pass" for _, h, _ in rows]))
    labeled = set(random.Random(1).sample(range(len(rows)), 60))
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(
        store,
        rub,
        [
            Row(item_id, judge, {"h1": human} if i in labeled else {})
            for i, (item_id, human, judge) in enumerate(rows)
        ],
    )
    store.close()
    result = CliRunner().invoke(
        cli,
        [
            "estimate",
            "--db",
            str(tmp_path / "judgekit.db"),
            "--rubric",
            str(BINARY),
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["n_labeled"] == 60 and data["n_judged"] == 300
    judge_rate = float(np.mean([j == "pass" for _, _, j in rows]))
    assert data["judge_only"]["statistic"] == pytest.approx(judge_rate)
    ppi = data["ppi"]
    assert ppi["ci_low"] <= truth <= ppi["ci_high"]
    assert ppi["ci_high"] - ppi["ci_low"] < (
        data["labels_only"]["ci_high"] - data["labels_only"]["ci_low"]
    )

    # the same over 300 random samples of 60: the intervals hold the truth as often as claimed
    y_all = np.array([h == "pass" for _, h, _ in rows], dtype=float)
    f_all = np.array([j == "pass" for _, _, j in rows], dtype=float)
    rng = np.random.default_rng(0)
    hits = {"ppi": 0, "labels": 0}
    widths = {"ppi": 0.0, "labels": 0.0}
    draws = 300
    for _ in range(draws):
        idx = rng.choice(len(rows), size=60, replace=False)
        for name, res in (
            ("ppi", stats.ppi_mean(y_all[idx], f_all[idx], f_all, bounds=(0, 1))),
            ("labels", stats.classical_mean(y_all[idx])),
        ):
            low, high = res.confidence_interval()
            hits[name] += low <= truth <= high
            widths[name] += (high - low) / draws
    assert hits["ppi"] / draws >= 0.9 and hits["labels"] / draws >= 0.9
    assert widths["ppi"] < widths["labels"]
