"""Queue selection: strategies, exact inclusion probabilities, determinism, the stored queue."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from judgekit.cli.annotate import prepare_queue
from judgekit.clients import JudgeSpec
from judgekit.judging.runner import run_judgments
from judgekit.rubrics import load_rubric
from judgekit.sampling import (
    Candidate,
    default_queue_name,
    inclusion_probability,
    item_signals,
    plan_queue,
)
from judgekit.store import Store
from judgekit.types import Item, Judgment, Rubric
from tests.support.annotate import judgment, record_judgments, rubric, seed_store
from tests.support.openai_server import OpenAIServer, Reply


def population(n: int, slices: tuple[str, ...] = ("a", "b")) -> list[Candidate]:
    return [Candidate("d", f"i{k:04d}", slices[k % len(slices)]) for k in range(n)]


def ids(plan) -> list[str]:
    return [e.item_id for e in plan.entries]


RUB = rubric("binary")


def verdicts(labels: dict[str, str], **kw) -> list[Judgment]:
    return [judgment(RUB, "d", item_id, label, **kw) for item_id, label in labels.items()]


def test_random_is_a_simple_random_sample_with_equal_probabilities() -> None:
    plan = plan_queue(population(500), [], strategy="random", sample=50, seed=3)
    assert len(plan.entries) == 50 and len(set(ids(plan))) == 50
    assert {e.stratum for e in plan.entries} == {"random"}
    assert all(e.inclusion_prob == pytest.approx(0.1) for e in plan.entries)
    assert [e.position for e in plan.entries] == list(range(50))


def test_same_seed_same_queue_other_seed_other_queue() -> None:
    pool = population(300)
    judged = verdicts({c.item_id: "pass" if k % 7 else "fail" for k, c in enumerate(pool)})
    for strategy in ("random", "stratified", "disagreement", "uncertain"):
        one = plan_queue(pool, judged, strategy=strategy, sample=40, seed=11)
        again = plan_queue(list(reversed(pool)), list(reversed(judged)), strategy=strategy,
                           sample=40, seed=11)
        other = plan_queue(pool, judged, strategy=strategy, sample=40, seed=12)
        assert one.entries == again.entries  # input order does not matter
        assert ids(one) != ids(other)


def test_whole_population_when_the_sample_is_larger() -> None:
    plan = plan_queue(population(10), [], strategy="stratified", sample=50, seed=0)
    assert sorted(ids(plan)) == [f"i{k:04d}" for k in range(10)]
    assert all(e.inclusion_prob == 1.0 for e in plan.entries)


def test_stratified_gives_rare_verdicts_labels() -> None:
    pool = population(1000)
    # "fail" is rare: 4% of items; a random sample of 50 would expect 2.
    judged = verdicts(
        {c.item_id: "fail" if k % 50 in (0, 1) else "pass" for k, c in enumerate(pool)}
    )
    plan = plan_queue(pool, judged, strategy="stratified", sample=50, seed=1)
    by_stratum = Counter(e.stratum for e in plan.entries)
    assert by_stratum["random"] == 10
    # equal allocation over 4 cells (2 slices x 2 verdicts): 10 each in phase 2
    assert by_stratum["slice=a|verdict=fail"] == 10 and by_stratum["slice=b|verdict=fail"] == 10
    fails = {c.item_id for k, c in enumerate(pool) if k % 50 in (0, 1)}
    assert sum(1 for e in plan.entries if e.item_id in fails) >= 20
    rare = next(e for e in plan.entries if e.stratum == "slice=a|verdict=fail")
    common = next(e for e in plan.entries if e.stratum == "slice=a|verdict=pass")
    assert rare.inclusion_prob > 10 * common.inclusion_prob


def test_disagreement_finds_samples_swaps_and_judges() -> None:
    pool = population(400)
    judged = verdicts({c.item_id: "pass" for c in pool})
    # samples disagree on i0001, a swapped pair disagrees on i0002, a second judge on i0003
    judged += [judgment(RUB, "d", "i0001", "fail", sample=1)]
    judged += [judgment(RUB, "d", "i0002", "fail", variant="swapped")]
    judged += [judgment(RUB, "d", "i0003", "fail", model="other-judge")]
    judged += [judgment(RUB, "d", "i0004", "pass", model="other-judge")]  # agrees
    signals = item_signals(judged)
    assert signals[("d", "i0001")].disagreements == {"samples"}
    assert signals[("d", "i0002")].disagreements == {"swap"}
    assert signals[("d", "i0003")].disagreements == {"judges"}
    assert signals[("d", "i0004")].disagreements == frozenset()
    assert signals[("d", "i0003")].verdict == "pass"  # the primary judge's verdict
    plan = plan_queue(pool, judged, strategy="disagreement", sample=20, seed=5)
    assert {"i0001", "i0002", "i0003"} <= set(ids(plan))
    assert all(e.inclusion_prob == 1.0 for e in plan.entries if e.item_id in
               {"i0001", "i0002", "i0003"})
    assert Counter(e.stratum for e in plan.entries)["random"] == 4


def test_failures_are_not_verdicts() -> None:
    judged = [judgment(RUB, "d", "i0000", "pass"),
              judgment(RUB, "d", "i0000", "fail", sample=1, status="parse_error")]
    assert item_signals(judged)[("d", "i0000")].disagreements == frozenset()


def test_uncertain_uses_confidence_and_falls_back_with_a_notice() -> None:
    pool = population(200)
    plain = verdicts({c.item_id: "pass" for c in pool})
    fallback = plan_queue(pool, plain, strategy="uncertain", sample=20, seed=0)
    assert fallback.strategy == "uncertain"
    assert any("falling back to the disagreement strategy" in n for n in fallback.notices)

    base = judgment(RUB, "d", "x", "pass")
    confident = [
        replace(base, item_id=c.item_id, cache_key=c.item_id, confidence=0.5 + k / 400)
        for k, c in enumerate(pool)
    ]
    plan = plan_queue(pool, confident, strategy="uncertain", sample=20, seed=0)
    assert not plan.notices
    targeted = [e for e in plan.entries if e.stratum == "uncertain"]
    assert len(targeted) == 16
    # the uncertain stratum is the 32 least confident items
    assert all(int(e.item_id[1:]) < 32 for e in targeted)


def test_inclusion_probability_special_cases() -> None:
    assert inclusion_probability(100, 10, 20, 0) == pytest.approx(0.1)
    assert inclusion_probability(100, 10, 5, 5) == 1.0
    assert inclusion_probability(100, 100, 20, 3) == 1.0
    # no overlap possible: phase 1 never takes stratum members when n_random = 0
    assert inclusion_probability(100, 0, 20, 5) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        inclusion_probability(0, 1, 1, 1)


@pytest.mark.parametrize(
    ("strategy", "sample", "share"), [("stratified", 30, 0.5), ("disagreement", 16, 0.4)]
)
def test_inclusion_probabilities_match_simulation(strategy: str, sample: int, share: float) -> None:
    """Over many seeds, each item's queue frequency matches its stored probability.

    The stratified case makes phase 1 eat into small strata, where the exact
    probability is visibly below the naive n_r/N + n_h/N_h.
    """
    pool = population(40, slices=("a", "b", "c"))
    labels = {c.item_id: "fail" if k % 6 == 0 else "pass" for k, c in enumerate(pool)}
    judged = verdicts(labels)
    judged += [judgment(RUB, "d", c.item_id, "fail", sample=1)
               for k, c in enumerate(pool) if k % 5 == 0]
    reps = 2000
    hits: Counter[str] = Counter()
    probs: dict[str, float] = {}
    sizes = []
    for seed in range(reps):
        plan = plan_queue(pool, judged, strategy=strategy, sample=sample, seed=seed,
                          random_share=share)
        sizes.append(len(plan.entries))
        for e in plan.entries:
            hits[e.item_id] += 1
            assert probs.setdefault(e.item_id, e.inclusion_prob) == e.inclusion_prob
    assert len(probs) == 40  # every item can be drawn
    worst = max(
        abs(hits[i] / reps - p) / math.sqrt(max(p * (1 - p), 1e-9) / reps)
        for i, p in probs.items() if p < 1
    )
    assert worst < 4.5
    # Horvitz-Thompson identity: probabilities sum to the expected queue size
    assert sum(probs.values()) == pytest.approx(sum(sizes) / reps, rel=0.01)


def test_invalid_arguments_name_the_problem() -> None:
    with pytest.raises(ValueError, match="strategy must be one of"):
        plan_queue(population(5), [], strategy="smart", sample=2)
    with pytest.raises(ValueError, match="sample"):
        plan_queue(population(5), [], strategy="random", sample=0)


def test_the_queue_is_stored_and_resumed(tmp_db: Store) -> None:
    rub, items = seed_store(tmp_db, "binary", 120)
    record_judgments(tmp_db, rub, [
        judgment(rub, "d", item.id, "fail" if k % 10 == 0 else "pass")
        for k, item in enumerate(items)
    ])
    first = prepare_queue(tmp_db, rub, dataset="d", strategy="stratified", sample=30, seed=7)
    assert first.created and first.size == 30
    assert first.name == default_queue_name(rub.name, rub.sha256, "d", "stratified", 7, 30)
    again = prepare_queue(tmp_db, rub, dataset="d", strategy="stratified", sample=30, seed=7)
    assert not again.created and again.name == first.name
    stored = tmp_db.get_queue(first.name)
    assert stored is not None
    meta, entries = stored
    assert meta["strategy"] == "stratified" and meta["seed"] == 7
    assert meta["params"]["sample"] == 30 and meta["params"]["population"] == 120
    assert len(entries) == 30 and all(0 < e.inclusion_prob <= 1 for e in entries)
    assert Counter(e.stratum for e in entries)["random"] == 6


def test_prepare_queue_errors(tmp_db: Store) -> None:
    rub: Rubric = rubric("binary")
    with pytest.raises(ValueError, match="no items"):
        prepare_queue(tmp_db, rub, dataset=None, strategy="random", sample=5, seed=0)
    tmp_db.import_items("d", [Item("x", "in", response="out")])
    with pytest.raises(ValueError, match=r"no dataset 'nope' in .* \(datasets: 'd'\)"):
        prepare_queue(tmp_db, rub, dataset="nope", strategy="random", sample=5, seed=0)
    made = prepare_queue(tmp_db, rub, dataset=None, strategy="random", sample=5, seed=0,
                         name="mine")
    assert made.name == "mine" and made.size == 1
    with pytest.raises(ValueError, match="another rubric version"):
        prepare_queue(tmp_db, rubric("ordinal"), dataset=None, strategy="random", sample=5,
                      seed=0, name="mine")


def test_uncertain_end_to_end_from_a_judge_with_logprobs(tmp_db: Store) -> None:
    """Judge over real HTTP with logprobs, then draw an ``uncertain`` queue from the store."""
    items = [Item(f"u{k:02d}", f"Question {k}?", response=f"Answer {k}.", reference=f"{k}")
             for k in range(40)]
    tmp_db.import_items("d", items)
    rub = load_rubric("correctness")

    def answer(body: dict[str, Any]) -> Reply:
        found = re.search(r"Question (\d+)\?", body["messages"][-1]["content"])
        k = int(found.group(1)) if found else 0  # the capability probe asks something else
        # item k puts 0.5 + k/100 on "pass" and the rest on "fail"
        return Reply(json.dumps({"reasoning": "ok", "verdict": "pass"}),
                     alternatives={"fail": 0.5 - k / 100})

    with OpenAIServer(answer) as server:
        spec = JudgeSpec(base_url=server.base_url, model="m")
        run_judgments(tmp_db, rub, items, spec, dataset="d")
    stored = {j.item_id: j.confidence for j in tmp_db.judgments(dataset="d")}
    assert stored["u00"] == pytest.approx(0.5) and stored["u39"] == pytest.approx(0.89)
    made = prepare_queue(tmp_db, rub, dataset="d", strategy="uncertain", sample=10, seed=1)
    assert made.notices == ()  # no fallback: the confidences were found
    queue = tmp_db.get_queue(made.name)
    assert queue is not None
    strata = Counter(e.stratum for e in queue[1])
    assert strata["random"] == 2 and strata["uncertain"] == 8
    # the uncertain stratum is drawn from the 16 least confident verdicts
    assert all(int(e.item_id[1:]) < 16 for e in queue[1] if e.stratum == "uncertain")


@pytest.mark.parametrize("strategy", ["random", "stratified", "disagreement", "uncertain"])
@pytest.mark.parametrize("sample", [30, 400])  # drawn, and the whole population
def test_items_of_one_source_are_adjacent_with_the_same_draw(strategy: str, sample: int) -> None:
    """Several questions and systems per story: the queue keeps each story's items together,
    drawing exactly the items, strata and inclusion probabilities of the ungrouped queue."""
    plain = population(300)
    grouped = [replace(c, group=f"story-{k // 6}") for k, c in enumerate(plain)]
    judged = [replace(j, confidence=0.5 + (k % 9) / 20) for k, j in enumerate(
        verdicts({c.item_id: "pass" if k % 5 else "fail" for k, c in enumerate(plain)}))]
    one = plan_queue(plain, judged, strategy=strategy, sample=sample, seed=4)
    two = plan_queue(grouped, judged, strategy=strategy, sample=sample, seed=4)
    key = {e.item_id: (e.inclusion_prob, e.stratum) for e in one.entries}
    assert {e.item_id: (e.inclusion_prob, e.stratum) for e in two.entries} == key
    story = {c.item_id: c.group for c in grouped}
    runs = [story[e.item_id] for e in two.entries]
    changes = sum(a != b for a, b in itertools.pairwise(runs))
    assert changes == len(set(runs)) - 1  # each story's items in one run
    assert ids(two) != sorted(ids(two))  # still shuffled: groups in random order
