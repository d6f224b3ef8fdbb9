"""Split a rubric's labeled items into train, dev and test, once, and keep the split.

Why each rule:

- **Grouped.** Items that share a ``cluster`` or a prompt (the same input text) move
  together: a test item whose twin sits in train would be judged with its own answer
  shown as an example, and its "held-out" figure would be nothing of the kind.
- **Stratified** by the human reference label: each part keeps the labels' mix, so a
  rare label is not missing from test by chance.
- **Drawn once.** Parts are stored with the seed; newly labeled items join without
  moving anyone: an item linked (by cluster or prompt) to stored items takes their part
  (test first, so nothing linked to a test item is ever shown as an example), any
  other goes where a hash of the seed and its group sends it, in the same fractions.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from judgekit.errors import InputError, StoreError
from judgekit.report.pairing import ItemKey
from judgekit.report.reference import human_reference
from judgekit.store import Store
from judgekit.store.splits import PARTS, SplitItem, SplitRecord
from judgekit.types import Item, Rubric

#: Default fractions of ``judgekit split`` and ``align``.
DEFAULT_FRACTIONS: dict[str, float] = {"train": 0.3, "dev": 0.35, "test": 0.35}
#: Fewest labeled items a part may hold: dev and test need enough for an interval that
#: can exclude 0, train enough to draw examples from.
MIN_ITEMS: dict[str, int] = {"train": 10, "dev": 20, "test": 20}


@dataclass(frozen=True)
class Split:
    """A stored split as ``align`` uses it: each labeled item's part and reference label."""

    record: SplitRecord
    parts: Mapping[str, list[ItemKey]]
    reference: Mapping[ItemKey, str]
    groups: Mapping[ItemKey, str]
    #: items labeled since the split was drawn and added now
    added: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def counts(self) -> dict[str, int]:
        return {part: len(self.parts[part]) for part in PARTS}

    def label_counts(self, labels: Sequence[str]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for part in PARTS:
            seen = Counter(self.reference[key] for key in self.parts[part])
            out[part] = {label: seen.get(label, 0) for label in labels}
        return out


def check_fractions(fractions: Mapping[str, float]) -> dict[str, float]:
    """Each part's fraction in (0, 1) and their sum 1: an ``InputError`` naming the option."""
    out = {part: float(fractions[part]) for part in PARTS}
    for part, value in out.items():
        if not 0 < value < 1:
            raise InputError(f"--{part}: must be between 0 and 1, got {value:g}")
    if abs(sum(out.values()) - 1) > 1e-6:
        raise InputError(
            f"--train, --dev and --test must add up to 1, got {sum(out.values()):g}")
    return out


def needed_labels(fractions: Mapping[str, float]) -> int:
    """Labeled items needed so that each part can reach its minimum."""
    return max(math.ceil(MIN_ITEMS[p] / fractions[p] - 1e-9) for p in PARTS)


def _unit(seed: int, name: str) -> float:
    """A uniform number in [0, 1) from the seed and a group's name (stable across runs)."""
    digest = hashlib.sha256(f"{seed}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _links(key: ItemKey, item: Item | None) -> list[str]:
    """What ties an item to others: its cluster, and its prompt (the input text)."""
    if item is None:
        return []
    links = [f"prompt:{hashlib.sha256(item.input.encode()).hexdigest()}"]
    if item.cluster:
        links.append(f"cluster:{key[0]}\x00{item.cluster}")
    return links


def _components(keys: Sequence[ItemKey], items: Mapping[ItemKey, Item]) -> dict[ItemKey, ItemKey]:
    """Each item's group, named by its first member: items sharing a cluster or prompt."""
    parent: dict[ItemKey, ItemKey] = {key: key for key in keys}

    def find(key: ItemKey) -> ItemKey:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    owner: dict[str, ItemKey] = {}
    for key in keys:
        for link in _links(key, items.get(key)):
            other = owner.setdefault(link, key)
            a, b = find(key), find(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {key: find(key) for key in keys}


def _allocate(groups: Mapping[str, list[ItemKey]], fractions: Mapping[str, float],
              seed: int) -> dict[str, str]:
    """Groups of one stratum to parts: in seeded order, each to the part furthest below
    its share of the items placed so far (so each stratum keeps the fractions)."""
    placed = dict.fromkeys(PARTS, 0)
    total = 0
    out: dict[str, str] = {}
    for name in sorted(groups, key=lambda g: (_unit(seed, g), g)):
        size = len(groups[name])
        total += size
        part = max(PARTS, key=lambda p: (fractions[p] * total - placed[p], -PARTS.index(p)))
        placed[part] += size
        out[name] = part
    return out


def _by_hash(seed: int, name: str, fractions: Mapping[str, float]) -> str:
    """The part of a group labeled after the split was drawn: the fractions, by a hash."""
    u, edge = _unit(seed, name), 0.0
    for part in PARTS:
        edge += fractions[part]
        if u < edge:
            return part
    return PARTS[-1]


def _group_name(key: ItemKey) -> str:
    return f"{key[0]}/{key[1]}"


def _labeled(store: Store, rubric: Rubric, dataset: str | None
             ) -> tuple[dict[ItemKey, str], dict[ItemKey, Item]]:
    """Every item with a usable human reference label, and the items themselves."""
    human = human_reference(store, rubric, dataset=dataset)
    reference = {}
    for key in sorted(human.keys):
        label = human.label_of(key, rubric.scale)
        if label is not None:
            reference[key] = label
    items: dict[ItemKey, Item] = {}
    for name in sorted({k[0] for k in reference}):
        found = store.items_by_ids(name, [k[1] for k in reference if k[0] == name])
        items.update({(name, item_id): item for item_id, item in found.items()})
    return {k: v for k, v in reference.items() if k in items}, items


def _stratum(members: Iterable[ItemKey], reference: Mapping[ItemKey, str],
             labels: Sequence[str]) -> str:
    counts = Counter(reference[m] for m in members)
    return max(labels, key=lambda label: (counts.get(label, 0), -labels.index(label)))


def load_split(
    store: Store, rubric: Rubric, *, dataset: str | None, fractions: Mapping[str, float] | None,
    seed: int | None, create: bool = True,
) -> Split:
    """The rubric's split (drawn now if there is none and ``create``), newly labeled items added.

    ``fractions``/``seed`` None mean "as stored" (or the defaults for a new split); given
    and different from a stored split's, they are refused: a split is never redrawn.
    """
    scope = dataset or ""
    record = store.get_split(rubric.sha256, scope)
    reference, items = _labeled(store, rubric, dataset)
    labels = list(rubric.scale.labels)
    if record is not None:
        _check_same(record, fractions, seed)
        return _extend(store, record, reference, items)
    if not create:
        raise InputError(f"no split for rubric {rubric.name} v{rubric.version}"
                         + (f" on dataset {dataset!r}" if dataset else "")
                         + "; make one with judgekit split")
    chosen = check_fractions(fractions or DEFAULT_FRACTIONS)
    asked_seed, seed = seed, 0 if seed is None else seed
    need = needed_labels(chosen)
    if len(reference) < need:
        raise InputError(
            f"{len(reference)} labeled item(s) for rubric {rubric.name}"
            + (f" on dataset {dataset!r}" if dataset else "")
            + f"; the split needs at least {need} ({need - len(reference)} missing): "
            f"at least {MIN_ITEMS['dev']} each for dev and test and {MIN_ITEMS['train']} for "
            "train at these fractions")
    keys = sorted(reference)
    group_of = _components(keys, items)
    groups: dict[str, list[ItemKey]] = {}
    for key in keys:
        groups.setdefault(_group_name(group_of[key]), []).append(key)
    strata: dict[str, dict[str, list[ItemKey]]] = {}
    for name, members in groups.items():
        strata.setdefault(_stratum(members, reference, labels), {})[name] = members
    rows: list[SplitItem] = []
    for stratum, members_of in strata.items():
        for name, part in _allocate(members_of, chosen, seed).items():
            rows += [SplitItem(k[0], k[1], part, name, stratum) for k in members_of[name]]
    counts = Counter(row.part for row in rows)
    short = [p for p in PARTS if counts[p] < MIN_ITEMS[p]]
    if short:
        raise InputError(
            "; ".join(f"the {p} split would hold {counts[p]} labeled item(s), it needs "
                      f"{MIN_ITEMS[p]} ({MIN_ITEMS[p] - counts[p]} missing)" for p in short)
            + " (items sharing a prompt or cluster move together): label more items")
    try:
        record = store.create_split(rubric.sha256, scope, seed, chosen, rows)
    except StoreError:  # another process drew this rubric's split a moment ago: use that one
        record = store.get_split(rubric.sha256, scope)
        if record is None:
            raise
        _check_same(record, fractions, asked_seed)
        return _extend(store, record, reference, items)
    return _assemble(store, record, reference, 0, ())


def _check_same(record: SplitRecord, fractions: Mapping[str, float] | None,
                seed: int | None) -> None:
    asked = [] if fractions is None else [
        p for p in PARTS if abs(float(fractions[p]) - float(record.fractions[p])) > 1e-9]
    if seed is not None and seed != record.seed:
        asked.append("seed")
    if asked:
        stored = ", ".join(f"{p} {record.fractions[p]:g}" for p in PARTS)
        raise InputError(
            f"this rubric's split was drawn on {record.created_at[:10]} with seed {record.seed} "
            f"and {stored}; a split is never redrawn (its test items may already have been "
            "looked at): leave out --" + ", --".join(asked))


def _extend(store: Store, record: SplitRecord, reference: Mapping[ItemKey, str],
            items: Mapping[ItemKey, Item]) -> Split:
    """Add items labeled since the split was drawn, each by the rule in the module docstring."""
    stored = {(s.dataset, s.item_id): s for s in store.split_items(record.id)}
    new = [key for key in sorted(reference) if key not in stored]
    if not new:
        return _assemble(store, record, reference, 0, ())
    every = sorted(set(stored) | set(new))
    known_items = dict(items)
    missing = [k for k in stored if k not in known_items]
    for name in sorted({k[0] for k in missing}):
        found = store.items_by_ids(name, [k[1] for k in missing if k[0] == name])
        known_items.update({(name, i): item for i, item in found.items()})
    group_of = _components(every, known_items)
    members: dict[ItemKey, list[ItemKey]] = {}
    for key in every:
        members.setdefault(group_of[key], []).append(key)
    rows: list[SplitItem] = []
    notes: list[str] = []
    for root, group in members.items():
        fresh = [k for k in group if k not in stored]
        if not fresh:
            continue
        parts = {stored[k].part for k in group if k in stored}
        if parts:
            part = next(p for p in reversed(PARTS) if p in parts)  # test first
            name = next(stored[k].group for k in group if k in stored and stored[k].part == part)
        else:
            name = _group_name(root)
            part = _by_hash(record.seed, name, record.fractions)
        if len(parts) > 1:
            notes.append(f"new item(s) {', '.join(k[1] for k in fresh)} link groups in "
                         f"{' and '.join(sorted(parts))}; added to {part}")
        rows += [SplitItem(k[0], k[1], part, name, reference[k]) for k in fresh]
    store.add_split_items(record.id, rows)
    return _assemble(store, record, reference, len(rows), tuple(notes))


def _assemble(store: Store, record: SplitRecord, reference: Mapping[ItemKey, str], added: int,
              notes: tuple[str, ...]) -> Split:
    parts: dict[str, list[ItemKey]] = {p: [] for p in PARTS}
    groups: dict[ItemKey, str] = {}
    for row in store.split_items(record.id):
        key = (row.dataset, row.item_id)
        groups[key] = row.group
        if key in reference:  # a label withdrawn since keeps its part, unused
            parts[row.part].append(key)
    return Split(record, parts, {k: reference[k] for p in parts.values() for k in p}, groups,
                 added, notes)
