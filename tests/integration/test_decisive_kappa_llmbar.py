"""Kappa over decisive pairs on real pairwise verdicts, against sklearn on the filtered pairs.

PandaLM's published figure (n = 849 -> 0.6299) is reproduced end to end in
test_pandalm_reference.py. Here, LLMBar: its evaluators judged every pair in both orders; a pair
judged the same way in both is the judge's verdict, an inconsistent pair a tie (the
conservative rule of methods.md), and the gold label is A or B.
"""

from __future__ import annotations

import ast
import json

import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.report.per_class import decisive_kappa
from judgekit.report.stat_intervals import IntervalSpec
from tests.support.shared_data import SHARED_DATA

DATA = SHARED_DATA / "llmbar" / "llmbar.jsonl"

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not DATA.is_file(), reason=f"{DATA} is not present"),
]


def _verdicts(evaluator: str) -> tuple[list[str], list[str]]:
    judge, gold = [], []
    with DATA.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            verdicts = row["meta"]["judge_verdicts"]
            if isinstance(verdicts, str):
                verdicts = ast.literal_eval(verdicts)
            pair = verdicts.get(evaluator)
            if pair is None:
                continue
            ab, ba = pair["order_AB"], pair["order_BA"]
            judge.append(ab if ab == ba and ab in ("A", "B") else "tie")
            gold.append(row["human_labels"][0]["label"])
    return judge, gold


@pytest.mark.parametrize("evaluator", ["GPT-4/Vanilla", "ChatGPT-0301/Vanilla"])
def test_decisive_kappa_equals_sklearn_on_the_filtered_pairs(evaluator: str) -> None:
    judge, gold = _verdicts(evaluator)
    assert len(judge) > 50
    kept = [(j, g) for j, g in zip(judge, gold, strict=True) if j != "tie" and g != "tie"]
    assert 0 < len(kept) < len(judge)  # some pairs are inconsistent, so filtering matters
    stat = decisive_kappa(judge, gold, ["A", "B", "tie"], IntervalSpec(n_resamples=200))
    expected = cohen_kappa_score([j for j, _ in kept], [g for _, g in kept])
    assert stat.n == len(kept)
    assert stat.statistic == pytest.approx(expected, abs=1e-12)
    assert stat.ci_low < stat.statistic < stat.ci_high
