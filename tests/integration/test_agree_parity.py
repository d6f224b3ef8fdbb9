"""``judgekit agree --judge RATER``: one rater tested as a stand-in for the others."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli, main
from judgekit.stats.parity import agreement_gap, alt_test


def _ratings(path: Path, n_items: int, n_humans: int, seed: int) -> tuple[Path, dict]:
    rng = random.Random(seed)
    labels: dict[str, list[str]] = {f"h{j}": [] for j in range(n_humans)}
    labels["llm"] = []
    for _ in range(n_items):
        truth = rng.choice("abc")
        for rater in labels:
            accuracy = 0.95 if rater == "llm" else 0.7
            labels[rater].append(truth if rng.random() < accuracy else rng.choice("abc"))
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "label"])
        for rater, values in labels.items():
            writer.writerows((str(i), rater, v) for i, v in enumerate(values))
    return path, labels


def test_agree_judge_runs_the_alt_test_with_three_annotators(tmp_path: Path) -> None:
    path, labels = _ratings(tmp_path / "r.csv", 60, 3, seed=3)
    result = CliRunner().invoke(
        cli, ["agree", str(path), "--judge", "llm", "--format", "json", "--resamples", "300"]
    )
    assert result.exit_code == 0, result.output
    parity = json.loads(result.output)["judge_parity"]
    # items are read in sorted id order; the statistics do not depend on the order
    order = sorted(range(60), key=str)
    judge = [labels["llm"][i] for i in order]
    humans = {h: [labels[h][i] for i in order] for h in ("h0", "h1", "h2")}
    expected = alt_test(judge, humans, epsilon=0.2)
    assert parity["alt_test"]["winning_rate"] == expected.winning_rate
    gap = agreement_gap(judge, humans, n_resamples=300, random_state=0)
    assert parity["judge_minus_human_agreement"]["statistic"] == gap.statistic
    assert parity["judge_minus_human_agreement"]["ci_low"] == gap.ci_low
    text = CliRunner().invoke(cli, ["agree", str(path), "--judge", "llm", "--resamples", "300"])
    assert "Judge parity: llm against the other raters" in text.output
    assert "alternative annotator test" in text.output


@pytest.mark.parametrize(
    ("judge", "message"), [("gpt", "'gpt' is not a rater"), ("llm", "two or more other raters")]
)
def test_agree_judge_errors_name_the_problem(tmp_path: Path, capsys, judge, message) -> None:
    path, _ = _ratings(tmp_path / "r.csv", 20, 1, seed=4)
    with pytest.raises(SystemExit) as exit_info:
        main(["agree", str(path), "--judge", judge])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
