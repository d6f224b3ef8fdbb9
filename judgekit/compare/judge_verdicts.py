"""Which judgments stand for a compared judge, and its one verdict per item.

The report's rule (docs/reports.md, :meth:`judgekit.store.Store.judge_selection`)
chooses the judgments; they are read as lean rows and reduced to one shared
:class:`Verdict` per distinct outcome. Used by both kinds of comparison
(``judges.py``, ``candidates.py``) and by ``align``'s jury.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from judgekit.errors import InputError
from judgekit.report.pairing import ItemKey, select_judgments
from judgekit.store import JudgmentSelection, Store
from judgekit.types import Rubric


class Verdict(NamedTuple):
    """What a comparison keeps of a judge's judgment of one item: its outcome."""

    status: str
    label: str | None
    score: float | None = None


def judge_side(
    store: Store,
    rubric: Rubric,
    selection: JudgmentSelection,
    run_id: str | None,
) -> tuple[dict[ItemKey, Verdict], Counter[str]]:
    """One judge's plain judgments (``selection``), one per item, and their statuses.

    Lean rows (item, variant, sample, status, label) streamed through the one-per-item
    rule, never full judgments: a judge of 100,000 items is compared without reading
    its completions. Each chosen row is then reduced to its :class:`Verdict`, one
    shared tuple per distinct outcome, so a side of 100,000 items holds little
    beyond its keys.
    """
    chosen = select_judgments(store.judgment_rows(None, **selection.filters()))
    if not chosen:  # the selection is of plain variants: no rows at all
        raise InputError(
            f"no judgments for rubric {rubric.name} v{rubric.version}"
            + (f" on dataset {selection.dataset!r}" if selection.dataset else "")
            + (f" by the judge of run {run_id!r}" if run_id else "")
        )
    share: dict[tuple[str, str | None, float | None], Verdict] = {}
    verdicts: dict[ItemKey, Verdict] = {}
    counts: Counter[str] = Counter()
    for key, row in chosen.items():
        outcome = (row.status, row.label, row.score)
        verdict = share.get(outcome)
        if verdict is None:
            verdict = share[outcome] = Verdict(*outcome)
        verdicts[key] = verdict
        counts[row.status] += 1
    return verdicts, counts


def judge_of(
    store: Store,
    rubric: Rubric,
    run_id: str | None,
    dataset: str | None,
    *,
    run_option: str,
    model: str | None = None,
    model_option: str | None = None,
) -> JudgmentSelection:
    """The judgments a compared judge stands for, by the report's rule (docs/reports.md).

    A run id stands for its judge (model, endpoint, sampling), cached judgments
    included; without one, the only judge with judgments from judge or import runs.
    Probe runs and probe variants never count unless a probe run is named.
    """
    return store.judge_selection(
        rubric_hash=rubric.sha256,
        rubric_name=rubric.name,
        dataset=dataset,
        run_id=run_id,
        model=model,
        variant="",
        run_option=run_option,
        model_option=model_option,
    )
