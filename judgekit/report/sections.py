"""The report's per-slice figures and what failed judgments would do to the figures.

Each function takes aligned arrays (see :mod:`judgekit.report.pairing`) and returns
one section of the report model; none reads the store. The other sections have
modules of their own: the human ceiling (:mod:`.ceiling`), population weighting
(:mod:`.weighting`), the stored probes (:mod:`.stored_probes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.report.agreement import numeric_values, primary_only
from judgekit.report.levels import paired_numbers
from judgekit.report.model import FailureSensitivity, SliceRow, Slices, Stat
from judgekit.report.pairing import Pairing
from judgekit.report.stat_intervals import IntervalSpec, proportion_stat, to_stat
from judgekit.types import Scale

FAILED = "(failed)"


def slice_figures(
    pairing: Pairing,
    slice_names: Sequence[str],
    scale: Scale,
    spec: IntervalSpec,
    primary: str,
    q: float,
) -> Slices | None:
    """Per-slice figures and a one-sided test of each slice's agreement vs the rest.

    Independent items: Fisher's exact test on the 2x2 table (agree/disagree by
    slice/rest). When items share clusters (``spec.clusters`` with some cluster of
    two or more items) Fisher's test would treat correlated items as independent
    and give too small p-values, so the test is a cluster bootstrap test of the
    difference in agreement, slice minus rest (:func:`judgekit.stats.cluster_difference_test`,
    seeded by ``spec.random_state``). The p-values are adjusted with
    Benjamini-Hochberg over all slices; a slice is flagged when the adjusted test
    rejects "this slice agrees as often as the rest".
    """
    names = sorted(set(slice_names))
    if len(names) < 2:
        return None
    labels = np.asarray(slice_names, dtype=object)
    agree = np.asarray(pairing.judge, dtype=object) == np.asarray(pairing.human, dtype=object)
    judge, human = np.asarray(pairing.judge, dtype=object), np.asarray(pairing.human, dtype=object)
    clustered = spec.clusters is not None and len(set(spec.clusters.tolist())) < len(labels)
    numbers = paired_numbers(pairing, scale)  # the judge's scores, for a correlation primary
    rows: list[tuple[str, int, Stat, Stat, float]] = []
    for name in names:
        mask = labels == name
        sub = spec.subset(mask)
        a_in, n_in = int(agree[mask].sum()), int(mask.sum())
        if clustered:
            assert spec.clusters is not None
            pvalue = stats.cluster_difference_test(
                agree.astype(bool),
                mask,
                spec.clusters,
                alternative="less",
                n_resamples=spec.n_resamples,
                random_state=spec.random_state,
            ).pvalue
        else:
            a_out, n_out = int(agree[~mask].sum()), int((~mask).sum())
            table = [[a_in, n_in - a_in], [a_out, n_out - a_out]]
            from scipy import stats as sps  # a second to import: only for slices
            pvalue = float(sps.fisher_exact(table, alternative="less").pvalue)
        rows.append(
            (
                name,
                n_in,
                primary_only(list(judge[mask]), list(human[mask]), scale, sub, primary,
                             None if numbers is None
                             else (numbers[0][mask].tolist(), numbers[1][mask].tolist())),
                proportion_stat(agree[mask], sub),
                pvalue,
            )
        )
    rejected, adjusted = stats.benjamini_hochberg([r[4] for r in rows], q=q)
    out = tuple(
        SliceRow(name, n, prim, pa, p, float(adj), bool(rej))
        for (name, n, prim, pa, p), rej, adj in zip(rows, rejected, adjusted, strict=True)
    )
    if clustered:
        assert spec.clusters is not None
        k = len(set(spec.clusters.tolist()))
        test = (
            f"one-sided cluster bootstrap test of agreement, slice vs rest ({spec.n_resamples} "
            f"resamples of {k} clusters)"
        )
    else:
        test = "one-sided Fisher exact test of agreement, slice vs rest"
    return Slices(out, len(names), q, test)


def _farthest(labels: Sequence[str], values: Mapping[str, float], ref: str) -> str:
    """The scale level farthest from ``ref`` (the worst answer a failure could have been)."""
    return max(labels, key=lambda lab: abs(values[lab] - values[ref]))


def failure_sensitivity(
    pairing: Pairing, scale: Scale, spec_of: Any, primary: str
) -> FailureSensitivity | None:
    """Agreement if each failed judgment had been a disagreement with the human."""
    if not pairing.failed:
        return None
    human = pairing.human + [ref for _, ref, _ in pairing.failed]
    keys = pairing.keys + [key for key, _, _ in pairing.failed]
    spec: IntervalSpec = spec_of(keys)
    if scale.kind == "ordinal":
        values = dict(zip(scale.labels, numeric_values(scale, scale.labels), strict=True))
        worst = [_farthest(scale.labels, values, ref) for _, ref, _ in pairing.failed]
        judge = pairing.judge + worst
        rule = "each failure replaced by the scale level farthest from the human label"
        kappa = stats.cohen_kappa(judge, human, weights="quadratic", labels=list(scale.labels))
    else:
        judge = pairing.judge + [FAILED] * len(pairing.failed)
        rule = f"each failure counted as an extra category {FAILED!r} that never matches"
        kappa = stats.cohen_kappa(judge, human, labels=[*scale.labels, FAILED])
    agree = np.asarray(judge, dtype=object) == np.asarray(human, dtype=object)
    out = {
        primary if primary in ("cohen_kappa", "weighted_kappa") else "cohen_kappa": to_stat(
            kappa, spec
        ),
        "percent_agreement": proportion_stat(agree, spec),
    }
    return FailureSensitivity(len(pairing.failed), rule, out)
