"""Builders for report tests: real SQLite stores filled through the Store API.

Judgments and labels are written with ``Store.record_judgment`` / ``add_labels``
(no judge is run), so the report reads exactly what a real run would leave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.rubrics import load_rubric
from judgekit.store import RunRecord, Store, open_store
from judgekit.types import Item, Judgment, Label, Rubric, canonical_json, sha256_text

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / "rubrics" / "correctness.toml"
ORDINAL = REPO / "rubrics" / "helpfulness.toml"
PAIRWISE = REPO / "rubrics" / "preference.toml"
CATEGORICAL = REPO / "rubrics" / "safety.toml"
ENDPOINT = "http://127.0.0.1:9/v1"
SAMPLING: Mapping[str, object] = {"temperature": 0.0, "max_tokens": 64}


@dataclass
class Row:
    """One item: the judge's outcome, the humans' labels, and where it sits."""

    item_id: str
    judge: str | None  # label, or None for a failed judgment
    humans: Mapping[str, str] = field(default_factory=dict)
    status: str = "ok"
    slice: str | None = None
    cluster: str | None = None
    response: str = "a response"
    prompt: str | None = None  # the item's input (default: one of its own)


def rubric(path: Path) -> Rubric:
    return load_rubric(path)


def create_run(
    store: Store,
    rub: Rubric,
    run_id: str = "run-1",
    dataset: str = "ds",
    model: str = "judge-model",
    kind: str = "judge",
    *,
    base_url: str = ENDPOINT,
    sampling: Mapping[str, object] = SAMPLING,
) -> RunRecord:
    run = RunRecord(
        id=run_id,
        kind=kind,
        dataset=dataset,
        rubric_hash=rub.sha256,
        model=model,
        base_url=base_url,
        sampling=dict(sampling),
        capabilities={},
        judgekit_version="0.1.0",
        started_at="2025-01-01T00:00:00+00:00",
    )
    store.create_run(run)
    return run


def make_judgment(
    rub: Rubric,
    run_id: str,
    dataset: str,
    item: Item,
    label: str | None,
    status: str = "ok",
    *,
    model: str = "judge-model",
    sample_index: int = 0,
    variant: str = "",
    base_url: str = ENDPOINT,
    sampling: Mapping[str, object] = SAMPLING,
) -> Judgment:
    key = sha256_text(
        canonical_json(
            [run_id, model, dataset, item.id, variant, sample_index, base_url, dict(sampling)]
        )
    )
    score = rub.scale.value_of(label) if label is not None else None
    return Judgment(
        run_id=run_id,
        dataset=dataset,
        item_id=item.id,
        sample_index=sample_index,
        status=status,  # type: ignore[arg-type]
        label=label if status == "ok" else None,
        score=score,
        reasoning=None,
        raw_text=label,
        model_requested=model,
        model_returned=model + "-2025",
        base_url=base_url,
        sampling=dict(sampling),
        rubric_name=rub.name,
        rubric_version=rub.version,
        rubric_hash=rub.sha256,
        cache_key=key,
        variant=variant,
        judgekit_version="0.1.0",
        created_at="2025-01-01T00:00:01+00:00",
        item_hash=item.content_hash,
    )


def populate(
    store: Store,
    rub: Rubric,
    rows: Sequence[Row],
    *,
    dataset: str = "ds",
    run_id: str = "run-1",
    model: str = "judge-model",
    create: bool = True,
) -> None:
    """Items, one judge run, its judgments (one transaction each) and the human labels."""
    items = [
        Item(
            id=r.item_id,
            input=r.prompt or f"question {r.item_id}",
            response=r.response,
            slice=r.slice,
            cluster=r.cluster,
        )
        for r in rows
    ]
    if create:
        store.save_rubric(rub)
        store.import_items(dataset, items)
    create_run(store, rub, run_id, dataset, model)
    for row, item in zip(rows, items, strict=True):
        status = row.status if row.judge is not None or row.status != "ok" else "parse_error"
        store.record_judgment(
            make_judgment(rub, run_id, dataset, item, row.judge, status, model=model)
        )
    labels = [
        Label(dataset=dataset, item_id=r.item_id, rubric_hash=rub.sha256, annotator=a, label=lab)
        for r in rows
        for a, lab in r.humans.items()
    ]
    if labels:
        store.add_labels(labels)


def open_fresh(tmp_path: Path, name: str = "judgekit.db") -> Store:
    return open_store(tmp_path / name)


def test_populate_round_trips(tmp_path: Path) -> None:
    """The builders write what the report will read back."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(
        store,
        rub,
        [Row("1", "pass", {"h": "pass"}), Row("2", None, {"h": "fail"}, status="refusal")],
    )
    js = store.judgments(rubric_hash=rub.sha256)
    assert sorted((j.item_id, j.status) for j in js) == [("1", "ok"), ("2", "refusal")]
    assert len(store.latest_labels(rub.sha256)) == 2
    store.close()
