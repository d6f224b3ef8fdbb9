"""Self-consistency voting: a rubric's ``[sampling]`` judged K times per item, one verdict.

A rubric with ``[sampling] samples = K, temperature = T, aggregate = "majority"`` is judged
by K calls per item at temperature T **without a seed** (one seed would make every sample
the same answer). The calls are ordinary calls of the runner, stored as the variant
``sample`` (sample index 0..K-1): cached, resumable and claimed one by one, each failure
kept as data. The judge's one verdict per item is then a row of its own, the **vote**
(variant ``""``, sample index 0), which the report, ``estimate`` and ``compare`` read as
they read any judge's verdict; the samples, being a variant, are never read in its place.

The vote is :func:`aggregate` of the item's ``ok`` samples, the combination ``judgekit
align`` measures its ``samples-K`` candidate with (``align`` calls this module, so an
adopted rubric makes the very same calls, under the same cache keys):

- binary, categorical, pairwise: the most common label; a tie goes to the tied label
  that comes first on the scale;
- ordinal: the mean of the samples' levels, rounded to the nearest level; a mean exactly
  between two levels goes to the lower one.

Samples that failed are left out and counted: the vote of an item where only some samples
parsed is the aggregate of those (its text records "3 of 5 samples ok"); an item where none
did takes the commonest failure status of its samples (ties: the order of
:data:`judgekit.types.STATUSES`) and no label. An item with a sample never made (a run
stopped early) gets no vote until a rerun makes it.

A vote is keyed by its samples' cache keys and records the rows it was taken from; a rerun
whose samples are unchanged writes nothing and stands for the stored vote, a sample judged
again (``--retry-failed``, ``--force``) makes a new vote that supersedes the old.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from judgekit.clients.spec import JudgeSpec
from judgekit.judging.lookup import CHUNK_SIZE
from judgekit.judging.outcomes import utc_now
from judgekit.judging.runner import RunSummary, run_judgments
from judgekit.judging.units import WorkUnit, unit_key
from judgekit.store import Store
from judgekit.types import (
    STATUSES,
    Item,
    Judgment,
    Rubric,
    Scale,
    Voting,
    canonical_json,
    majority_label,
    sha256_text,
)

__all__ = [
    "SAMPLE_VARIANT", "VoteSummary", "aggregate", "read_votes", "run_votes", "sample_keys",
    "vote_key", "voted", "voting_spec", "write_votes",
]

#: The variant the samples of a vote are stored under (never read as the judge's verdict).
SAMPLE_VARIANT = "sample"
#: Bump when the rule that turns samples into a vote changes (new votes, same samples).
VOTE_VERSION = 1


def aggregate(labels: Sequence[str], scale: Scale) -> str | None:
    """Several samples' verdict: the mean score's nearest level (ordinal), else the majority.

    Ties: the lower level (ordinal), else the tied label first on the scale. None when
    there is no label. ``align`` scores its sampling variants and juries with it.
    """
    if not labels:
        return None
    if scale.kind == "ordinal" and len(labels) > 1:
        values = [scale.value_of(label) for label in labels]
        mean = float(np.mean([v for v in values if v is not None]))
        return min(scale.levels, key=lambda lv: (abs((lv.value or 0.0) - mean), lv.value)).label
    return majority_label(sorted(labels, key=scale.labels.index))


def voting_spec(spec: JudgeSpec, voting: Voting) -> JudgeSpec:
    """The judge as the samples call it: the rubric's temperature, no seed, and the vote
    named in the sampling (so the cache key and every row's provenance carry K and T)."""
    vote = canonical_json({"aggregate": voting.aggregate, "samples": voting.samples})
    return replace(spec, sampling=replace(spec.sampling, temperature=voting.temperature,
                                          seed=None, vote=vote))


def _sample_unit(item: Item) -> WorkUnit:
    return WorkUnit(item, SAMPLE_VARIANT, source_hash=item.content_hash)


def sample_keys(rubric: Rubric, item: Item, spec: JudgeSpec, *, dataset: str,
                judge: JudgeSpec | None = None) -> list[str]:
    """The cache keys of an item's K sample calls (``spec``: the judge before voting;
    ``judge``: ``voting_spec(spec, ...)`` when the caller has it, for many items)."""
    assert rubric.voting is not None
    judge = judge or voting_spec(spec, rubric.voting)
    unit = _sample_unit(item)
    return [unit_key(rubric, unit, judge, dataset=dataset, sample=s, item_hash=item.content_hash)
            for s in range(rubric.voting.samples)]


def voted(rubric: Rubric, items: Sequence[Item], spec: JudgeSpec
          ) -> tuple[Sequence[Item | WorkUnit], JudgeSpec]:
    """What the runner judges for ``rubric``: the samples of a vote and their judge, or
    ``items`` and ``spec`` unchanged (for :func:`~judgekit.judging.runner.has_pending_calls`)."""
    if rubric.voting is None:
        return items, spec
    return [_sample_unit(item) for item in items], voting_spec(spec, rubric.voting)


def vote_key(keys: Sequence[str]) -> str:
    """The key of the vote taken over these sample calls."""
    return sha256_text(canonical_json({"vote": VOTE_VERSION, "samples": list(keys)}))


@dataclass
class VoteSummary:
    """What the voting step of a run did: votes written or reused, by status."""

    samples: int
    temperature: float
    aggregate: str
    #: an ordinal scale: the majority is the mean score rounded to the nearest level
    ordinal: bool = False
    written: int = 0
    reused: int = 0
    #: items whose samples are not all made yet (no vote)
    unfinished: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    #: items voted on fewer than K ok samples (some failed), not counting all-failed ones
    partial: int = 0

    def format(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())) or "none"
        how = ("mean score rounded to the nearest level" if self.ordinal else "majority")
        line = (f"  votes: the judge's verdict per item is the {how} of {self.samples} samples "
                f"at temperature {self.temperature:g} (no seed): {counts}; {self.written} new, "
                f"{self.reused} unchanged")
        if self.partial:
            line += f"; {self.partial} item(s) voted on fewer samples (the others failed)"
        if self.unfinished:
            line += f"; {self.unfinished} item(s) not voted yet (samples missing: rerun)"
        return line

    def as_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "temperature": self.temperature,
                "aggregate": self.aggregate, "ordinal": self.ordinal, "written": self.written,
                "reused": self.reused, "unfinished": self.unfinished, "partial": self.partial,
                "counts": dict(self.counts)}


@dataclass(frozen=True)
class _Tally:
    """One item's vote from its samples' latest rows."""

    status: str
    label: str | None
    ok: int
    text: str
    reason: str
    #: the model the samples' answers name, when they all name one
    model_returned: str | None = None


def _tally(rows: Sequence[tuple[int, Judgment]], scale: Scale, aggregate_name: str) -> _Tally:
    labels = [j.label for _, j in rows if j.status == "ok" and j.label is not None]
    failed = Counter(j.status for _, j in rows if not (j.status == "ok" and j.label is not None))
    label = aggregate(labels, scale)
    detail: dict[str, Any] = {
        "aggregate": aggregate_name, "samples": len(rows), "ok": len(labels),
        "votes": dict(Counter(labels)), "failed": dict(failed),
        "from": [row_id for row_id, _ in rows],
    }
    if scale.kind == "ordinal" and labels:
        detail["mean"] = float(np.mean([scale.value_of(x) or 0.0 for x in labels]))
    if label is None:
        order = {name: i for i, name in enumerate(STATUSES)}
        status = min(failed, key=lambda s: (-failed[s], order.get(s, len(order))))
        reason = (f"no sample of {len(rows)} answered ok ("
                  + ", ".join(f"{k} {v}" for k, v in sorted(failed.items())) + ")")
    else:
        status = "ok"
        votes = ", ".join(f"{k} {v}" for k, v in sorted(Counter(labels).items()))
        reason = f"{label}: vote of {len(labels)} of {len(rows)} samples ok ({votes})"
    returned = {j.model_returned for _, j in rows if j.model_returned}
    return _Tally(status, label, len(labels), canonical_json(detail), reason,
                  returned.pop() if len(returned) == 1 else None)


def _stored_from(judgment: Judgment) -> list[int] | None:
    try:
        found = json.loads(judgment.raw_text or "")
    except ValueError:
        return None
    return found.get("from") if isinstance(found, dict) else None


def _vote_row(tally: _Tally, item: Item, key: str, rubric: Rubric, spec: JudgeSpec,
              sampling: Mapping[str, Any], dataset: str, run_id: str) -> Judgment:
    from judgekit import __version__

    return Judgment(
        run_id=run_id, dataset=dataset, item_id=item.id, sample_index=0,
        status=tally.status,  # type: ignore[arg-type]
        label=tally.label, score=rubric.scale.score_of(tally.label),
        reasoning=tally.reason if tally.label is not None else None, raw_text=tally.text,
        model_requested=spec.model, model_returned=tally.model_returned,
        base_url=spec.public_base_url,
        sampling=dict(sampling), rubric_name=rubric.name, rubric_version=rubric.version,
        rubric_hash=rubric.sha256, cache_key=key, variant="",
        error=None if tally.label is not None else tally.reason,
        judgekit_version=__version__, created_at=utc_now(), item_hash=item.content_hash)


def write_votes(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec, *,
                dataset: str, run_id: str) -> VoteSummary:
    """Take (or reuse) the vote of every item whose K samples all have an outcome.

    A stored vote taken from the same sample rows is reused (the run stands for it);
    otherwise a new vote is written under the run, superseding the latest one.
    """
    voting = rubric.voting
    assert voting is not None
    name = voting.aggregate
    summary = VoteSummary(voting.samples, voting.temperature, name,
                          rubric.scale.kind == "ordinal")
    run = store.get_run(run_id)
    sampling = dict(run.sampling) if run is not None else voting_spec(
        spec, voting).sampling.as_dict()
    links: list[int] = []
    for start in range(0, len(items), CHUNK_SIZE):  # memory flat in the dataset's size
        links += _vote_chunk(store, rubric, items[start:start + CHUNK_SIZE], spec, dataset,
                             run_id, sampling, summary)
    if links:
        store.stand_for(run_id, links)
    return summary


def _vote_chunk(store: Store, rubric: Rubric, chunk: Sequence[Item], spec: JudgeSpec,
                dataset: str, run_id: str, sampling: Mapping[str, Any],
                summary: VoteSummary) -> list[int]:
    """Votes of one chunk of items, counted in ``summary``; the stored votes to stand for."""
    links: list[int] = []
    assert rubric.voting is not None
    judge = voting_spec(spec, rubric.voting)
    per_item = {item.id: sample_keys(rubric, item, spec, dataset=dataset, judge=judge)
                for item in chunk}
    found = store.latest_judgments_by_key(k for ks in per_item.values() for k in ks)
    votes = store.latest_judgments_by_key(vote_key(ks) for ks in per_item.values())
    new: list[tuple[Judgment, int | None]] = []
    for item in chunk:
        keys = per_item[item.id]
        if any(k not in found for k in keys):
            summary.unfinished += 1
            continue
        rows = [found[k] for k in keys]
        tally = _tally(rows, rubric.scale, summary.aggregate)
        key = vote_key(keys)
        summary.counts[tally.status] += 1
        summary.partial += int(0 < tally.ok < len(rows))
        stored = votes.get(key)
        if stored is not None and _stored_from(stored[1]) == [r for r, _ in rows]:
            summary.reused += 1
            if stored[1].run_id != run_id:
                links.append(stored[0])
            continue
        # each vote supersedes the latest: one chain, and two runs cannot both extend it
        before = stored[0] if stored is not None else None
        new.append((_vote_row(tally, item, key, rubric, spec, sampling, dataset, run_id),
                    before))
    if new:
        written = store.record_claimed_many(new, owner=f"vote:{run_id}")
        summary.written += sum(written)
        # a concurrent run stored the same vote first: this run stands for that one
        lost = [j.cache_key for (j, _), ok in zip(new, written, strict=True) if not ok]
        links += [row_id for row_id, _ in store.latest_judgments_by_key(lost).values()]
        summary.reused += len(lost)
    return links


def run_votes(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec, *,
              dataset: str, force: bool = False, retry_failed: bool = False,
              progress: bool | None = None, kind: str = "judge") -> tuple[RunSummary, VoteSummary]:
    """Judge ``items`` K times each (the rubric's ``[sampling]``) and take their votes."""
    voting = rubric.voting
    if voting is None:
        raise ValueError(f"rubric {rubric.name} declares no [sampling]: nothing to vote")
    summary = run_judgments(store, rubric, [_sample_unit(item) for item in items],
                            voting_spec(spec, voting), dataset=dataset, samples=voting.samples,
                            force=force, retry_failed=retry_failed, progress=progress, kind=kind)
    votes = write_votes(store, rubric, items, spec, dataset=dataset, run_id=summary.run_id)
    return summary, votes


def read_votes(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec, *,
               dataset: str) -> dict[str, Judgment | None]:
    """item id -> its latest stored vote, or None (``spec``: the judge before voting)."""
    assert rubric.voting is not None
    judge = voting_spec(spec, rubric.voting)
    keys = {item.id: vote_key(sample_keys(rubric, item, spec, dataset=dataset, judge=judge))
            for item in items}
    found = store.latest_judgments_by_key(keys.values())
    return {item_id: (found[k][1] if k in found else None) for item_id, k in keys.items()}
