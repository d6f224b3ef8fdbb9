"""``compare judges`` and ``compare candidates`` give the figures of the direct computation.

The comparisons read lean rows, keep one shared outcome per item and bootstrap
the kappa difference from one joint code per item. Each figure is recomputed
here the plain way (full judgment rows, the one-per-item rule, the kappa
difference of two separately weighted confusion tables with the same seeded
resamples) on a small seeded store and must be equal, not close.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_report_support import BINARY, CATEGORICAL, ORDINAL, Row, open_fresh, populate, rubric

from judgekit import stats
from judgekit.compare import compare_candidates, compare_judges
from judgekit.compare.clustering import clustered_spec
from judgekit.report.agreement import primary_only
from judgekit.report.loading import items_for
from judgekit.report.pairing import select_judgments
from judgekit.report.reference import human_reference
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat
from judgekit.store import Store
from judgekit.types import Rubric

SPEC = IntervalSpec(n_resamples=300, random_state=11)
N = 240


def _seeded_store(tmp_path: Path, rub: Rubric, *, clustered: bool) -> Store:
    """Two judges (one with failures) and three annotators (some missing) on N items."""
    rng = random.Random(5)
    labels = list(rub.scale.labels)
    truth = [rng.choice(labels) for _ in range(N)]

    def noisy(right: float) -> list[str]:
        return [t if rng.random() < right else rng.choice(labels) for t in truth]

    humans = [
        {a: said for a, said in zip(("h1", "h2", "h3"), (noisy(0.85)[i], noisy(0.8)[i],
                                                       noisy(0.8)[i]), strict=True)
         if rng.random() < 0.9}
        for i in range(N)
    ]
    good, weak = noisy(0.8), noisy(0.6)
    cluster = (lambda i: f"c{i // 4}") if clustered else (lambda i: None)
    store = open_fresh(tmp_path)
    failures = ("parse_error", "timeout", "refusal")
    populate(store, rub, [
        Row(f"i{i:03d}", None if i % 17 == 0 else good[i], humans[i],
            status=failures[i % 3] if i % 17 == 0 else "ok", cluster=cluster(i))
        for i in range(N)
    ], run_id="a", model="judge-a")
    populate(store, rub, [Row(f"i{i:03d}", weak[i], cluster=cluster(i)) for i in range(N)],
             run_id="b", model="judge-b", create=False)
    return store


def _plain_kappa_difference(k: int, weights: np.ndarray) -> Any:
    """Kappa(A, humans) - kappa(B, humans), each from its own weighted confusion table."""

    def kappa(ji: Any, hi: Any, w: Any) -> Any:
        b = ji.shape[0]
        cells = (np.arange(b)[:, None] * k * k + ji * k + hi).ravel()
        tables = np.bincount(cells, weights=w.ravel(), minlength=b * k * k).reshape(b, k, k)
        p = tables / tables.sum(axis=(1, 2))[:, None, None]
        p_o = np.einsum("bij,ij->b", p, weights)
        p_e = np.einsum("bi,ij,bj->b", p.sum(axis=2), weights, p.sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(np.abs(1 - p_e) < 1e-12, np.nan, (p_o - p_e) / (1 - p_e))

    return lambda a, b, h, w: kappa(a, h, w) - kappa(b, h, w)


def _full_rows(store: Store, rub: Rubric, run_id: str) -> dict[tuple[str, str], Any]:
    selection = store.judge_selection(
        rubric_hash=rub.sha256, rubric_name=rub.name, dataset=None, run_id=run_id,
        variant="", run_option="--run-a", model_option=None,
    )
    return select_judgments(store.judgments(**selection.filters()))


@pytest.mark.parametrize("path", [ORDINAL, CATEGORICAL], ids=["weighted-kappa", "kappa"])
@pytest.mark.parametrize("clustered", [False, True], ids=["items", "clusters"])
def test_compare_judges_equals_the_direct_computation(
    tmp_path: Path, path: Path, clustered: bool
) -> None:
    rub = rubric(path)
    store = _seeded_store(tmp_path, rub, clustered=clustered)
    got = compare_judges(store, rub, rub, run_a="a", run_b="b", spec=SPEC)

    scale = rub.scale
    full_a, full_b = _full_rows(store, rub, "a"), _full_rows(store, rub, "b")
    human = human_reference(store, rub)
    ja, jb, hh, keys = [], [], [], []
    for key in sorted(human.keys):
        ref, a, b = human.label_of(key, scale), full_a.get(key), full_b.get(key)
        if ref is None or a is None or b is None or a.status != "ok" or b.status != "ok":
            continue
        ja.append(a.label)
        jb.append(b.label)
        hh.append(ref)
        keys.append(key)
    spec, clustering = clustered_spec(keys, items_for(store, keys), None, SPEC)
    assert (clustering is not None) == clustered
    assert got.n_items == len(keys) < N
    assert got.a.status_counts == Counter(j.status for j in full_a.values())
    assert got.b.status_counts == Counter(j.status for j in full_b.values())
    assert set(got.a.status_counts) == {"ok", "parse_error", "timeout", "refusal"}
    primary = got.primary
    assert got.a.primary == primary_only(ja, hh, scale, spec, primary)
    assert got.b.primary == primary_only(jb, hh, scale, spec, primary)

    k = len(scale.labels)
    grid = np.subtract.outer(np.arange(k), np.arange(k)) / (k - 1)
    weights = 1.0 - grid**2 if primary == "weighted_kappa" else np.eye(k)
    index = {label: i for i, label in enumerate(scale.labels)}
    ia, ib, ih = (np.array([index[x] for x in xs]) for xs in (ja, jb, hh))
    expected = bootstrap_stat(_plain_kappa_difference(k, weights), [ia, ib, ih,
                                                                   np.ones(len(hh))], spec)
    assert replace(got.primary_difference, pvalue=None) == expected
    # its p: the judges' labels swapped at random per item, by a loop over draws
    plain = _plain_kappa_difference(k, weights)
    ones = np.ones(len(hh))
    observed = abs(float(plain(ia[None], ib[None], ih[None], ones[None])[0]))
    rng = np.random.default_rng(SPEC.random_state)
    draws = [rng.random(len(hh)) < 0.5 for _ in range(2000)]
    swapped = [abs(float(plain(np.where(d, ib, ia)[None], np.where(d, ia, ib)[None], ih[None],
                               ones[None])[0])) for d in draws]
    loop_p = (1 + sum(v >= observed - 1e-12 for v in swapped)) / 2001
    assert got.primary_difference.pvalue == pytest.approx(loop_p, abs=0.03)
    assert np.isfinite(expected.ci_low) and expected.ci_low < expected.ci_high
    ca = np.asarray(ja, dtype=object) == np.asarray(hh, dtype=object)
    cb = np.asarray(jb, dtype=object) == np.asarray(hh, dtype=object)
    paired = stats.paired_bootstrap(
        ca.astype(float), cb.astype(float), n_resamples=spec.n_resamples,
        random_state=spec.random_state, confidence_level=spec.confidence_level,
        clusters=spec.clusters,
    )
    assert (got.agreement_difference.ci_low, got.agreement_difference.ci_high) == (
        paired.ci_low, paired.ci_high)


def test_compare_candidates_equals_the_direct_computation(tmp_path: Path) -> None:
    rub = rubric(BINARY)
    rng = random.Random(9)
    store = open_fresh(tmp_path)
    store.save_rubric(rub)
    said = {
        name: [None if rng.random() < 0.05 else rng.choice(["pass", "pass", "fail"])
               for _ in range(N)]
        for name in ("cand-a", "cand-b")
    }
    for name, labels in said.items():
        populate(store, rub, [
            Row(f"q{i:03d}", label, status="ok" if label else "timeout")
            for i, label in enumerate(labels)
        ], dataset=name, run_id=f"run-{name}", model="judge")
    got = compare_candidates(store, rub, "cand-a", "cand-b", spec=SPEC)

    both = [i for i in range(N) if said["cand-a"][i] and said["cand-b"][i]]
    xa = np.array([said["cand-a"][i] == "pass" for i in both], dtype=float)
    xb = np.array([said["cand-b"][i] == "pass" for i in both], dtype=float)
    paired = stats.paired_bootstrap(xa, xb, n_resamples=SPEC.n_resamples,
                                    random_state=SPEC.random_state)
    assert got.n_items == len(both) and got.excluded == N - len(both)
    assert got.abstentions_a == {"timeout": said["cand-a"].count(None)}
    assert got.abstentions_b == {"timeout": said["cand-b"].count(None)}
    assert (got.micro_difference.statistic, got.micro_difference.ci_low,
            got.micro_difference.ci_high) == (paired.statistic, paired.ci_low, paired.ci_high)
    assert got.mean_a.statistic == xa.mean() and got.mean_b.statistic == xb.mean()
