"""The report's system-level intervals: for the population means, with a coverage note only
for a design outside the measured range (fewer than 20 groups), in every format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_report_levels import RUBRIC, report_json, summeval_like, write_store

from tests.support.cli import run_cli

NOTE_START = "System-level intervals rest on"


def _subset(data: dict[str, np.ndarray], n_docs: int) -> dict[str, np.ndarray]:
    keep = data["doc"] < n_docs
    return {key: value[keep] for key, value in data.items()}


@pytest.mark.parametrize("n_docs", [12, 24])
def test_coverage_note_only_below_the_measured_range(tmp_path: Path, n_docs: int) -> None:
    db = write_store(tmp_path, _subset(summeval_like(), n_docs))
    system = report_json(db, "--reference", "mean")["levels"]["system"]
    figures = system["statistics"]
    assert figures["kendall_tau"]["ci_low"] <= figures["kendall_tau"]["statistic"]
    assert figures["kendall_tau"]["statistic"] <= figures["kendall_tau"]["ci_high"]
    outputs = [" ".join(run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--resamples",
                                "200", *fmt)[1].split())
               for fmt in ((), ("--format", "md"), ("--format", "html"))]
    # the accuracy interval lets exactly the unsettled pairs go either way
    settled, pairs = system["n_pairs_settled"], system["n_pairs"]
    accuracy = figures["pairwise_accuracy"]
    assert 0 <= settled <= pairs == 28
    assert (accuracy["ci_high"] - accuracy["ci_low"]) * pairs == pytest.approx(pairs - settled)
    for out in outputs:
        assert f"the groups settle the order of {settled} of 28 on both sides" in out
        assert "approximate" not in out  # the old blanket note is gone
        assert "System-level intervals are for the" in out and "population means" in out
    if n_docs < 20:
        assert system["note"] is not None and system["note"].startswith(NOTE_START)
        assert f"rest on {n_docs} groups" in system["note"]
        assert all(NOTE_START in out for out in outputs)
    else:
        assert system["note"] is None
        assert not any(NOTE_START in out for out in outputs)


def test_compare_judges_prints_the_coverage_note_below_20_groups(tmp_path: Path) -> None:
    import json

    data = _subset(summeval_like(), 12)
    db = write_store(tmp_path, data)
    rng = np.random.default_rng(3)
    other = tmp_path / "other.jsonl"
    with other.open("w") as f:
        for i in range(data["doc"].size):
            score = float(np.clip(data["score"][i] + rng.choice([-0.5, 0.0, 0.5]), 1, 5))
            f.write(json.dumps({"item_id": f"d{data['doc'][i]:03d}-s{data['system'][i]}",
                                "judge": "other-judge", "label": str(round(score)),
                                "score": score}) + "\n")
    code, out, err = run_cli("judgments", "import", str(other), "--rubric", str(RUBRIC),
                             "--db", db)
    assert code == 0, err
    code, out, err = run_cli("compare", "judges", "-r", str(RUBRIC), "--db", db, "--model-a",
                             "geval-gpt4", "--model-b", "other-judge", "--resamples", "200")
    assert code == 0, err
    text = " ".join(out.split())
    assert "System level (by model; 8 systems, 28 pairs)" in text
    assert text.count("System-level intervals rest on 12 groups") == 1
