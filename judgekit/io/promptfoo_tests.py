"""promptfoo's results as items: which results are one test, and what each item is called.

Shared by the JSON/JSONL/YAML reader (:mod:`judgekit.io.promptfoo`) and the CSV reader
(:mod:`judgekit.io.promptfoo_csv`). ``promptfoo eval --repeat N`` runs each test N times
and writes each run as its own result with the next ``testIdx`` (repeat-major: every
test once, then every test again) and nothing else telling them apart: no repeat index
in the file. Results whose test is the same (the same test case: description,
metadata, vars, assertions) are therefore one test run several times, the k-th in
``testIdx`` order being repeat k. Repeats that gave the same answer are one item whose
verdicts are samples 0..N-1 of the grader (self-consistency); if the model under test
answered differently, each answer is its own item ``<id>-r<k>`` in cluster ``<id>``,
so item-level statistics still count the test once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from judgekit.types import Item


@dataclass
class Answer:
    """One result: a test run once through one prompt and provider, with its verdicts."""

    test_index: int
    #: the test's identity (the same for every repeat of one test)
    test_key: str
    #: (prompt index, provider id): the column of promptfoo's table
    column: tuple[int, str]
    #: the item without its id; ``meta["promptfoo"]`` is filled in here
    item: Item
    #: raises the reader's "file: place: what is wrong" error for this result
    fail: Callable[[str], Any]
    #: the test's vars, kept in the item's ``meta.promptfoo.vars``
    vars: Any = None
    #: verdict records without ``item_id``/``sample``
    verdicts: list[dict[str, Any]] = field(default_factory=list)


def test_numbers(answers: Sequence[Answer]) -> dict[str, int]:
    """test key -> the test's number: its ``testIdx``, or, in a file with repeated tests, its
    position among the file's tests (the ``testIdx`` one run of the same config gives it), so
    a repeated run's items are the items of a single run."""
    runs: dict[str, set[int]] = {}
    for answer in answers:
        runs.setdefault(answer.test_key, set()).add(answer.test_index)
    if all(len(indices) == 1 for indices in runs.values()):
        return {key: min(indices) for key, indices in runs.items()}
    ordered = sorted(runs, key=lambda key: min(runs[key]))
    return {key: number for number, key in enumerate(ordered)}


def test_ids(candidates: Mapping[str, Sequence[str | None]], numbers: Mapping[str, int]
             ) -> dict[str, str]:
    """test key -> item id: the first candidate kind (e.g. metadata id, then description)
    whose values exist and are unique across the file's tests, else ``t<number>``
    (:func:`test_numbers`). ``candidates[key][n]`` is the n-th kind's value for that test."""
    keys = list(candidates)
    kinds = max((len(v) for v in candidates.values()), default=0)
    for kind in range(kinds):
        chosen = {key: candidates[key][kind] for key in keys}
        values = [v for v in chosen.values() if v]
        if len(values) == len(keys) and len(set(values)) == len(values):
            return {key: str(value) for key, value in chosen.items()}
    return {key: f"t{numbers[key]}" for key in keys}


def assemble(answers: Sequence[Answer], ids: Mapping[str, str], numbers: Mapping[str, int]
             ) -> tuple[list[Item], list[dict[str, Any]]]:
    """Items and verdict records (with ``item_id`` and ``sample``) of all the answers."""
    several = len({a.column for a in answers}) > 1
    runs: dict[tuple[str, tuple[int, str]], list[Answer]] = {}
    for answer in sorted(answers, key=lambda a: a.test_index):
        runs.setdefault((answer.test_key, answer.column), []).append(answer)
    items: dict[str, Item] = {}
    verdicts: list[dict[str, Any]] = []
    for (key, (prompt, provider)), repeats in runs.items():
        base = ids[key] + (f"-p{prompt}-{provider}" if several else "")
        first = repeats[0]
        same = all(_content(r.item) == _content(first.item) for r in repeats)
        for number, answer in enumerate(repeats):
            # what the item is, not how often it ran: a repeated run's items are a single
            # run's (an answer that differs says which repeat it was)
            meta: dict[str, Any] = {"test_index": numbers[key], "provider": provider,
                                    "vars": answer.vars}
            if not same:
                meta["repeat"] = number
            item_id = base if same else f"{base}-r{number}"
            item = replace(answer.item, id=item_id, meta={"promptfoo": meta},
                           cluster=answer.item.cluster if same else base)
            if items.setdefault(item_id, item) != item:
                answer.fail(f"a second result for item {item_id!r} (test "
                            f"{answer.test_index}) with other content")
            sample = number if same else 0
            verdicts.extend({**v, "item_id": item_id, "sample": sample}
                            for v in answer.verdicts)
    return list(items.values()), verdicts


def _content(item: Item) -> tuple[str, str | None, str | None]:
    return item.input, item.response, item.reference
