"""Two candidate models scored by one judge on the same items (see :mod:`judgekit.compare`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.compare.clustering import NO_CLUSTERS, Clustering, clustered_spec
from judgekit.compare.judge_verdicts import judge_of, judge_side
from judgekit.errors import InputError
from judgekit.progress import phase
from judgekit.report.agreement import numeric_values
from judgekit.report.model import Stat, undefined
from judgekit.report.pairing import ItemKey
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat, wilson_if_collapsed
from judgekit.store import JudgmentSelection, Store
from judgekit.store.columns import ItemFacts
from judgekit.types import Rubric


@dataclass(frozen=True)
class CandidateComparison:
    """Candidate A vs B scored by one judge on the same items."""

    score: str
    n_items: int
    mean_a: Stat
    mean_b: Stat
    micro_difference: Stat
    macro_difference: Stat
    pvalue: float
    slices: Mapping[str, Stat]
    abstentions_a: Mapping[str, int]
    abstentions_b: Mapping[str, int]
    excluded: int
    notes: tuple[str, ...] = field(default_factory=tuple)
    clustering: Clustering | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": "candidates",
            "score": self.score,
            "n_items": self.n_items,
            "mean_a": self.mean_a.to_dict(),
            "mean_b": self.mean_b.to_dict(),
            "micro_difference": self.micro_difference.to_dict(),
            "macro_difference": self.macro_difference.to_dict(),
            "pvalue": self.pvalue if np.isfinite(self.pvalue) else None,
            "slices": {k: v.to_dict() for k, v in self.slices.items()},
            "abstentions_a": dict(self.abstentions_a),
            "abstentions_b": dict(self.abstentions_b),
            "excluded": self.excluded,
        }
        if self.clustering is not None:
            out.update(self.clustering.to_dict())
            out["macro_method"] = self.macro_difference.method
            out["notes"] = list(self.notes)
        return out


def _score(rubric: Rubric, label: str) -> float:
    if rubric.scale.kind == "binary":
        return 1.0 if label == "pass" else 0.0
    return float(numeric_values(rubric.scale, [label])[0])


def candidate_judge(
    store: Store, rubric: Rubric, dataset_a: str, dataset_b: str, run_id: str | None
) -> tuple[JudgmentSelection, JudgmentSelection]:
    """The one judge whose scores of both candidates are compared, on each dataset.

    ``run_id`` names the judge through one of its runs, which judged one dataset
    (or neither): that judge's identity (model, endpoint, sampling) is applied to
    both datasets, cached judgments included. Without a run id each dataset must
    have exactly one judge (judge or import runs), and it must be the same judge:
    scores of two different judges are not a paired comparison of candidates.
    """
    if run_id is not None:
        judge = store.run_judge_selection(run_id, rubric_hash=rubric.sha256, variant="")
        return replace(judge, dataset=dataset_a), replace(judge, dataset=dataset_b)
    sides = tuple(
        judge_of(store, rubric, run_id, name, run_option="--run")
        for name in (dataset_a, dataset_b)
    )
    a, b = sides
    if a.model is not None and b.model is not None:
        who_a = (a.model, a.endpoint, dict(a.sampling or {}))
        who_b = (b.model, b.endpoint, dict(b.sampling or {}))
        if who_a != who_b:
            raise InputError(
                f"{dataset_a!r} was judged by model {a.model!r} at {a.endpoint} and "
                f"{dataset_b!r} by model {b.model!r} at {b.endpoint} (or with other sampling); "
                "choose the judge of both with --run RUN_ID"
            )
    return a, b


def compare_candidates(
    store: Store,
    rubric: Rubric,
    dataset_a: str,
    dataset_b: str,
    *,
    run_id: str | None = None,
    spec: IntervalSpec | None = None,
    cluster_by: str | None = None,
) -> CandidateComparison:
    """Paired difference of judge scores, candidate A minus B, over shared item ids.

    Clusters and slices are read from candidate A's items (B's when A lacks the
    item); ``cluster_by`` groups items for resampling as in the report.
    """
    if rubric.scale.kind not in ("binary", "ordinal"):
        raise InputError("compare candidates needs a binary or ordinal rubric (a score per item)")
    spec = spec or IntervalSpec()
    phase("choosing the judge")
    select_a, select_b = candidate_judge(store, rubric, dataset_a, dataset_b, run_id)
    phase("reading candidate A")
    side_a, _ = judge_side(store, rubric, select_a, run_id)
    phase("reading candidate B")
    side_b, _ = judge_side(store, rubric, select_b, run_id)
    phase("statistics")
    by_id_a = {k[1]: j for k, j in side_a.items()}
    by_id_b = {k[1]: j for k, j in side_b.items()}
    shared = sorted(set(by_id_a) & set(by_id_b))
    fails_a: Counter[str] = Counter()
    fails_b: Counter[str] = Counter()
    sa, sb, slices = [], [], []
    items_a = store.item_facts(dataset_a, shared)  # slice and cluster, never the responses
    keys: list[ItemKey] = []
    for item_id in shared:
        a, b = by_id_a[item_id], by_id_b[item_id]
        if a.status != "ok" or a.label is None:
            fails_a[a.status] += 1
        if b.status != "ok" or b.label is None:
            fails_b[b.status] += 1
        if a.status != "ok" or b.status != "ok" or a.label is None or b.label is None:
            continue
        sa.append(_score(rubric, a.label))
        sb.append(_score(rubric, b.label))
        item = items_a.get(item_id)
        slices.append(item.slice if item is not None and item.slice else "(no slice)")
        keys.append((dataset_a, item_id))
    del side_a, side_b, by_id_a, by_id_b  # only the paired scores are needed now
    if not sa:
        raise InputError(f"no item id has an ok judgment in both {dataset_a!r} and {dataset_b!r}")
    item_of: dict[ItemKey, ItemFacts] = {}
    if cluster_by != NO_CLUSTERS:
        missing = [k[1] for k in keys if items_a.get(k[1]) is None]
        from_b = store.item_facts(dataset_b, missing) if missing else {}
        for key in keys:
            found = items_a.get(key[1]) or from_b.get(key[1])
            if found is not None:
                item_of[key] = found
    spec, clustering = clustered_spec(keys, item_of, cluster_by, spec)
    xa, xb = np.asarray(sa), np.asarray(sb)
    res = stats.paired_bootstrap(
        xa,
        xb,
        n_resamples=spec.n_resamples,
        random_state=spec.random_state,
        confidence_level=spec.confidence_level,
        clusters=spec.clusters,
    )
    names = np.asarray(slices, dtype=object)
    codes = np.unique(names, return_inverse=True)[1]
    g = int(codes.max()) + 1
    # resamples gather one small integer per item; the bin arithmetic below is int64 as before
    codes = codes.astype(np.min_scalar_type(g))

    def macro(d: Any, c: Any) -> Any:
        b = d.shape[0]
        flat = (np.arange(b)[:, None] * g + c).ravel()
        sums = np.bincount(flat, weights=d.ravel(), minlength=b * g).reshape(b, g)
        counts = np.bincount(flat, minlength=b * g).reshape(b, g)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nanmean(np.where(counts > 0, sums / counts, np.nan), axis=1)

    method = "paired bootstrap" if clustering is None else "paired cluster bootstrap"

    def score_mean(x: Any) -> Stat:
        stat = bootstrap_stat(lambda v: v.mean(axis=-1), [x], spec)
        if clustering is not None and rubric.scale.kind == "binary":
            return wilson_if_collapsed(stat, spec)  # as the report treats clustered rates
        return stat

    per_slice: dict[str, Stat] = {}
    for name in sorted(set(slices)):
        mask = names == name
        if mask.sum() < 2:
            per_slice[name] = undefined("fewer than 2 items", int(mask.sum()))
            continue
        r = stats.paired_bootstrap(
            xa[mask],
            xb[mask],
            n_resamples=spec.n_resamples,
            random_state=spec.random_state,
            confidence_level=spec.confidence_level,
            clusters=None if spec.clusters is None else spec.clusters[mask],
        )
        per_slice[name] = Stat(r.statistic, r.ci_low, r.ci_high, r.n, method)
    notes: list[str] = []
    if clustering is None:
        macro_difference = bootstrap_stat(macro, [xa - xb, codes], spec)
    else:
        # slices are fixed by design: each keeps its size, clusters resampled within it
        macro_difference = bootstrap_stat(macro, [xa - xb, codes], spec, strata=codes)
        notes.append(
            f"the {clustering.n_items} items fall in {clustering.n_clusters} clusters "
            f"(by {clustering.cluster_by}): intervals and the p-value resample whole clusters; "
            "the macro difference resamples clusters within each slice (a cluster spanning "
            "slices is split)"
        )
    return CandidateComparison(
        score="pass rate" if rubric.scale.kind == "binary" else "mean score",
        n_items=len(sa),
        mean_a=score_mean(xa),
        mean_b=score_mean(xb),
        micro_difference=Stat(res.statistic, res.ci_low, res.ci_high, res.n, method),
        macro_difference=macro_difference,
        pvalue=float(res.pvalue),
        slices=per_slice,
        abstentions_a=dict(fails_a),
        abstentions_b=dict(fails_b),
        excluded=len(shared) - len(sa),
        notes=tuple(notes),
        clustering=clustering,
    )
