"""Paired comparisons on the same items.

Two kinds of question:

- *judges*: two judges (two runs, or two rubric versions) against the same human
  labels. Each one's agreement, and the paired difference in how often each
  matches the human (McNemar's exact test on binary scales, a paired bootstrap
  otherwise) plus the difference in the primary statistic with a paired bootstrap.
- *candidates*: one judge scoring two candidate models' outputs on the same
  items (dataset A and dataset B share item ids). The paired score difference
  with its interval, micro and macro over slices, and abstentions (failed
  judgments) counted separately, never scored.

Which judgments stand for a judge follows the report's rule (docs/reports.md,
:meth:`judgekit.store.Store.judge_selection`): a run id stands for its judge's
judgments, cached ones included, and by default only judge and import runs count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.errors import InputError
from judgekit.report.agreement import (
    PRIMARY_BY_KIND,
    IntervalSpec,
    bootstrap_stat,
    numeric_values,
    primary_only,
    proportion_stat,
    to_stat,
)
from judgekit.report.model import Stat, undefined
from judgekit.report.pairing import ItemKey, labels_by_item, reference_label, select_judgments
from judgekit.report.sections import weighted_kappa_fn
from judgekit.store import JudgmentSelection, Store
from judgekit.types import Judgment, Rubric


@dataclass(frozen=True)
class JudgeSide:
    """One judge in a comparison: what it is and how it agrees with humans."""

    name: str
    rubric: str
    run_id: str | None
    primary: Stat
    percent_agreement: Stat
    status_counts: Mapping[str, int]


@dataclass(frozen=True)
class JudgeComparison:
    primary: str
    n_items: int
    a: JudgeSide
    b: JudgeSide
    agreement_difference: Stat  # share matching humans, a - b
    agreement_test: str
    pvalue: float
    primary_difference: Stat

    def to_dict(self) -> dict[str, Any]:
        def side(s: JudgeSide) -> dict[str, Any]:
            return {
                "name": s.name,
                "rubric": s.rubric,
                "run_id": s.run_id,
                "primary": s.primary.to_dict(),
                "percent_agreement": s.percent_agreement.to_dict(),
                "status_counts": dict(s.status_counts),
            }

        return {
            "kind": "judges",
            "primary": self.primary,
            "n_items": self.n_items,
            "a": side(self.a),
            "b": side(self.b),
            "agreement_difference": self.agreement_difference.to_dict(),
            "agreement_test": self.agreement_test,
            "pvalue": self.pvalue if np.isfinite(self.pvalue) else None,
            "primary_difference": self.primary_difference.to_dict(),
        }


def _judge_side(
    store: Store,
    rubric: Rubric,
    selection: JudgmentSelection,
    run_id: str | None,
) -> tuple[dict[ItemKey, Judgment], Counter[str]]:
    """One judge's plain judgments (``selection``), one per item, and their statuses."""
    rows = store.judgments(**selection.filters())
    if not rows:
        raise InputError(
            f"no judgments for rubric {rubric.name} v{rubric.version}"
            + (f" on dataset {selection.dataset!r}" if selection.dataset else "")
            + (f" by the judge of run {run_id!r}" if run_id else "")
        )
    chosen = select_judgments(rows)
    return chosen, Counter(j.status for j in chosen.values())


def judge_of(
    store: Store,
    rubric: Rubric,
    run_id: str | None,
    dataset: str | None,
    *,
    run_option: str,
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
        variant="",
        run_option=run_option,
        model_option=None,
    )


def compare_judges(
    store: Store,
    rubric_a: Rubric,
    rubric_b: Rubric,
    *,
    run_a: str | None,
    run_b: str | None,
    dataset: str | None = None,
    annotator: str | None = None,
    spec: IntervalSpec | None = None,
) -> JudgeComparison:
    """Both judges against the humans (labels made under rubric A) on the items both judged ok."""
    if rubric_a.scale.labels != rubric_b.scale.labels:
        raise InputError("the two rubrics have different scales; their verdicts cannot be paired")
    spec = spec or IntervalSpec()
    scale = rubric_a.scale
    select_a = judge_of(store, rubric_a, run_a, dataset, run_option="--run-a")
    select_b = judge_of(store, rubric_b, run_b, dataset, run_option="--run-b")
    if select_a == select_b:
        raise InputError(
            "judges A and B are the same judge (model, endpoint, sampling and rubric): a run id "
            "stands for all of its judge's judgments, so two runs of one judge cannot be "
            "compared; to measure how much one judge varies, use judgekit probe consistency"
        )
    judged_a, counts_a = _judge_side(store, rubric_a, select_a, run_a)
    judged_b, counts_b = _judge_side(store, rubric_b, select_b, run_b)
    grouped, _ = labels_by_item(store.latest_labels(rubric_a.sha256, dataset=dataset), scale)
    ja, jb, hh = [], [], []
    for key, by in sorted(grouped.items()):
        if annotator is not None:
            by = {annotator: by[annotator]} if annotator in by else {}
        ref = reference_label(by, scale) if by else None
        a, b = judged_a.get(key), judged_b.get(key)
        if ref is None or a is None or b is None or a.status != "ok" or b.status != "ok":
            continue
        if a.label is None or b.label is None:
            continue
        ja.append(a.label)
        jb.append(b.label)
        hh.append(ref)
    if not hh:
        raise InputError("no item has an ok verdict from both judges and a human label")
    primary = PRIMARY_BY_KIND[scale.kind]
    ca = np.asarray(ja, dtype=object) == np.asarray(hh, dtype=object)
    cb = np.asarray(jb, dtype=object) == np.asarray(hh, dtype=object)
    if scale.kind == "binary":
        test = stats.mcnemar(ca, cb)
        diff, pvalue, name = to_stat(test, spec), float(test.pvalue), "McNemar exact test"
    else:
        res = stats.paired_bootstrap(
            ca.astype(float),
            cb.astype(float),
            n_resamples=spec.n_resamples,
            random_state=spec.random_state,
            confidence_level=spec.confidence_level,
            clusters=spec.clusters,
        )
        diff = Stat(res.statistic, res.ci_low, res.ci_high, res.n, "paired bootstrap")
        pvalue, name = float(res.pvalue), "paired bootstrap"
    index = {label: i for i, label in enumerate(scale.labels)}
    k = len(scale.labels)
    grid = np.subtract.outer(np.arange(k), np.arange(k)) / max(k - 1, 1)
    kappa = weighted_kappa_fn(k, 1.0 - grid**2 if primary == "weighted_kappa" else np.eye(k))
    ia, ib, ih = (np.array([index[x] for x in xs]) for xs in (ja, jb, hh))
    ones = np.ones(len(hh))

    def kappa_diff(a: Any, b: Any, h: Any, w: Any) -> Any:
        return kappa(a, h, w) - kappa(b, h, w)

    return JudgeComparison(
        primary,
        len(hh),
        JudgeSide(
            "A",
            f"{rubric_a.name} v{rubric_a.version}",
            run_a,
            primary_only(ja, hh, scale, spec, primary),
            proportion_stat(ca, spec),
            counts_a,
        ),
        JudgeSide(
            "B",
            f"{rubric_b.name} v{rubric_b.version}",
            run_b,
            primary_only(jb, hh, scale, spec, primary),
            proportion_stat(cb, spec),
            counts_b,
        ),
        diff,
        name,
        pvalue,
        bootstrap_stat(kappa_diff, [ia, ib, ih, ones], spec),
    )


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

    def to_dict(self) -> dict[str, Any]:
        return {
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
) -> CandidateComparison:
    """Paired difference of judge scores, candidate A minus B, over shared item ids."""
    if rubric.scale.kind not in ("binary", "ordinal"):
        raise InputError("compare candidates needs a binary or ordinal rubric (a score per item)")
    spec = spec or IntervalSpec()
    select_a, select_b = candidate_judge(store, rubric, dataset_a, dataset_b, run_id)
    side_a, _ = _judge_side(store, rubric, select_a, run_id)
    side_b, _ = _judge_side(store, rubric, select_b, run_id)
    by_id_a = {k[1]: j for k, j in side_a.items()}
    by_id_b = {k[1]: j for k, j in side_b.items()}
    shared = sorted(set(by_id_a) & set(by_id_b))
    fails_a: Counter[str] = Counter()
    fails_b: Counter[str] = Counter()
    sa, sb, slices = [], [], []
    items_a = {i: store.get_item(dataset_a, i) for i in shared}
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
    if not sa:
        raise InputError(f"no item id has an ok judgment in both {dataset_a!r} and {dataset_b!r}")
    xa, xb = np.asarray(sa), np.asarray(sb)
    res = stats.paired_bootstrap(
        xa,
        xb,
        n_resamples=spec.n_resamples,
        random_state=spec.random_state,
        confidence_level=spec.confidence_level,
    )
    names = np.asarray(slices, dtype=object)
    codes = np.unique(names, return_inverse=True)[1]
    g = int(codes.max()) + 1

    def macro(d: Any, c: Any) -> Any:
        b = d.shape[0]
        flat = (np.arange(b)[:, None] * g + c).ravel()
        sums = np.bincount(flat, weights=d.ravel(), minlength=b * g).reshape(b, g)
        counts = np.bincount(flat, minlength=b * g).reshape(b, g)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nanmean(np.where(counts > 0, sums / counts, np.nan), axis=1)

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
        )
        per_slice[name] = Stat(r.statistic, r.ci_low, r.ci_high, r.n, "paired bootstrap")
    return CandidateComparison(
        score="pass rate" if rubric.scale.kind == "binary" else "mean score",
        n_items=len(sa),
        mean_a=bootstrap_stat(lambda x: x.mean(axis=-1), [xa], spec),
        mean_b=bootstrap_stat(lambda x: x.mean(axis=-1), [xb], spec),
        micro_difference=Stat(res.statistic, res.ci_low, res.ci_high, res.n, "paired bootstrap"),
        macro_difference=bootstrap_stat(macro, [xa - xb, codes], spec),
        pvalue=float(res.pvalue),
        slices=per_slice,
        abstentions_a=dict(fails_a),
        abstentions_b=dict(fails_b),
        excluded=len(shared) - len(sa),
    )
