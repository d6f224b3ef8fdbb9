"""Candidates for ``judgekit align``: each a rubric version (or a way of sampling it).

Every candidate is a new rubric version, stored like any rubric:
its file names the ``parent`` (the sha256 it came from) and ``changes`` (what changed),
so every judgment it makes keeps its exact provenance. Kinds:

- ``baseline``: the rubric as given;
- ``file``: a rubric version the user wrote (``--candidate path.toml``), on the same scale;
- ``examples``: few-shot examples from the **train** split only, chosen among the judge's
  disagreements with people and balanced over the human labels (:func:`pick_examples`);
- ``samples``: the baseline with ``[sampling]``: judged ``k`` times at a temperature, majority
  (or mean) verdict, as ``judge`` votes (:mod:`judgekit.judging.voting`);
- ``revision``: instructions an optimizer model proposed (:mod:`judgekit.align.optimizer`).

:func:`check_no_leak` refuses any candidate whose examples name a dev or test item: the
held-out figure would otherwise be measured on items the judge was shown.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.align.toml_text import dump
from judgekit.errors import InputError, RubricError
from judgekit.report.pairing import ItemKey
from judgekit.rubrics import load_rubric, rubric_from_text
from judgekit.types import Example, Item, Label, Rubric

#: Longest item text kept in an example (the rest is cut, and says so).
EXAMPLE_CHARS = 2000


@dataclass(frozen=True)
class Candidate:
    """One way of judging: a rubric, how many samples per item, and at what temperature."""

    name: str
    kind: str
    rubric: Rubric
    changes: str = ""
    samples: int = 1
    #: the sampling variant's temperature; None: the judge's own
    temperature: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "sha256": self.rubric.sha256,
                "version": self.rubric.version, "parent": self.rubric.parent,
                "changes": self.changes, "samples": self.samples,
                "temperature": self.temperature}


def same_scale(baseline: Rubric, other: Rubric) -> bool:
    return (baseline.scale.kind == other.scale.kind
            and baseline.scale.labels == other.scale.labels)


def file_candidate(path: str | Path, baseline: Rubric) -> Candidate:
    """A rubric version the user wrote; another scale is refused (agreement not comparable)."""
    rubric = load_rubric(path)
    if not same_scale(baseline, rubric):
        raise InputError(
            f"{path}: scale {rubric.scale.kind} ({', '.join(rubric.scale.labels)}) differs from "
            f"the baseline's {baseline.scale.kind} ({', '.join(baseline.scale.labels)}): its "
            "agreement with the humans' labels would not be comparable")
    if rubric.sha256 == baseline.sha256:
        raise InputError(f"{path}: the same rubric as the baseline (identical content)")
    changes = rubric.changes or f"written by hand ({Path(path).name})"
    return Candidate(Path(path).stem, "file", rubric, changes)


def derive(parent: Rubric, *, suffix: str, changes: str, system: str | None = None,
           examples: Sequence[Example] = (), sampling: Mapping[str, Any] | None = None) -> Rubric:
    """A new version of ``parent``: same scale and prompt, the changed parts, its provenance.

    The text is TOML written from the parent's parsed content and parsed back, so the
    file written out later is exactly what was judged (same sha256).
    """
    data: dict[str, Any] = tomllib.loads(parent.source_text)
    data["version"] = f"{parent.version}+{suffix}"
    data["parent"] = parent.sha256
    data["changes"] = changes
    if system is not None:
        data.setdefault("prompt", {})["system"] = system
    if examples:
        data["examples"] = [_example_table(e) for e in examples]
    if sampling is not None:
        data["sampling"] = dict(sampling)
    text = dump(data, header=f"{parent.name} v{data['version']}: {changes}\n"
                             f"derived from {parent.sha256} by judgekit align")
    if tomllib.loads(text) != data:  # the writer must round-trip; never judge something else
        raise RubricError(f"{parent.name}: the derived rubric does not round-trip as TOML")
    return rubric_from_text(text, path=f"<{parent.name} {suffix}>")


def _example_table(example: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"item_id": example.item_id, "dataset": example.dataset,
                           "label": example.label, "input": example.input}
    for name in ("response", "response_a", "response_b"):
        value = getattr(example, name)
        if value is not None:
            out[name] = value
    if example.note:
        out["note"] = example.note
    return out


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= EXAMPLE_CHARS:
        return text
    return text[:EXAMPLE_CHARS] + " [...cut]"


def _order(seed: int, key: ItemKey) -> tuple[str, ItemKey]:
    return hashlib.sha256(f"{seed}\x00{key[0]}\x00{key[1]}".encode()).hexdigest(), key


def pick_examples(
    train: Sequence[ItemKey], reference: Mapping[ItemKey, str], verdicts: Mapping[ItemKey, Any],
    labels: Sequence[str], k: int, seed: int,
) -> list[ItemKey]:
    """``k`` train items, balanced over the human labels, disagreements with the judge first.

    Labels take turns (in scale order); within a label, items the judge got wrong come
    first, in a seeded order, then the ones it got right. Only ``train`` is ever read.
    """
    buckets: dict[str, list[ItemKey]] = {label: [] for label in labels}
    for wrong in (True, False):
        for key in sorted(train, key=lambda key: _order(seed, key)):
            verdict = verdicts.get(key)
            if verdict is not None and (verdict != reference[key]) == wrong:
                buckets[reference[key]].append(key)
    picked: list[ItemKey] = []
    while len(picked) < k and any(buckets.values()):
        for label in labels:
            if buckets.get(label) and len(picked) < k:
                picked.append(buckets[label].pop(0))
    return picked


def examples_for(keys: Sequence[ItemKey], items: Mapping[ItemKey, Item],
                 reference: Mapping[ItemKey, str], labels: Sequence[Label]) -> list[Example]:
    """The examples' text: item, human reference label and an agreeing annotator's note."""
    notes: dict[ItemKey, str] = {}
    for label in labels:
        key = (label.dataset, label.item_id)
        if label.note and label.label == reference.get(key) and key not in notes:
            notes[key] = label.note.strip()
    out = []
    for key in keys:
        item = items[key]
        out.append(Example(key[1], reference[key], _cut(item.input) or "", _cut(item.response),
                           _cut(item.response_a), _cut(item.response_b), notes.get(key, ""),
                           key[0]))
    return out


def examples_candidate(baseline: Rubric, examples: Sequence[Example], k: int) -> Candidate:
    wrong = "chosen among the judge's disagreements with people"
    changes = (f"{len(examples)} few-shot example(s) from the train split, {wrong}, "
               "balanced over labels")
    rubric = derive(baseline, suffix=f"examples{k}", changes=changes, examples=examples)
    return Candidate(f"examples-{k}", "examples", rubric, changes)


def samples_candidate(baseline: Rubric, samples: int, temperature: float) -> Candidate:
    """The baseline with ``[sampling]``: judged and voted as ``judge`` does with that rubric
    (:mod:`judgekit.judging.voting`), so the written winner reproduces what was measured."""
    how = "mean score" if baseline.scale.kind == "ordinal" else "majority"
    changes = f"{samples} samples per item at temperature {temperature:g}, {how} verdict"
    rubric = derive(baseline, suffix=f"samples{samples}", changes=changes,
                    sampling={"samples": samples, "temperature": float(temperature),
                              "aggregate": "majority"})
    return Candidate(f"samples-{samples}", "samples", rubric, changes, samples, temperature)


def check_no_leak(candidates: Sequence[Candidate], held_out: Mapping[ItemKey, str]) -> None:
    """Refuse a candidate whose examples are dev or test items (``held_out``: item -> part)."""
    by_id: dict[str, str] = {key[1]: part for key, part in held_out.items()}
    for candidate in candidates:
        for example in candidate.rubric.examples:
            key = (example.dataset, example.item_id)
            part = held_out.get(key) if example.dataset else by_id.get(example.item_id)
            if part is not None:
                raise InputError(
                    f"candidate {candidate.name}: example item {example.item_id!r} is in the "
                    f"{part} split; examples may come only from train (a held-out figure on "
                    "items the judge was shown would be no such thing)")
