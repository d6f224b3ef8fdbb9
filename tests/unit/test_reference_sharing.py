"""The human reference shares one labels dict among items labeled alike, and says what the
one-dict-per-item reference said.

:func:`judgekit.report.reference.split_labels` folds label rows into one interned
(annotator, label) tuple per item and one dict per distinct tuple. Each test checks
it against :func:`_oracle`, the plain dict-of-dicts fold it replaced, on the awkward
cases: no labels, one annotator, ties, skips, an item whose every label is a skip,
off-scale and unblinded labels, a second row for the same annotator, adjudications.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from judgekit.report.pairing import ItemKey, pair_up, reference_label, reference_rule_of
from judgekit.report.reference import HumanReference, label_counts, split_labels
from judgekit.rubrics import load_rubric
from judgekit.store.columns import JudgmentRow, LabelRow
from judgekit.types import ADJUDICATED_SOURCE, Scale

PAIRWISE = load_rubric("preference").scale  # A / B / tie: a majority can tie
ORDINAL = load_rubric("helpfulness").scale


def row(item: str, annotator: str, label: str | None, *, blind: bool = True,
        source: str = "annotate", dataset: str = "ds") -> LabelRow:
    return LabelRow(dataset, item, annotator, label, blind, False, source)


def _oracle(
    labels: Iterable[LabelRow], scale: Scale, include_unblinded: bool = False
) -> tuple[dict[ItemKey, dict[str, str]], dict[ItemKey, str], int, int]:
    """The reference as one fresh dict per item (the fold before labels were shared)."""
    by_item: dict[ItemKey, dict[str, str]] = {}
    adjudicated: dict[ItemKey, str] = {}
    unblinded = off_scale = 0
    for label in labels:
        if label.label is None:
            continue
        if not scale.is_valid(label.label):
            off_scale += 1
            continue
        if not label.blind:
            unblinded += 1
            if not include_unblinded:
                continue
        key = (label.dataset, label.item_id)
        if label.source == ADJUDICATED_SOURCE:
            adjudicated[key] = label.label
        else:
            by_item.setdefault(key, {})[label.annotator] = label.label
    return by_item, adjudicated, unblinded, off_scale


def _same_as_oracle(rows: list[LabelRow], scale: Scale, include_unblinded: bool = False) -> None:
    ref = split_labels(rows, scale, include_unblinded=include_unblinded)
    by_item, adjudicated, unblinded, off_scale = _oracle(rows, scale, include_unblinded)
    assert list(ref.by_item) == list(by_item)  # item order
    for key, labels in by_item.items():
        assert list(ref.by_item[key].items()) == list(labels.items())  # annotator order too
    assert ref.adjudicated == adjudicated
    assert (ref.unblinded, ref.off_scale) == (unblinded, off_scale)
    references = ref.references()
    assert list(references) == [k for k in by_item if k not in adjudicated] + list(adjudicated)
    for key in adjudicated:
        assert references[key] == {ADJUDICATED_SOURCE: adjudicated[key]}
    expected_no_majority = sorted(
        k for k, by in by_item.items()
        if k not in adjudicated and reference_label(by, scale) is None
    )
    assert ref.no_majority_items(scale) == expected_no_majority


def test_no_labels_is_an_empty_reference() -> None:
    ref = split_labels([], PAIRWISE)
    assert (ref.by_item, ref.adjudicated, ref.n_labels, ref.annotators, ref.keys) == (
        {}, {}, 0, set(), set())
    assert ref.references() == {}
    assert label_counts(ref, PAIRWISE)["no_majority_items"] == 0


def test_items_labeled_alike_share_one_dict() -> None:
    rows = [row(f"i{i}", a, "A" if i % 2 else "B") for i in range(6) for a in ("h1", "h2")]
    ref = split_labels(rows, PAIRWISE)
    assert ref.by_item[("ds", "i1")] is ref.by_item[("ds", "i3")]
    assert ref.by_item[("ds", "i0")] is ref.by_item[("ds", "i2")]
    assert ref.by_item[("ds", "i0")] is not ref.by_item[("ds", "i1")]
    assert ref.by_item[("ds", "i1")] == {"h1": "A", "h2": "A"}
    assert ref.references()[("ds", "i1")] is ref.by_item[("ds", "i1")]  # not a copy
    _same_as_oracle(rows, PAIRWISE)


def test_same_labels_in_another_annotator_order_are_another_dict() -> None:
    rows = [row("i1", "h1", "A"), row("i1", "h2", "B"), row("i2", "h2", "B"), row("i2", "h1", "A")]
    ref = split_labels(rows, PAIRWISE)
    assert list(ref.by_item[("ds", "i1")]) == ["h1", "h2"]
    assert list(ref.by_item[("ds", "i2")]) == ["h2", "h1"]
    _same_as_oracle(rows, PAIRWISE)


def test_one_annotator_is_the_reference() -> None:
    rows = [row("i1", "h1", "tie"), row("i2", "h1", "A")]
    ref = split_labels(rows, PAIRWISE)
    assert ref.label_of(("ds", "i1"), PAIRWISE) == "tie"
    assert ref.annotators == {"h1"}
    _same_as_oracle(rows, PAIRWISE)


def test_a_tie_in_the_majority_has_no_reference_and_is_counted() -> None:
    rows = [row("i1", "h1", "A"), row("i1", "h2", "B"),  # 1-1: no majority
            row("i2", "h1", "A"), row("i2", "h2", "B"), row("i2", "h3", "A"),  # 2-1
            row("i3", "h1", "A"), row("i3", "h2", "B"),
            row("i3", "lead", "B", source=ADJUDICATED_SOURCE)]  # a tie, adjudicated
    ref = split_labels(rows, PAIRWISE)
    assert ref.label_of(("ds", "i1"), PAIRWISE) is None
    assert ref.label_of(("ds", "i2"), PAIRWISE) == "A"
    assert ref.label_of(("ds", "i3"), PAIRWISE) == "B"
    assert ref.no_majority_items(PAIRWISE) == [("ds", "i1")]
    pairing = pair_up({}, ref.references(), PAIRWISE)
    assert (pairing.no_majority, pairing.no_judgment) == (1, 2)
    _same_as_oracle(rows, PAIRWISE)


def test_skips_and_an_item_with_only_skips() -> None:
    rows = [row("i1", "h1", None), row("i1", "h2", None),  # every label is a skip
            row("i2", "h1", None), row("i2", "h2", "A")]
    ref = split_labels(rows, PAIRWISE)
    assert ("ds", "i1") not in ref.by_item
    assert ref.by_item[("ds", "i2")] == {"h2": "A"}
    assert ref.n_labels == 1
    _same_as_oracle(rows, PAIRWISE)


def test_a_second_row_for_an_annotator_replaces_the_label_in_its_place() -> None:
    rows = [row("i1", "h1", "A"), row("i1", "h2", "B"), row("i1", "h1", "tie")]
    ref = split_labels(rows, PAIRWISE)
    assert list(ref.by_item[("ds", "i1")].items()) == [("h1", "tie"), ("h2", "B")]
    _same_as_oracle(rows, PAIRWISE)


def test_off_scale_and_unblinded_labels() -> None:
    rows = [row("i1", "h1", "maybe"), row("i1", "h2", "A", blind=False), row("i1", "h3", "B")]
    assert split_labels(rows, PAIRWISE).by_item[("ds", "i1")] == {"h3": "B"}
    pooled = split_labels(rows, PAIRWISE, include_unblinded=True)
    assert pooled.by_item[("ds", "i1")] == {"h2": "A", "h3": "B"}
    _same_as_oracle(rows, PAIRWISE)
    _same_as_oracle(rows, PAIRWISE, include_unblinded=True)


def test_for_annotator_keeps_only_their_labels() -> None:
    rows = [row("i1", "h1", "A"), row("i1", "h2", "B"), row("i2", "h2", "B"), row("i3", "h1", "A"),
            row("i3", "lead", "B", source=ADJUDICATED_SOURCE)]
    mine = split_labels(rows, PAIRWISE).for_annotator("h1")
    assert mine.by_item == {("ds", "i1"): {"h1": "A"}, ("ds", "i3"): {"h1": "A"}}
    assert mine.by_item[("ds", "i1")] is mine.by_item[("ds", "i3")]
    assert mine.adjudicated == {}


@pytest.mark.parametrize("scale", [PAIRWISE, ORDINAL], ids=["pairwise", "ordinal"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_label_streams_match_the_dict_per_item_fold(scale: Scale, seed: int) -> None:
    rng = random.Random(seed)
    values: list[str | None] = [*scale.labels, None, "off-scale"]
    rows = [
        row(f"i{rng.randrange(40)}", rng.choice(["h1", "h2", "h3", "lead"]), rng.choice(values),
            blind=rng.random() > 0.1, dataset=rng.choice(["ds", "other"]),
            source=ADJUDICATED_SOURCE if rng.random() < 0.05 else "annotate")
        for _ in range(300)
    ]
    _same_as_oracle(rows, scale)
    _same_as_oracle(rows, scale, include_unblinded=True)


def test_the_rule_memo_gives_reference_label_for_every_mapping() -> None:
    rule = reference_rule_of(PAIRWISE)
    shared = {"h1": "A", "h2": "B"}
    assert rule(shared) is None
    assert rule(shared) is None  # from the memo
    fresh = [{"h1": "A", "h2": v} for v in ("A", "B", "tie")]
    assert [rule(m) for m in fresh] == [reference_label(m, PAIRWISE) for m in fresh]
    ordinal = reference_rule_of(ORDINAL)
    assert ordinal({"h1": "1", "h2": "4", "h3": "5"}) == "4"
    assert ordinal({"h1": "1", "h2": "4"}) == "1"  # the lower median


def test_labels_without_a_judgment_are_counted_not_paired() -> None:
    ref = split_labels([row("i1", "h1", "A"), row("i2", "h1", "B")], PAIRWISE)
    judged = JudgmentRow("ds", "i1", "", 0, "ok", "A", None, "m", "m", False)
    pairing = pair_up({("ds", "i1"): judged}, ref.references(), PAIRWISE)
    assert (pairing.keys, pairing.judge, pairing.human) == ([("ds", "i1")], ["A"], ["A"])
    assert pairing.no_judgment == 1


def test_a_reference_built_by_hand_still_works() -> None:
    """HumanReference takes any dict of dicts (tests and callers build them directly)."""
    ref = HumanReference({("ds", "i1"): {"h1": "A", "h2": "A"}}, {("ds", "i2"): "B"})
    assert ref.references() == {("ds", "i1"): {"h1": "A", "h2": "A"},
                                ("ds", "i2"): {ADJUDICATED_SOURCE: "B"}}
    assert ref.keys == {("ds", "i1"), ("ds", "i2")}
