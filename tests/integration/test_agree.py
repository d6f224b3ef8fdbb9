"""``judgekit agree`` on hand-made files and on real human-rating datasets."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit import stats
from judgekit.cli.main import cli
from judgekit.compare.agree import agreement_from_ratings, read_ratings
from judgekit.errors import InputError
from tests.support.cli import run_cli
from tests.support.shared_data import SHARED_DATA

SHARED = SHARED_DATA


def write_csv(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "label"])
        writer.writerows(rows)
    return path


def test_figures_match_stats_on_the_same_ratings(tmp_path: Path) -> None:
    a = ["x", "y", "x", "x", "y", "y", "x", "y", "x", "x"]
    b = ["x", "y", "y", "x", "y", "x", "x", "y", "x", "y"]
    c = ["x", "y", "x", "x", "x", "y", "x", "y", "y", "x"]
    rows = [
        (str(i), r, lab)
        for r, labels in (("r1", a), ("r2", b), ("r3", c))
        for i, lab in enumerate(labels)
    ]
    path = write_csv(tmp_path / "ratings.csv", rows)
    result = CliRunner().invoke(cli, ["agree", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["krippendorff_alpha"]["statistic"] == pytest.approx(
        stats.krippendorff_alpha([a, b, c]).statistic
    )
    assert data["fleiss_kappa"]["statistic"] == pytest.approx(
        stats.fleiss_kappa(list(zip(a, b, c, strict=True))).statistic
    )
    pairs = {(p["rater_a"], p["rater_b"]): p for p in data["pairwise_cohen_kappa"]["pairs"]}
    assert pairs[("r1", "r2")]["statistic"] == pytest.approx(stats.cohen_kappa(a, b).statistic)
    assert pairs[("r1", "r2")]["n"] == 10 and pairs[("r1", "r2")]["ci_low"] is not None
    agreeing = sum((x == y) + (x == z) + (y == z) for x, y, z in zip(a, b, c, strict=True))
    assert data["percent_agreement"]["statistic"] == pytest.approx(agreeing / 30)
    text = CliRunner().invoke(cli, ["agree", str(path)]).output
    assert "r1 vs r2" in text and "n=10" in text


def test_weighted_kappa_counts_unused_levels(tmp_path: Path) -> None:
    # a 1-5 scale where nobody used 3 or 4: 2 vs 5 is three steps apart, not one
    a = [1, 2, 5, 5, 2, 1, 5, 2, 1, 5, 2, 5]
    b = [1, 5, 5, 2, 2, 1, 5, 2, 2, 5, 5, 5]
    rows = [(str(i), r, str(v)) for r, vals in (("r1", a), ("r2", b)) for i, v in enumerate(vals)]
    path = write_csv(tmp_path / "ratings.csv", rows)
    result = agreement_from_ratings(read_ratings(path, "interval"), "interval", n_resamples=50)
    expected = stats.cohen_kappa(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5]).statistic
    with pytest.raises(ValueError, match="pass labels="):  # weights over [1, 2, 5] would squeeze
        stats.cohen_kappa(a, b, weights="quadratic")
    assert result.pairs[0].stat.statistic == pytest.approx(expected)
    # non-integer ratings keep their distinct values
    halves = [(str(i), r, str(v / 2)) for i, (r, v) in enumerate([("r1", 1), ("r2", 2)] * 3)]
    path = write_csv(tmp_path / "halves.csv", halves)
    assert agreement_from_ratings(read_ratings(path, "interval"), "interval").n_ratings == 6


def test_jsonl_unequal_raters_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = [
        {"item_id": "1", "rater": "a", "label": 3},
        {"item_id": "1", "rater": "b", "label": 4},
        {"item_id": "2", "rater": "a", "label": 1},
        {"item_id": "2", "rater": "b", "label": 1},
        {"item_id": "2", "rater": "c", "label": 2},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = agreement_from_ratings(read_ratings(path, "interval"), "interval", min_overlap=1)
    assert not result.fleiss_kappa.defined and "Krippendorff" in (result.fleiss_kappa.reason or "")
    assert result.krippendorff_alpha.n == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "1", "rater": "a", "label": "good"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1: .*not a number"):
        read_ratings(bad, "ordinal")
    code, _, err = run_cli("agree", str(path), "--cluster-by", "prompt")
    assert code == 2 and "--cluster-by needs --rubric" in err
    dup = write_csv(tmp_path / "dup.csv", [("1", "a", "x"), ("1", "a", "y")])
    with pytest.raises(InputError, match=r"dup.csv:3: rater 'a' already rated item '1'"):
        read_ratings(dup)


def _ratings_file(source: Path, out: Path, *, skip_fillers: bool = False) -> Path:
    with source.open() as handle, out.open("w") as target:
        for line in handle:
            record = json.loads(line)
            if skip_fillers and record["meta"].get("is_filler"):
                continue
            for label in record["human_labels"]:
                target.write(
                    json.dumps(
                        {
                            "item_id": record["id"],
                            "rater": label["annotator"],
                            "label": label["label"],
                        }
                    )
                    + "\n"
                )
    return out


@pytest.mark.shared_data
def test_squality_interrater_alpha(tmp_path: Path) -> None:
    source = SHARED / "squality_human_eval" / "squality_human_eval.jsonl"
    if not source.exists():
        pytest.skip("../shared/data/squality_human_eval is absent")
    path = _ratings_file(source, tmp_path / "squality.jsonl")
    result = CliRunner().invoke(
        cli, ["agree", str(path), "--level", "interval", "--format", "json", "--resamples", "300"]
    )
    data = json.loads(result.output)
    # the dataset README's recomputed alpha (interval, overall rating): 0.798
    assert data["krippendorff_alpha"]["statistic"] == pytest.approx(0.798, abs=0.0005)
    assert data["n_items"] == 300 and data["n_raters"] == 4
    assert len(data["pairwise_cohen_kappa"]["pairs"]) == 6
    assert data["fleiss_kappa"]["n"] == 300  # exactly 3 reviews per item


@pytest.mark.shared_data
def test_recipe_crowd_interrater_alpha(tmp_path: Path) -> None:
    source = SHARED / "recipe_crowd_eval" / "recipe_crowd_eval.jsonl"
    if not source.exists():
        pytest.skip("../shared/data/recipe_crowd_eval is absent")
    path = _ratings_file(source, tmp_path / "recipes.jsonl", skip_fillers=True)
    result = CliRunner().invoke(
        cli, ["agree", str(path), "--level", "interval", "--format", "json", "--resamples", "300"]
    )
    data = json.loads(result.output)
    # README: alpha (interval) over the 50 non-filler texts, overall criterion: 0.440
    assert data["krippendorff_alpha"]["statistic"] == pytest.approx(0.440, abs=0.0005)
    assert data["n_items"] == 50
    assert data["fleiss_kappa"]["statistic"] is None  # 15-20 raters per text
