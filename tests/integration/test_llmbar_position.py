"""Position consistency on LLMBar's published judge verdicts (Zeng et al., ICLR 2024).

The shared copy stores, per instance and evaluator, the winner with the outputs
shown as written (``order_AB``) and swapped (``order_BA``, already mapped back to
the original indices by upstream's ``reverse_label``). Upstream's
``statistics.json`` counts correct verdicts in each order and "equal" verdicts
across orders; ``position_bias`` must reproduce the latter as its consistent count.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from judgekit.stats.bias import position_bias
from tests.support.shared_data import SHARED_DATA

DATA = SHARED_DATA / "llmbar" / "llmbar.jsonl"

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not DATA.is_file(), reason=f"{DATA} is not present"),
]


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.mark.parametrize(
    ("subset", "evaluator", "correct_ab", "correct_ba", "consistent", "n"),
    [
        ("Natural", "GPT-4/Vanilla", 95, 96, 95, 100),
        ("Natural", "Falcon/Vanilla_NoRules", 75, 77, 60, 100),
        ("Adversarial/Neighbor", "ChatGPT/Vanilla_NoRules", 25, 23, 98, 134),
    ],
)
def test_upstream_position_consistency_counts(
    rows: list[dict[str, Any]],
    subset: str,
    evaluator: str,
    correct_ab: int,
    correct_ba: int,
    consistent: int,
    n: int,
) -> None:
    chosen = [r for r in rows if r["meta"]["subset"] == subset]
    original = [r["meta"]["judge_verdicts"][evaluator]["order_AB"] for r in chosen]
    swapped = [r["meta"]["judge_verdicts"][evaluator]["order_BA"] for r in chosen]
    gold = [r["human_labels"][0]["label"] for r in chosen]

    result = position_bias(original, swapped)

    assert len(chosen) == n and result.n == n and result.n_failed == 0
    assert sum(v == g for v, g in zip(original, gold, strict=True)) == correct_ab
    assert sum(v == g for v, g in zip(swapped, gold, strict=True)) == correct_ba
    assert result.consistent == consistent
    assert result.to_dict()["position_consistency"]["statistic"] == pytest.approx(consistent / n)
    assert result.primacy + result.recency == n - consistent
