"""PandaLM's human test set end to end: its published figures, reproduced through the CLI.

The fixture (tests/fixtures/pandalm, Apache-2.0) holds the three annotators' labels on 999 pairs
and the verdicts gpt-3.5-turbo and PandaLM-7B published for them. The pairs are imported as
items, the verdicts with `judgments import` (the unparseable ones as parse_error) and the labels
with `labels import`; `report` and `agree` must then give:

- gpt-3.5-turbo's kappa against the majority over decisive pairs (both chose a side):
  n = 849, 0.6299 (published);
- the annotators' pairwise Cohen's kappa 0.85, 0.88, 0.86 (PandaLM's README);
- and every other figure equal to sklearn, statsmodels and the `krippendorff` package on the
  same labels, computed here independently of judgekit.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from tests.support.cli import run_cli

FIXTURE = Path(__file__).parents[1] / "fixtures" / "pandalm" / "pandalm_testset_labels.jsonl"
ANNOTATORS = ("annotator1", "annotator2", "annotator3")
JUDGES = ("gpt-3.5-turbo", "pandalm-7b")
#: PandaLM's codes: 1 / 2 = response 1 / 2 is better, 0 (or the judge's "Tie") = similar.
PAIR = {"1": "A", "2": "B", "0": "tie", "Tie": "tie"}


def _rows() -> list[dict[str, Any]]:
    with FIXTURE.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The 999 pairs (pairs of one request share its text), both judges, three annotators."""
    folder = tmp_path_factory.mktemp("pandalm")
    rows = _rows()
    items = [{"id": str(r["idx"]), "input": f"request {r['prompt_group']}",
              "response_a": f"first response of pair {r['idx']}",
              "response_b": f"second response of pair {r['idx']}",
              "meta": {"cmp_key": r["cmp_key"]}} for r in rows]
    verdicts = []
    for r in rows:
        for judge in JUDGES:
            said = r[judge]
            verdicts.append({"item_id": str(r["idx"]), "judge": judge,
                             **({"label": PAIR[said]} if said in PAIR
                                else {"status": "parse_error", "raw": said})})
    labels = [{"item_id": str(r["idx"]), "annotator": a, "label": PAIR[str(r[a])]}
              for r in rows for a in ANNOTATORS]
    db = str(folder / "pandalm.db")
    for args in (("import", _write_jsonl(folder / "items.jsonl", items)),
                 ("judgments", "import", _write_jsonl(folder / "verdicts.jsonl", verdicts),
                  "-r", "preference"),
                 ("labels", "import", _write_jsonl(folder / "labels.jsonl", labels),
                  "-r", "preference")):
        code, _, err = run_cli(*args, "--db", db)
        assert code == 0, err
    return db


@functools.cache
def _report(db: str, judge: str) -> dict[str, Any]:
    """The JSON report of ``judge`` (built once per store and judge: read-only afterwards)."""
    code, out, err = run_cli("report", "-r", "preference", "--db", db, "--model", judge,
                             "--resamples", "200", "--format", "json")
    assert code in (0, 1), err  # PASS or FAIL, never an error
    report: dict[str, Any] = json.loads(out)
    return report


def _majority_pairs(judge: str) -> tuple[list[str], list[str]]:
    """(judge, majority) over items with a usable verdict and a majority, by hand."""
    said, majority = [], []
    for r in _rows():
        if r[judge] not in PAIR:
            continue
        label, votes = Counter(PAIR[str(r[a])] for a in ANNOTATORS).most_common(1)[0]
        if votes >= 2:
            said.append(PAIR[r[judge]])
            majority.append(label)
    return said, majority


def test_gpt35_decisive_pair_kappa_is_the_published_figure(store: str) -> None:
    stats = _report(store, "gpt-3.5-turbo")["agreement"]["statistics"]
    decisive = stats["decisive_kappa"]
    assert decisive["n"] == 849
    assert round(decisive["statistic"], 4) == 0.6299
    assert decisive["ci_low"] < decisive["statistic"] < decisive["ci_high"]


@pytest.mark.parametrize("judge", JUDGES)
def test_judge_figures_equal_sklearn_on_the_same_pairs(store: str, judge: str) -> None:
    report = _report(store, judge)
    stats = report["agreement"]["statistics"]
    said, majority = _majority_pairs(judge)
    assert stats["cohen_kappa"]["n"] == len(said)
    assert stats["cohen_kappa"]["statistic"] == pytest.approx(
        cohen_kappa_score(said, majority), abs=1e-12)
    # a pairwise report prints one agreement row, ties counted as a verdict
    assert stats["agreement_with_ties"]["statistic"] == pytest.approx(
        float(np.mean(np.array(said) == np.array(majority))), abs=1e-12)
    kept = [(s, m) for s, m in zip(said, majority, strict=True) if "tie" not in (s, m)]
    assert stats["decisive_kappa"]["n"] == len(kept)
    assert stats["decisive_kappa"]["statistic"] == pytest.approx(
        cohen_kappa_score([s for s, _ in kept], [m for _, m in kept]), abs=1e-12)
    failed = sum(r[judge] not in PAIR for r in _rows())
    assert report["status_counts"]["parse_error"] == failed


def test_human_ceiling_and_agree_equal_the_published_and_independent_figures(store: str) -> None:
    rows = _rows()
    codes = np.array([[r[a] for a in ANNOTATORS] for r in rows])
    fleiss = fleiss_kappa(aggregate_raters(codes)[0])
    alpha = krippendorff.alpha(reliability_data=codes.T.astype(float),
                               level_of_measurement="nominal")

    ceiling = _report(store, "gpt-3.5-turbo")["human_ceiling"]["statistics"]
    assert ceiling["fleiss_kappa"]["statistic"] == pytest.approx(fleiss, abs=1e-12)
    assert ceiling["krippendorff_alpha"]["statistic"] == pytest.approx(alpha, abs=1e-12)

    code, out, err = run_cli("agree", "--rubric", "preference", "--db", store,
                             "--resamples", "200", "--format", "json")
    assert code == 0, err
    agree = json.loads(out)
    assert agree["n_items"] == 999 and agree["n_raters"] == 3
    assert agree["fleiss_kappa"]["statistic"] == pytest.approx(fleiss, abs=1e-12)
    assert agree["krippendorff_alpha"]["statistic"] == pytest.approx(alpha, abs=1e-12)
    published = {("annotator1", "annotator2"): 0.85, ("annotator1", "annotator3"): 0.88,
                 ("annotator2", "annotator3"): 0.86}
    pairs = {(p["rater_a"], p["rater_b"]): p for p in agree["pairwise_cohen_kappa"]["pairs"]}
    assert set(pairs) == set(published)
    for (a, b), figure in published.items():
        i, j = ANNOTATORS.index(a), ANNOTATORS.index(b)
        assert pairs[a, b]["statistic"] == pytest.approx(
            cohen_kappa_score(codes[:, i], codes[:, j]), abs=1e-12)
        assert round(pairs[a, b]["statistic"], 2) == figure


def test_agree_clusters_by_prompt_like_the_report_ceiling(store: str) -> None:
    """Pairs of one request are not independent: agree resamples requests, as report does."""
    ceiling = _report(store, "gpt-3.5-turbo")["human_ceiling"]["statistics"]
    code, out, err = run_cli("agree", "--rubric", "preference", "--db", store,
                             "--resamples", "200", "--format", "json")
    assert code == 0, err
    agree = json.loads(out)
    assert agree["cluster_by"] == "prompt" and agree["n_clusters"] == 170
    assert "resample whole prompts" in agree["notes"][0]
    for name in ("krippendorff_alpha", "fleiss_kappa", "percent_agreement"):
        assert agree[name] == ceiling[name], name  # same clusters, seed and resamples

    code, out, err = run_cli("agree", "--rubric", "preference", "--db", store,
                             "--resamples", "200", "--format", "json", "--cluster-by", "item")
    assert code == 0, err
    flat = json.loads(out)
    assert "cluster_by" not in flat and "notes" not in flat
    width = agree["krippendorff_alpha"]["ci_high"] - agree["krippendorff_alpha"]["ci_low"]
    flat_width = flat["krippendorff_alpha"]["ci_high"] - flat["krippendorff_alpha"]["ci_low"]
    assert width > 1.3 * flat_width  # whole requests resampled: honestly wider
    assert flat["krippendorff_alpha"]["statistic"] == agree["krippendorff_alpha"]["statistic"]

    code, out, err = run_cli("agree", "--rubric", "preference", "--db", store,
                             "--resamples", "200")
    assert code == 0 and "cluster bootstrap by prompt (170 clusters of 999 items)" in out, err
