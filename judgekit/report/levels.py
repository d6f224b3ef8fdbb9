"""The report's agreement at three levels: per item, per group of items, per system.

Item-level figures answer "does the judge score this output as people do?";
users calibrating a judge to rank models ask "will it rank our systems as
people would?", and the literature reports both (SummEval, G-Eval, Shen et al.
2023). This module builds the section from the report's paired items; the
numerics are :mod:`judgekit.stats.levels`.

- **Groups** are the items sharing a prompt (``--group-by`` names another
  field: cluster, slice, meta.NAME). Items without the field are groups of one
  and take no part in the per-group figure.
- **Systems** are the candidate that wrote each response: the item's ``model``
  field (``author`` accepted, see :mod:`judgekit.families`), or the field
  ``--system-by`` names. Items without one are left out of the system level.
- Both levels compare numbers: the judge's score and the human reference
  number (:mod:`judgekit.report.measures`), so ``--reference mean`` and judges'
  half points reach them as they reach the item-level correlations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.errors import InputError
from judgekit.families import response_models
from judgekit.report.agreement import numeric_values
from judgekit.report.model import Stat, undefined
from judgekit.report.pairing import AnyItem, ItemKey, Pairing, cluster_ids
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat, to_stat
from judgekit.stats.correlation import _rowwise_pearson
from judgekit.stats.levels import CORRELATIONS, LevelFigure, group_level, system_level
from judgekit.stats.system_intervals import coverage_note
from judgekit.types import Scale

#: The figures of each level in the order every format shows them.
LEVEL_FIGURES = (*CORRELATIONS, "pairwise_accuracy")


@dataclass(frozen=True)
class SystemRow:
    """One system's items and mean scores on the compared items."""

    name: str
    n_items: int
    judge_mean: float
    human_mean: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n_items": self.n_items,
            "judge_mean": self.judge_mean if math.isfinite(self.judge_mean) else None,
            "human_mean": self.human_mean if math.isfinite(self.human_mean) else None,
        }


@dataclass(frozen=True)
class Levels:
    """Item, per-group and system-level agreement on the compared items."""

    values: str  # what numbers are compared, in words
    item: Mapping[str, Stat]
    group_by: str
    n_groups: int  # groups of two or more compared items
    n_groups_used: int  # groups where the judge and people both vary
    per_group: Mapping[str, Stat]
    system_by: str
    n_system_items: int  # compared items naming a system
    systems: tuple[SystemRow, ...] = ()
    system: Mapping[str, Stat] = field(default_factory=dict)
    n_pairs: int = 0
    system_reason: str | None = None
    #: Why the system-level intervals may cover less than stated (a design outside the
    #: measured range, docs/statistics.md), else None.
    system_note: str | None = None
    #: System pairs whose order the groups settle on both sides (None: no interval made).
    n_settled: int | None = None
    #: System pairs tied on one side only (pairwise accuracy counts each half).
    n_one_sided_ties: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "item": {k: v.to_dict() for k, v in self.item.items()},
            "per_group": {
                "group_by": self.group_by,
                "n_groups": self.n_groups,
                "n_groups_used": self.n_groups_used,
                "statistics": {k: v.to_dict() for k, v in self.per_group.items()},
            },
            "system": {
                "system_by": self.system_by,
                "n_items": self.n_system_items,
                "n_systems": len(self.systems),
                "n_pairs": self.n_pairs,
                "n_pairs_settled": self.n_settled,
                "n_pairs_one_sided_tie": self.n_one_sided_ties,
                "reason": self.system_reason,
                "note": None if self.system_reason else self.system_note,
                "statistics": {k: v.to_dict() for k, v in self.system.items()},
                "systems": [row.to_dict() for row in self.systems],
            },
        }


def _stat(figure: LevelFigure) -> Stat:
    return Stat(figure.statistic, figure.ci_low, figure.ci_high, figure.n, figure.method,
                figure.reason, figure.note)


def _system_of(item: AnyItem | None, system_by: str | None) -> str | None:
    """The candidate system of an item: its model field, or the ``--system-by`` field."""
    if item is None:
        return None
    if system_by is None or system_by == "model":
        if item.is_pairwise:
            return None
        return response_models(item)[0]
    if system_by == "slice":
        return item.slice
    if system_by == "cluster":
        return item.cluster
    name = system_by[5:] if system_by.startswith("meta.") else system_by
    value = item.meta.get(name)
    return None if value is None or (isinstance(value, str) and not value.strip()) else str(value)


def _systems(
    keys: list[ItemKey], items: Mapping[ItemKey, AnyItem], system_by: str | None
) -> list[str | None]:
    """The system of each item, worked out once per distinct meta text (the store shares
    one string per distinct meta JSON, and parsing it is the cost at 100,000 items)."""
    seen: dict[tuple[str, bool], str | None] = {}
    out: list[str | None] = []
    for key in keys:
        item = items.get(key)
        meta_json = getattr(item, "meta_json", None)
        if item is None or meta_json is None or system_by in ("slice", "cluster"):
            out.append(_system_of(item, system_by))
            continue
        found = (meta_json, item.is_pairwise)
        if found not in seen:
            seen[found] = _system_of(item, system_by)
        out.append(seen[found])
    return out


def paired_numbers(pairing: Pairing, scale: Scale) -> tuple[np.ndarray, np.ndarray] | None:
    """Judge and human numbers of the compared items (ordinal: scores; binary: pass = 1)."""
    if scale.kind == "ordinal" and pairing.judge_values:
        return np.asarray(pairing.judge_values), np.asarray(pairing.human_values)
    if scale.kind == "binary":
        return (np.asarray([x == "pass" for x in pairing.judge], dtype=float),
                np.asarray([x == "pass" for x in pairing.human], dtype=float))
    if scale.kind == "ordinal":
        return numeric_values(scale, pairing.judge), numeric_values(scale, pairing.human)
    return None


def levels_section(
    pairing: Pairing,
    items: Mapping[ItemKey, AnyItem],
    scale: Scale,
    spec: IntervalSpec,
    item_stats: Mapping[str, Stat] | None = None,
    *,
    group_by: str | None = None,
    system_by: str | None = None,
    values: str = "",
) -> Levels | None:
    """The three levels on the paired items; None for scales without numbers (pairwise,
    categorical). Raises :class:`InputError` when ``system_by`` names a field no compared
    item has (a field asked for must exist, never a silent empty section)."""
    numbers = paired_numbers(pairing, scale)
    if numbers is None or not pairing.keys:
        return None
    jv, hv = numbers
    group_field = group_by or "prompt"
    groups = cluster_ids(pairing.keys, items, group_field)
    grouped = group_level(jv, hv, groups, n_resamples=spec.n_resamples,
                          confidence_level=spec.confidence_level, random_state=spec.random_state)
    if item_stats is None:  # compare: no agreement section to take them from
        item_stats = {"spearman": to_stat(stats.spearman(jv, hv), spec),
                      "kendall_tau": to_stat(stats.kendall_tau(jv, hv), spec)}
    item = {name: item_stats[name] for name in ("spearman", "kendall_tau") if name in item_stats}
    item["pearson"] = (
        bootstrap_stat(_rowwise_pearson, [jv, hv], spec)
        if np.ptp(jv) > 0 and np.ptp(hv) > 0
        else undefined("the judge or people give every item the same score", len(jv))
    )
    names = _systems(pairing.keys, items, system_by)
    keep = np.asarray([n is not None for n in names])
    field_name = system_by or "model"
    out = Levels(
        values, item, group_field, grouped.n_groups, grouped.n_used,
        {k: _stat(v) for k, v in grouped.figures.items()}, field_name, int(keep.sum()),
    )
    if not keep.any():
        if system_by is not None:
            raise InputError(f"--system-by {system_by}: no compared item has this field")
        return _with_system_reason(out, "items name no system (a 'model' field, or "
                                   "--system-by FIELD)")
    result = system_level(
        jv[keep], hv[keep], [n for n in names if n is not None],
        [g for g, k in zip(groups, keep, strict=True) if k], n_resamples=spec.n_resamples,
        confidence_level=spec.confidence_level, random_state=spec.random_state,
    )
    rows = tuple(
        SystemRow(*row) for row in zip(
            result.systems, result.n_items, result.judge_means, result.human_means, strict=True
        )
    )
    return Levels(
        out.values, out.item, out.group_by, out.n_groups, out.n_groups_used, out.per_group,
        out.system_by, out.n_system_items, rows,
        {k: _stat(v) for k, v in result.figures.items()}, result.n_pairs, None,
        coverage_note(len(rows), result.n_groups), result.n_settled, result.n_one_sided_ties,
    )


def _with_system_reason(levels: Levels, reason: str) -> Levels:
    nan = {name: undefined(reason) for name in LEVEL_FIGURES}
    return Levels(
        levels.values, levels.item, levels.group_by, levels.n_groups, levels.n_groups_used,
        levels.per_group, levels.system_by, levels.n_system_items, (), nan, 0, reason,
    )


__all__ = ["LEVEL_FIGURES", "Levels", "SystemRow", "levels_section", "paired_numbers"]
