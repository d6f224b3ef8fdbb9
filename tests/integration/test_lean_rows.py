"""Lean rows (store/columns.py) say exactly what the full rows say, on a real SQLite store.

The report and ``compare`` read labels, judgments and items as lean tuples for
speed at 100k items; each test checks one lean read against the full-row read it
replaced, on a store with the awkward cases: repeated samples, probe variants, a
rewritten cache key, a replaced (stale) item, skips, withdrawn and unblinded
labels, flags and an adjudication.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest
from test_report_support import (
    BINARY,
    Row,
    create_run,
    make_judgment,
    open_fresh,
    populate,
    rubric,
)

from judgekit.compare.judges import judge_side
from judgekit.report.loading import items_for, judge_selection, judgments_for
from judgekit.report.options import ReportOptions
from judgekit.report.pairing import ItemKey, select_judgments
from judgekit.store import Store
from judgekit.types import ADJUDICATED_SOURCE, Item, Judgment, Label, Rubric

N = 24


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Store, Rubric]:
    rub = rubric(BINARY)
    store = open_fresh(tmp_path)
    rows = [
        Row(f"i{i:02d}", "pass" if i % 3 else "fail", {"h1": "pass" if i % 2 else "fail"},
            slice="s" if i % 4 else None, cluster=f"c{i % 5}" if i % 2 else None)
        for i in range(N)
    ]
    populate(store, rub, rows)
    items = store.items_by_ids("ds", [r.item_id for r in rows])
    extra: list[Judgment] = []
    for i in range(0, N, 3):  # a second sample, a probe variant, a confidence
        item = items[f"i{i:02d}"]
        extra.append(dataclasses.replace(
            make_judgment(rub, "run-1", "ds", item, "fail", sample_index=1), confidence=0.75))
        extra.append(make_judgment(rub, "run-1", "ds", item, "pass", variant="swapped"))
    for i in range(1, N, 5):  # the same cache key written again: the later row wins
        extra.append(make_judgment(rub, "run-1", "ds", items[f"i{i:02d}"], "fail"))
    for judgment in extra:
        store.record_judgment(judgment)
    # items replaced after judging: their judgments are stale
    changed = [dataclasses.replace(items[f"i{i:02d}"], response="rewritten") for i in (2, 7)]
    store.import_items("ds", changed, replace=True)
    # a second judge, for compare
    create_run(store, rub, "run-2", "ds", "other-model")
    for item in store.items_by_ids("ds", [f"i{i:02d}" for i in range(N)]).values():
        store.record_judgment(make_judgment(rub, "run-2", "ds", item, "pass", model="other-model"))
    store.add_labels([
        Label("ds", "i00", rub.sha256, "h2", "pass", flagged=True),
        Label("ds", "i01", rub.sha256, "h2", None),  # a skip
        Label("ds", "i03", rub.sha256, "h1", None),  # withdraws h1's label
        Label("ds", "i04", rub.sha256, "h3", "fail", blind=False, note="seen"),
        Label("ds", "i05", rub.sha256, "lead", "pass", source=ADJUDICATED_SOURCE),
        Label("ds", "i06", rub.sha256, "h2", "fail", seconds=3.5),
        Label("ds", "i06", rub.sha256, "h2", "pass"),  # replaces the one before
    ])
    return store, rub


def test_label_rows_are_latest_labels_with_skips(filled: tuple[Store, Rubric]) -> None:
    store, rub = filled
    full = store.latest_labels(rub.sha256, include_skips=True)
    lean = store.latest_label_rows(rub.sha256)
    assert [(lb.dataset, lb.item_id, lb.annotator, lb.label, lb.blind, lb.flagged, lb.source)
            for lb in full] == [tuple(row) for row in lean]
    assert any(row.label is None for row in lean) and any(not row.blind for row in lean)
    assert store.latest_label_rows(rub.sha256, dataset="other") == []


@pytest.mark.parametrize("n_ids", [3, N, 2500])  # IN lists, and one pass over the dataset
def test_item_facts_are_the_items_fields(filled: tuple[Store, Rubric], n_ids: int) -> None:
    store, _ = filled
    ids = [f"i{i:02d}" for i in range(n_ids)] + ["missing"]
    full = store.items_by_ids("ds", ids)
    facts = store.item_facts("ds", ids)
    assert set(facts) == set(full)
    for item_id, item in full.items():
        fact = facts[item_id]
        assert (fact.dataset, fact.id, fact.input, fact.slice, fact.cluster,
                fact.meta) == ("ds", item.id, item.input, item.slice, item.cluster, dict(item.meta))


def _judgments_from_full_rows(
    store: Store, rub: Rubric, keys: list[ItemKey], items: dict[ItemKey, Item]
) -> tuple[dict[ItemKey, Judgment], int]:
    """The report's former read: full rows per item, staleness checked in Python."""
    selection = judge_selection(store, rub, ReportOptions(model="judge-model"))
    filters = {k: v for k, v in selection.filters().items() if k not in ("rubric_hash", "dataset")}
    found = store.judgments_for_items(rub.sha256, "ds", [k[1] for k in keys], **filters)
    rows, stale = [], set()
    for item_rows in found.values():
        for j in item_rows:
            item = items.get((j.dataset, j.item_id))
            if item is not None and j.item_hash and j.item_hash != item.content_hash:
                stale.add((j.dataset, j.item_id))
            else:
                rows.append(j)
    chosen = select_judgments(rows)
    return chosen, len(stale - set(chosen))


def _outcome(j: object) -> tuple[object, ...]:
    return tuple(getattr(j, name) for name in
                 ("dataset", "item_id", "variant", "sample_index", "status", "label", "confidence",
                  "model_requested", "model_returned"))


def test_report_judgments_match_the_full_row_rule(filled: tuple[Store, Rubric]) -> None:
    store, rub = filled
    store.record_judgment(make_judgment(rub, "run-1", "ds", store.items_by_ids("ds", ["i07"])[
        "i07"], "pass", sample_index=2))  # i07 also has a current judgment now
    keys = [("ds", f"i{i:02d}") for i in range(N)] + [("ds", "no-such-item")]
    full_items = {("ds", i): item for i, item in
                  store.items_by_ids("ds", [k[1] for k in keys]).items()}
    expected, expected_stale = _judgments_from_full_rows(store, rub, keys, full_items)
    selection = judge_selection(store, rub, ReportOptions(model="judge-model"))
    chosen, n_stale = judgments_for(store, selection, keys)
    assert {k: _outcome(j) for k, j in chosen.items()} == {
        k: _outcome(j) for k, j in expected.items()}
    assert n_stale == expected_stale == 1  # i02 stale only; i07 has a current sample
    assert ("ds", "i02") not in chosen and chosen[("ds", "i07")].sample_index == 2
    assert chosen[("ds", "i01")].label == "fail"  # the rewritten cache key's later row
    assert set(items_for(store, keys)) == set(full_items)


def test_compare_reads_each_judge_as_before(filled: tuple[Store, Rubric]) -> None:
    store, rub = filled
    for run_id in ("run-1", "run-2"):
        selection = store.judge_selection(
            rubric_hash=rub.sha256, rubric_name=rub.name, dataset=None, run_id=run_id,
            variant="", run_option="--run-a", model_option=None,
        )
        chosen, counts = judge_side(store, rub, selection, run_id)
        before = select_judgments(store.judgments(**selection.filters()))
        assert {k: (v.status, v.label) for k, v in chosen.items()} == {
            k: (j.status, j.label) for k, j in before.items()}
        assert counts == Counter(j.status for j in before.values())
        assert sum(counts.values()) == len(before) == N


def test_streamed_label_rows_are_the_listed_rows(filled: tuple[Store, Rubric]) -> None:
    store, rub = filled
    rows = store.iter_latest_label_rows(rub.sha256)
    assert not isinstance(rows, list)  # a generator: the reference never holds them all
    assert list(rows) == store.latest_label_rows(rub.sha256)


def test_report_reads_keep_the_callers_keys(filled: tuple[Store, Rubric]) -> None:
    """items_for and judgments_for key their results by the given key objects (one copy
    of each item id in memory, whatever the number of reads)."""
    store, rub = filled
    keys = [("ds", "".join(["i", f"{i:02d}"])) for i in range(N)]  # fresh strings, not interned
    items = items_for(store, keys)
    own = {k: k for k in keys}
    for key, fact in items.items():
        assert own[key] is key and fact.id is key[1]
    selection = judge_selection(store, rub, ReportOptions(model="judge-model"))
    chosen, _ = judgments_for(store, selection, keys)
    assert chosen
    for key, judgment in chosen.items():
        assert own[key] is key and judgment.item_id is key[1]


def test_judged_items_stream_one_verdict_per_item(filled: tuple[Store, Rubric]) -> None:
    store, rub = filled
    selection = judge_selection(store, rub, ReportOptions(model="judge-model"))
    rows = store.judged_items(**selection.filters())
    assert not isinstance(rows, list)
    judged = list(rows)
    assert [(r.dataset, r.item_id) for r in judged] == sorted(("ds", f"i{i:02d}") for i in range(N))
    expected = select_judgments(store.judgments(**selection.filters()))
    assert {(r.dataset, r.item_id): (r.status, r.label) for r in judged} == {
        k: (j.status, j.label) for k, j in expected.items()}
    assert {r.item_id for r in judged if not r.current} == {"i02", "i07"}  # replaced items
    facts = store.item_facts("ds", [r.item_id for r in judged])
    assert all((r.slice, r.cluster, dict(r.meta)) == (facts[r.item_id].slice,
               facts[r.item_id].cluster, facts[r.item_id].meta) for r in judged)
