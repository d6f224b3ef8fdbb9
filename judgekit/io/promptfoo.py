"""promptfoo's ``promptfoo eval -o results.json`` output: model-graded assertions as a judge run.

The file is ``{"evalId", "results": {"version", "results": [...]}, "config",
"metadata": {"promptfooVersion"}}``. Each result is one test case run through one
prompt and provider: ``testIdx``, ``promptIdx``, ``provider.id``, ``vars``,
``prompt.raw`` (the rendered prompt), ``response.output`` (the answer) and
``gradingResult.componentResults`` (one per assertion). A model-graded
assertion (``llm-rubric`` and the other graders listed in
:data:`MODEL_GRADED`) is the judge's verdict: ``pass`` -> the binary rubric's
first label, else its second; ``reason`` is the reasoning; ``{"pass", "score",
"reason"}`` is the raw output. The grader is ``testCase.options.provider``
(promptfoo's default grader when absent), its prompt ``metadata.renderedGradingPrompt``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.records import load_json
from judgekit.io.tools import ToolRun, binary_label, sha256_text
from judgekit.types import Item, Rubric

#: promptfoo assertion types whose verdict an LLM grader gives.
MODEL_GRADED = ("llm-rubric", "model-graded-closedqa", "factuality", "g-eval",
                "answer-relevance", "context-faithfulness", "context-recall",
                "context-relevance", "select-best", "search-rubric")
DEFAULT_GRADER = "promptfoo-default-grader"


def _load(path: Path) -> dict[str, Any]:
    data = load_json(path)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, dict) or not isinstance(results.get("results"), list):
        raise InputError(f"{path}: not a promptfoo results file (no results.results list; "
                         "write one with promptfoo eval -o results.json)")
    return data


def _grader(result: dict[str, Any]) -> str:
    provider = ((result.get("testCase") or {}).get("options") or {}).get("provider")
    if isinstance(provider, dict) and isinstance(provider.get("id"), str):
        return str(provider["id"])
    if isinstance(provider, str):
        return provider
    return DEFAULT_GRADER


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read(path: Path, rubric: Rubric) -> ToolRun:
    """Items (one per test, prompt and provider) and their model-graded verdicts."""
    data = _load(path)
    results = data["results"]["results"]
    several = len({(r.get("promptIdx"), (r.get("provider") or {}).get("id")) for r in results}) > 1
    items: list[Item] = []
    verdicts: list[dict[str, Any]] = []
    graders: set[str] = set()
    prompts: set[str] = set()
    for number, result in enumerate(results, start=1):
        where = f"{path}: results[{number - 1}]"
        test = result.get("testIdx", number - 1)
        provider = (result.get("provider") or {}).get("id", "")
        item_id = f"t{test}" + (f"-p{result.get('promptIdx', 0)}-{provider}" if several else "")
        response = (result.get("response") or {}).get("output")
        vars_ = result.get("vars") or {}
        item = Item(
            id=item_id,
            input=str((result.get("prompt") or {}).get("raw", "")),
            response="" if response is None else _text(response),
            reference=None if vars_.get("expected") is None else str(vars_["expected"]),
            meta={"promptfoo": {"test_index": test, "provider": provider, "vars": vars_}},
        )
        items.append(item)
        graded = [c for c in (result.get("gradingResult") or {}).get("componentResults") or []
                  if (c.get("assertion") or {}).get("type") in MODEL_GRADED]
        if not graded:
            continue
        component = graded[0]
        judge = _grader(result)
        graders.add(judge)
        rendered = (component.get("metadata") or {}).get("renderedGradingPrompt")
        if isinstance(rendered, str):
            prompts.add(_system_part(rendered))
        passed = component.get("pass")
        if not isinstance(passed, bool):
            raise InputError(f"{where}: a model-graded assertion without a boolean 'pass'")
        raw = {k: component.get(k) for k in ("pass", "score", "reason")}
        verdicts.append({
            "item_id": item_id, "judge": judge, "label": binary_label(passed, rubric.scale,
                                                                      "promptfoo"),
            "reasoning": component.get("reason") or None, "raw": raw,
        })
    provenance: dict[str, Any] = {
        "tool_version": (data.get("metadata") or {}).get("promptfooVersion"),
        "eval_id": data.get("evalId"),
        "grader_model": ", ".join(sorted(graders)) or None,
        "assertions": sorted({str((c.get("assertion") or {}).get("value"))
                              for r in results for c in
                              (r.get("gradingResult") or {}).get("componentResults") or []
                              if (c.get("assertion") or {}).get("type") in MODEL_GRADED}),
    }
    if len(prompts) == 1:
        provenance["grader_prompt_sha256"] = sha256_text(prompts.pop())
    return ToolRun("promptfoo", items, verdicts, provenance)


def _system_part(rendered: str) -> str:
    """The grading prompt's fixed part (its system message), the same for every item."""
    try:
        messages = json.loads(rendered)
    except json.JSONDecodeError:
        return rendered
    if isinstance(messages, list):
        system = [m.get("content") for m in messages
                  if isinstance(m, dict) and m.get("role") == "system"]
        if system and isinstance(system[0], str):
            return system[0]
    return rendered
