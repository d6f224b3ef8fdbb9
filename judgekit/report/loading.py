"""What the report reads from the store: the judge's judgments, their items, the score sample.

Reading is kept apart from computing so that the rules of *which* rows a report
compares (one judge, current item versions, the latest judgment per item) are in
one place, and the statistics modules never touch the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from judgekit.report.model import ScatterPoint
from judgekit.report.options import ReportOptions
from judgekit.report.pairing import ItemKey, select_judgments
from judgekit.store import JudgmentSelection, Store
from judgekit.store.columns import ItemFacts, JudgmentRow
from judgekit.types import Rubric


def items_for(store: Store, keys: Iterable[ItemKey]) -> dict[ItemKey, ItemFacts]:
    """The prompt and grouping fields of the items of ``keys`` (never their responses).

    The result is keyed by the key objects of ``keys`` (and the facts carry their
    id strings): 100,000 items are not held twice over.
    """
    by_dataset: dict[str, dict[str, ItemKey]] = {}
    for key in keys:
        by_dataset.setdefault(key[0], {})[key[1]] = key
    out: dict[ItemKey, ItemFacts] = {}
    for dataset, ids in by_dataset.items():
        for item_id, item in store.item_facts(dataset, ids).items():
            out[ids[item_id]] = item
    return out


def judge_selection(store: Store, rubric: Rubric, opts: ReportOptions) -> JudgmentSelection:
    """The judgments the report calibrates: those of exactly one judge.

    ``--judge-run`` names the judge through one of its runs (its cached judgments
    count too); otherwise the judge must be the only one (after ``--model``) with
    plain judgments written by judge or import runs. Several judges are an error,
    never a silent choice: a gate must not flip because another model was tried.
    The rule lives in :meth:`judgekit.store.Store.judge_selection`, shared with
    ``judgekit compare``.
    """
    return store.judge_selection(
        rubric_hash=rubric.sha256,
        rubric_name=rubric.name,
        dataset=opts.dataset,
        run_id=opts.judge_run,
        model=opts.model,
        variant="",
    )


def judgments_for(
    store: Store, selection: JudgmentSelection, keys: Iterable[ItemKey]
) -> tuple[dict[ItemKey, JudgmentRow], int]:
    """The report's judgment for each of ``keys`` (lean rows, only for these items).

    A judgment of an older version of its item (its ``item_hash`` is not the item's
    current content hash, e.g. after ``import --replace``) is left out. Returns the
    chosen judgments and the number of items left with only such stale judgments.
    The latest-per-cache-key step and the staleness test run in SQL; rows stream
    through the one-per-item rule, so only the chosen rows are ever held, keyed by
    the key objects of ``keys``.
    """
    wanted = {key: key for key in keys if selection.dataset is None or key[0] == selection.dataset}
    filters = {**selection.filters(), "rubric_hash": selection.rubric_hash or ""}
    stale: set[ItemKey] = set()

    def fresh() -> Iterator[JudgmentRow]:
        for j in store.judgment_rows(wanted, **filters):
            if j.stale:
                stale.add((j.dataset, j.item_id))
            else:
                yield j

    chosen = select_judgments(fresh(), wanted)
    return chosen, len(stale - set(chosen))


def label_scores(rubric: Rubric) -> dict[str, float]:
    """Numeric score of each label, for judgments without a finite ``score`` of their own."""
    scale = rubric.scale
    if scale.kind == "binary":
        return {label: 1.0 if label == "pass" else 0.0 for label in scale.labels}
    values = {label: scale.value_of(label) for label in scale.labels}
    return {label: float(v) for label, v in values.items() if v is not None}


def scatter(
    store: Store, rubric: Rubric, selection: JudgmentSelection, max_points: int
) -> tuple[list[ScatterPoint], int]:
    """Score against response length for at most ``max_points`` evenly spaced items.

    The sample is drawn in SQL so that a large run never loads every row; returns
    the points and how many scored items there were in all.
    """
    if rubric.scale.kind not in ("ordinal", "binary"):
        return [], 0
    sample, total = store.score_sample(
        label_scores(rubric),
        max_points=max_points,
        one_per_item=True,
        **selection.filters(),
    )
    points = [
        ScatterPoint(p.response_length, p.score) for p in sample if p.response_length is not None
    ]
    return points, total


__all__ = ["items_for", "judge_selection", "judgments_for", "label_scores", "scatter"]
