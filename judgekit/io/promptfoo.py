"""promptfoo's ``promptfoo eval -o FILE`` output: model-graded assertions as judge runs.

promptfoo writes the same results as ``.json`` (``{"evalId", "results": {"version",
"results": [...]}, "config", "metadata": {"promptfooVersion"}}``), ``.yaml`` (the
same document; needs PyYAML) and ``.jsonl`` (one result per line, no metadata). Its
``.csv`` (each test's status and grader reason, no grader model) is read by
:mod:`judgekit.io.promptfoo_csv`; ``.html`` is refused with the forms that are read.

Each result is one test case run through one prompt and provider: ``testIdx``,
``promptIdx``, ``provider.id``, ``vars``, ``prompt.raw`` (the rendered prompt),
``response.output`` (the answer) and ``gradingResult.componentResults`` (one per
assertion). A model-graded assertion (``llm-rubric`` and the others of
:data:`MODEL_GRADED`) is a grader's verdict: ``pass`` -> the binary rubric's first
label, else its second; ``reason`` is the reasoning, ``score`` (the grader's 0..1) the
verdict's score; ``{"pass", "score", "reason"}`` the raw output. A grader is named by
the assertion's ``metric`` (else its type, with ``#2``, ``#3`` for a type repeated in
one test); each is its own judge. Its model is ``testCase.options.provider`` per row,
else promptfoo's default grader of the file's promptfoo version (the default changes
between releases). The CSV output names the same graders by their metric
(:mod:`judgekit.io.promptfoo_metrics`).

Item ids are the test's ``metadata.id`` (else ``description``) when unique across the
file's tests, else ``t<testIdx>`` of the test's first run; several prompts or providers
add ``-p<promptIdx>-<provider>``. The runs of one test (``--repeat N``) are one item
with N samples (:mod:`judgekit.io.promptfoo_tests`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.file_checks import load_json, read_text
from judgekit.io.jsonline import loads_document, loads_line
from judgekit.io.promptfoo_tests import Answer, assemble, test_ids, test_numbers
from judgekit.io.tool_shape import At
from judgekit.io.tools import Grader, ToolRun, binary_label, judge_names, pick_graders, sha256_text
from judgekit.types import Item, Rubric

#: promptfoo assertion types whose verdict an LLM grader gives.
MODEL_GRADED = ("llm-rubric", "model-graded-closedqa", "factuality", "g-eval",
                "answer-relevance", "context-faithfulness", "context-recall",
                "context-relevance", "select-best", "search-rubric")
DEFAULT_GRADER = "promptfoo-default-grader"
FORMS = "-o results.json, results.jsonl, results.yaml or results.csv"


def _yaml(path: Path) -> Any:
    try:
        import yaml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise InputError(f"{path}: reading promptfoo's YAML output needs PyYAML: "
                         "pip install 'judgekit[yaml]' (or write -o results.json)") from None
    try:
        data = yaml.safe_load(read_text(path))
        # As JSON: YAML's timestamps and non-string keys become what the .json output holds,
        # and a lone surrogate (YAML's "\ud800") is refused as in a JSON file.
        return loads_document(json.dumps(data, default=str))
    except TypeError as exc:
        raise InputError(f"{path}: not a promptfoo results document ({exc})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid YAML: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}"
                         ) from None
    except RecursionError:
        raise InputError(f"{path}: invalid YAML: nested too deeply") from None


def _jsonl(path: Path) -> Iterator[tuple[At, Any]]:
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield At(f"{path}:{number}"), loads_line(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise InputError(f"{path}:{number}: invalid JSON: nested too deeply") from None


def _load(path: Path) -> tuple[list[tuple[At, dict[str, Any]]], dict[str, Any]]:
    """The results (each with its place in the file) and the document around them."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".xml", ".txt"):
        raise InputError(f"{path}: promptfoo's {suffix} output has no grader verdicts; "
                         f"write {FORMS}")
    if suffix in (".jsonl", ".ndjson"):
        results = []
        for at, value in _jsonl(path):
            if not isinstance(value, dict):
                at.fail("expected a promptfoo result object")
            results.append((at, value))
        return results, {}
    data = _yaml(path) if suffix in (".yaml", ".yml") else load_json(path)
    top = At(path)
    inner = data.get("results") if isinstance(data, dict) else None
    if not isinstance(inner, dict) or not isinstance(inner.get("results"), list):
        raise InputError(f"{path}: not a promptfoo results file (no results.results list; "
                         f"write one with promptfoo eval {FORMS})")
    return top.key("results").each_obj(inner, "results"), data


def _provider_id(at: At, result: dict[str, Any]) -> str:
    return at.key("provider").string(at.obj(result, "provider"), "id") or ""


def _grader_model(at: At, result: dict[str, Any], default: str) -> str:
    test = at.obj(result, "testCase")
    provider = at.key("testCase").obj(test, "options").get("provider")
    if isinstance(provider, dict) and isinstance(provider.get("id"), str) and provider["id"]:
        return str(provider["id"])
    if isinstance(provider, str) and provider:
        return provider
    return default


def _assertion_names(at: At, components: list[tuple[At, dict[str, Any]]]
                     ) -> list[tuple[str, At, dict[str, Any], dict[str, Any]]]:
    """The model-graded components of one result, each with its grader name."""
    found = []
    seen: dict[str, int] = {}
    for place, component in components:
        assertion = place.obj(component, "assertion")
        kind = assertion.get("type")
        if kind not in MODEL_GRADED:
            continue
        metric = assertion.get("metric")
        base = metric if isinstance(metric, str) and metric else str(kind)
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        found.append((name, place, component, assertion))
    return found


#: Assertion types whose value is the expected answer (a reference), not a rubric.
_REFERENCE_ASSERTIONS = ("factuality", "model-graded-closedqa", "equals", "similar")


def _reference(at: At, vars_: dict[str, Any], test: dict[str, Any]) -> str | None:
    """The expected answer: ``vars.expected`` (or ``reference``, ``answer``), else the value
    of a ``factuality``/``equals`` assertion, which names it."""
    for name in ("expected", "reference", "answer"):
        if vars_.get(name) is not None:
            return at.key("vars").optional_text(vars_, name)
    for place, assertion in at.key("testCase").each_obj(test, "assert"):
        if assertion.get("type") in _REFERENCE_ASSERTIONS and isinstance(
                assertion.get("value"), str):
            return place.text(assertion["value"], "value")
    return None


def _test_key(at: At, result: dict[str, Any]) -> str:
    """The test a result ran: its test case and vars, the same for each ``--repeat`` run."""
    return json.dumps([at.obj(result, "testCase"), at.obj(result, "vars")], sort_keys=True,
                      default=str)


def _ids(results: list[tuple[At, dict[str, Any]]], numbers: dict[str, int]) -> dict[str, str]:
    """test key -> item id: the test's metadata id, else description, when unique."""
    candidates: dict[str, list[str | None]] = {}
    for at, result in results:
        key = _test_key(at, result)
        if key in candidates:
            continue
        case = at.obj(result, "testCase")
        metadata = case.get("metadata")
        found: list[str | None] = []
        for value in (metadata.get("id") if isinstance(metadata, dict) else None,
                      case.get("description")):
            if isinstance(value, int) and not isinstance(value, bool):
                value = str(value)
            found.append(value.strip() if isinstance(value, str) and value.strip() else None)
        candidates[key] = found
    return test_ids(candidates, numbers)


def read(path: Path, rubric: Rubric, grader: str | None = None) -> ToolRun:
    """Items (one per test, prompt and provider) and each model-graded assertion's verdicts;
    the runs of one test (``--repeat``) are samples of one item (:mod:`promptfoo_tests`)."""
    if path.suffix.lower() == ".csv":
        from judgekit.io.promptfoo_csv import read_csv

        return read_csv(path, rubric, grader)
    results, data = _load(path)
    version = At(path).obj(data, "metadata").get("promptfooVersion")
    default = DEFAULT_GRADER + (f"@{version}" if isinstance(version, str) else "")
    answers: list[Answer] = []
    graded: list[tuple[str, str, Answer, At, dict[str, Any], dict[str, Any]]] = []
    for number, (at, result) in enumerate(results):
        test = at.integer(result, "testIdx", number)
        provider_id = _provider_id(at, result)
        vars_ = at.obj(result, "vars")
        response = at.obj(result, "response").get("output")
        answer = Answer(
            test_index=test, test_key=_test_key(at, result),
            column=(at.integer(result, "promptIdx", 0), provider_id),
            item=Item(
                id="",
                input=at.key("prompt").optional_text(at.obj(result, "prompt"), "raw") or "",
                response="" if response is None else at.key("response").text(response, "output"),
                reference=_reference(at, vars_, at.obj(result, "testCase")),
            ),
            vars=vars_, fail=at.fail,
        )
        answers.append(answer)
        components = at.key("gradingResult").each_obj(at.obj(result, "gradingResult"),
                                                       "componentResults")
        model = _grader_model(at, result, default)
        for name, place, component, assertion in _assertion_names(at, components):
            graded.append((name, model, answer, place, component, assertion))
    names = list(dict.fromkeys(name for name, *_ in graded))
    if not names:
        raise InputError(f"{path}: no model-graded assertion in the file "
                         f"({', '.join(MODEL_GRADED[:3])}, ...): nothing to import as a judge")
    wanted = set(pick_graders(names, grader, path, "assertion"))
    judges = judge_names((name, model) for name, model, *_ in graded)
    facts: dict[str, dict[str, set[str]]] = {}
    for name, model, answer, place, component, assertion in graded:
        if name not in wanted:
            continue
        passed = component.get("pass")
        if not isinstance(passed, bool):
            place.fail("a model-graded assertion without a boolean 'pass'")
        judge = judges[(name, model)]
        fact = facts.setdefault(judge, {"name": set(), "model": set(), "prompt": set(),
                                         "rubric": set()})
        fact["name"].add(name)
        fact["model"].add(model)
        fact["rubric"].add(place.key("assertion").text(assertion.get("value"), "value"))
        rendered = place.obj(component, "metadata").get("renderedGradingPrompt")
        if isinstance(rendered, str):
            fact["prompt"].add(_system_part(rendered))
        verdict: dict[str, Any] = {
            "judge": judge,
            "label": binary_label(passed, rubric.scale, "promptfoo"),
            "reasoning": place.optional_text(component, "reason") or None,
            "raw": {k: component.get(k) for k in ("pass", "score", "reason")},
        }
        score = component.get("score")
        # the grader's 0..1 score, as the CSV's metric columns hold it (promptfoo_metrics)
        if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
            verdict["score"] = float(score)
        answer.verdicts.append(verdict)
    numbers = test_numbers(answers)
    items, verdicts = assemble(answers, _ids(results, numbers), numbers)
    graders = [Grader("assertion", ", ".join(sorted(f["name"])), judge, _provenance(f))
               for judge, f in facts.items()]
    provenance: dict[str, Any] = {"tool_version": version if isinstance(version, str) else None,
                                  "eval_id": data.get("evalId")}
    return ToolRun("promptfoo", items, verdicts, provenance, graders=graders)


def _provenance(fact: dict[str, set[str]]) -> dict[str, Any]:
    found: dict[str, Any] = {"assertion": ", ".join(sorted(fact["name"])),
                             "grader_model": ", ".join(sorted(fact["model"])),
                             "assertions": sorted(fact["rubric"])}
    if len(fact["prompt"]) == 1:
        found["grader_prompt_sha256"] = sha256_text(next(iter(fact["prompt"])))
    return found


def _system_part(rendered: str) -> str:
    """The grading prompt's fixed part (its system message), the same for every item."""
    try:
        messages = json.loads(rendered)
    except (json.JSONDecodeError, RecursionError):
        return rendered
    if isinstance(messages, list):
        system = [m.get("content") for m in messages
                  if isinstance(m, dict) and m.get("role") == "system"]
        if system and isinstance(system[0], str):
            return system[0]
    return rendered
