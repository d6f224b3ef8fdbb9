"""DeepEval test runs (``DEEPEVAL_RESULTS_FOLDER``'s ``test_run_*.json``) as a judge run.

A test run is ``{"testCases": [{"name", "input", "actualOutput", "expectedOutput",
"metricsData": [{"name", "threshold", "success", "score", "reason",
"evaluationModel", "verboseLogs", "error"}]}], "metricsScores": [...]}``. Each
test case is an item (``name`` as id, else its position); the verdict of one
LLM-graded metric (the first with an ``evaluationModel``, or ``metric=``) is its
``success`` on a binary rubric's first/second label, a metric ``error`` a
``parse_error``; ``reason`` is the reasoning, ``{"score", "threshold",
"success", "reason"}`` the raw output, the evaluation model the judge. The
metric's criteria or evaluation steps (the start of ``verboseLogs``, up to
``Score:``) are recorded by hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.records import load_json
from judgekit.io.tools import ToolRun, binary_label, sha256_text
from judgekit.types import Item, Rubric


def _load(path: Path) -> list[dict[str, Any]]:
    data = load_json(path)
    cases = data.get("testCases") if isinstance(data, dict) else None
    if not isinstance(cases, list):
        raise InputError(f"{path}: not a DeepEval test run (no testCases list; set "
                         "DEEPEVAL_RESULTS_FOLDER to have evaluate() save one)")
    return [c for c in cases if isinstance(c, dict)]


def _steps(verbose: Any) -> str | None:
    if not isinstance(verbose, str) or "Score:" not in verbose:
        return None
    return verbose[: verbose.rindex("Score:")].strip()


def read(path: Path, rubric: Rubric, metric: str | None = None) -> ToolRun:
    """Items (one per test case) and one verdict per case from the chosen metric."""
    cases = _load(path)
    names = [m.get("name") for c in cases for m in c.get("metricsData") or []
             if m.get("evaluationModel")]
    chosen = metric or (names[0] if names else None)
    if chosen is None:
        raise InputError(f"{path}: no LLM-graded metric (none has an evaluationModel)")
    items: list[Item] = []
    verdicts: list[dict[str, Any]] = []
    models: set[str] = set()
    prompts: set[str] = set()
    thresholds: set[float] = set()
    for index, case in enumerate(cases):
        item_id = str(case.get("name") or f"case{index}")
        items.append(Item(
            id=item_id, input=str(case.get("input") or ""),
            response=str(case.get("actualOutput") or ""),
            reference=None if case.get("expectedOutput") is None else str(case["expectedOutput"]),
            meta={"deepeval": {"order": case.get("order", index)}},
        ))
        data = next((m for m in case.get("metricsData") or [] if m.get("name") == chosen), None)
        if data is None:
            continue
        judge = str(data.get("evaluationModel") or f"deepeval:{chosen}")
        models.add(judge)
        steps = _steps(data.get("verboseLogs"))
        if steps:
            prompts.add(steps)
        if isinstance(data.get("threshold"), int | float):
            thresholds.add(float(data["threshold"]))
        raw = {k: data.get(k) for k in ("score", "threshold", "success", "reason")}
        row: dict[str, Any] = {"item_id": item_id, "judge": judge, "raw": raw,
                               "reasoning": data.get("reason") or data.get("error") or None}
        if data.get("error") or not isinstance(data.get("success"), bool):
            row["status"] = "parse_error"
        else:
            row["label"] = binary_label(data["success"], rubric.scale, "DeepEval")
        verdicts.append(row)
    provenance: dict[str, Any] = {"metric": chosen,
                                  "grader_model": ", ".join(sorted(models)) or None,
                                  "threshold": thresholds.pop() if len(thresholds) == 1 else None}
    if len(prompts) == 1:
        provenance["grader_prompt_sha256"] = sha256_text(prompts.pop())
    return ToolRun("deepeval", items, verdicts, provenance)
