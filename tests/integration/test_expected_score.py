"""A live judge's logprob-weighted expected score (G-Eval) is stored as its score and used.

The judge answers over HTTP through the real ``openai`` client from the test server, which
returns OpenAI-shaped logprobs with chosen alternatives at the verdict's first token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as sps

from judgekit.clients import JudgeSpec
from judgekit.judging.runner import run_judgments
from judgekit.report import ReportOptions, build_report
from judgekit.rubrics import load_rubric
from judgekit.store import Store
from judgekit.types import Item, Label
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe

RUBRIC = Path(__file__).resolve().parents[2] / "rubrics" / "helpfulness.toml"
#: item -> (verdict, alternatives at its first token)
ANSWERS: dict[str, tuple[str, dict[str, float]]] = {
    "a0": ("4", {"3": 0.3, "5": 0.1}),  # 0.3*3 + 0.6*4 + 0.1*5 = 3.8
    "a1": ("2", {"1": 0.5}),  # 0.5*1 + 0.5*2 = 1.5
    "a2": ("5", {}),  # 0.95 on "5" alone: 5.0
    "a3": ("3", {"2": 0.2, "4": 0.2, "No": 0.1}),  # "No" begins no level: (0.4+1.5+0.8)/0.9
}
EXPECTED = {"a0": 3.8, "a1": 1.5, "a2": 5.0, "a3": (0.2 * 2 + 0.5 * 3 + 0.2 * 4) / 0.9}


def answer(body: dict[str, Any]) -> Reply:
    if is_probe(body):
        return default_responder(body)
    text = body["messages"][-1]["content"]
    item = next(k for k in ANSWERS if f"request {k}" in text)
    verdict, alternatives = ANSWERS[item]
    return Reply(json.dumps({"reasoning": "Looked at it.", "verdict": verdict}),
                 alternatives=alternatives or None)


def test_logprob_weighted_score_is_stored_and_used_by_correlations(tmp_db: Store) -> None:
    rubric = load_rubric(str(RUBRIC))
    items = [Item(id=k, input=f"request {k}", response=f"answer {k}") for k in ANSWERS]
    with OpenAIServer(answer) as server:
        summary = run_judgments(tmp_db, rubric, items,
                                JudgeSpec(base_url=server.base_url, model="judge-m"),
                                dataset="d")
    assert summary.judged == 4
    rows = {r.item_id: r for r in tmp_db.judgments(run_id=summary.run_id)}
    for item_id, expected in EXPECTED.items():
        assert rows[item_id].label == ANSWERS[item_id][0]
        assert rows[item_id].score == pytest.approx(expected)
    human = {"a0": "4", "a1": "1", "a2": "5", "a3": "3"}
    tmp_db.add_labels([Label("d", k, rubric.sha256, "h1", v) for k, v in human.items()])
    report = build_report(tmp_db, rubric, ReportOptions(n_resamples=100))
    agreement = report.agreement
    assert agreement is not None and agreement.n_scored == 3  # a2's score equals its label
    keys = sorted(EXPECTED)
    assert agreement.stats["spearman"].statistic == pytest.approx(
        sps.spearmanr([EXPECTED[k] for k in keys], [float(human[k]) for k in keys]).statistic)
    assert "the judge's own score (not its label's value) on 3 of 4 items" in agreement.reference


def test_without_logprobs_the_score_is_the_label_value(tmp_db: Store) -> None:
    rubric = load_rubric(str(RUBRIC))
    items = [Item(id=k, input=f"request {k}", response=f"answer {k}") for k in ANSWERS]
    with OpenAIServer(answer, logprobs=False) as server:
        summary = run_judgments(tmp_db, rubric, items,
                                JudgeSpec(base_url=server.base_url, model="judge-m"),
                                dataset="d")
    rows = {r.item_id: r for r in tmp_db.judgments(run_id=summary.run_id)}
    assert {k: rows[k].score for k in ANSWERS} == {
        k: float(v[0]) for k, v in ANSWERS.items()}
