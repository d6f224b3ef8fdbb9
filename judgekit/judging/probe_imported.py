"""Probes from imported verdicts: no endpoint, nothing paid again.

Position (:func:`imported_position_probe`) and self-consistency
(:func:`imported_consistency_probe`, from repeated verdicts of one item).

``judgments import`` (and the tool adapters) store a ``BA`` verdict as variant
``"swapped"``, mapped back to the original orientation, exactly as the live
probe's swapped call. This module reads those rows for one imported judge and
stores a position result of the same shape as :func:`run_position_probe` (plus
``"imported": true``) under a run of kind ``probe:position``, so ``judgekit
report`` shows it like a live probe. The run stands for the imported verdicts it
read (``run_outcomes``), so ``runs``, ``export --run`` and a report selecting by
the run see exactly the outcomes its figures came from.
"""

from __future__ import annotations

import secrets
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from judgekit import __version__
from judgekit.errors import InputError
from judgekit.io.verdict_store import consistency_below_chance, orientation_message
from judgekit.judging.probes import MAX_LISTED_IDS, SCHEMA_VERSION
from judgekit.progress import phase
from judgekit.stats import bias
from judgekit.store import RunRecord, Store
from judgekit.store.judges import IMPORTED_ENDPOINT
from judgekit.store.rows import utc_now
from judgekit.types import SWAPPED_VARIANT, Rubric


@dataclass(frozen=True)
class ImportedPosition:
    """The stored result and any orientation warning."""

    result: dict[str, Any]
    warning: str | None


@dataclass(frozen=True)
class ImportedConsistency:
    """The stored self-consistency result of an imported judge."""

    result: dict[str, Any]


def imported_judges(store: Store, rubric: Rubric, dataset: str) -> list[str]:
    """Names of the imported judges with swapped verdicts on ``dataset``."""
    found = store.judges(rubric_hash=rubric.sha256, dataset=dataset, variant=SWAPPED_VARIANT,
                         run_kinds=None)
    return sorted({j.model for j in found if j.endpoint == IMPORTED_ENDPOINT})


#: One verdict as the probe reads it: (status, label, judgment row id).
_Verdict = tuple[str, str | None, int | None]


def _both_orders(store: Store, rubric: Rubric, dataset: str,
                 judge: str) -> dict[str, dict[str, _Verdict]]:
    """Per item id, per variant (``""``, ``"swapped"``): the latest sample-0 verdict's
    (status, label, row id), read as lean rows (no full judgment objects at 100k items)."""
    by: dict[str, dict[str, _Verdict]] = defaultdict(dict)
    for row_id, item_id, variant, sample_index, status, label in store.judgment_outcomes(
            rubric_hash=rubric.sha256, dataset=dataset, endpoint=IMPORTED_ENDPOINT,
            model=judge, run_kinds=("import",)):
        if sample_index == 0 and variant in ("", SWAPPED_VARIANT):
            by[item_id][variant] = (status, label, row_id)
    return by


def imported_position_probe(
    store: Store, rubric: Rubric, dataset: str, judge: str | None = None
) -> ImportedPosition:
    """Position consistency of an imported judge's AB/BA verdicts, stored like a live probe."""
    if rubric.scale.kind != "pairwise":
        raise InputError(f"--imported needs a pairwise rubric ({rubric.name!r} is "
                         f"{rubric.scale.kind}): imported verdicts have no reversed levels")
    phase("finding the imported judge")
    judges = imported_judges(store, rubric, dataset)
    if not judges:
        raise InputError(f"no imported BA verdicts for rubric {rubric.name!r} on dataset "
                         f"{dataset!r}; import both orders with: judgekit judgments import")
    judge = _pick_judge(judges, judge, "BA verdicts")
    phase("reading both orders")
    by = _both_orders(store, rubric, dataset, judge)
    ids = [i for i in store.item_ids(dataset) if SWAPPED_VARIANT in by.get(i, {})]
    missing: _Verdict = ("missing", None, None)

    phase("measuring")
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    columns: dict[str, list[str | None]] = {}
    used: list[int] = []  # the verdicts the figures come from, failures included
    for variant in ("", SWAPPED_VARIANT):
        found = [by[i].get(variant, missing) for i in ids]
        counts[variant].update(status for status, _, _ in found)
        columns[variant] = [label if status == "ok" else None for status, label, _ in found]
        used.extend(row_id for _, _, row_id in found if row_id is not None)
    del by
    original, swapped = columns[""], columns[SWAPPED_VARIANT]
    outcome = bias.position_bias(original, swapped)
    now = utc_now()
    run_id = f"probe-imported-{now[:19].replace(':', '').replace('-', '')}-{secrets.token_hex(4)}"
    result: dict[str, Any] = {
        "probe": "position", "schema_version": SCHEMA_VERSION, "mode": "pairwise",
        "dataset": dataset, "run_id": run_id,
        "rubric": {"name": rubric.name, "version": rubric.version, "sha256": rubric.sha256,
                   "kind": rubric.scale.kind},
        "model": judge, "base_url": IMPORTED_ENDPOINT, "sampling": {}, "imported": True,
        "n_items": len(ids),
        "status_counts": {v: dict(sorted(c.items())) for v, c in sorted(counts.items())},
        "confidence_level": 0.95,
    }
    result.update(outcome.to_dict())
    result["n_excluded"] = outcome.n_failed
    result["inconsistent_items"] = [ids[i] for i in outcome.inconsistent_indices()[
        :MAX_LISTED_IDS]]
    low = consistency_below_chance(original, swapped)
    warning = orientation_message(judge, *low) if low is not None else None
    if warning is not None:
        result["warning"] = warning
    _save_probe_run(store, rubric, "position", run_id, dataset, judge, now, used, result,
                    {"pairs": len(ids)})
    return ImportedPosition(result, warning)


# -- self-consistency from imported repeated verdicts ----------------------------------


def imported_consistency_probe(
    store: Store, rubric: Rubric, dataset: str, judge: str | None = None
) -> ImportedConsistency:
    """Repetition stability, flip rate, kappa and alpha of an imported judge's repeated
    verdicts (samples 0..K-1 of one item: promptfoo ``--repeat``, Inspect epochs, a
    ``sample`` field), stored like a live ``probe consistency`` under a run that stands for
    exactly the verdicts it read."""
    phase("finding the imported judge")
    found = store.judges(rubric_hash=rubric.sha256, dataset=dataset, variant="",
                         run_kinds=None)
    judges = sorted({j.model for j in found if j.endpoint == IMPORTED_ENDPOINT})
    if not judges:
        raise InputError(f"no imported verdicts for rubric {rubric.name!r} on dataset "
                         f"{dataset!r}; import them with: judgekit judgments import, or "
                         "judgekit import --from TOOL")
    judge = _pick_judge(judges, judge, "verdicts")
    phase("reading the repeated verdicts")
    by: dict[str, dict[int, _Verdict]] = defaultdict(dict)
    for row_id, item_id, _, sample, status, label in store.judgment_outcomes(
            rubric_hash=rubric.sha256, dataset=dataset, variant="",
            endpoint=IMPORTED_ENDPOINT, model=judge, run_kinds=("import",)):
        by[item_id][sample] = (status, label, row_id)
    ids = [i for i in store.item_ids(dataset) if len(by.get(i, {})) >= 2]
    if not ids:
        raise InputError(f"judge {judge!r} has one verdict per item on dataset {dataset!r}: "
                         "self-consistency needs repeated verdicts of one item (promptfoo "
                         "--repeat N, Inspect epochs, a 'sample' field in judgments import)")
    samples = max(max(by[i]) for i in ids) + 1
    phase("measuring")
    counts: Counter[str] = Counter()
    matrix: list[list[str | None]] = []
    used: list[int] = []
    for item_id in ids:
        row: list[str | None] = []
        for sample in range(samples):
            status, label, judgment_id = by[item_id].get(sample, ("missing", None, None))
            counts[status] += 1
            row.append(label if status == "ok" else None)
            if judgment_id is not None:
                used.append(judgment_id)
        matrix.append(row)
    del by
    outcome = bias.repetition_stability(
        matrix, level="ordinal" if rubric.scale.kind == "ordinal" else "nominal",
        labels=list(rubric.scale.labels))
    now = utc_now()
    run_id = f"probe-imported-{now[:19].replace(':', '').replace('-', '')}-{secrets.token_hex(4)}"
    result: dict[str, Any] = {
        "probe": "consistency", "schema_version": SCHEMA_VERSION,
        "mode": "pairwise" if rubric.scale.kind == "pairwise" else "pointwise",
        "dataset": dataset, "run_id": run_id,
        "rubric": {"name": rubric.name, "version": rubric.version, "sha256": rubric.sha256,
                   "kind": rubric.scale.kind},
        "model": judge, "base_url": IMPORTED_ENDPOINT, "sampling": {}, "imported": True,
        "n_items": len(ids), "samples": samples, "temperature": None,
        "status_counts": {"": dict(sorted(counts.items()))}, "confidence_level": 0.95,
    }
    result.update(outcome.to_dict())
    result["unstable_items"] = [ids[i] for i in outcome.unstable[:MAX_LISTED_IDS]]
    _save_probe_run(store, rubric, "consistency", run_id, dataset, judge, now, used, result,
                    {"items": len(ids)})
    return ImportedConsistency(result)


def _pick_judge(judges: list[str], judge: str | None, what: str) -> str:
    """The imported judge a probe reads: the one named, or the only one there is."""
    if judge is None:
        if len(judges) > 1:
            raise InputError(f"several imported judges ({', '.join(judges)}): choose one "
                             "with --judge NAME")
        return judges[0]
    if judge not in judges:
        raise InputError(f"no imported {what} of judge {judge!r} (imported judges: "
                         f"{', '.join(judges)})")
    return judge


def _save_probe_run(
    store: Store, rubric: Rubric, probe: str, run_id: str, dataset: str, judge: str, now: str,
    used: list[int], result: dict[str, Any], counts: dict[str, int],
) -> None:
    """Store an imported probe's run, the verdicts it stands for and its result, together."""
    phase("saving the probe run")
    store.create_run(RunRecord(
        id=run_id, kind=f"probe:{probe}", dataset=dataset, rubric_hash=rubric.sha256,
        model=judge, base_url=IMPORTED_ENDPOINT, sampling={}, capabilities={},
        judgekit_version=__version__, started_at=now, finished_at=now,
        summary={"imported": True, **counts, "verdicts": len(used)},
    ))
    store.stand_for(run_id, used)
    store.save_rubric(rubric)
    store.save_probe_result(run_id, probe, rubric.sha256, result)
