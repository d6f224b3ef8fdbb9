"""Judge runs from other eval tools' files, imported as judgekit's own imported runs.

Each tool has one reader module (:mod:`judgekit.io.promptfoo`,
:mod:`judgekit.io.inspect_log`, :mod:`judgekit.io.deepeval`, :mod:`judgekit.io.lm_eval`,
:mod:`judgekit.io.batch_output`) that turns the tool's file into a
:class:`ToolRun`: the items the file holds (question, answer, reference), one
verdict record per graded answer in the form ``judgments import`` reads (with
the grader's raw output), and the tool's provenance (tool and version, grader
model, grader prompt hash). This module validates a run completely and then
stores items and verdicts in one transaction; ``docs/import.md`` maps every tool's fields.

A file may hold several graders (Inspect scorers, DeepEval metrics, promptfoo
assertions). Each becomes its own judge (:func:`judge_names`), with its own run and
provenance, unless ``grader=`` picks one; the first is often not the LLM judge (a
substring scorer, a conciseness metric), so none is ever chosen silently, and the
command prints which grader became which judge. A reader refuses any shape its tool
could not have written with one ``file: place: what is wrong`` line
(:mod:`judgekit.io.tool_shape`).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.fields import item_dataset_index
from judgekit.io.judgments import JUDGMENT_FIELDS, ParsedVerdict, verdicts_from_records
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
    #: The graders imported, each as the judge it became (empty: one unnamed grader).
    graders: Sequence[Grader] = ()


@dataclass(frozen=True)
class Grader:
    """One grader of a tool's file (a scorer, metric or assertion) and the judge it is."""

    kind: str  # "scorer", "metric", "assertion"
    name: str
    judge: str
    #: Provenance of this grader's run only (its scorer, metric, model, prompt hash).
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        return f"{self.kind} {self.name!r} -> judge {self.judge}"


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


def judge_names(graders: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``(grader, model) -> judge name``: the model, or ``model [grader]`` where one model
    backs several graders of the file (two G-Eval metrics of one evaluation model).

    The names depend on the whole file, not on which grader is picked, so importing
    a file whole or one grader at a time gives the same judges."""
    pairs = set(graders)
    per_model: dict[str, set[str]] = {}
    for grader, model in pairs:
        per_model.setdefault(model, set()).add(grader)
    return {(grader, model): model if len(per_model[model]) == 1 else f"{model} [{grader}]"
            for grader, model in pairs}


def pick_graders(names: Sequence[str], chosen: str | None, path: Path, kind: str) -> list[str]:
    """The graders to import: ``chosen`` (which must be in the file) or all of them."""
    if not names:
        raise InputError(f"{path}: the file names no {kind} to import")
    if chosen is None:
        return list(names)
    if chosen not in names:
        raise InputError(f"{path}: no {kind} {chosen!r} in the file "
                         f"({kind}s: {', '.join(map(repr, names))})")
    return [chosen]


def read_tool(tool: str, path: str | Path, rubric: Rubric, grader: str | None = None,
              **options: Any) -> ToolRun:
    """The :class:`ToolRun` of ``path`` read as ``tool``'s output (``grader``: only that
    scorer, metric or assertion; ``options``: the Batch output reader's id options)."""
    if tool not in TOOLS:
        raise InputError(f"--from: unknown tool {tool!r} (known: {', '.join(TOOLS)})")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    given = {name: value for name, value in options.items() if value is not None}
    if given and tool != "openai-batch":
        names = ", ".join("--" + name.replace("_", "-") for name in given)
        raise InputError(f"{names}: only for --from openai-batch")
    if grader is not None and tool == "openai-batch":
        raise InputError("--grader: an openai-batch file has one grader (the model that "
                         "answered); use --judge to name it")
    module = importlib.import_module(f"judgekit.io.{TOOLS[tool]}")
    reader: Callable[..., ToolRun] = module.read
    return reader(path, rubric, grader) if grader is not None else reader(path, rubric, **given)


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
    per_judge = {g.judge: g.provenance for g in run.graders}
    if judge is not None:
        if len(per_judge) > 1:
            raise InputError(f"--judge names one judge, but {source} holds several graders "
                             f"({', '.join(g.name for g in run.graders)}): pick one with "
                             "--grader NAME")
        per_judge = {judge: next(iter(per_judge.values()))} if per_judge else {}
        for row in rows:
            row["judge"] = judge
    if not rows:
        raise InputError(f"{source}: no verdicts to import")
    records = list(iter_mappings(rows, JUDGMENT_FIELDS, on_error=errors.add, name=source))
    index = item_dataset_index(store, dataset)
    for item in run.items:
        index[item.id] = [dataset]
    if run.needs_stored_items and not index:
        raise InputError(f"{source}: the file holds no items and dataset {dataset!r} is empty: "
                         "import the items first (judgekit import FILE --name NAME)")
    verdicts = verdicts_from_records(records, errors, rubric, store, dataset=dataset,
                                     index=index)
    groups: dict[str, list[ParsedVerdict]] = {}
    for verdict in verdicts:
        groups.setdefault(verdict.judge, []).append(verdict)
    results: list[JudgmentImportResult] = []
    with store.importing() as session:  # items and verdicts: both stored or neither
        changed = session.add_items(dataset, run.items, replace=replace) if run.items else 0
        for name, group in groups.items():  # one run (and provenance) per judge
            provenance = {"tool": run.tool, **run.provenance, **per_judge.get(name, {})}
            results.append(write_verdicts(session, group, rubric, source=source,
                                          provenance=provenance))
    return ToolImportResult(dataset, len(run.items), changed, _merged(results))


def _merged(results: Sequence[JudgmentImportResult]) -> JudgmentImportResult:
    """The results of several judges' writes as one."""
    return JudgmentImportResult(
        added=sum(r.added for r in results), unchanged=sum(r.unchanged for r in results),
        runs=tuple(run for r in results for run in r.runs),
        judges=tuple(sorted({j for r in results for j in r.judges})),
        warnings=tuple(w for r in results for w in r.warnings),
        models={k: v for r in results for k, v in r.models.items()},
    )
