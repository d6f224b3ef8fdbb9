"""Read judge verdicts made elsewhere (other eval tools, a provider's batch job).

Imported verdicts can be calibrated against human labels and used by the
position probe (``judgekit probe position --imported``) without paying for them
again. A record (JSONL line, CSV/TSV row, parquet row) holds the fields of
:data:`JUDGMENT_FIELDS`; ``docs/import.md`` is the reference:

- ``item_id``, ``judge`` (or ``--judge``), ``label`` (required when ``status`` is ``ok``);
- ``order`` (``AB`` as written, ``BA`` shown with the responses swapped), ``sample``
  (index, default 0), ``status`` (default ``ok``), ``reasoning``, ``score``,
  ``raw`` (the grader's raw output, stored as the judgment's raw text), ``dataset``;
- ``orientation`` of a ``BA`` label: ``presented`` (the default) means the label
  names the slots as the judge saw them (judgekit's own convention: ``A`` = the
  response shown first, which is the original B), so it is mapped back;
  ``original`` means the file already mapped it back to the original order
  (LLMBar's convention), so it is stored as it is. Importing with the wrong
  convention turns a consistent judge into an inconsistent one, which
  :func:`judgekit.io.verdict_store.orientation_warnings` flags.

A verdict with a non-``ok`` status carries no label (it is data, not a score).
The whole file is checked first and a file with any error imports nothing;
storing is :mod:`judgekit.io.verdict_store`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from judgekit.io.caps import max_text_bytes, text_too_long
from judgekit.io.fields import item_dataset_index, resolve_dataset, text_field
from judgekit.io.file_checks import no_records
from judgekit.io.records import ErrorList, Record, iter_records
from judgekit.store import Store
from judgekit.types import STATUSES, SWAPPED_VARIANT, Rubric, Scale

JUDGMENT_FIELDS = (
    "item_id", "judge", "label", "order", "orientation", "sample", "status", "reasoning",
    "score", "raw", "dataset",
)
Orientation = Literal["presented", "original"]
ORIENTATIONS: tuple[Orientation, ...] = ("presented", "original")
#: Largest ``sample`` index accepted (a store column is a 64-bit integer; no judge
#: samples a million times).
MAX_SAMPLE_INDEX = 999_999
_SWAP = {"A": "B", "B": "A"}


@dataclass(frozen=True)
class ParsedVerdict:
    """One validated verdict, label already in the original orientation."""

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
    raw: str | None = None
    #: The label as the file gave it (before any mapping back), for the orientation check.
    given_label: str | None = None


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
    orientation: Orientation = "presented",
) -> list[ParsedVerdict]:
    """Every verdict of the file (of ``judge`` only, when given), validated."""
    errors = ErrorList(str(path))
    records = list(iter_records(path, JUDGMENT_FIELDS, on_error=errors.add))
    return verdicts_from_records(records, errors, rubric, store, dataset=dataset, judge=judge,
                                 orientation=orientation)


def verdicts_from_records(
    records: Iterable[Record], errors: ErrorList, rubric: Rubric, store: Store,
    *, dataset: str | None = None, judge: str | None = None,
    orientation: Orientation = "presented", index: Mapping[str, list[str]] | None = None,
) -> list[ParsedVerdict]:
    """Validated verdicts of shaped records; every problem is added to ``errors``, then raised.

    ``index`` (item id -> datasets) replaces the store's, for verdicts whose items
    are stored together with them.
    """
    checker = VerdictChecker(errors, rubric, store, dataset=dataset, judge=judge,
                             orientation=orientation, index=index)
    parsed = [row for row in map(checker.check, records) if row is not None]
    checker.finish()
    return parsed


class VerdictChecker:
    """Validates verdicts one record at a time, so a file can be checked as it streams.

    Only what spans records is kept: the line of each verdict seen (a repeated
    verdict names its first line). Problems go to ``errors``; :meth:`finish`
    adds the whole-file ones (empty file, no verdict of ``judge``) and raises.
    """

    def __init__(
        self, errors: ErrorList, rubric: Rubric, store: Store, *, dataset: str | None = None,
        judge: str | None = None, orientation: Orientation = "presented",
        index: Mapping[str, list[str]] | None = None,
    ) -> None:
        self.errors, self.rubric, self.dataset = errors, rubric, dataset
        self.judge, self.orientation = judge, orientation
        self.index = item_dataset_index(store, dataset) if index is None else index
        #: (judge, dataset, item, order, sample) as one string -> its first line and a
        #: 32-bit fingerprint of its outcome in one int (line << 32 | fingerprint): a few
        #: dozen bytes a verdict, so a file of millions is checked in little memory.
        self.first_line: dict[str, int] = {}
        self.records = 0
        self.parsed = 0
        self.limit = max_text_bytes()  # stored text per field (docs/import.md)

    def check(self, record: Record) -> ParsedVerdict | None:
        """The verdict of one ``(line, record)``, or None (a problem, or another judge's)."""
        number, fields = record
        self.records += 1
        try:
            row = _parse(number, fields, self.rubric, self.index, self.dataset, self.judge,
                         self.orientation)
        except ValueError as exc:
            self.errors.add(number, str(exc))
            return None
        if row is None:
            return None
        for name, text in (("reasoning", row.reasoning), ("raw", row.raw)):
            if text is not None and len(text) * 4 > self.limit and (
                    problem := text_too_long(text, self.limit)):
                self.errors.add(number, f"field {name!r}: {problem}")
                return None
        key = f"{row.judge}\x00{row.dataset}\x00{row.item_id}\x00{row.variant}\x00{row.sample}"
        outcome = hash((row.status, row.label, row.score)) & 0xFFFFFFFF
        first = self.first_line.setdefault(key, (number << 32) | outcome)
        if first >> 32 != number:
            same = (first & 0xFFFFFFFF) == outcome
            what = ("a repeat: the same status, label and score" if same else
                    "and the two differ in status, label or score")
            self.errors.add(number, f"same verdict as line {first >> 32} (judge, item, order, "
                            f"sample), {what}; use 'sample' to import repeated samples")
            return None
        self.parsed += 1
        return row

    def finish(self) -> None:
        """Add the whole-file problems, then raise every problem found (if any)."""
        if not self.records and not self.errors.errors:
            self.errors.add(None, f"no verdicts ({no_records(self.errors.path)})")
        elif not self.parsed and not self.errors.errors and self.judge is not None:
            self.errors.add(None, f"no verdicts of judge {self.judge!r}")
        self.errors.raise_if_any()


def _parse(
    number: int,
    record: Mapping[str, Any],
    rubric: Rubric,
    index: Mapping[str, list[str]],
    dataset: str | None,
    judge: str | None,
    default_orientation: Orientation,
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
    if (not isinstance(sample, int) or isinstance(sample, bool)
            or not 0 <= sample <= MAX_SAMPLE_INDEX):
        raise ValueError(
            f"'sample' must be a whole number >= 0 and <= {MAX_SAMPLE_INDEX}, got {_short(sample)}"
        )
    row_dataset = text_field(record, "dataset")
    if dataset is not None and row_dataset is not None and row_dataset != dataset:
        raise ValueError(f"dataset {row_dataset!r} differs from --dataset {dataset!r}")
    orientation = text_field(record, "orientation") or default_orientation
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation must be 'presented' or 'original', got {orientation!r}")
    given = label
    if order == "BA" and label is not None and orientation == "presented":
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
        raw=_raw(record),
        given_label=given,
    )


def _raw(record: Mapping[str, Any]) -> str | None:
    """The grader's raw output as text (a JSON value from a tool is kept as JSON)."""
    value = record.get("raw")
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _score(record: Mapping[str, Any], scale: Scale, label: str | None) -> float | None:
    given = record.get("score")
    if given is None:
        return scale.score_of(label)
    try:
        score = float(given)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"'score' must be a number, got {_short(given)}") from None
    if not math.isfinite(score):
        raise ValueError(f"'score' must be a finite number, got {_short(given)}")
    return score


def _short(value: Any) -> str:
    """``repr(value)``, cut to a readable length (a 5,000-digit number stays one line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        return f"a number of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- converters -----------------------------------------------------------------------


def llmbar_rows(
    records: Iterable[Mapping[str, Any]], judges: Iterable[str] | None = None
) -> Iterator[dict[str, Any]]:
    """LLMBar instances -> import rows, two per instance and judge (orders AB and BA).

    LLMBar stores ``order_BA`` already mapped back to the original orientation
    (upstream ``reverse_label``), so its rows say ``orientation: original`` and
    the import keeps the label as it is. ``null`` (an unparseable completion
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
                if order == "BA":
                    row["orientation"] = "original"
                if value is None:
                    row["status"] = "parse_error"
                else:
                    row["label"] = value
                yield row
