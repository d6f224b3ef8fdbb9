"""Splitting a labeling set among a team: every item to one annotator, a share to two.

Agreement between people can only be measured on items two of them labeled, and
the judge-versus-human comparison wants every item labeled once. ``plan_assignment``
does both: it shuffles the items with a seed, picks a random ``overlap`` share to
go to two different annotators, and deals every copy to whoever has the least work
so far, so whole workloads (shared items included) differ by at most one. The plan is saved as one
queue per annotator (``assign:<rubric>:<annotator>``), so ``judgekit annotate
--queue`` and the web app resume it like any other queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgekit.errors import InputError

#: The strategy name assignment queues are stored under.
ASSIGNED_STRATEGY = "assigned"


@dataclass(frozen=True)
class Assignment:
    """Who labels what: items per annotator, in the order they will be shown."""

    annotators: tuple[str, ...]
    items: dict[str, list[tuple[str, str]]]  # annotator -> [(dataset, item_id)]
    overlap_items: frozenset[tuple[str, str]]

    def workload(self, annotator: str) -> int:
        return len(self.items[annotator])


def assignment_queue_name(rubric_name: str, rubric_hash: str, annotator: str) -> str:
    """Queue name for one annotator's share: readable, and unique per rubric version."""
    return f"assign:{rubric_name}:{rubric_hash[:8]}:{annotator}"


def parse_annotators(text: str) -> tuple[str, ...]:
    """``ana,bo,cy`` as a tuple of distinct, non-empty names (order kept)."""
    names = [name.strip() for name in text.split(",")]
    if any(not name for name in names):
        raise InputError(f"--annotators has an empty name: {text!r}")
    if len(set(names)) != len(names):
        raise InputError(f"--annotators names someone twice: {text!r}")
    return tuple(names)


def plan_assignment(
    keys: Sequence[tuple[str, str]], annotators: Sequence[str], *, overlap: float, seed: int
) -> Assignment:
    """Deal ``keys`` to ``annotators``; an ``overlap`` share also goes to a second person."""
    if not annotators:
        raise InputError("--annotators must name at least one annotator")
    if not 0.0 <= overlap <= 1.0:
        raise InputError(f"--overlap must be between 0 and 1, got {overlap}")
    if overlap > 0 and len(annotators) < 2:
        raise InputError("--overlap needs at least two annotators")
    if not keys:
        raise InputError("no items to assign (import items first)")
    rng = np.random.default_rng(seed)
    order = [keys[i] for i in rng.permutation(len(keys))]
    k = len(annotators)
    items: dict[str, list[tuple[str, str]]] = {name: [] for name in annotators}
    n_overlap = round(overlap * len(order))
    chosen = [order[i] for i in sorted(rng.choice(len(order), size=n_overlap, replace=False))]
    shared = set(chosen)
    load = [0] * k

    def lightest(count: int) -> list[int]:
        """``count`` distinct annotators with the least work so far, ties broken by the seed."""
        ranked = sorted(range(k), key=lambda i: (load[i], float(rng.random())))
        return ranked[:count]

    # the shared items first, each to the two least-loaded people, then one each to the
    # least-loaded: every step adds to the lightest, so workloads end within one
    for key in [*chosen, *(key for key in order if key not in shared)]:
        for i in lightest(2 if key in shared else 1):
            load[i] += 1
            items[annotators[i]].append(key)
    # interleave so the shared items are not all at the end of a queue
    for name in annotators:
        mine = items[name]
        items[name] = [mine[i] for i in rng.permutation(len(mine))]
    return Assignment(tuple(annotators), items, frozenset(chosen))
