"""Two judges against the same human labels (see :mod:`judgekit.compare`).

Which judgments stand for each judge is ``judge_verdicts.py``; the kappa difference
and its randomization p are ``kappa_difference.py`` (both names stay importable
from here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.compare.clustering import Clustering, clustered_spec
from judgekit.compare.judge_verdicts import judge_of, judge_side
from judgekit.compare.kappa_difference import kappa_difference_fn, swap_pvalue
from judgekit.errors import InputError
from judgekit.progress import phase
from judgekit.report.agreement import PRIMARY_BY_KIND, primary_only
from judgekit.report.levels import Levels, levels_section
from judgekit.report.loading import items_for
from judgekit.report.measures import (
    check_reference,
    judge_number,
    level_sentence,
    level_values,
    reference_number,
)
from judgekit.report.model import Stat
from judgekit.report.pairing import ItemKey, Pairing
from judgekit.report.reference import human_reference
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat, proportion_stat, to_stat
from judgekit.store import Store
from judgekit.types import Rubric, Scale


@dataclass(frozen=True)
class JudgeSide:
    """One judge in a comparison: what it is and how it agrees with humans."""

    name: str
    rubric: str
    run_id: str | None
    primary: Stat
    percent_agreement: Stat
    status_counts: Mapping[str, int]
    #: The judge's model (as requested) and endpoint, so output names judges, not sides.
    model: str | None = None
    endpoint: str | None = None

    @property
    def title(self) -> str:
        """``A = gpt-4o-mini (https://api.openai.com/v1)``; just ``A`` when unknown."""
        if self.model is None:
            return self.name
        return f"{self.name} = {self.model}" + (f" ({self.endpoint})" if self.endpoint else "")


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
    clustering: Clustering | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: how the human reference per item was formed (``--reference``, ``--annotator``)
    reference: str = ""
    #: each judge's agreement per group and per system (None: a scale without numbers)
    levels_a: Levels | None = None
    levels_b: Levels | None = None

    @property
    def primary_method(self) -> str:
        """How the primary-statistic difference was resampled, and where its p comes from."""
        resampled = "paired bootstrap" if self.clustering is None else "paired cluster bootstrap"
        return f"{resampled}; p: judges swapped per item"

    def to_dict(self) -> dict[str, Any]:
        def side(s: JudgeSide) -> dict[str, Any]:
            return {
                "name": s.name,
                "model": s.model,
                "endpoint": s.endpoint,
                "rubric": s.rubric,
                "run_id": s.run_id,
                "primary": s.primary.to_dict(),
                "percent_agreement": s.percent_agreement.to_dict(),
                "status_counts": dict(s.status_counts),
            }

        out = {
            "kind": "judges",
            "primary": self.primary,
            "n_items": self.n_items,
            "reference": self.reference,
            "a": side(self.a),
            "b": side(self.b),
            "agreement_difference": self.agreement_difference.to_dict(),
            "agreement_test": self.agreement_test,
            "pvalue": self.pvalue if np.isfinite(self.pvalue) else None,
            "primary_difference": self.primary_difference.to_dict(),
        }
        out["levels"] = (
            None if self.levels_a is None or self.levels_b is None
            else {"a": self.levels_a.to_dict(), "b": self.levels_b.to_dict()}
        )
        if self.clustering is not None:
            out.update(self.clustering.to_dict())
            out["primary_test"] = self.primary_method
            out["notes"] = list(self.notes)
        return out


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
    cluster_by: str | None = None,
    reference: str | None = None,
    model_a: str | None = None,
    model_b: str | None = None,
) -> JudgeComparison:
    """Both judges against the humans (labels made under rubric A) on the items both judged ok.

    ``cluster_by`` groups items for resampling as in the report (module docstring).
    """
    if rubric_a.scale.labels != rubric_b.scale.labels:
        raise InputError("the two rubrics have different scales; their verdicts cannot be paired")
    spec = spec or IntervalSpec()
    scale = rubric_a.scale
    phase("choosing the judges")
    select_a = judge_of(store, rubric_a, run_a, dataset, run_option="--run-a", model=model_a,
                        model_option="--model-a")
    select_b = judge_of(store, rubric_b, run_b, dataset, run_option="--run-b", model=model_b,
                        model_option="--model-b")
    if select_a == select_b:
        raise InputError(
            "judges A and B are the same judge (model, endpoint, sampling and rubric): a run id "
            "stands for all of its judge's judgments, so two runs of one judge cannot be "
            "compared; to measure how much one judge varies, use judgekit probe consistency"
        )
    phase("reading judge A")
    judged_a, counts_a = judge_side(store, rubric_a, select_a, run_a)
    phase("reading judge B")
    judged_b, counts_b = judge_side(store, rubric_b, select_b, run_b)
    phase("reading labels")
    reference = check_reference(reference, scale)
    # blind labels, adjudications
    human = human_reference(store, rubric_a, dataset=dataset, reference=reference)
    if annotator is not None:
        human = human.for_annotator(annotator)
    max_annotators = max(map(len, human.by_item.values()), default=1)
    ja, jb, hh = [], [], []
    keys: list[ItemKey] = []
    scores_a: list[float | None] = []
    scores_b: list[float | None] = []
    for key in sorted(human.keys):
        ref = human.label_of(key, scale)
        a, b = judged_a.get(key), judged_b.get(key)
        if ref is None or a is None or b is None or a.status != "ok" or b.status != "ok":
            continue
        if a.label is None or b.label is None:
            continue
        ja.append(a.label)
        jb.append(b.label)
        hh.append(ref)
        keys.append(key)
        scores_a.append(a.score)
        scores_b.append(b.score)
    references = human.references()
    del judged_a, judged_b, human  # only the paired labels are needed from here on
    if not hh:
        raise InputError("no item has an ok verdict from both judges and a human label")
    phase("statistics")
    items = items_for(store, keys)
    spec, clustering = clustered_spec(keys, items, cluster_by, spec)
    sides = [
        side_pairing(keys, labels, scores, hh, references, scale, reference)
        for labels, scores in ((ja, scores_a), (jb, scores_b))
    ]
    levels = [levels_section(p, items, scale, spec) for p in sides]
    del references
    notes: list[str] = []
    primary = PRIMARY_BY_KIND[scale.kind]
    ca = np.asarray(ja, dtype=object) == np.asarray(hh, dtype=object)
    cb = np.asarray(jb, dtype=object) == np.asarray(hh, dtype=object)
    if scale.kind == "binary" and clustering is None:
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
        name = "paired bootstrap" if clustering is None else "paired cluster bootstrap"
        method = "cluster bootstrap" if scale.kind == "binary" else name
        diff = Stat(res.statistic, res.ci_low, res.ci_high, res.n, method)
        pvalue = float(res.pvalue)
        if scale.kind == "binary":
            assert clustering is not None
            exact = stats.mcnemar(ca, cb)
            notes.append(
                f"McNemar's exact test (p={exact.pvalue:.3g}) assumes independent items, but "
                f"the {clustering.n_items} items fall in {clustering.n_clusters} clusters "
                f"(by {clustering.cluster_by}); the agreement difference uses a paired cluster "
                "bootstrap instead"
            )
    index = {label: i for i, label in enumerate(scale.labels)}
    k = len(scale.labels)
    grid = np.subtract.outer(np.arange(k), np.arange(k)) / max(k - 1, 1)
    kappa_diff = kappa_difference_fn(
        k, 1.0 - grid**2 if primary == "weighted_kappa" else np.eye(k)
    )
    ia, ib, ih = (np.fromiter(map(index.__getitem__, xs), np.int64, len(xs)) for xs in (ja, jb, hh))
    joint = ((ia * k + ib) * k + ih).astype(np.int16 if k**3 < 2**15 else np.int64)

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
            select_a.model,
            select_a.endpoint,
        ),
        JudgeSide(
            "B",
            f"{rubric_b.name} v{rubric_b.version}",
            run_b,
            primary_only(jb, hh, scale, spec, primary),
            proportion_stat(cb, spec),
            counts_b,
            select_b.model,
            select_b.endpoint,
        ),
        diff,
        name,
        pvalue,
        replace(bootstrap_stat(kappa_diff, [joint], spec),
                pvalue=swap_pvalue(kappa_diff, ia, ib, ih, k, spec.random_state)),
        clustering,
        tuple(notes),
        level_sentence(reference, annotator, max_annotators),
        levels[0],
        levels[1],
    )


def side_pairing(
    keys: list[ItemKey],
    judge: list[str],
    scores: list[float | None],
    human: list[str],
    references: Mapping[ItemKey, Mapping[str, str]],
    scale: Scale,
    reference: str,
) -> Pairing:
    """One compared judge's items as the report pairs them, numbers included."""
    out = Pairing(keys=keys, judge=judge, human=human, reference=reference)
    numbers = level_values(scale) if scale.kind == "ordinal" else {}
    if numbers:
        for key, label, score, ref in zip(keys, judge, scores, human, strict=True):
            value = judge_number(label, score, numbers)
            out.n_scored += value != numbers[label]
            out.judge_values.append(value)
            out.human_values.append(reference_number(references[key], ref, reference, numbers))
    return out
