"""The report's Alignment section: the rubric's split and its latest held-out result.

``judgekit align`` stores a split of the labeled items (train, dev, test) and every use
of its parts; a report on the rubric, or on a rubric ``align`` wrote from it (its
``parent``: the labels and the split are the parent's), says how the split was drawn,
how many times the test part was looked at, and what the latest held-out comparison
gave beside the dev ranking it was picked from. The section is part of the report
model, so every format (text, Markdown, HTML, JSON, the notebook) shows the same
thing, and the server's ``/report`` with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgekit.store import Store
from judgekit.store.splits import PARTS
from judgekit.types import Rubric

#: Why a dev ranking is not the figure to quote (shown by ``align`` and by the report).
DEV_CAVEAT = ("selected on dev: the best of several noisy estimates is biased upward; quote "
              "the test figure, not these")


@dataclass(frozen=True)
class DevEntry:
    """One candidate of the dev ranking and its primary statistic (a statistic object)."""

    name: str | None
    primary: Mapping[str, Any] | None


@dataclass(frozen=True)
class HeldOut:
    """The latest use of the test part: who, when, on which candidates, and what it gave.

    ``test`` is the stored paired comparison (baseline, candidate, difference, its
    ``sentence``), as ``judgekit align`` wrote it.
    """

    who: str
    created_at: str
    candidates: tuple[Mapping[str, Any], ...]
    test: Mapping[str, Any] | None
    dev: tuple[DevEntry, ...]


@dataclass(frozen=True)
class Alignment:
    """The split of the aligned rubric, how often its test part was used, the latest result."""

    rubric_sha256: str
    seed: int
    fractions: Mapping[str, float]
    counts: Mapping[str, int]
    test_uses: int
    latest: HeldOut | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``alignment`` object (docs/report-schema.md)."""
        latest = self.latest
        return {
            "rubric_sha256": self.rubric_sha256,
            "split": {"seed": self.seed, "fractions": dict(self.fractions),
                      "counts": dict(self.counts)},
            "test_uses": self.test_uses,
            "latest": None if latest is None else {
                "who": latest.who, "created_at": latest.created_at,
                "candidates": [dict(c) for c in latest.candidates],
                "test": None if latest.test is None else dict(latest.test),
                "dev": [{"name": d.name, "primary": None if d.primary is None
                         else dict(d.primary)} for d in latest.dev],
            },
        }

    def figures(self) -> list[tuple[str, Mapping[str, Any]]]:
        """The latest held-out figures (``test:baseline``, ``test:candidate``,
        ``test:difference``) and the dev ranking's (``dev:NAME``), as statistic objects."""
        latest = self.latest
        if latest is None:
            return []
        out: list[tuple[str, Mapping[str, Any]]] = []
        test = latest.test or {}
        for side in ("baseline", "candidate", "difference"):
            if isinstance(test.get(side), Mapping):
                out.append((f"test:{side}", test[side]))
        out += [(f"dev:{entry.name}", entry.primary) for entry in latest.dev
                if isinstance(entry.primary, Mapping)]
        return out

    def lines(self) -> list[str]:
        """The section as plain lines (a dev candidate's line starts with two spaces)."""
        out = ["split (seed {}): {}".format(
            self.seed, ", ".join(f"{self.counts.get(p, 0)} {p}" for p in PARTS))]
        latest = self.latest
        if latest is None:
            return [*out, "test split not used yet"]
        test = latest.test or {}
        out.append(f"held-out result ({latest.created_at[:19]}, by {latest.who}): "
                   f"{test.get('sentence', 'none')}")
        out.append(f"dev ranking ({DEV_CAVEAT}):")
        out.extend(f"  {entry.name}: {_figure(entry.primary or {})}" for entry in latest.dev)
        out.append(f"test split used {self.test_uses} time(s)"
                   + (": label fresh items for a clean held-out figure"
                      if self.test_uses > 1 else ""))
        return out


def _figure(stat: Mapping[str, Any]) -> str:
    value, low, high = stat.get("statistic"), stat.get("ci_low"), stat.get("ci_high")
    if not _finite(value):
        return f"undefined ({stat.get('reason', 'no items')})"
    if not (_finite(low) and _finite(high)):
        return f"{value:.2f}"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def _finite(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def alignment_section(store: Store, rubric: Rubric, dataset: str | None = None
                      ) -> Alignment | None:
    """The rubric's (else its parent's) split for ``dataset`` (else for all data), or None
    when neither was ever aligned."""
    record = None
    for sha in (rubric.sha256, rubric.parent):
        if sha:
            record = store.get_split(sha, dataset or "") or store.get_split(sha, "")
        if record is not None:
            break
    if record is None:
        return None
    counts = dict.fromkeys(PARTS, 0)
    for row in store.split_items(record.id):
        counts[row.part] = counts.get(row.part, 0) + 1
    tests = [u for u in store.split_uses(record.id) if u.part == "test"]
    latest = None
    if tests:
        use = tests[-1]
        dev = tuple(DevEntry(d.get("name"), d.get("primary"))
                    for d in use.result.get("dev", []) if isinstance(d, Mapping))
        latest = HeldOut(use.who, use.created_at, tuple(use.candidates),
                         use.result.get("test"), dev)
    return Alignment(record.rubric_hash, record.seed, dict(record.fractions), counts,
                     len(tests), latest)


__all__ = ["DEV_CAVEAT", "Alignment", "DevEntry", "HeldOut", "alignment_section"]
