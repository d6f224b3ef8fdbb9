"""The report's secondary sections: human ceiling, slices, weighting, failures, bias.

Each function takes aligned arrays (see :mod:`judgekit.report.pairing`) and returns
one section of the report model; none reads the store.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.report.agreement import numeric_values, primary_only
from judgekit.report.levels import paired_numbers
from judgekit.report.model import (
    Bias,
    Ceiling,
    ClusteredP,
    FailureSensitivity,
    ProbeEntry,
    SliceRow,
    Slices,
    Stat,
    Weighted,
    undefined,
)
from judgekit.report.pairing import ItemKey, Pairing
from judgekit.report.stat_intervals import (
    IntervalSpec,
    bootstrap_stat,
    counts_stat,
    proportion_stat,
    resample_plan,
    to_stat,
)
from judgekit.types import Scale

#: Probe statistics shown in the bias headline (and at ``bias.<key>`` in the JSON).
HEADLINE_KEYS = (
    "position_consistency",
    "first_slot_rate",
    "length_correlation",
    "padding_shift",
    "repetition_stability",
    "injection_net",
    "identical_decisive_rate",
)
FAILED = "(failed)"


def _pair_agreement(item_labels: Sequence[Sequence[str]]) -> tuple[npt.NDArray[np.float64], ...]:
    """Per item: agreeing annotator pairs (sum over labels of c (c - 1) / 2) and all pairs.

    One count table (items x labels) in numpy instead of a Counter per item; both
    figures are whole numbers of pairs, so they are the same floats either way.
    """
    sizes = np.fromiter(map(len, item_labels), dtype=np.int64, count=len(item_labels))
    index: dict[str, int] = {}
    codes = np.fromiter(
        (index.setdefault(label, len(index)) for label in itertools.chain.from_iterable(
            item_labels)),
        dtype=np.int64,
        count=int(sizes.sum()),
    )
    width = max(len(index), 1)
    rows = np.repeat(np.arange(sizes.size), sizes)
    counts = np.bincount(rows * width + codes, minlength=sizes.size * width).reshape(-1, width)
    agreeing = (counts * (counts - 1)).sum(axis=1) / 2
    total = sizes * (sizes - 1) / 2
    return agreeing.astype(np.float64), total.astype(np.float64)


def pair_share(
    agreeing: npt.NDArray[np.float64], total: npt.NDArray[np.float64], spec: IntervalSpec
) -> Stat:
    """Agreeing pairs over all pairs, summed over items, with its bootstrap interval.

    Items are merged into their few (agreeing, total) patterns and the resamples drawn
    as pattern counts (:func:`~judgekit.report.stat_intervals.counts_stat`): both numbers
    are whole counts of pairs, so the resampled sums are exact and the figures are
    those of summing the resampled items.
    """
    patterns, codes = np.unique(np.column_stack([agreeing, total]), axis=0, return_inverse=True)

    def share(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        sums = counts @ patterns
        with np.errstate(divide="ignore", invalid="ignore"):
            out: npt.NDArray[np.float64] = sums[:, 0] / sums[:, 1]
        return out

    return counts_stat(share, resample_plan(codes.reshape(-1), len(patterns), spec), spec)


def human_ceiling(
    references: Mapping[ItemKey, Mapping[str, str]],
    scale: Scale,
    spec: IntervalSpec,
    clusters: Mapping[ItemKey, str] | None = None,
) -> Ceiling | None:
    """Human-human agreement on items labeled by two or more annotators (None if none are)."""
    multi = sorted(key for key, by in references.items() if len(by) >= 2)
    if not multi:
        return None
    labeled = [references[k] for k in multi]
    annotators = sorted({a for by in labeled for a in by})
    unit_spec = IntervalSpec(
        spec.confidence_level,
        spec.n_resamples,
        spec.random_state,
        None if clusters is None else np.asarray([clusters[k] for k in multi], dtype=object),
    )
    ordinal = scale.kind == "ordinal"
    level: Literal["ordinal", "nominal"] = "ordinal" if ordinal else "nominal"
    value = {
        lab: v for lab, v in zip(scale.labels, numeric_values(scale, scale.labels), strict=True)
    }
    data: list[list[Any]] = [
        [value[by[a]] if a in by else None for by in labeled]
        if ordinal
        else [by.get(a) for by in labeled]
        for a in annotators
    ]
    out: dict[str, Stat] = {
        "krippendorff_alpha": to_stat(stats.krippendorff_alpha(data, level=level), unit_spec)
    }
    sizes = {len(by) for by in labeled}
    ratings = [list(by.values()) for by in labeled]
    reason = None
    if len(sizes) == 1:
        out["fleiss_kappa"] = to_stat(stats.fleiss_kappa(ratings), unit_spec)
    else:
        reason = (
            f"Items have {min(sizes)} to {max(sizes)} annotators, so Fleiss' kappa is not "
            "defined; Krippendorff's alpha allows unequal counts."
        )
        out["fleiss_kappa"] = undefined("unequal numbers of annotators per item", len(multi))
    agreeing, total = _pair_agreement(ratings)
    out["percent_agreement"] = pair_share(agreeing, total, unit_spec)
    return Ceiling(len(multi), len(annotators), out, reason)


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


#: Primary statistics with a weighted (inverse-probability) version in the weighted section.
WEIGHTED_TABLE_STATS = ("cohen_kappa", "weighted_kappa", "gwet_ac1")
#: Primary statistics that are plain shares of agreeing items.
AGREEMENT_SHARES = ("percent_agreement", "exact_agreement", "agreement_with_ties")


def _weighted_table_fn(name: str, k: int) -> Any:
    """Statistic of weighted confusion tables, from the same code as :mod:`judgekit.stats`."""
    from judgekit.stats import _tables

    w = _tables.agreement_weights(k, "quadratic" if name == "weighted_kappa" else None)

    def fn(ji: Any, hi: Any, wt: Any) -> npt.NDArray[np.float64]:
        b = ji.shape[0]
        cells = (np.arange(b)[:, None] * k * k + ji * k + hi).ravel()
        counts = np.bincount(cells, weights=wt.ravel(), minlength=b * k * k)
        tables = counts.reshape(b, k, k).astype(np.float64)
        if name == "gwet_ac1":
            return _tables.gwet_from_tables(tables)[0]
        return _tables.cohen_from_tables(tables, w)[0]

    return fn


def weighted_estimates(
    pairing: Pairing,
    inclusion: Mapping[ItemKey, float],
    scale: Scale,
    spec: IntervalSpec,
    primary: str,
    queue: str,
    strategy: str,
    strata: Mapping[ItemKey, str | None] | None = None,
) -> Weighted:
    """Population estimates weighting each labeled item by 1 / its inclusion probability.

    The estimator is the ratio (Hajek) form: the confusion table is filled with
    weights 1/pi and the statistic computed from it. ``strata`` (the queue stratum
    each item was drawn from) makes the design explicit: items of the queue that
    have no compared pair (not labeled yet, judgment failed) are treated as missing
    at random within their stratum, so the compared items of a stratum carry its
    full weight; and the bootstrap resamples each stratum on its own (clusters
    nested in strata), as the queue was drawn.
    """
    keep = np.array([key in inclusion and inclusion[key] > 0 for key in pairing.keys], dtype=bool)
    kept = [key for key, ok in zip(pairing.keys, keep, strict=True) if ok]
    index = {label: i for i, label in enumerate(scale.labels)}
    ji = np.array([index[x] for x in pairing.judge], dtype=np.int64)[keep]
    hi = np.array([index[x] for x in pairing.human], dtype=np.int64)[keep]
    w = np.array([1.0 / inclusion[key] for key in kept])
    sub = spec.subset(keep)
    stratum_ids = None
    adjusted = False
    if strata is not None and kept:
        names = [str(strata.get(key)) for key in kept]
        in_queue: dict[str, float] = {}
        for key, prob in inclusion.items():
            if prob > 0:
                name = str(strata.get(key))
                in_queue[name] = in_queue.get(name, 0.0) + 1.0 / prob
        compared: dict[str, float] = {}
        for name, weight in zip(names, w.tolist(), strict=True):
            compared[name] = compared.get(name, 0.0) + weight
        factors = np.array([in_queue[name] / compared[name] for name in names])
        adjusted = bool(np.any(np.abs(factors - 1.0) > 1e-12))
        w = w * factors
        stratum_ids = np.asarray(names, dtype=object)
    k = len(scale.labels)
    kind_primary = "weighted_kappa" if scale.kind == "ordinal" else "cohen_kappa"
    table_stat = primary if primary in WEIGHTED_TABLE_STATS else kind_primary

    def stat(fn: Any) -> Stat:
        if stratum_ids is None:
            return bootstrap_stat(fn, [ji, hi, w], sub)
        return bootstrap_stat(fn, [ji, hi, w], sub, strata=stratum_ids)

    out = {
        table_stat: stat(_weighted_table_fn(table_stat, k)),
        "percent_agreement": stat(
            lambda j, h, wt: (wt * (j == h)).sum(axis=-1) / wt.sum(axis=-1)
        ),
    }
    note = (
        f"Labels came from a non-uniform queue; {int(keep.sum())} of {len(pairing.keys)} compared "
        "items are in it and are weighted by 1/inclusion probability (a Hajek ratio estimator), "
        "so these estimate agreement on the whole dataset rather than on the labeled sample."
    )
    if stratum_ids is not None:
        note += " The bootstrap resamples each queue stratum separately, as the queue was drawn."
    if adjusted:
        note += (
            " Queue items without a compared pair (not labeled yet, or a failed judgment) are "
            "treated as missing at random within their stratum: the compared items of each "
            "stratum carry its whole weight."
        )
    if primary not in WEIGHTED_TABLE_STATS and primary not in AGREEMENT_SHARES:
        note += f" {primary} has no weighted version here; {table_stat} is shown instead."
    return Weighted(queue, strategy, int(keep.sum()), out, note)


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


def _stat_from_dict(value: Mapping[str, Any]) -> Stat:
    def f(key: str) -> float:
        raw = value.get(key)
        return (
            float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else math.nan
        )

    n_raw = value.get("n", 0)
    n = int(n_raw) if isinstance(n_raw, int | float) and not isinstance(n_raw, bool) else 0
    reason = value.get("reason")
    note = str(value["note"]) if value.get("note") else None
    statistic, low, high = f("statistic"), f("ci_low"), f("ci_high")
    if math.isfinite(statistic) and not (math.isfinite(low) and math.isfinite(high)) and \
            "no interval" not in (note or ""):
        missing = "no interval: the stored figure does not say why (rerun the probe)"
        note = missing if note is None else f"{note}; {missing}"
    return Stat(
        statistic,
        low,
        high,
        n,
        "probe",
        str(reason) if reason else None,
        note,
        f("pvalue") if "pvalue" in value else None,
        _clustered_p(value, f("cluster_pvalue")),
    )


#: What a stored p-value's clusters may be called (shown as written in every format).
_PLAIN = re.compile(r"[a-z][a-z0-9_. ]{0,39}")


def _clustered_p(value: Mapping[str, Any], pvalue: float) -> ClusteredP | None:
    """A stored figure's p-value by cluster (``cluster_pvalue``, ``cluster_by``, ``n_clusters``),
    when it has one; ``cluster_by`` is shown as a word, so only a plain name is taken."""
    by, count = value.get("cluster_by"), value.get("n_clusters")
    if "cluster_pvalue" not in value or not isinstance(by, str) or not _PLAIN.fullmatch(by) \
            or not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return None
    return ClusteredP(pvalue, by, count)


def _is_stat(value: Any) -> bool:
    return isinstance(value, Mapping) and "statistic" in value and "n" in value


def bias_section(stored: Sequence[Mapping[str, Any]]) -> Bias:
    """The latest stored result of each probe, its statistic objects and plot data."""
    latest: dict[str, Mapping[str, Any]] = {}
    for row in stored:  # oldest first: later results replace earlier ones
        latest[str(row.get("probe", "?"))] = row
    entries = []
    headline: dict[str, Stat] = {}
    for probe, row in latest.items():
        result = row.get("result") or {}
        stat_map = {k: _stat_from_dict(v) for k, v in result.items() if _is_stat(v)}
        details = {k: v for k, v in result.items() if not _is_stat(v)}
        entries.append(ProbeEntry(probe, str(row.get("run_id", "")), stat_map, details))
        for key in HEADLINE_KEYS:
            if key in stat_map:
                headline[key] = stat_map[key]
    ordered = {k: headline[k] for k in HEADLINE_KEYS if k in headline}
    return Bias(ordered, tuple(entries))
