"""Inter-rater agreement from a plain ratings file, with no judge involved.

A team that only needs the statistics writes one line per rating
(``item_id``, ``rater``, ``label``) as CSV or JSONL and gets pairwise Cohen's
kappa for every rater pair, Fleiss' kappa, Krippendorff's alpha and percent
agreement, each with its n and interval. Errors name ``file:line``. A
``judgekit labels export`` file reads as it is (its ``annotator`` column is the
rater; adjudicated rows are not a rater's and are left out), and
:func:`judgekit.compare.agree_store.ratings_from_store` reads the same labels straight from
the store.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from judgekit import stats
from judgekit.compare.agree_reference import ReferenceFigure, judge_against_reference
from judgekit.compare.agree_rows import alpha_of, parity_crowd, rater_pairs
from judgekit.compare.clustering import Clustering
from judgekit.errors import InputError
from judgekit.io.records import iter_records
from judgekit.progress import phase
from judgekit.report.model import Stat, undefined
from judgekit.report.parity import ALT_TEST_EPSILON, Parity, parity_of
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat, to_stat
from judgekit.types import ADJUDICATED_SOURCE

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
REQUIRED = ("item_id", "rater", "label")
#: Columns read: ``annotator`` (a labels export) stands for ``rater``.
_FIELDS = ("item_id", "rater", "annotator", "label")


@dataclass(frozen=True, slots=True)
class Rating:
    """One rater's label of one item (slots: a ratings file holds hundreds of thousands)."""

    item_id: str
    rater: str
    label: Any  # str for nominal, float otherwise
    where: str  # "file:line", for messages
    #: (dataset, item id) of a rating read from the store, for clustering; None from a file.
    key: tuple[str, str] | None = None


@dataclass(frozen=True)
class PairKappa:
    rater_a: str
    rater_b: str
    stat: Stat


@dataclass(frozen=True)
class AgreeResult:
    """All figures for one ratings file."""

    level: str
    n_items: int
    n_raters: int
    n_ratings: int
    krippendorff_alpha: Stat
    fleiss_kappa: Stat
    percent_agreement: Stat
    pairs: tuple[PairKappa, ...]
    pairs_skipped: int
    min_overlap: int
    kappa_weights: str | None
    #: With ``judge=``: that rater against the others (gap, alt-test, sentence).
    parity: Parity | None = None
    judge: str | None = None
    #: How items were grouped for resampling, when clusters are in use (store ratings only).
    clustering: Clustering | None = None
    notes: tuple[str, ...] = ()
    #: With ``judge=`` and ``reference=``: the judge against the others' reference.
    against_reference: ReferenceFigure | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self._figures()
        if self.clustering is not None:
            out.update(self.clustering.to_dict())
        if self.notes:
            out["notes"] = list(self.notes)
        if self.parity is not None:
            out["judge_parity"] = {
                "judge": self.judge,
                "judge_minus_human_agreement": self.parity.gap.to_dict(),
                "alt_test": None
                if self.parity.alt_test is None
                else self.parity.alt_test.to_dict(),
                "sentence": self.parity.sentence,
            }
            if self.against_reference is not None:
                out["judge_parity"]["against_reference"] = self.against_reference.to_dict()
        return out

    def _figures(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "n_items": self.n_items,
            "n_raters": self.n_raters,
            "n_ratings": self.n_ratings,
            "krippendorff_alpha": self.krippendorff_alpha.to_dict(),
            "fleiss_kappa": self.fleiss_kappa.to_dict(),
            "percent_agreement": self.percent_agreement.to_dict(),
            "pairwise_cohen_kappa": {
                "weights": self.kappa_weights,
                "min_overlap": self.min_overlap,
                "pairs_skipped": self.pairs_skipped,
                "pairs": [
                    {"rater_a": p.rater_a, "rater_b": p.rater_b, **p.stat.to_dict()}
                    for p in self.pairs
                ],
            },
        }


def _records(path: Path) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """``(file:line, record)``; other columns are allowed (and ignored)."""
    for number, record in iter_records(path, _FIELDS, extras="meta"):
        meta = record.get("meta") or {}
        if meta.get("source") == ADJUDICATED_SOURCE:
            continue  # an adjudication is the reference, not one more rater
        if record.get("rater") is None and record.get("annotator") is not None:
            record = {**record, "rater": record["annotator"]}
        yield f"{path.name}:{number}", record


def read_ratings(path: str | Path, level: Level = "nominal") -> list[Rating]:
    """Ratings from CSV/TSV/parquet (header row) or JSONL; numeric labels unless ``level`` is
    nominal.

    Empty labels are skips and are dropped; a second rating of the same item by the
    same rater is an error (say which one counts by removing the other).
    """
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file")
    out: list[Rating] = []
    seen: dict[tuple[str, str], str] = {}
    for where, record in _records(p):
        for column in REQUIRED:
            if column not in record or record[column] is None:
                if column == "label":
                    break
                hint = " (or 'annotator')" if column == "rater" else ""
                raise InputError(f"{where}: missing field {column!r}{hint}")
        raw = record.get("label")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        # interned: each item id and rater name repeats on many lines of a large file
        item_id, rater = sys.intern(str(record["item_id"])), sys.intern(str(record["rater"]))
        if (item_id, rater) in seen:
            raise InputError(
                f"{where}: rater {rater!r} already rated item {item_id!r} at "
                f"{seen[(item_id, rater)]}"
            )
        seen[(item_id, rater)] = where
        label: Any = str(raw).strip() if isinstance(raw, str) else raw
        if level != "nominal":
            try:
                label = float(label)
            except (TypeError, ValueError) as exc:
                raise InputError(
                    f"{where}: label {raw!r} is not a number (needed for --level {level})"
                ) from exc
            if not math.isfinite(label):
                raise InputError(f"{where}: label {raw!r} is not a finite number")
        else:
            label = sys.intern(str(label))
        out.append(Rating(item_id, rater, label, where))
    if not out:
        raise InputError(f"{p}: no ratings found")
    return out


def _pairwise_percent(
    by_item: Mapping[str, Mapping[str, Any]], spec_for: Callable[[list[str]], IntervalSpec]
) -> Stat:
    agreeing, total, kept = [], [], []
    for item, ratings in by_item.items():
        values = list(ratings.values())
        if len(values) < 2:
            continue
        kept.append(item)
        counts = np.unique(np.asarray(values, dtype=object), return_counts=True)[1]
        agreeing.append(float(np.sum(counts * (counts - 1)) / 2))
        total.append(len(values) * (len(values) - 1) / 2)
    if not total:
        return undefined("no item has two or more ratings")
    return bootstrap_stat(
        lambda a, t: a.sum(axis=-1) / t.sum(axis=-1),
        [np.asarray(agreeing), np.asarray(total)],
        spec_for(kept),
    )


#: Integer scales up to this many levels have their unused levels filled in for weights.
MAX_FILLED_LEVELS = 1000


def _kappa_domain(labels: list[Any], level: str) -> list[Any]:
    """The categories Cohen's kappa weights are laid out on.

    Weighted kappa weighs a disagreement by how many categories apart the two
    labels are, so a level nobody used still counts: on a 1-5 scale where no rater
    said 3, 2 and 4 are two steps apart, not one. For integer ratings the domain is
    every integer from the lowest to the highest rating; other numbers keep their
    sorted distinct values.
    """
    values = sorted(set(labels))
    if level == "nominal" or not values:
        return values
    low, high = values[0], values[-1]
    integers = all(float(v).is_integer() for v in values)
    if integers and high - low < MAX_FILLED_LEVELS:
        return [float(v) for v in range(int(low), int(high) + 1)]
    return values


def agreement_from_ratings(
    ratings: list[Rating],
    level: Level = "nominal",
    *,
    min_overlap: int = 5,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    random_state: int = 0,
    judge: str | None = None,
    epsilon: float = ALT_TEST_EPSILON,
    clusters: Mapping[str, str] | None = None,
    clustering: Clustering | None = None,
    notes: tuple[str, ...] = (),
    reference: str | None = None,
) -> AgreeResult:
    """Every inter-rater figure for the ratings, each with n and interval.

    ``clusters`` (a cluster id per rating item id, from :func:`store_clustering`)
    makes every interval resample whole clusters; ``clustering`` and ``notes``
    describe it in the result.

    ``judge`` names one rater as the candidate to stand in for the others: its
    agreement gap (judge-human minus human-human agreement, on items it and two or
    more others rated) and, with three or more others, the alternative annotator
    test with cost-benefit margin ``epsilon``. The multi-rater figures still
    count every rater. ``reference`` (majority, median, mean; needs ``judge``) adds the
    judge against that reference of the other raters, as a report compares it.
    """
    if reference is not None and judge is None:
        raise InputError("--reference needs --judge RATER: it is the reference the judge is "
                         "compared with")
    spec = IntervalSpec(confidence_level, n_resamples, random_state)

    def spec_for(keys: list[str]) -> IntervalSpec:
        if clusters is None:
            return spec
        return replace(spec, clusters=np.asarray([clusters[k] for k in keys], dtype=object))

    by_item: dict[str, dict[str, Any]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, {})[r.rater] = r.label
    items = sorted(by_item)
    raters = sorted({r.rater for r in ratings})
    phase("Krippendorff's alpha")
    # from per-item value counts: a raters x items table of a crowd is almost all empty
    alpha = to_stat(alpha_of(by_item, items, level), spec_for(items))

    phase("Fleiss' kappa")
    multi = [i for i in items if len(by_item[i]) >= 2]
    sizes = {len(by_item[i]) for i in multi}
    if not multi:
        fleiss = undefined("no item has two or more ratings")
    elif len(sizes) > 1:
        fleiss = undefined(
            f"items have {min(sizes)} to {max(sizes)} ratings; Fleiss' kappa needs "
            "the same number per item (use Krippendorff's alpha)",
            len(multi),
        )
    else:
        fleiss = to_stat(stats.fleiss_kappa([list(by_item[i].values()) for i in multi]),
                         spec_for(multi))

    phase("pairwise kappas")
    weights: Literal["quadratic"] | None = None if level == "nominal" else "quadratic"
    domain = _kappa_domain([r.label for r in ratings], level)
    pairs = []
    # only pairs that share an item are looked at (a crowd's pairs mostly share none)
    overlapping, skipped = rater_pairs(by_item, items, raters, min_overlap)
    for a, b, shared in overlapping:
        result = stats.cohen_kappa(
            [by_item[i][a] for i in shared],
            [by_item[i][b] for i in shared],
            weights=weights,
            labels=domain,
        )
        pairs.append(PairKappa(a, b, to_stat(result, spec_for(shared))))
    phase("percent agreement and parity")
    parity = (
        None if judge is None
        else _parity(by_item, items, raters, judge, level, spec_for, epsilon)
    )
    return AgreeResult(
        level=level,
        n_items=len(items),
        n_raters=len(raters),
        n_ratings=len(ratings),
        krippendorff_alpha=alpha,
        fleiss_kappa=fleiss,
        percent_agreement=_pairwise_percent(by_item, spec_for),
        pairs=tuple(pairs),
        pairs_skipped=skipped,
        min_overlap=min_overlap,
        kappa_weights=weights,
        parity=parity,
        judge=judge,
        clustering=clustering,
        notes=notes,
        against_reference=None if reference is None or judge is None
        else judge_against_reference(by_item, items, judge, level, reference, spec_for),
    )


def _parity(
    by_item: Mapping[str, Mapping[str, Any]],
    items: list[str],
    raters: list[str],
    judge: str,
    level: str,
    spec_for: Callable[[list[str]], IntervalSpec],
    epsilon: float,
) -> Parity:
    """The named rater against the others, on the items it and two or more others rated."""
    if judge not in raters:
        raise InputError(
            f"--judge {judge!r} is not a rater in the file (raters: {', '.join(raters)})"
        )
    others = [r for r in raters if r != judge]
    shared = [i for i in items if judge in by_item[i] and len(by_item[i]) >= 3]
    if not shared:
        raise InputError(f"no item was rated by {judge!r} and two or more other raters")
    # labels as rows: the others as columns over the items would be raters x items
    numbers = None if level == "nominal" else parity_crowd(by_item, shared, judge, others,
                                                           "neg_rmse")
    spec = spec_for(shared)
    return parity_of(parity_crowd(by_item, shared, judge, others), numbers, spec,
                     clusters=spec.clusters, epsilon=epsilon)
