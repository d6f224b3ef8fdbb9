"""The pure parts of ``judgekit align``: rubric versions with examples, the TOML writer,
example choice, aggregation of samples, the split's allocation."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.align.candidates import check_no_leak, derive, examples_candidate, pick_examples
from judgekit.align.evaluate import aggregate
from judgekit.align.splits import _allocate, _components, check_fractions, needed_labels
from judgekit.align.toml_text import dump
from judgekit.errors import InputError, RubricError
from judgekit.prompts import EXAMPLES_HEADING, render_messages
from judgekit.rubrics import load_rubric, rubric_from_text
from judgekit.types import Example, Item

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / "rubrics" / "correctness.toml"
ORDINAL = REPO / "rubrics" / "helpfulness.toml"
ITEM = Item("x", "What is 2+2?", response="4", reference="4")


def test_existing_rubric_hash_and_prompt_unchanged_without_examples() -> None:
    rubric = load_rubric(BINARY)
    assert rubric.parent == "" and rubric.examples == ()
    assert EXAMPLES_HEADING not in render_messages(rubric, ITEM)[0]["content"]


def test_examples_appended_after_the_instructions_or_at_the_placeholder() -> None:
    base = load_rubric(BINARY)
    example = Example("i1", "fail", "q?", "wrong answer", note="misses the point", dataset="d")
    derived = derive(base, suffix="ex", changes="one example", examples=[example])
    assert derived.parent == base.sha256 and derived.version == "1+ex"
    system, user = (m["content"] for m in render_messages(derived, ITEM))
    assert system.startswith(render_messages(base, ITEM)[0]["content"])
    assert "Example 1\nInput: q?\nResponse: wrong answer\nVerdict: fail\nNote: misses the point" \
        in system and EXAMPLES_HEADING not in user
    text = derived.source_text.replace("Question: {input}", "{examples}\n\nQuestion: {input}")
    placed = rubric_from_text(text)
    system, user = (m["content"] for m in render_messages(placed, ITEM))
    assert EXAMPLES_HEADING in user and EXAMPLES_HEADING not in system
    assert rubric_from_text(derived.source_text).sha256 == derived.sha256


def test_example_off_scale_or_bad_parent_refused() -> None:
    text = BINARY.read_text()
    with pytest.raises(RubricError, match=r"examples\.0\.label: 'maybe' is not on the scale"):
        rubric_from_text(text + '\n[[examples]]\nitem_id = "a"\nlabel = "maybe"\nresponse = "r"\n')
    with pytest.raises(RubricError, match="parent: must be the sha256"):
        rubric_from_text('parent = "abc"\n' + text)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
                       st.one_of(st.text(max_size=40), st.integers(-5, 5), st.booleans()),
                       max_size=5))
def test_toml_writer_round_trips(data: dict[str, object]) -> None:
    nested = {**data, "table": dict(data), "rows": [dict(data), {"k": "a\nb'''c"}]}
    assert tomllib.loads(dump(nested)) == nested


def test_examples_balanced_disagreements_first_train_only() -> None:
    train = [("d", f"t{i}") for i in range(20)]
    reference = {k: ("pass" if i < 14 else "fail") for i, k in enumerate(train)}
    verdicts = {k: ("fail" if i in (1, 2, 3) else reference[k]) for i, k in enumerate(train)}
    picked = pick_examples(train, reference, verdicts, ("pass", "fail"), 4, seed=0)
    assert [reference[k] for k in picked].count("fail") == 2  # balanced over labels
    wrong = {train[1], train[2], train[3]}
    assert sum(k in wrong for k in picked) == 2  # disagreements before agreements
    assert set(picked) <= set(train)


def test_leaking_example_refused() -> None:
    base = load_rubric(BINARY)
    candidate = examples_candidate(base, [Example("t1", "pass", "q", "r", dataset="d")], 1)
    check_no_leak([candidate], {("d", "other"): "test"})
    with pytest.raises(InputError, match="'t1' is in the test split"):
        check_no_leak([candidate], {("d", "t1"): "test"})


def test_aggregate_majority_and_ordinal_mean() -> None:
    binary, ordinal = load_rubric(BINARY).scale, load_rubric(ORDINAL).scale
    assert aggregate(["pass", "fail", "fail"], binary) == "fail"
    assert aggregate([], binary) is None
    assert aggregate(["1", "5", "5"], ordinal) == "4"  # mean 3.67 -> 4


def test_split_allocation_keeps_fractions_and_groups() -> None:
    fractions = check_fractions({"train": 0.3, "dev": 0.35, "test": 0.35})
    groups = {f"g{i}": [("d", f"g{i}a"), ("d", f"g{i}b")] for i in range(100)}
    parts = _allocate(groups, fractions, seed=1)
    counts = {p: 2 * list(parts.values()).count(p) for p in ("train", "dev", "test")}
    assert counts == {"train": 60, "dev": 70, "test": 70}
    assert needed_labels(fractions) == 58
    items = {("d", "a"): Item("a", "same"), ("d", "b"): Item("b", "same"),
             ("d", "c"): Item("c", "other", cluster="k"), ("d", "e"): Item("e", "x", cluster="k"),
             ("d", "f"): Item("f", "alone")}
    group = _components(sorted(items), items)
    assert group[("d", "a")] == group[("d", "b")] and group[("d", "c")] == group[("d", "e")]
    assert len(set(group.values())) == 3


def test_paired_difference_matches_sklearn_and_statsmodels() -> None:
    import numpy as np
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.contingency_tables import mcnemar

    from judgekit.align.evaluate import paired_difference
    from judgekit.report.stat_intervals import IntervalSpec

    rng = np.random.default_rng(3)
    n = 120
    human = np.where(rng.random(n) < 0.6, "pass", "fail")
    flip = {"pass": "fail", "fail": "pass"}
    base = np.array([h if rng.random() < 0.7 else flip[h] for h in human])
    cand = np.array([h if rng.random() < 0.85 else flip[h] for h in human])
    keys = [("d", f"i{i}") for i in range(n)]
    items = {k: Item(k[1], f"question {k[1]}") for k in keys}
    result = paired_difference(dict(zip(keys, base, strict=True)),
                               dict(zip(keys, cand, strict=True)),
                               dict(zip(keys, human, strict=True)), keys, items,
                               load_rubric(BINARY).scale, IntervalSpec(n_resamples=500))
    expected = cohen_kappa_score(cand, human) - cohen_kappa_score(base, human)
    assert result.difference.statistic == pytest.approx(expected)
    assert result.baseline.statistic == pytest.approx(cohen_kappa_score(base, human))
    right_c, right_b = cand == human, base == human
    table = [[np.sum(right_c & right_b), np.sum(right_c & ~right_b)],
             [np.sum(~right_c & right_b), np.sum(~right_c & ~right_b)]]
    assert result.pvalue == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert result.agreement_test == "McNemar exact" and result.clusters is None
    assert result.difference.ci_low < expected < result.difference.ci_high


def test_ordinal_difference_is_the_quadratic_weighted_kappa_difference() -> None:
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    from judgekit.align.evaluate import paired_difference, score_part
    from judgekit.report.stat_intervals import IntervalSpec

    rng = np.random.default_rng(5)
    n = 90
    human = rng.integers(1, 6, n)
    base = np.clip(human + rng.integers(-2, 3, n), 1, 5)
    cand = np.clip(human + rng.integers(-1, 2, n), 1, 5)
    keys = [("d", f"o{i}") for i in range(n)]
    items = {k: Item(k[1], "same prompt" if i < 10 else f"prompt {i}")
             for i, k in enumerate(keys)}  # ten items share a prompt: one cluster
    as_labels = [dict(zip(keys, map(str, xs), strict=True)) for xs in (base, cand, human)]
    scale = load_rubric(ORDINAL).scale
    result = paired_difference(*as_labels, keys, items, scale, IntervalSpec(n_resamples=300))
    expected = (cohen_kappa_score(cand, human, weights="quadratic")
                - cohen_kappa_score(base, human, weights="quadratic"))
    assert result.statistic == "weighted_kappa"
    assert result.difference.statistic == pytest.approx(expected)
    assert result.clusters == 81 and result.agreement_test == "paired cluster bootstrap"
    scored = score_part(as_labels[1], {}, as_labels[2], keys, items, scale,
                        IntervalSpec(n_resamples=300))
    assert scored.primary.statistic == pytest.approx(
        cohen_kappa_score(cand, human, weights="quadratic"))


@pytest.mark.parametrize("path", sorted([*REPO.glob("rubrics/*.toml"),
                                         *REPO.glob("judgekit/bundled_rubrics/*.toml")]),
                         ids=lambda p: p.name)
def test_every_shipped_rubric_derives_with_an_example(path: Path) -> None:
    base = load_rubric(path)
    pair = base.scale.kind == "pairwise"
    example = Example("e1", base.scale.labels[-1], "q 'quoted' {braces}\nline two",
                      None if pair else "r '''", "a" if pair else None, "b" if pair else None,
                      note="why\twith tab")
    derived = derive(base, suffix="x", changes="multi\nline", system="New {{literal}} text",
                     examples=[example])
    assert derived.examples == (example,) and derived.scale == base.scale
    assert rubric_from_text(derived.source_text).sha256 == derived.sha256
    item = (Item("i", "in", response_a="a", response_b="b", reference="x") if pair
            else Item("i", "in", response="r", reference="x"))
    system = render_messages(derived, item)[0]["content"]
    assert system.startswith("New {literal} text") and "{braces}" in system


def test_identical_verdicts_have_no_interval_and_show_no_improvement() -> None:
    from judgekit.align.evaluate import paired_difference
    from judgekit.report.stat_intervals import IntervalSpec

    keys = [("d", f"i{i}") for i in range(40)]
    human = {k: ("pass" if i % 3 else "fail") for i, k in enumerate(keys)}
    judge = {k: ("pass" if i % 4 else "fail") for i, k in enumerate(keys)}
    items = {k: Item(k[1], k[1]) for k in keys}
    result = paired_difference(judge, dict(judge), human, keys, items,
                               load_rubric(BINARY).scale, IntervalSpec(n_resamples=200))
    assert result.difference.statistic == 0 and not result.improvement_shown
    sentence = result.sentence()
    assert "+0.00 (no interval: every bootstrap resample" in sentence
    assert sentence.endswith("no improvement shown") and "no interval: no interval" not in sentence


def test_a_split_drawn_meanwhile_by_another_process_is_used(tmp_path: Path) -> None:
    from judgekit.align.splits import load_split
    from judgekit.store import open_store
    from judgekit.types import Label

    rubric = load_rubric(BINARY)
    with open_store(tmp_path / "race.db") as store:
        store.import_items("d", [Item(f"i{i}", f"q{i}", response="r") for i in range(80)])
        store.add_labels([Label("d", f"i{i}", rubric.sha256, "a", "pass" if i % 2 else "fail")
                          for i in range(80)])
        original = store.create_split
        drawn: list[int] = []

        def other_process_first(*args: object, **kwargs: object) -> object:
            if not drawn:  # the other process commits its split just before ours
                drawn.append(original(rubric.sha256, "", 5, check_fractions(
                    {"train": 0.3, "dev": 0.35, "test": 0.35}), []).id)
            return original(*args, **kwargs)  # type: ignore[arg-type]

        store.create_split = other_process_first  # type: ignore[method-assign]
        split = load_split(store, rubric, dataset=None, fractions=None, seed=None)
        assert split.record.id == drawn[0] and split.record.seed == 5
        assert sum(split.counts().values()) == 80  # its items were added by the rule
