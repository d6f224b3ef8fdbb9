"""Judge a candidate on one part of the split, and measure it against the humans.

Judging goes through the runner (:func:`judgekit.judging.runner.run_judgments`), so every
call is cached and a killed ``align`` resumes where it stopped; verdicts are read back by
their cache keys, so exactly the calls of this judge, rubric, sampling and items count.
A sampling variant is a rubric with ``[sampling]``, judged and voted exactly as ``judge``
votes (:mod:`judgekit.judging.voting`: majority label; mean score rounded to the nearest
level on an ordinal scale), so the adopted rubric reads back these very votes.
Failures are counted, never scored.

The statistics reuse the report's and ``compare judges``' machinery: the primary statistic
with its interval (:func:`judgekit.report.agreement.primary_only`), the paired kappa
difference resampled over whole clusters
(:func:`judgekit.compare.kappa_difference.kappa_difference_fn`) and McNemar's
exact test of the agreement difference when items are independent.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.align.candidates import Candidate
from judgekit.clients.spec import JudgeSpec
from judgekit.compare.clustering import clustered_spec
from judgekit.compare.kappa_difference import kappa_difference_fn
from judgekit.judging.cache import needs_call
from judgekit.judging.runner import run_judgments
from judgekit.judging.units import WorkUnit, unit_key
from judgekit.judging.voting import aggregate, read_votes, run_votes, sample_keys
from judgekit.report.agreement import PRIMARY_BY_KIND, primary_only
from judgekit.report.model import Stat
from judgekit.report.pairing import ItemKey
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat, proportion_stat, to_stat
from judgekit.store import Store
from judgekit.types import Item, Judgment, Scale

#: An item's aggregated verdict, or None when every sample failed.
Verdicts = dict[ItemKey, str | None]


def _keys(candidate: Candidate, spec: JudgeSpec, dataset: str, item: Item) -> list[str]:
    """The calls judging ``item`` with ``candidate``: one, or the K samples of a vote."""
    if candidate.rubric.voting is not None:
        return sample_keys(candidate.rubric, item, spec, dataset=dataset)
    return [unit_key(candidate.rubric, WorkUnit(item), spec, dataset=dataset)]


def pending_calls(store: Store, candidate: Candidate, keys: Sequence[ItemKey],
                  items: Mapping[ItemKey, Item], spec: JudgeSpec) -> int:
    """Calls judging ``keys`` with ``candidate`` would make now (the cache read, nothing sent)."""
    wanted = [k for key in keys for k in _keys(candidate, spec, key[0], items[key])]
    found = store.latest_judgments_by_key(wanted)
    return sum(
        needs_call(found[k][1] if k in found else None, force=False, retry_failed=False)
        for k in wanted)


def judge_part(store: Store, candidate: Candidate, keys: Sequence[ItemKey],
               items: Mapping[ItemKey, Item], spec: JudgeSpec, *,
               progress: bool | None = None) -> tuple[Verdicts, Counter[str], int]:
    """Judge ``keys`` with ``candidate`` (cached calls reused); verdicts, failures, calls made.

    A sampling variant is judged as ``judge`` judges a rubric with ``[sampling]``
    (:func:`judgekit.judging.voting.run_votes`): the same calls, the same stored votes.
    """
    made = 0
    for dataset in sorted({k[0] for k in keys}):
        chosen = [items[k] for k in keys if k[0] == dataset]
        if candidate.rubric.voting is not None:
            summary, _ = run_votes(store, candidate.rubric, chosen, spec, dataset=dataset,
                                   progress=progress, kind="align")
        else:
            summary = run_judgments(store, candidate.rubric, chosen, spec, dataset=dataset,
                                    progress=progress, kind="align")
        made += summary.judged
    verdicts, failures = read_verdicts(store, candidate, keys, items, spec)
    return verdicts, failures, made


def read_verdicts(store: Store, candidate: Candidate, keys: Sequence[ItemKey],
                  items: Mapping[ItemKey, Item], spec: JudgeSpec) -> tuple[Verdicts, Counter[str]]:
    """Each item's verdict from the stored calls (a vote's from its stored vote, the row a
    report reads); failed calls (samples) counted by status."""
    per_item = {key: _keys(candidate, spec, key[0], items[key]) for key in keys}
    found = store.latest_judgments_by_key(k for ks in per_item.values() for k in ks)
    votes: dict[ItemKey, Judgment | None] = {}
    if candidate.rubric.voting is not None:
        for dataset in sorted({k[0] for k in keys}):
            chosen = [items[k] for k in keys if k[0] == dataset]
            read = read_votes(store, candidate.rubric, chosen, spec, dataset=dataset)
            votes.update({(dataset, i): v for i, v in read.items()})
    verdicts: Verdicts = {}
    failures: Counter[str] = Counter()
    for key, call_keys in per_item.items():
        labels: list[str] = []
        for call in call_keys:
            row = found.get(call)
            if row is None:
                failures["not judged"] += 1
            elif row[1].status != "ok" or row[1].label is None:
                failures[row[1].status] += 1
            else:
                labels.append(row[1].label)
        if candidate.rubric.voting is None:
            verdicts[key] = aggregate(labels, candidate.rubric.scale)
        else:
            vote = votes.get(key)
            verdicts[key] = vote.label if vote is not None and vote.status == "ok" else None
    return verdicts, failures


@dataclass(frozen=True)
class PartScore:
    """A candidate's agreement with the humans on one part of the split."""

    primary: Stat
    agreement: Stat
    n: int
    failures: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"primary": self.primary.to_dict(), "agreement": self.agreement.to_dict(),
                "n": self.n, "failures": dict(self.failures)}


def _interval_spec(keys: list[ItemKey], items: Mapping[ItemKey, Item],
                   spec: IntervalSpec) -> IntervalSpec:
    return clustered_spec(keys, items, None, spec)[0]


def score_part(verdicts: Verdicts, failures: Mapping[str, int], reference: Mapping[ItemKey, str],
               keys: Sequence[ItemKey], items: Mapping[ItemKey, Item], scale: Scale,
               spec: IntervalSpec) -> PartScore:
    """The primary statistic and the share agreeing, with intervals, on the judged items."""
    used = [k for k in keys if verdicts.get(k) is not None]
    judge = [verdicts[k] or "" for k in used]
    human = [reference[k] for k in used]
    clustered = _interval_spec(used, items, spec)
    primary = primary_only(judge, human, scale, clustered, PRIMARY_BY_KIND[scale.kind])
    agree = np.asarray(judge, dtype=object) == np.asarray(human, dtype=object)
    return PartScore(primary, proportion_stat(agree.astype(bool), clustered), len(used),
                     dict(failures))


@dataclass(frozen=True)
class PairedResult:
    """Candidate minus baseline on the same held-out items: the figure ``align`` reports."""

    statistic: str
    baseline: Stat
    candidate: Stat
    difference: Stat
    agreement_difference: Stat
    agreement_test: str
    pvalue: float
    n: int
    clusters: int | None

    @property
    def improvement_shown(self) -> bool:
        return self.difference.defined and self.difference.ci_low > 0

    def sentence(self) -> str:
        d = self.difference
        name = "weighted kappa" if self.statistic == "weighted_kappa" else "kappa"
        head = (f"{name} {self.baseline.statistic:.2f} -> {self.candidate.statistic:.2f}, "
                f"{d.statistic:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}] on {self.n} held-out "
                "labels")
        if not d.defined:
            return (f"{name} difference undefined on {self.n} held-out labels "
                    f"({d.reason or 'no items'}): no improvement shown")
        if not (math.isfinite(d.ci_low) and math.isfinite(d.ci_high)):
            why = d.note or "no interval"
            why = why if why.startswith("no interval") else f"no interval: {why}"
            return (f"{name} {self.baseline.statistic:.2f} -> {self.candidate.statistic:.2f}, "
                    f"{d.statistic:+.2f} ({why}) on {self.n} held-out labels: no improvement "
                    "shown")
        if d.ci_low > 0:
            return head
        if d.ci_high < 0:
            return f"{head}: the candidate is worse"
        return f"{head}: no improvement shown (the interval covers 0)"

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "baseline": self.baseline.to_dict(),
                "candidate": self.candidate.to_dict(), "difference": self.difference.to_dict(),
                "agreement_difference": self.agreement_difference.to_dict(),
                "agreement_test": self.agreement_test,
                "pvalue": self.pvalue if math.isfinite(self.pvalue) else None,
                "n": self.n, "clusters": self.clusters,
                "improvement_shown": self.improvement_shown, "sentence": self.sentence()}


def paired_difference(baseline: Verdicts, candidate: Verdicts, reference: Mapping[ItemKey, str],
                      keys: Sequence[ItemKey], items: Mapping[ItemKey, Item], scale: Scale,
                      spec: IntervalSpec) -> PairedResult:
    """Candidate minus baseline on the items both judged: kappa difference (paired, cluster
    bootstrap) and agreement difference (McNemar's exact test, or the cluster bootstrap)."""
    used = [k for k in keys if baseline.get(k) is not None and candidate.get(k) is not None]
    primary = PRIMARY_BY_KIND[scale.kind]
    clustered, clustering = clustered_spec(used, items, None, spec)
    jb = [baseline[k] or "" for k in used]
    jc = [candidate[k] or "" for k in used]
    hh = [reference[k] for k in used]
    labels = list(scale.labels)
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    grid = np.subtract.outer(np.arange(k), np.arange(k)) / max(k - 1, 1)
    weights = 1.0 - grid**2 if primary == "weighted_kappa" else np.eye(k)
    ic, ib, ih = (np.asarray([index[x] for x in xs], dtype=np.int64) for xs in (jc, jb, hh))
    joint = (ic * k + ib) * k + ih
    difference = bootstrap_stat(kappa_difference_fn(k, weights), [joint], clustered)
    cc = np.asarray(jc, dtype=object) == np.asarray(hh, dtype=object)
    cb = np.asarray(jb, dtype=object) == np.asarray(hh, dtype=object)
    if clustering is None and used:
        test = stats.mcnemar(cc, cb)
        agreement, pvalue, name = to_stat(test, clustered), float(test.pvalue), "McNemar exact"
    elif used:
        res = stats.paired_bootstrap(
            cc.astype(float), cb.astype(float), n_resamples=clustered.n_resamples,
            random_state=clustered.random_state, confidence_level=clustered.confidence_level,
            clusters=clustered.clusters)
        agreement = Stat(res.statistic, res.ci_low, res.ci_high, res.n, "paired cluster bootstrap")
        pvalue, name = float(res.pvalue), "paired cluster bootstrap"
    else:
        agreement = Stat(math.nan, math.nan, math.nan, 0, "", "no item judged by both")
        pvalue, name = math.nan, "none"
    return PairedResult(
        primary, primary_only(jb, hh, scale, clustered, primary),
        primary_only(jc, hh, scale, clustered, primary), difference, agreement, name, pvalue,
        len(used), None if clustering is None else clustering.n_clusters)
