"""Judge runs from other eval tools' files, imported as judgekit's own imported runs.

Each tool has one reader module (:mod:`judgekit.io.promptfoo`,
:mod:`judgekit.io.inspect_log`, :mod:`judgekit.io.deepeval`, :mod:`judgekit.io.lm_eval`,
:mod:`judgekit.io.batch_output`) that turns the tool's file into a
:class:`ToolRun`: the items the file holds (question, answer, reference), one
verdict record per graded answer in the form ``judgments import`` reads (with
the grader's raw output), and the tool's provenance (tool and version, grader
model, grader prompt hash). This module validates a run completely and then
stores items and verdicts in one transaction; ``docs/import.md`` maps every tool's fields.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.fields import item_dataset_index
from judgekit.io.judgments import JUDGMENT_FIELDS, verdicts_from_records
from judgekit.io.records import ErrorList, iter_mappings
from judgekit.io.verdict_store import JudgmentImportResult, write_verdicts
from judgekit.store import Store
from judgekit.types import Item, Rubric, Scale

#: ``--from`` name -> module under judgekit.io with ``read(path, rubric) -> ToolRun``.
TOOLS: dict[str, str] = {
    "promptfoo": "promptfoo",
    "inspect": "inspect_log",
    "deepeval": "deepeval",
    "lm-eval": "lm_eval",
    "openai-batch": "batch_output",
}


@dataclass(frozen=True)
class ToolRun:
    """What a tool's file says: items, verdict records (``item_id`` ...), provenance."""

    tool: str
    items: Sequence[Item]
    verdicts: Sequence[Mapping[str, Any]]
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: Whether the verdicts name items already in the store (the file holds no items).
    needs_stored_items: bool = False


@dataclass(frozen=True)
class ToolImportResult:
    """Items stored (new or changed) and what the verdict import did."""

    dataset: str
    items: int
    items_changed: int
    verdicts: JudgmentImportResult


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` (UTF-8): how a grader prompt is recorded without its text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def binary_label(passed: bool, scale: Scale, tool: str) -> str:
    """A tool's pass/fail as the binary scale's first (pass) or second (fail) label."""
    if scale.kind != "binary":
        raise InputError(f"{tool} verdicts are pass/fail: use a binary rubric "
                         f"(this one is {scale.kind})")
    return scale.labels[0] if passed else scale.labels[1]


def read_tool(tool: str, path: str | Path, rubric: Rubric) -> ToolRun:
    """The :class:`ToolRun` of ``path`` read as ``tool``'s output."""
    if tool not in TOOLS:
        raise InputError(f"--from: unknown tool {tool!r} (known: {', '.join(TOOLS)})")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    module = importlib.import_module(f"judgekit.io.{TOOLS[tool]}")
    reader: Callable[[Path, Rubric], ToolRun] = module.read
    return reader(path, rubric)


def import_tool_run(
    store: Store,
    run: ToolRun,
    rubric: Rubric,
    *,
    source: str,
    dataset: str,
    judge: str | None = None,
    replace: bool = False,
) -> ToolImportResult:
    """Validate the run's verdicts against its items (and the store), then store both in
    one transaction: a failure while writing the verdicts (a full disk, a read-only
    file) also rolls back the items, and an older store's upgrade with them."""
    errors = ErrorList(source)
    rows = [dict(v) for v in run.verdicts]
    if judge is not None:
        for row in rows:
            row["judge"] = judge
    records = list(iter_mappings(rows, JUDGMENT_FIELDS, on_error=errors.add, name=source))
    index = item_dataset_index(store, dataset)
    for item in run.items:
        index[item.id] = [dataset]
    if run.needs_stored_items and not index:
        raise InputError(f"{source}: the file holds no items and dataset {dataset!r} is empty: "
                         "import the items first (judgekit import FILE --name NAME)")
    verdicts = verdicts_from_records(records, errors, rubric, store, dataset=dataset,
                                     index=index)
    with store.importing() as session:  # items and verdicts: both stored or neither
        changed = session.add_items(dataset, run.items, replace=replace) if run.items else 0
        result = write_verdicts(session, verdicts, rubric, source=source,
                                provenance={"tool": run.tool, **run.provenance})
    return ToolImportResult(dataset, len(run.items), changed, result)
