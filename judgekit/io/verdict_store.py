"""Store validated judge verdicts as imported runs, with the source's provenance.

Every path in (``judgments import``, ``judgekit import --from TOOL``,
``judgekit.from_frame(kind="judgments")``) ends here:

- A ``BA`` verdict is stored as variant ``"swapped"``, exactly as a swapped probe
  call would be, so ``probe position --imported`` and the report read both alike.
- Each (judge, dataset) becomes one run of kind ``"import"``: model = judge name,
  base URL ``imported:<source>``, no sampling parameters, ``imported=True`` on every
  row; the run summary keeps the source's provenance (tool, tool version, grader
  model, grader prompt hash) when the source has it.
- Cache keys are derived from (judge, rubric, item, order, sample) only, so
  importing the same verdicts again (even from a renamed file) adds nothing.
"""

from __future__ import annotations

import secrets
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit import __version__
from judgekit.io.judgments import Orientation, ParsedVerdict, parse_judgment_file
from judgekit.judging.cache import cache_key
from judgekit.stats.intervals import wilson_interval
from judgekit.store import RunRecord, Store
from judgekit.store.judges import IMPORTED_ENDPOINT
from judgekit.store.rows import utc_now
from judgekit.types import SWAPPED_VARIANT, Item, Judgment, Rubric

#: Stand-in for the parser version in imported cache keys.
IMPORT_PARSER = "import"
#: Fewest both-order pairs before the orientation check speaks.
MIN_PAIRS_FOR_WARNING = 10


@dataclass(frozen=True)
class JudgmentImportResult:
    """What an import did: rows added, rows already stored, runs created, judges, warnings."""

    added: int
    unchanged: int
    runs: tuple[str, ...]
    judges: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    #: judge -> the model behind it, where the source names one (the grader model).
    models: Mapping[str, str] = field(default_factory=dict)


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
    orientation: Orientation = "presented",
) -> JudgmentImportResult:
    """Validate the whole file, then store its new verdicts (one import run per judge)."""
    path = Path(path)
    rows = parse_judgment_file(path, rubric, store, dataset=dataset, judge=judge,
                               orientation=orientation)
    return import_verdicts(store, rows, rubric, source=path.name)


def import_verdicts(
    store: Store,
    rows: Sequence[ParsedVerdict],
    rubric: Rubric,
    *,
    source: str,
    provenance: Mapping[str, Any] | None = None,
) -> JudgmentImportResult:
    """Store the new verdicts among ``rows`` in one transaction (one run per judge+dataset).

    ``source`` names where they came from (``imported:<source>`` is the runs' base
    URL); ``provenance`` is kept in each run's summary.
    """
    items: dict[str, dict[str, Item]] = {}
    for name in {row.dataset for row in rows}:
        items[name] = store.items_by_ids(name, [r.item_id for r in rows if r.dataset == name])
    base_url = f"{IMPORTED_ENDPOINT}{source}"
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
        run = _run(run_id, judge_name, dataset_name, rubric, base_url, now, judgments,
                   dict(provenance or {}))
        runs.append((run, judgments))
    if runs:
        store.save_rubric(rubric)
        store.record_imports(runs)
    model = (provenance or {}).get("grader_model")
    return JudgmentImportResult(
        added=sum(len(js) for _, js in runs),
        unchanged=unchanged,
        runs=tuple(run.id for run, _ in runs),
        judges=tuple(sorted({row.judge for row in rows})),
        warnings=tuple(orientation_warnings(rows)),
        models={row.judge: str(model) for row in rows} if model else {},
    )


def _judgment(
    row: ParsedVerdict, key: str, run_id: str, rubric: Rubric, base_url: str, now: str, item: Item
) -> Judgment:
    return Judgment(
        run_id=run_id, dataset=row.dataset, item_id=row.item_id, sample_index=row.sample,
        status=row.status,  # type: ignore[arg-type]  # checked against STATUSES
        label=row.label, score=row.score, reasoning=row.reasoning, raw_text=row.raw,
        model_requested=row.judge, model_returned=None, base_url=base_url, sampling={},
        rubric_name=rubric.name, rubric_version=rubric.version, rubric_hash=rubric.sha256,
        cache_key=key, variant=row.variant, judgekit_version=__version__, created_at=now,
        item_hash=item.content_hash, imported=True,
    )


def _run(
    run_id: str, judge: str, dataset: str, rubric: Rubric, base_url: str, now: str,
    judgments: list[Judgment], provenance: dict[str, Any],
) -> RunRecord:
    counts: dict[str, int] = {}
    for judgment in judgments:
        counts[judgment.status] = counts.get(judgment.status, 0) + 1
    summary: dict[str, Any] = {"imported": len(judgments), "counts": counts, "source": base_url}
    if provenance:
        summary["provenance"] = provenance
    return RunRecord(
        id=run_id, kind="import", dataset=dataset, rubric_hash=rubric.sha256, model=judge,
        base_url=base_url, sampling={}, capabilities={}, judgekit_version=__version__,
        started_at=now, finished_at=now, summary=summary,
    )


def consistency_below_chance(
    original: Sequence[str | None], swapped: Sequence[str | None]
) -> tuple[int, int, float] | None:
    """(consistent, n, chance) when position consistency is far below chance, else None.

    Chance is the agreement of two independent verdicts with the observed label
    shares of each order: sum over labels of p_AB(l) * p_BA(l). A consistency
    whose 95% Wilson upper bound is below it is not a position bias (which only
    pulls consistency down toward chance): the swapped verdicts were almost
    certainly mapped back once too often, or not at all (the wrong ``orientation``).
    """
    pairs = [(a, b) for a, b in zip(original, swapped, strict=True)
             if a is not None and b is not None]
    n = len(pairs)
    if n < MIN_PAIRS_FOR_WARNING:
        return None
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    chance = sum(first[label] * second[label] for label in first) / (n * n)
    consistent = sum(a == b for a, b in pairs)
    _, high = wilson_interval(consistent, n)
    return (consistent, n, chance) if high < chance else None


def orientation_warnings(rows: Sequence[ParsedVerdict]) -> list[str]:
    """One warning per judge whose imported both-order verdicts agree far below chance."""
    by: dict[str, dict[tuple[str, str, int], dict[str, str | None]]] = defaultdict(dict)
    for row in rows:
        if row.status == "ok":
            by[row.judge].setdefault((row.dataset, row.item_id, row.sample), {})[row.variant] = (
                row.label)
    out = []
    for judge, pairs in sorted(by.items()):
        both = [p for p in pairs.values() if "" in p and SWAPPED_VARIANT in p]
        low = consistency_below_chance([p[""] for p in both], [p[SWAPPED_VARIANT] for p in both])
        if low is not None:
            out.append(orientation_message(judge, *low))
    return out


def orientation_message(judge: str, consistent: int, n: int, chance: float) -> str:
    """The warning text, naming the likely cause and the fix."""
    return (
        f"judge {judge!r}: position consistency {consistent}/{n} ({consistent / n:.2f}) is far "
        f"below chance ({chance:.2f}); the BA verdicts are probably in the other orientation. "
        "If the file's BA labels are already mapped back to the original order, import with "
        "--orientation original (or an 'orientation' field); if they name the slots as "
        "shown, use --orientation presented"
    )
