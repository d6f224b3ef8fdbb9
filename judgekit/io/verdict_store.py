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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit import __version__
from judgekit.io.judgments import JUDGMENT_FIELDS, Orientation, ParsedVerdict, VerdictChecker
from judgekit.io.records import ErrorList, iter_records
from judgekit.io.streaming import batched, write_checked
from judgekit.judging.cache import cache_key
from judgekit.store import RunRecord, Store
from judgekit.store.imports import ImportSession
from judgekit.store.judges import IMPORTED_ENDPOINT
from judgekit.store.rows import strip_credentials, utc_now
from judgekit.types import SWAPPED_VARIANT, Item, Rubric

#: Stand-in for the parser version in imported cache keys.
IMPORT_PARSER = "import"
#: Fewest both-order pairs before the orientation check speaks.
MIN_PAIRS_FOR_WARNING = 10
#: Verdicts validated and written at a time.
BATCH = 5000


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


def imported_cache_key(rubric: Rubric, row: ParsedVerdict, item: Item | str) -> str:
    """Deterministic key: same judge, rubric, item content, order and sample -> same key.

    ``item`` is the item or its content hash (as stored).
    """
    return cache_key(
        model=row.judge, base_url=IMPORTED_ENDPOINT, rubric_hash=rubric.sha256,
        item_hash=item if isinstance(item, str) else item.content_hash, sampling={},
        sample_index=row.sample, parser_version=IMPORT_PARSER, dataset=row.dataset,
        item_id=row.item_id, variant=row.variant,
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
    """Validate the file and store its new verdicts, all in one transaction (all or nothing).

    The file is read and written a batch at a time (memory stays flat); once a
    problem is found nothing more is written, the rest is still checked, and every
    problem is raised together, which rolls back what was written.
    """
    path = Path(path)
    errors = ErrorList(str(path))
    checker = VerdictChecker(errors, rubric, store, dataset=dataset, judge=judge,
                             orientation=orientation)
    records = iter_records(path, JUDGMENT_FIELDS, on_error=errors.add)
    with store.importing() as session:
        writer = VerdictWriter(session, rubric, source=path.name)
        write_checked(records, checker.check, writer.add, errors, BATCH)
        checker.finish()
        return writer.finish()


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
    with store.importing() as session:
        return write_verdicts(session, rows, rubric, source=source, provenance=provenance)


def write_verdicts(
    session: ImportSession,
    rows: Sequence[ParsedVerdict],
    rubric: Rubric,
    *,
    source: str,
    provenance: Mapping[str, Any] | None = None,
) -> JudgmentImportResult:
    """:func:`import_verdicts` inside an import session the caller holds, so that other
    writes (``import --from TOOL``'s items) commit or roll back with the verdicts."""
    writer = VerdictWriter(session, rubric, source=source, provenance=provenance)
    for batch in batched(rows, BATCH):
        writer.add(batch)
    return writer.finish()


class VerdictWriter:
    """Stores validated verdicts batch by batch in an import session.

    A verdict whose key's latest stored outcome is the same (status, label,
    reasoning, score) is counted as unchanged; the others go to one run per
    (judge, dataset), created when its first verdict arrives and summarised at
    :meth:`finish`. The orientation check keeps only each ok verdict's label.
    """

    def __init__(self, session: ImportSession, rubric: Rubric, *, source: str,
                 provenance: Mapping[str, Any] | None = None) -> None:
        self.session, self.rubric = session, rubric
        self.base_url = strip_credentials(f"{IMPORTED_ENDPOINT}{source}")
        self.provenance = dict(provenance or {})
        self.now = utc_now()
        self.runs: dict[tuple[str, str], tuple[str, Counter[str]]] = {}
        self.unchanged = 0
        self.judges: set[str] = set()
        self.orientation = OrientationCheck()

    def add(self, rows: Sequence[ParsedVerdict]) -> None:
        hashes: dict[str, dict[str, str]] = {}
        for name in {row.dataset for row in rows}:
            hashes[name] = self.session.item_hashes(
                name, [r.item_id for r in rows if r.dataset == name])
        keyed = [(row, imported_cache_key(self.rubric, row, hashes[row.dataset][row.item_id]))
                 for row in rows]
        stored = self.session.latest_outcomes([key for _, key in keyed])
        values: list[tuple[Any, ...]] = []
        for row, key in keyed:
            self.judges.add(row.judge)
            self.orientation.add(row)
            if stored.get(key) == (row.status, row.label, row.reasoning, row.score):
                self.unchanged += 1
                continue
            run_id = self._run_id(row.judge, row.dataset, row.status)
            values.append(_values(row, key, run_id, self.rubric, self.base_url, self.now,
                                  hashes[row.dataset][row.item_id]))
        self.session.add_judgment_values(values)

    def _run_id(self, judge: str, dataset: str, status: str) -> str:
        found = self.runs.get((judge, dataset))
        if found is None:
            if not self.runs:
                self.session.save_rubric(self.rubric)
            stamp = self.now[:19].replace(":", "").replace("-", "")
            found = (f"import-{stamp}-{secrets.token_hex(4)}", Counter())
            self.runs[(judge, dataset)] = found
            self.session.add_run(_run(found[0], judge, dataset, self.rubric, self.base_url,
                                      self.now, Counter(), self.provenance))
        found[1][status] += 1
        return found[0]

    def finish(self) -> JudgmentImportResult:
        """Each run's summary written; what the import did."""
        for (judge, dataset), (run_id, counts) in self.runs.items():
            run = _run(run_id, judge, dataset, self.rubric, self.base_url, self.now, counts,
                       self.provenance)
            self.session.set_run_summary(run_id, run.summary)
        model = self.provenance.get("grader_model")
        return JudgmentImportResult(
            added=sum(sum(counts.values()) for _, counts in self.runs.values()),
            unchanged=self.unchanged,
            runs=tuple(run_id for _, (run_id, _) in sorted(self.runs.items())),
            judges=tuple(sorted(self.judges)),
            warnings=tuple(self.orientation.warnings()),
            models={judge: str(model) for judge in self.judges} if model else {},
        )


def _values(
    row: ParsedVerdict, key: str, run_id: str, rubric: Rubric, base_url: str, now: str,
    item_hash: str,
) -> tuple[Any, ...]:
    """The stored row of an imported verdict, in ``JUDGMENT_COLUMNS`` order.

    What ``judgment_to_row`` gives for the equivalent :class:`Judgment` (a test
    holds the two together), without building one per verdict.
    """
    return (
        run_id, row.dataset, row.item_id, item_hash, row.variant, row.sample, row.status,
        row.label, row.score, row.reasoning, row.raw, row.judge, None, base_url, "{}",
        rubric.name, rubric.version, rubric.sha256, key, None, None, None, None, None,
        __version__, now, 1, None,
    )


def _run(
    run_id: str, judge: str, dataset: str, rubric: Rubric, base_url: str, now: str,
    counts: Mapping[str, int], provenance: dict[str, Any],
) -> RunRecord:
    summary: dict[str, Any] = {"imported": sum(counts.values()), "counts": dict(counts),
                               "source": base_url}
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
    from judgekit.stats.intervals import wilson_interval  # numpy/scipy: only when asked

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
    check = OrientationCheck()
    for row in rows:
        check.add(row)
    return check.warnings()


class OrientationCheck:
    """Gathers ok verdicts' labels by order, for :func:`orientation_warnings` on a stream.

    Two flat maps per judge (as written, swapped), keyed by one string per
    (dataset, item, sample): a few dozen bytes a verdict, not a dict each.
    """

    def __init__(self) -> None:
        self.by: dict[str, tuple[dict[str, str | None], dict[str, str | None]]] = {}

    def add(self, row: ParsedVerdict) -> None:
        if row.status != "ok" or row.variant not in ("", SWAPPED_VARIANT):
            return
        orders = self.by.get(row.judge)
        if orders is None:
            orders = self.by[row.judge] = ({}, {})
        orders[row.variant == SWAPPED_VARIANT][
            f"{row.dataset}\x00{row.item_id}\x00{row.sample}"] = row.label

    def warnings(self) -> list[str]:
        out = []
        for judge, (written, swapped) in sorted(self.by.items()):
            both = [key for key in written if key in swapped]
            low = consistency_below_chance([written[k] for k in both], [swapped[k] for k in both])
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
