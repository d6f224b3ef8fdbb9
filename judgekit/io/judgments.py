"""Import judge verdicts made elsewhere (other eval tools, a provider's batch job).

Imported verdicts can be calibrated against human labels and used by the
position probe without paying for them again. A JSONL line holds ``item_id``,
``judge``, ``label`` and optionally ``order`` (``AB``/``BA``: how a pair was
presented), ``sample`` (index, default 0), ``status`` (default ``ok``),
``reasoning``, ``score`` and ``dataset``.

- A ``BA`` verdict was given with the responses swapped, so its label is mapped
  back to the item's original orientation (``A`` <-> ``B``, ``tie`` unchanged)
  and stored as variant ``"swapped"``, exactly as a swapped probe call would be.
- A verdict with a non-``ok`` status carries no label (it is data, not a score).
- Each (judge, dataset) becomes one run of kind ``"import"`` with the stated
  provenance: model = judge name, base URL ``imported:<file name>``, no
  sampling parameters, ``imported=True`` on every row.
- Cache keys are derived from (judge, rubric, item, order, sample) only, so
  importing the same verdicts again (even from a renamed file) adds nothing.

As for labels, the whole file is checked first and a file with any error
imports nothing. :func:`llmbar_rows` converts LLMBar's per-instance verdicts
(``meta.judge_verdicts``) into this format.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit import __version__
from judgekit.io.fields import item_dataset_index, resolve_dataset, text_field
from judgekit.io.records import ErrorList, Record, iter_records
from judgekit.judging.cache import cache_key
from judgekit.store import RunRecord, Store
from judgekit.store.rows import utc_now
from judgekit.types import STATUSES, SWAPPED_VARIANT, Item, Judgment, Rubric, Scale

JUDGMENT_FIELDS = (
    "item_id", "judge", "label", "order", "sample", "status", "reasoning", "score", "dataset",
)
#: Stand-in for the endpoint in imported cache keys (the file name is not part of identity).
IMPORTED_ENDPOINT = "imported:"
#: Stand-in for the parser version in imported cache keys.
IMPORT_PARSER = "import"
_SWAP = {"A": "B", "B": "A"}


@dataclass(frozen=True)
class JudgmentImportResult:
    """What an import did: rows added, rows already stored, runs created (id per judge)."""

    added: int
    unchanged: int
    runs: tuple[str, ...]
    judges: tuple[str, ...]


@dataclass(frozen=True)
class ParsedVerdict:
    """One validated line of a verdict file, label already in the original orientation."""

    line: int
    judge: str
    dataset: str
    item_id: str
    variant: str
    sample: int
    status: str
    label: str | None
    reasoning: str | None
    score: float | None


def unswap(label: str) -> str:
    """A verdict given on the swapped presentation, in the original orientation."""
    return _SWAP.get(label, label)


def parse_judgment_file(
    path: str | Path,
    rubric: Rubric,
    store: Store,
    *,
    dataset: str | None = None,
    judge: str | None = None,
) -> list[ParsedVerdict]:
    """Every verdict of the file (of ``judge`` only, when given), validated."""
    errors = ErrorList(str(path))
    records = list(iter_records(path, JUDGMENT_FIELDS, on_error=errors.add))
    return verdicts_from_records(records, errors, rubric, store, dataset=dataset, judge=judge)


def verdicts_from_records(
    records: Iterable[Record], errors: ErrorList, rubric: Rubric, store: Store,
    *, dataset: str | None = None, judge: str | None = None,
) -> list[ParsedVerdict]:
    """Validated verdicts of shaped records; every problem is added to ``errors``, then raised."""
    records = list(records)
    index = item_dataset_index(store, dataset)
    parsed: list[ParsedVerdict] = []
    first_line: dict[tuple[str, str, str, str, int], int] = {}
    for number, record in records:
        try:
            row = _parse(number, record, rubric, index, dataset, judge)
        except ValueError as exc:
            errors.add(number, str(exc))
            continue
        if row is None:
            continue
        key = (row.judge, row.dataset, row.item_id, row.variant, row.sample)
        if key in first_line:
            errors.add(number, f"same verdict as line {first_line[key]} (judge, item, order, "
                       "sample); use 'sample' to import repeated samples")
            continue
        first_line[key] = number
        parsed.append(row)
    if not records and not errors.errors:
        errors.add(None, "no verdicts (the file is empty)")
    elif not parsed and not errors.errors and judge is not None:
        errors.add(None, f"no verdicts of judge {judge!r}")
    errors.raise_if_any()
    return parsed


def _parse(
    number: int,
    record: Mapping[str, Any],
    rubric: Rubric,
    index: Mapping[str, list[str]],
    dataset: str | None,
    judge: str | None,
) -> ParsedVerdict | None:
    item_id = text_field(record, "item_id")
    if item_id is None:
        raise ValueError("missing field 'item_id'")
    row_judge = text_field(record, "judge") or judge
    if row_judge is None:
        raise ValueError("missing field 'judge' (or give --judge)")
    if judge is not None and row_judge != judge:
        return None  # another judge's verdict: not selected
    status = text_field(record, "status") or "ok"
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r} (allowed: {', '.join(STATUSES)})")
    label = text_field(record, "label")
    scale = rubric.scale
    if status == "ok":
        if label is None:
            raise ValueError("missing field 'label' (required when status is ok)")
        if not scale.is_valid(label):
            raise ValueError(
                f"label {label!r} is not on the {rubric.name!r} scale "
                f"(allowed: {', '.join(scale.labels)})"
            )
    elif label is not None:
        raise ValueError(f"a {status} verdict has no label (got {label!r})")
    order = text_field(record, "order") or "AB"
    if order not in ("AB", "BA"):
        raise ValueError(f"order must be 'AB' or 'BA', got {order!r}")
    if order == "BA" and scale.kind != "pairwise":
        raise ValueError(f"order 'BA' needs a pairwise rubric ({rubric.name!r} is {scale.kind})")
    sample = record.get("sample", 0)
    if isinstance(sample, str) and sample.strip().isdigit():
        sample = int(sample)
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        raise ValueError(f"'sample' must be a whole number >= 0, got {sample!r}")
    row_dataset = text_field(record, "dataset")
    if dataset is not None and row_dataset is not None and row_dataset != dataset:
        raise ValueError(f"dataset {row_dataset!r} differs from --dataset {dataset!r}")
    if order == "BA" and label is not None:
        label = unswap(label)
    return ParsedVerdict(
        line=number,
        judge=row_judge,
        dataset=resolve_dataset(item_id, row_dataset or dataset, index),
        item_id=item_id,
        variant=SWAPPED_VARIANT if order == "BA" else "",
        sample=sample,
        status=status,
        label=label,
        reasoning=text_field(record, "reasoning"),
        score=_score(record, scale, label),
    )


def _score(record: Mapping[str, Any], scale: Scale, label: str | None) -> float | None:
    given = record.get("score")
    if given is None:
        return scale.score_of(label)
    try:
        return float(given)
    except (TypeError, ValueError):
        raise ValueError(f"'score' must be a number, got {given!r}") from None


def imported_cache_key(rubric: Rubric, row: ParsedVerdict, item: Item) -> str:
    """Deterministic key: same judge, rubric, item content, order and sample -> same key."""
    return cache_key(
        model=row.judge, base_url=IMPORTED_ENDPOINT, rubric_hash=rubric.sha256,
        item_hash=item.content_hash, sampling={}, sample_index=row.sample,
        parser_version=IMPORT_PARSER, dataset=row.dataset, item_id=row.item_id,
        variant=row.variant,
    )


def import_judgments(
    store: Store,
    path: str | Path,
    rubric: Rubric,
    *,
    dataset: str | None = None,
    judge: str | None = None,
) -> JudgmentImportResult:
    """Validate the whole file, then store its new verdicts (one import run per judge)."""
    path = Path(path)
    rows = parse_judgment_file(path, rubric, store, dataset=dataset, judge=judge)
    items: dict[str, dict[str, Item]] = {}
    for name in {row.dataset for row in rows}:
        items[name] = store.items_by_ids(name, [r.item_id for r in rows if r.dataset == name])
    base_url = f"imported:{path.name}"
    now = utc_now()
    keyed = [
        (row, imported_cache_key(rubric, row, items[row.dataset][row.item_id])) for row in rows
    ]
    stored = store.cached_judgments(key for _, key in keyed)
    batches: dict[tuple[str, str], list[tuple[ParsedVerdict, str]]] = {}
    unchanged = 0
    for row, key in keyed:
        old = stored.get(key)
        if old is not None and (old.status, old.label, old.reasoning, old.score) == (
            row.status, row.label, row.reasoning, row.score
        ):
            unchanged += 1
            continue
        batches.setdefault((row.judge, row.dataset), []).append((row, key))
    runs: list[tuple[RunRecord, list[Judgment]]] = []
    for (judge_name, dataset_name), batch in sorted(batches.items()):
        run_id = f"import-{now[:19].replace(':', '').replace('-', '')}-{secrets.token_hex(4)}"
        judgments = [
            _judgment(row, key, run_id, rubric, base_url, now, items[row.dataset][row.item_id])
            for row, key in batch
        ]
        runs.append((_run(run_id, judge_name, dataset_name, rubric, base_url, now, judgments),
                     judgments))
    if runs:
        store.save_rubric(rubric)
        store.record_imports(runs)
    return JudgmentImportResult(
        added=sum(len(js) for _, js in runs),
        unchanged=unchanged,
        runs=tuple(run.id for run, _ in runs),
        judges=tuple(sorted({row.judge for row in rows})),
    )


def _judgment(
    row: ParsedVerdict, key: str, run_id: str, rubric: Rubric, base_url: str, now: str, item: Item
) -> Judgment:
    return Judgment(
        run_id=run_id, dataset=row.dataset, item_id=row.item_id, sample_index=row.sample,
        status=row.status,  # type: ignore[arg-type]  # checked against STATUSES
        label=row.label, score=row.score, reasoning=row.reasoning, raw_text=None,
        model_requested=row.judge, model_returned=None, base_url=base_url, sampling={},
        rubric_name=rubric.name, rubric_version=rubric.version, rubric_hash=rubric.sha256,
        cache_key=key, variant=row.variant, judgekit_version=__version__, created_at=now,
        item_hash=item.content_hash, imported=True,
    )


def _run(
    run_id: str, judge: str, dataset: str, rubric: Rubric, base_url: str, now: str,
    judgments: list[Judgment],
) -> RunRecord:
    counts: dict[str, int] = {}
    for judgment in judgments:
        counts[judgment.status] = counts.get(judgment.status, 0) + 1
    return RunRecord(
        id=run_id, kind="import", dataset=dataset, rubric_hash=rubric.sha256, model=judge,
        base_url=base_url, sampling={}, capabilities={}, judgekit_version=__version__,
        started_at=now, finished_at=now,
        summary={"imported": len(judgments), "counts": counts, "source": base_url},
    )


# -- converters -----------------------------------------------------------------------


def llmbar_rows(
    records: Iterable[Mapping[str, Any]], judges: Iterable[str] | None = None
) -> Iterator[dict[str, Any]]:
    """LLMBar instances -> import rows, two per instance and judge (orders AB and BA).

    LLMBar stores ``order_BA`` already mapped back to the original orientation
    (upstream ``reverse_label``), so it is swapped here to the label the judge
    actually gave; the import maps it back. ``null`` (an unparseable completion
    upstream) becomes status ``parse_error``.
    """
    wanted = None if judges is None else set(judges)
    for record in records:
        verdicts = record.get("meta", {}).get("judge_verdicts", {})
        for name, pair in sorted(verdicts.items()):
            if wanted is not None and name not in wanted:
                continue
            for order, value in (("AB", pair.get("order_AB")), ("BA", pair.get("order_BA"))):
                row: dict[str, Any] = {"item_id": record["id"], "judge": name, "order": order}
                if value is None:
                    row["status"] = "parse_error"
                else:
                    row["label"] = unswap(value) if order == "BA" else value
                yield row
