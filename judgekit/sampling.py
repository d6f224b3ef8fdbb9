"""Choosing which items humans label, with the probability each had of being chosen.

Human labels are scarce, so a queue oversamples the items where the judge is most
likely wrong (rare verdicts, disagreements, low confidence). Oversampling biases
any population estimate unless each label is weighted by the inverse of its
item's inclusion probability, so every queue entry carries that probability.

Every strategy is a two-phase design over a fixed population of ``N`` items:

1. a uniform random stratum: a simple random sample of ``n_r`` items
   (``random_share`` of the queue, at least one), stored with stratum ``"random"``;
   it alone is an unweighted random sample, so reports can always fall back on it;
2. a targeted phase: the population is partitioned into strata ``h`` (fixed
   before anything is drawn) and ``n_h`` items are drawn uniformly from what phase
   1 left of each stratum.

The inclusion probability of an item in stratum ``h`` is then exact::

    pi = n_r/N + (1 - n_r/N) * E[min(n_h, N_h - R) / (N_h - R)]

where ``R ~ Hypergeom(N-1, N_h-1, n_r)`` counts the other members of ``h`` taken
by phase 1. By symmetry this is exactly ``n_r/N + n_h/N_h`` unless phase 1 can
leave fewer than ``n_h`` members of the stratum; the expectation handles that
case. Every entry stores this overall probability, whichever phase drew it.
Because phase 1 may take members of a small stratum, a queue can be a few items
shorter than requested. Everything is deterministic for a given seed.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np

from judgekit.store import QueueEntry
from judgekit.types import (
    DEFAULT_VARIANT,
    SWAPPED_VARIANT,
    Judgment,
    majority_label,
    primary_model,
)

Strategy = Literal["random", "stratified", "disagreement", "uncertain"]
STRATEGIES: tuple[Strategy, ...] = ("random", "stratified", "disagreement", "uncertain")
#: Share of every non-random queue drawn as the uniform random stratum.
DEFAULT_RANDOM_SHARE = 0.2
RANDOM_STRATUM = "random"


@dataclass(frozen=True)
class Candidate:
    """One item that may be put in the queue."""

    dataset: str
    item_id: str
    slice: str | None = None
    #: items with the same group (a cluster, the same source text) are queued adjacently
    group: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.item_id)


@dataclass(frozen=True)
class ItemSignals:
    """What the stored judgments say about one item."""

    verdict: str | None = None  # majority label of the primary judge (variant "")
    disagreements: frozenset[str] = frozenset()  # subset of {"samples", "swap", "judges"}
    confidence: float | None = None  # lowest confidence of the primary judge's verdicts


@dataclass(frozen=True)
class QueuePlan:
    """A drawn queue: entries in presentation order, plus what happened and why."""

    strategy: Strategy
    seed: int
    entries: tuple[QueueEntry, ...]
    population: int
    notices: tuple[str, ...] = ()
    #: stratum -> (items in the population, items drawn in phase 2)
    strata: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def judgment_confidence(judgment: Judgment) -> float | None:
    """The probability the judge put on its verdict, when its endpoint returned logprobs.

    ``Judgment.confidence`` is filled by the runner (see
    ``judgekit.clients.confidence``); judgments without one (no logprobs,
    imported verdicts, rows older than the column) return None, and when no
    judgment has one the ``uncertain`` strategy falls back to ``disagreement``.
    """
    value = judgment.confidence
    if value is None:
        return None
    confidence = float(value)
    return confidence if math.isfinite(confidence) else None


def item_signals(judgments: Iterable[Judgment]) -> dict[tuple[str, str], ItemSignals]:
    """Per (dataset, item): verdict, kinds of disagreement and confidence.

    The primary judge is the model with the most successful judgments. Only
    ``ok`` judgments count: a parse failure is not a verdict.
    """
    # (dataset, item) -> model -> variant -> labels (in sample order)
    table: dict[tuple[str, str], dict[str, dict[str, list[str]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    confidences: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    per_model: Counter[str] = Counter()
    ordered = sorted(
        (j for j in judgments if j.status == "ok" and j.label is not None),
        key=lambda j: (j.dataset, j.item_id, j.model_requested, j.variant, j.sample_index),
    )
    for j in ordered:
        assert j.label is not None
        table[(j.dataset, j.item_id)][j.model_requested][j.variant].append(j.label)
        per_model[j.model_requested] += 1
        conf = judgment_confidence(j)
        if conf is not None and j.variant == DEFAULT_VARIANT:
            confidences[(j.dataset, j.item_id, j.model_requested)].append(conf)
    if not per_model:
        return {}
    primary = primary_model(per_model)
    signals: dict[tuple[str, str], ItemSignals] = {}
    for key, models in table.items():
        kinds: set[str] = set()
        model_verdicts: dict[str, str | None] = {}
        for model, variants in models.items():
            original = variants.get(DEFAULT_VARIANT, [])
            if len(set(original)) > 1:
                kinds.add("samples")
            swapped = variants.get(SWAPPED_VARIANT, [])
            if original and swapped and majority_label(original) != majority_label(swapped):
                kinds.add("swap")
            model_verdicts[model] = majority_label(original)
        if len({v for v in model_verdicts.values() if v is not None}) > 1:
            kinds.add("judges")
        verdict = model_verdicts.get(primary)
        if verdict is None:  # the primary judge never judged it: use any judge's verdict
            verdict = next((v for _, v in sorted(model_verdicts.items()) if v is not None), None)
        conf_list = confidences.get((key[0], key[1], primary)) or next(
            (confidences[(key[0], key[1], m)] for m in sorted(models)
             if confidences.get((key[0], key[1], m))),
            [],
        )
        signals[key] = ItemSignals(
            verdict=verdict,
            disagreements=frozenset(kinds),
            confidence=min(conf_list) if conf_list else None,
        )
    return signals


def inclusion_probability(
    population: int, n_random: int, stratum_size: int, n_stratum: int
) -> float:
    """Exact probability that one item of a stratum ends up in a two-phase queue.

    ``population`` items, ``n_random`` drawn uniformly first; then ``n_stratum``
    drawn uniformly from what is left of the item's stratum (``stratum_size`` items).
    """
    if population <= 0 or stratum_size <= 0:
        raise ValueError("population and stratum_size must be positive")
    n_random = min(n_random, population)
    p_first = n_random / population
    if n_stratum <= 0 or p_first >= 1.0:
        return min(1.0, p_first)
    if n_stratum >= stratum_size:  # phase 2 takes whatever phase 1 left of the stratum
        return 1.0
    # Given the item is not drawn in phase 1, phase 1 draws n_random of the other
    # population-1 items; R of them fall in the item's stratum (stratum_size-1 others).
    low = max(0, n_random - (population - stratum_size))
    high = min(n_random, stratum_size - 1)
    from scipy.stats import hypergeom  # over a second to import: only here, not per queue draw

    taken = np.arange(low, high + 1)
    pmf = hypergeom.pmf(taken, population - 1, stratum_size - 1, n_random)
    left = stratum_size - taken
    p_second = float(np.sum(pmf * np.minimum(n_stratum, left) / left))
    return min(1.0, p_first + (1.0 - p_first) * p_second)


def _equal_allocation(sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """Split ``total`` as evenly as possible over strata, capped at each stratum's size.

    Equal (not proportional) allocation is the point: a verdict the judge gives
    rarely still gets labels. Leftovers go to the largest strata first.
    """
    allocation = dict.fromkeys(sizes, 0)
    remaining = min(total, sum(sizes.values()))
    while remaining > 0:
        open_strata = sorted(
            (name for name in sizes if allocation[name] < sizes[name]),
            key=lambda name: (-(sizes[name] - allocation[name]), name),
        )
        share = max(1, remaining // len(open_strata))
        for name in open_strata:
            give = min(share, sizes[name] - allocation[name], remaining)
            allocation[name] += give
            remaining -= give
            if remaining == 0:
                break
    return allocation


def _fill_first(sizes: Mapping[str, int], order: Sequence[str], total: int) -> dict[str, int]:
    """Give ``total`` to strata in ``order``, each up to its size (targeted first, rest after)."""
    allocation = {}
    remaining = total
    for name in order:
        allocation[name] = min(remaining, sizes.get(name, 0))
        remaining -= allocation[name]
    return allocation


def plan_queue(
    candidates: Sequence[Candidate],
    judgments: Iterable[Judgment],
    *,
    strategy: str,
    sample: int,
    seed: int = 0,
    random_share: float = DEFAULT_RANDOM_SHARE,
) -> QueuePlan:
    """Draw a labeling queue of (at most) ``sample`` items with the given strategy.

    ``random``: a simple random sample. ``stratified``: equal allocation over
    (slice, judge verdict) cells. ``disagreement``: items whose judge samples,
    swapped-pair verdicts or two judges disagree. ``uncertain``: the least
    confident verdicts (needs logprob confidences; otherwise it falls back to
    ``disagreement`` and says so in ``notices``).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if sample < 1:
        raise ValueError(f"sample must be at least 1, got {sample}")
    if not 0.0 < random_share <= 1.0:
        raise ValueError(f"random_share must be in (0, 1], got {random_share}")
    chosen = cast(Strategy, strategy)
    pool = sorted({c.key: c for c in candidates}.values(), key=lambda c: c.key)
    population = len(pool)
    notices: list[str] = []
    if population == 0:
        return QueuePlan(chosen, seed, (), 0, ("no items to label",))
    rng = random.Random(seed)
    if sample >= population:
        order = _grouped_order(list(range(population)), pool, rng)
        entries = tuple(
            QueueEntry(pos, pool[i].dataset, pool[i].item_id, 1.0, "all")
            for pos, i in enumerate(order)
        )
        return QueuePlan(chosen, seed, entries, population,
                         (f"the queue holds all {population} items",), {"all": (population, 0)})

    signals = item_signals(judgments) if chosen != "random" else {}
    if chosen == "uncertain" and not any(s.confidence is not None for s in signals.values()):
        notices.append(
            "no verdict confidences (the judge endpoint returned no logprobs): "
            "falling back to the disagreement strategy"
        )
        chosen_design: Strategy = "disagreement"
    else:
        chosen_design = chosen
    if chosen == "stratified" and not signals:
        notices.append("no successful judgments for this rubric yet: strata use slices only")

    strata_of, allocation = _design(pool, signals, chosen_design, sample, random_share, notices)
    n_random = sample if chosen_design == "random" else max(1, round(sample * random_share))
    n_random = min(n_random, population)

    # Phase 1: the uniform random stratum.
    first = sorted(rng.sample(range(population), n_random))
    picked: dict[int, str] = dict.fromkeys(first, RANDOM_STRATUM)
    # Phase 2: uniform within what phase 1 left of each stratum.
    members: dict[str, list[int]] = defaultdict(list)
    for index, name in enumerate(strata_of):
        members[name].append(index)
    for name in sorted(allocation):
        want = allocation[name]
        if want <= 0:
            continue
        left = [i for i in members[name] if i not in picked]
        for i in rng.sample(left, min(want, len(left))):
            picked[i] = name

    sizes = {name: len(idx) for name, idx in members.items()}
    probs = {
        name: inclusion_probability(population, n_random, sizes[name], allocation.get(name, 0))
        for name in sizes
    }
    # interleave strata so no run of "hard" items biases the annotator, but keep the items
    # of one source together: reading a story once serves all its questions
    order = _grouped_order(sorted(picked), pool, rng)
    entries = tuple(
        QueueEntry(pos, pool[i].dataset, pool[i].item_id, probs[strata_of[i]], picked[i])
        for pos, i in enumerate(order)
    )
    if len(entries) < sample:
        notices.append(
            f"{sample - len(entries)} fewer items than asked: the random stratum took "
            "members of small strata"
        )
    strata = {name: (sizes[name], allocation.get(name, 0)) for name in sorted(sizes)}
    return QueuePlan(chosen, seed, entries, population, tuple(notices), strata)


def _grouped_order(indices: list[int], pool: Sequence[Candidate],
                   rng: random.Random) -> list[int]:
    """``indices`` in random order with the items of one group adjacent.

    Only the order changes, never which items were drawn, so inclusion probabilities
    are those of the design. Groups come in random order, items within one in random
    order; items without a group are groups of one (the plain shuffle).
    """
    rng.shuffle(indices)
    groups: dict[object, list[int]] = {}
    for i in indices:
        group = pool[i].group
        groups.setdefault(("item", i) if group is None else group, []).append(i)
    return [i for members in groups.values() for i in members]


def _design(
    pool: Sequence[Candidate],
    signals: Mapping[tuple[str, str], ItemSignals],
    strategy: Strategy,
    sample: int,
    random_share: float,
    notices: list[str],
) -> tuple[list[str], dict[str, int]]:
    """Each item's stratum and how many phase 2 draws from each stratum."""
    targeted = sample - max(1, round(sample * random_share))
    none = ItemSignals()
    if strategy == "random":
        return [RANDOM_STRATUM] * len(pool), {}
    if strategy == "stratified":
        names = [
            f"slice={c.slice or '-'}|verdict={signals.get(c.key, none).verdict or 'none'}"
            for c in pool
        ]
        return names, _equal_allocation(Counter(names), targeted)
    if strategy == "disagreement":
        names = ["disagreement" if signals.get(c.key, none).disagreements else "agreement"
                 for c in pool]
        sizes = Counter(names)
        if sizes["disagreement"] == 0:
            notices.append("no judge disagreements found: the queue is a random sample")
        return names, _fill_first(sizes, ["disagreement", "agreement"], targeted)
    # uncertain: the 2*targeted least confident verdicts form the "uncertain" stratum.
    scored = sorted(
        (confidence, index)
        for index, c in enumerate(pool)
        if (confidence := signals.get(c.key, none).confidence) is not None
    )
    low = {index for _, index in scored[: max(1, 2 * targeted)]}
    names = ["uncertain" if index in low else "confident" for index in range(len(pool))]
    return names, _fill_first(Counter(names), ["uncertain", "confident"], targeted)


def default_queue_name(
    rubric_name: str, rubric_hash: str, dataset: str | None, strategy: str, seed: int, sample: int
) -> str:
    """A deterministic queue name, so the same command in a later session resumes the queue."""
    return f"{rubric_name}-{rubric_hash[:10]}-{dataset or 'all'}-{strategy}-seed{seed}-n{sample}"
