"""Two judges against the same human labels (see :mod:`judgekit.compare`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.compare.clustering import Clustering, clustered_spec
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
from judgekit.report.pairing import ItemKey, Pairing, select_judgments
from judgekit.report.reference import human_reference
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat, proportion_stat, to_stat
from judgekit.store import JudgmentSelection, Store
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


def kappa_difference_fn(k: int, weights: npt.NDArray[np.float64]) -> Any:
    """Kappa of judge A minus kappa of judge B, both against humans, over resampled items.

    The one argument is each item's joint code ``(a * k + b) * k + h`` (judge A's,
    judge B's and the human label's positions on the scale), so a resample gathers
    one small integer per item, and both confusion tables come from one count of
    the ``k**3`` joint outcomes. Vectorised over a leading resample axis.
    """

    def kappa(tables: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        p = tables / tables.sum(axis=(1, 2))[:, None, None]
        p_o = np.einsum("bij,ij->b", p, weights)
        p_e = np.einsum("bi,ij,bj->b", p.sum(axis=2), weights, p.sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(np.abs(1 - p_e) < 1e-12, np.nan, (p_o - p_e) / (1 - p_e))

    def fn(codes: Any) -> npt.NDArray[np.float64]:
        b = codes.shape[0]
        cells = (np.arange(b)[:, None] * k**3 + codes).ravel()
        joint = np.bincount(cells, minlength=b * k**3).reshape(b, k, k, k).astype(np.float64)
        return kappa(joint.sum(axis=2)) - kappa(joint.sum(axis=1))

    return fn


def swap_pvalue(fn: Any, ia: npt.NDArray[np.int64], ib: npt.NDArray[np.int64],
                ih: npt.NDArray[np.int64], k: int, random_state: int = 0,
                n_draws: int = 2000) -> float:
    """Two-sided randomization p of "the two judges are exchangeable" for ``fn`` (the
    kappa difference): on each item judge A's and judge B's labels swap at random, which
    under that null leaves the joint distribution unchanged, whatever the clustering (the
    swaps stay within items). The percentile bootstrap interval alone excluded 0 for two
    exchangeable judges in 6.9% of samples of 50 items."""
    plain = ((ia * k + ib) * k + ih)[None, :]
    swapped = ((ib * k + ia) * k + ih)[None, :]
    observed = abs(float(fn(plain)[0])) - 1e-12
    if not math.isfinite(observed):
        return math.nan
    rng = np.random.default_rng(random_state)
    hits = 0
    step = max(1, min(n_draws, 2_000_000 // max(ia.size, 1)))
    for start in range(0, n_draws, step):
        draws = min(step, n_draws - start)
        flip = rng.random((draws, ia.size)) < 0.5
        values = np.asarray(fn(np.where(flip, swapped, plain)), dtype=np.float64)
        hits += int(np.count_nonzero(np.abs(values) >= observed))
    return (1 + hits) / (1 + n_draws)


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
