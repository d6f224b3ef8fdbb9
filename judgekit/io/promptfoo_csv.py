"""promptfoo's CSV output (``promptfoo eval -o results.csv``): each named metric's verdicts.

promptfoo (0.121 and 0.123 checked) writes one row per test run and, per prompt and
provider, a block of columns::

    [Description,] VAR..., [PROVIDER] PROMPT, Status, Score, Named Scores,
    Metric: NAME..., Grader Reason, Comment          (the block again per prompt)

Older releases (0.118 checked) write the vars (sorted by name) and one column per
prompt, each cell ``[PASS] (1.00)\n\nANSWER\n\nPass Reason: REASON`` (a failed test:
``[FAIL] (0.00)\n\nREASONS\n---\nANSWER\n\nFail Reason: REASON``; named scores as
``(0.50, NAME: 1.00, ...)``); both are read.

``Status`` is ``PASS``, ``FAIL`` or ``ERROR`` (the call failed; no verdict). Each named
metric (an assertion's ``metric: NAME``, e.g. two ``llm-rubric`` assertions named
``correctness`` and ``format``) is a grader and its own judge ``promptfoo-csv:NAME``,
its score the verdict (:mod:`judgekit.io.promptfoo_metrics`); the JSON import names the
same graders by the same metric, but the CSV names no grader model. A file without
named metrics, or ``grader="Status"``, gives the test's status over all its assertions
as one judge, :data:`CSV_GRADER` (``PASS`` -> the binary rubric's first label;
``Grader Reason`` its reasoning unless promptfoo's own "All assertions passed").

promptfoo prefixes a cell that a spreadsheet would run as a formula (``=``, ``@``, a
non-numeric ``+``/``-``) with ``'``; such a prefix is removed. The prompt column's
template is filled with the row's vars where it uses only ``{{ var }}``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from judgekit.errors import InputError
from judgekit.io.file_checks import read_text
from judgekit.io.promptfoo_metrics import ALL_PASSED, judge_of, legacy_scores, metric_verdict
from judgekit.io.promptfoo_tests import Answer, assemble, test_ids, test_numbers
from judgekit.io.tool_shape import At
from judgekit.io.tools import Grader, ToolRun, binary_label, pick_graders
from judgekit.types import Item, Rubric

#: The judge of a CSV's verdicts (the file does not name the grader's model).
CSV_GRADER = "promptfoo-csv-grader"
#: The columns after each prompt's output column, in promptfoo's order.
_BLOCK_HEAD = ("Status", "Score", "Named Scores")
_BLOCK_TAIL = ("Grader Reason", "Comment")
#: Columns a red-team eval adds after the last block.
_REDTEAM = ("Messages", "RedteamHistory", "RedteamTreeHistory", "pluginId", "strategyId",
            "sessionId", "sessionIds")
_STATUSES = ("PASS", "FAIL", "ERROR")
#: The grader that is the test's overall ``Status`` (the default without named metrics).
STATUS = "Status"
#: How the Status's verdicts are told from a metric's while reading (no metric is unnamed).
_OVERALL = ""
_METRIC = "Metric: "
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
#: What promptfoo skips before looking for a formula's first character (JavaScript's \s).
_LEADING_BLANKS = re.compile(r"^[\s\u200b\u200c\u200d\ufeff]+")
#: A finite number as JavaScript's Number() reads one with a sign (no hex, no Infinity).
_JS_NUMBER = re.compile(r"[+-](\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_PROMPT_COLUMN = re.compile(r"\[([^\]]*)\] (.*)", re.DOTALL)
#: An older release's cell: status, scores, then the answer and the grader's reason.
_LEGACY_CELL = re.compile(r"\[(PASS|FAIL|ERROR)\] \(([^)]*)\)(.*)", re.DOTALL)
_HEADER_FORM = ("[Description,] vars..., [provider] prompt, Status, Score, Named Scores, "
                "[Metric: NAME...,] Grader Reason, Comment")


@dataclass(frozen=True)
class _Block:
    """One prompt's columns: where its output, status and reason are."""

    output: int
    provider: str
    template: str
    end: int  # one past the block's last column
    #: (column index, metric name) of the block's ``Metric: NAME`` columns
    metrics: tuple[tuple[int, str], ...] = ()
    #: the older form: the output column's cell holds status, score, answer and reason
    legacy: bool = False


def _unescape(cell: str) -> str:
    """The cell as promptfoo had it before its spreadsheet-formula escaping (its
    ``escapeCsvFormula``: a ``'`` before a value whose first non-blank character is ``=``,
    ``@``, or ``+``/``-`` of something that is not a finite number)."""
    if not cell.startswith("'"):
        return cell
    rest = cell[1:]
    unpadded = _LEADING_BLANKS.sub("", rest)
    first = unpadded[:1]
    escaped = first in ("=", "@") or (first in ("+", "-") and not _JS_NUMBER.fullmatch(
        unpadded.strip()))
    return rest if escaped else cell


def _header_error(path: Path, message: str) -> NoReturn:
    raise InputError(f"{path}:1: not promptfoo's CSV header: {message} (promptfoo writes "
                     f"{_HEADER_FORM})")


def _blocks(path: Path, header: Sequence[str]) -> tuple[list[_Block], int]:
    """The prompt blocks of the header and the index of the first one's output column."""
    seen: set[str] = set()
    for name in header:
        if name in seen and name not in (*_BLOCK_HEAD, *_BLOCK_TAIL) and not name.startswith(
                _METRIC):
            _header_error(path, f"column {name!r} appears twice")
        seen.add(name)
    starts = [n - 1 for n, name in enumerate(header) if name == "Status"]
    if not starts:
        legacy = _legacy_blocks(header)
        if legacy:
            return legacy, legacy[0].output
    if not starts or starts[0] < 0:
        _header_error(path, "no 'Status' column after a prompt's output column, and no "
                      "'[provider] prompt' columns of an older release")
    blocks: list[_Block] = []
    for number, output in enumerate(starts):
        n = output + 1
        if tuple(header[n:n + 3]) != _BLOCK_HEAD:
            _header_error(path, f"column {n + 1} starts {header[n:n + 3]}, expected "
                          f"{list(_BLOCK_HEAD)}")
        n += 3
        metrics: list[tuple[int, str]] = []
        while n < len(header) and header[n].startswith(_METRIC):
            name = header[n][len(_METRIC):]
            if name in {m for _, m in metrics}:
                _header_error(path, f"column {n + 1} {header[n]!r}: a metric named twice "
                              "in one prompt")
            metrics.append((n, name))
            n += 1
        if tuple(header[n:n + 2]) != _BLOCK_TAIL:
            _header_error(path, f"column {n + 1} is {header[n] if n < len(header) else 'missing'!r}"
                          f", expected 'Grader Reason', 'Comment'")
        n += 2
        following = starts[number + 1] if number + 1 < len(starts) else len(header)
        if n != following and not (number + 1 == len(starts)
                                   and set(header[n:]) <= set(_REDTEAM)):
            _header_error(path, f"unexpected column {header[n]!r} after prompt {number}'s "
                          "'Comment'")
        provider, template = _prompt_label(header[output])
        blocks.append(_Block(output, provider, template, n, tuple(metrics)))
    return blocks, starts[0]


def _prompt_label(label: str) -> tuple[str, str]:
    """(provider, prompt template) of a prompt column's header ``[provider] template``."""
    match = _PROMPT_COLUMN.fullmatch(label)
    return (match.group(1), match.group(2)) if match else ("", label)


def _legacy_blocks(header: Sequence[str]) -> list[_Block]:
    """An older release's header: the trailing ``[provider] prompt`` columns, one per prompt."""
    first = len(header)
    while first > 0 and _PROMPT_COLUMN.fullmatch(header[first - 1]):
        first -= 1
    return [_Block(n, *_prompt_label(header[n]), end=n + 1, legacy=True)
            for n in range(first, len(header))]


def _rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and each non-blank record with the line it starts on."""
    text = read_text(path)  # UTF-8 checked, a leading BOM dropped
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, list[str]]] = []
    try:
        header = next(reader, None)
        if header is None:
            raise InputError(f"{path}: empty file: no promptfoo CSV header")
        start = reader.line_num + 1
        for cells in reader:
            number, start = start, reader.line_num + 1
            if any(cell.strip() for cell in cells):
                records.append((number, cells))
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV: {exc}") from None
    return [name.strip() for name in header], records


def read_csv(path: Path, rubric: Rubric, grader: str | None = None) -> ToolRun:
    """Items and, per test run and prompt, one verdict per named metric (or the test's
    Status, in a file without metrics or with ``grader="Status"``)."""
    header, records = _rows(path)
    blocks, first_output = _blocks(path, header)
    has_description = header[0] == "Description" and first_output > 0
    var_names = header[1 if has_description else 0:first_output]
    metrics = list(dict.fromkeys(name for block in blocks for _, name in block.metrics))
    if grader is not None and not blocks[0].legacy:  # an older file names its metrics in rows
        pick_graders(_offered(metrics), grader, path, "grader")
    if not records:
        raise InputError(f"{path}: no rows after the header: nothing to import")
    answers: list[Answer] = []
    candidates: dict[str, list[str | None]] = {}
    for test_index, (line, cells) in enumerate(records):
        at = At(f"{path}:{line}")
        if len(cells) != len(header):
            at.fail(f"{len(cells)} fields, but the header has {len(header)}")
        if not blocks[0].legacy:  # older releases wrote cells as they were
            cells = [_unescape(cell) for cell in cells]
        description = cells[0] if has_description else ""
        vars_ = dict(zip(var_names, cells[first_output - len(var_names):first_output],
                         strict=True))
        for name, value in vars_.items():
            at.key(f"column {name!r}").text(value)
        key = repr((description, sorted(vars_.items())))
        for prompt, block in enumerate(blocks):
            answer = _answer(at, header, cells, block, prompt, rubric, vars_, description)
            if answer is not None:  # a row without any prompt's result is no test's run
                answers.append(_keyed(answer, test_index, key))
                candidates.setdefault(key, [description.strip() or None])
    named = list(dict.fromkeys([*metrics, *(v["grader"] for a in answers for v in a.verdicts
                                            if v["grader"] != _OVERALL)]))
    wanted = _wanted(path, named, grader)
    if _OVERALL in wanted:
        binary_label(True, rubric.scale, "promptfoo")  # refuses a rubric that is not binary
    for answer in answers:
        answer.verdicts = [{k: v for k, v in verdict.items() if k != "grader"}
                           for verdict in answer.verdicts if verdict["grader"] in wanted]
    numbers = test_numbers(answers)
    items, verdicts = assemble(answers, test_ids(candidates, numbers), numbers)
    if not verdicts:
        what = "PASS or FAIL status" if wanted == [_OVERALL] else "metric score"
        raise InputError(f"{path}: no {what} in the file: nothing to import as a judge")
    return ToolRun("promptfoo", items, verdicts, {"tool_version": None, "form": "csv"},
                   graders=[_grader(name) for name in wanted])


def _offered(metrics: list[str]) -> list[str]:
    """The graders ``--grader`` picks from: the metrics, and the Status (unless a metric
    has that name)."""
    return metrics if STATUS in metrics else [*metrics, STATUS]


def _wanted(path: Path, metrics: list[str], grader: str | None) -> list[str]:
    """The graders to import: ``grader``, else every named metric, else the Status (as
    :data:`_OVERALL`)."""
    chosen = (metrics or [STATUS]) if grader is None else pick_graders(
        _offered(metrics), grader, path, "grader")
    return [_OVERALL if name == STATUS and STATUS not in metrics else name for name in chosen]


def _grader(name: str) -> Grader:
    if name == _OVERALL:
        return Grader("column", STATUS, CSV_GRADER,
                      {"grader_model": None, "verdict": "the test's Status over all its "
                       "assertions (promptfoo's CSV output)"})
    return Grader("metric", name, judge_of(name),
                  {"metric": name, "grader_model": None,
                   "verdict": "the metric's score (promptfoo's CSV output): pass where the "
                   "test passed every assertion, else by the score"})


def _keyed(answer: Answer, test_index: int, key: str) -> Answer:
    answer.test_index, answer.test_key = test_index, key
    return answer


def _answer(at: At, header: Sequence[str], cells: Sequence[str], block: _Block, prompt: int,
            rubric: Rubric, vars_: dict[str, str], description: str) -> Answer | None:
    """One prompt's result in this row, None when the row has none for that prompt; its
    verdicts carry ``grader`` (the Status or a metric's name), dropped once one is picked."""
    own = cells[block.output:block.end]
    if not any(own):
        return None
    column = at.key(f"column {header[block.output]!r}")
    if block.legacy:
        named = _legacy_cell(column, cells[block.output])
        scores = {name: (column, value) for name, value in legacy_scores(
            column, named["Named Scores"]).items()}
    else:
        named = {header[n]: cells[n] for n in range(block.output, block.end)}
        scores = {name: (at.key(f"column {header[n]!r}"), cells[n]) for n, name in block.metrics}
    status = named["Status"].strip()
    if status not in _STATUSES:
        at.key("column 'Status'").fail(f"expected PASS, FAIL or ERROR, got {status!r}")
    response = column.text(named.get("Output", cells[block.output]))
    reason = at.key("column 'Grader Reason'").text(named["Grader Reason"])
    item = Item(id="", input=_rendered(block.template, vars_),
                response=response, reference=_reference(vars_))
    answer = Answer(test_index=0, test_key="", column=(prompt, block.provider), item=item,
                    fail=at.fail, vars=dict(vars_))
    if status == "ERROR":  # the call under test failed: an item without a verdict
        return answer
    for metric, (place, cell) in scores.items():
        verdict = metric_verdict(place, metric, cell, rubric.scale, status=status, reason=reason)
        if verdict is not None:
            answer.verdicts.append({**verdict, "grader": metric})
    if rubric.scale.kind != "binary":  # a pass/fail Status needs a binary rubric (read_csv)
        return answer
    raw: dict[str, Any] = {"status": status, "score": named["Score"] or None,
                           "reason": reason or None}
    if named["Named Scores"]:
        raw["named_scores"] = named["Named Scores"]
    if named["Comment"]:
        raw["comment"] = at.key("column 'Comment'").text(named["Comment"])
    answer.verdicts.append({
        "grader": _OVERALL,
        "judge": CSV_GRADER,
        "label": binary_label(status == "PASS", rubric.scale, "promptfoo"),
        "reasoning": None if reason in ("", ALL_PASSED) else reason,
        "raw": raw,
    })
    return answer


def _legacy_cell(at: At, cell: str) -> dict[str, str]:
    """An older release's cell as the newer columns (Status, Score, Named Scores, Output,
    Grader Reason, Comment); the answer of a failed test follows its reasons and ``---``."""
    match = _LEGACY_CELL.fullmatch(cell)
    if match is None:
        shown = cell[:40] + ("..." if len(cell) > 40 else "")
        at.fail(f"expected an older promptfoo's '[PASS] (score)' or '[FAIL] (score)' cell, "
                f"got {shown!r}")
    status, scores, rest = match.groups()
    score, _, named = scores.partition(", ")
    marker = "\n\nPass Reason: " if status == "PASS" else "\n\nFail Reason: "
    cut = rest.rfind(marker)
    text, reason = (rest[:cut], rest[cut + len(marker):]) if cut >= 0 else (rest, "")
    text = text.removeprefix("\n\n")
    if status != "PASS" and "\n---\n" in text:
        text = text.split("\n---\n", 1)[1]
    return {"Status": status, "Score": score, "Named Scores": named, "Output": text,
            "Grader Reason": reason, "Comment": ""}


def _rendered(template: str, vars_: dict[str, str]) -> str:
    """The prompt as sent where the template uses only ``{{ var }}`` of known vars; else the
    template followed by the vars (what the CSV holds of the prompt)."""
    filled = _VAR.sub(lambda m: vars_.get(m.group(1), m.group(0)), template)
    if "{{" not in _VAR.sub("", template) and "{%" not in template and all(
            m.group(1) in vars_ for m in _VAR.finditer(template)):
        return filled
    return "\n".join([template, "", *(f"{name}: {value}" for name, value in vars_.items())])


def _reference(vars_: dict[str, str]) -> str | None:
    for name in ("expected", "reference", "answer"):
        if vars_.get(name):
            return vars_[name]
    return None
