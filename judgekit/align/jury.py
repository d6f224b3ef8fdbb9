"""A jury candidate: several judges' stored runs combined by majority (mean on ordinal scales).

Verga et al. (2024) found a panel of smaller judges agreeing with people better than one
large judge. Here the panel costs nothing new: each member is a stored run of the
baseline rubric (``judgekit judge`` with another model, or imported verdicts), read with
the report's rule (a run stands for its judge's judgments, cached ones included). Each
item's verdict is the majority of the members that judged it ok
(:func:`judgekit.judging.voting.aggregate`, as ``judge`` votes); an item no member judged
ok has none.
Each member's cost is its run's tokens per call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.align.candidates import Candidate
from judgekit.align.evaluate import Verdicts
from judgekit.compare.judge_verdicts import judge_side
from judgekit.errors import InputError
from judgekit.judging.voting import aggregate
from judgekit.report.pairing import ItemKey
from judgekit.store import Store
from judgekit.types import Rubric


@dataclass(frozen=True)
class Member:
    """One juror: its run, model and what a call of it cost."""

    run_id: str
    model: str
    calls: int
    tokens_per_call: float | None

    def describe(self) -> str:
        cost = ("" if self.tokens_per_call is None
                else f", {self.tokens_per_call:,.0f} tokens per call")
        return f"{self.model} (run {self.run_id}{cost})"


@dataclass(frozen=True)
class Jury:
    """The jury as a candidate, with its members' verdicts per item."""

    candidate: Candidate
    members: tuple[Member, ...]
    verdicts: tuple[dict[ItemKey, str | None], ...]

    def verdicts_on(self, keys: Sequence[ItemKey]) -> tuple[Verdicts, Counter[str]]:
        """Each item's jury verdict; items no member judged ok are counted, not scored."""
        out: Verdicts = {}
        failures: Counter[str] = Counter()
        scale = self.candidate.rubric.scale
        for key in keys:
            labels = [v[key] for v in self.verdicts if v.get(key) is not None]
            out[key] = aggregate([label for label in labels if label is not None], scale)
            if out[key] is None:
                failures["no member judged it"] += 1
        return out, failures

    def to_dict(self) -> dict[str, Any]:
        return {"members": [m.__dict__ for m in self.members]}


def _member(store: Store, run_id: str) -> Member:
    run = store.get_run(run_id)
    if run is None:
        raise InputError(f"--jury-run {run_id}: no such run")
    summary = run.summary or {}
    judged = int(summary.get("judged") or 0)
    tokens = int(summary.get("prompt_tokens") or 0) + int(summary.get("completion_tokens") or 0)
    return Member(run_id, run.model, int(summary.get("total") or judged),
                  tokens / judged if judged and tokens else None)


def jury_candidate(store: Store, baseline: Rubric, run_ids: Sequence[str]) -> Jury:
    """The jury of ``run_ids`` (two or more runs of the baseline rubric)."""
    if len(set(run_ids)) < 2:
        raise InputError("--jury-run: a jury needs two or more different runs")
    members, verdicts = [], []
    for run_id in dict.fromkeys(run_ids):
        selection = store.run_judge_selection(run_id, rubric_hash=baseline.sha256, variant="")
        side, _ = judge_side(store, baseline, selection, run_id)
        verdicts.append({k: (v.label if v.status == "ok" else None) for k, v in side.items()})
        members.append(_member(store, run_id))
    how = "mean score" if baseline.scale.kind == "ordinal" else "majority"
    changes = (f"{how} of {len(members)} stored judges: "
               + "; ".join(m.describe() for m in members))
    candidate = Candidate(f"jury-{len(members)}", "jury", baseline, changes)
    return Jury(candidate, tuple(members), tuple(verdicts))
