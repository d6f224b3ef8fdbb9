"""Stored probe results as the report's bias section: statistic objects back to Stats.

Probes (``judgekit probe``) store their summaries as JSON; this module reads the latest
of each probe into :class:`~judgekit.report.model.ProbeEntry` figures (kept as stored,
with a note when a stored figure lacks its interval) and picks the headline ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.report.model import Bias, ClusteredP, ProbeEntry, Stat

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


#: What a stored reason for an undefined p-value by cluster may hold (shown as written).
_PROSE = re.compile(r"[A-Za-z0-9 ,.;:()'-]{1,200}")


def _clustered_p(value: Mapping[str, Any], pvalue: float) -> ClusteredP | None:
    """A stored figure's p-value by cluster (``cluster_pvalue``, ``cluster_by``, ``n_clusters``),
    when it has one; ``cluster_by`` is shown as a word, so only a plain name is taken."""
    by, count = value.get("cluster_by"), value.get("n_clusters")
    if "cluster_pvalue" not in value or not isinstance(by, str) or not _PLAIN.fullmatch(by) \
            or not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return None
    reason = value.get("cluster_pvalue_reason")
    shown = reason if isinstance(reason, str) and _PROSE.fullmatch(reason) else None
    return ClusteredP(pvalue, by, count, shown)


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


__all__ = ["HEADLINE_KEYS", "bias_section"]
