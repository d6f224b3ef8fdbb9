"""DeepEval results as judge runs: each LLM-graded metric a judge.

Three forms of one run are read:

- ``.deepeval/.latest_test_run.json``, which every ``evaluate()`` writes:
  ``{"testRunData": TEST_RUN}`` (``.latest_run_full.json`` beside it is TEST_RUN bare);
- ``DEEPEVAL_RESULTS_FOLDER``'s ``test_run_*.json``: TEST_RUN bare;
- ``evaluate()``'s ``EvaluationResult`` dumped to JSON (``result.model_dump_json()``,
  what a notebook user holds): ``{"test_results": [...]}`` with snake_case fields.

TEST_RUN is ``{"testCases": [{"name", "input", "actualOutput", "expectedOutput",
"metricsData": [{"name", "threshold", "success", "score", "reason",
"evaluationModel", "verboseLogs", "error"}]}]}``. Each test case is an item
(``name`` as id, else its position); every metric with an evaluation model is a
grader and its own judge (``metric=`` picks one): ``success`` on a binary rubric's
first/second label, a metric ``error`` a ``parse_error``; ``reason`` is the
reasoning, ``{"score", "threshold", "success", "reason"}`` the raw output. A
metric's criteria or evaluation steps (the start of ``verboseLogs``, up to
``Score:``) are recorded by hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.file_checks import load_json
from judgekit.io.tool_shape import At
from judgekit.io.tools import Grader, ToolRun, binary_label, judge_names, pick_graders, sha256_text
from judgekit.types import Item, Rubric

#: camelCase (test runs) -> snake_case (EvaluationResult) of the fields read.
_SNAKE = {"testCases": "test_results", "actualOutput": "actual_output",
          "expectedOutput": "expected_output", "metricsData": "metrics_data",
          "evaluationModel": "evaluation_model", "verboseLogs": "verbose_logs", "order": "index"}
FORMS = (".deepeval/.latest_test_run.json, a test_run_*.json of DEEPEVAL_RESULTS_FOLDER, "
         "or evaluate()'s result as JSON (result.model_dump_json())")


class _Fields:
    """Field names of one form: camelCase test runs or snake_case evaluation results."""

    def __init__(self, snake: bool) -> None:
        self.snake = snake

    def __call__(self, name: str) -> str:
        return _SNAKE.get(name, name) if self.snake else name


def _load(path: Path) -> tuple[At, list[tuple[At, dict[str, Any]]], _Fields]:
    data = load_json(path)
    at = At(path)
    if isinstance(data, dict) and "testRunData" in data:
        at = at.key("testRunData")
        data = data["testRunData"]
        if not isinstance(data, dict):
            at.fail("expected an object (a DeepEval test run)")
    if isinstance(data, dict) and isinstance(data.get("test_results"), list):
        fields = _Fields(snake=True)
    elif isinstance(data, dict) and isinstance(data.get("testCases"), list):
        fields = _Fields(snake=False)
    else:
        raise InputError(f"{path}: not a DeepEval result (no testCases or test_results list); "
                         f"import {FORMS}")
    return at, at.each_obj(data, fields("testCases")), fields


def _steps(verbose: Any) -> str | None:
    if not isinstance(verbose, str) or "Score:" not in verbose:
        return None
    return verbose[: verbose.rindex("Score:")].strip()


def read(path: Path, rubric: Rubric, metric: str | None = None) -> ToolRun:
    """Items (one per test case) and one verdict per case and LLM-graded metric."""
    _, cases, f = _load(path)
    items: list[Item] = []
    seen: dict[str, int] = {}
    graded: list[tuple[str, str, str, At, dict[str, Any]]] = []
    for index, (at, case) in enumerate(cases):
        item_id = at.ident(case, "name") or f"case{index}"
        if item_id in seen:
            at.key("name").fail(f"test case name {item_id!r} repeats case {seen[item_id]}")
        seen[item_id] = index
        items.append(Item(
            id=item_id, input=at.optional_text(case, "input") or "",
            response=at.optional_text(case, f("actualOutput")) or "",
            reference=at.optional_text(case, f("expectedOutput")),
            meta={"deepeval": {"order": at.integer(case, f("order"), index)}},
        ))
        for place, data in at.each_obj(case, f("metricsData")):
            name = place.string(data, "name")
            model = place.string(data, f("evaluationModel"))
            if name and model:
                graded.append((name, model, item_id, place, data))
    names = list(dict.fromkeys(name for name, *_ in graded))
    if not names:
        raise InputError(f"{path}: no LLM-graded metric (none has an evaluation model)")
    wanted = set(pick_graders(names, metric, path, "metric"))
    judges = judge_names((name, model) for name, model, *_ in graded)
    verdicts: list[dict[str, Any]] = []
    facts: dict[str, dict[str, set[Any]]] = {}
    for name, model, item_id, place, data in graded:
        if name not in wanted:
            continue
        judge = judges[(name, model)]
        fact = facts.setdefault(judge, {"metric": set(), "model": set(), "steps": set(),
                                         "threshold": set()})
        fact["metric"].add(name)
        fact["model"].add(model)
        steps = _steps(data.get(f("verboseLogs")))
        if steps:
            fact["steps"].add(steps)
        threshold = data.get("threshold")
        if isinstance(threshold, int | float) and not isinstance(threshold, bool):
            fact["threshold"].add(float(threshold))
        raw = {k: data.get(k) for k in ("score", "threshold", "success", "reason")}
        error = data.get("error")
        row: dict[str, Any] = {"item_id": item_id, "judge": judge, "raw": place.text(raw),
                               "reasoning": (place.optional_text(data, "reason")
                                             or place.optional_text(data, "error") or None)}
        if error or not isinstance(data.get("success"), bool):
            row["status"] = "parse_error"
        else:
            row["label"] = binary_label(data["success"], rubric.scale, "DeepEval")
        verdicts.append(row)
    graders = [Grader("metric", ", ".join(sorted(fact["metric"])), judge, _provenance(fact))
               for judge, fact in facts.items()]
    return ToolRun("deepeval", items, verdicts, {}, graders=graders)


def _provenance(fact: dict[str, set[Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {
        "metric": ", ".join(sorted(fact["metric"])),
        "grader_model": ", ".join(sorted(fact["model"])),
        "threshold": next(iter(fact["threshold"])) if len(fact["threshold"]) == 1 else None,
    }
    if len(fact["steps"]) == 1:
        found["grader_prompt_sha256"] = sha256_text(next(iter(fact["steps"])))
    return found
