"""judgekit: calibrate an LLM judge against humans before you trust it.

The curated public API. Names are resolved lazily (PEP 562) so that
``judgekit --help`` does not pay for numpy, scipy and the openai client.

    >>> import judgekit
    >>> rubric = judgekit.load_rubric("correctness")        # doctest: +SKIP
    >>> store = judgekit.open_store("judgekit.db")           # doctest: +SKIP
    >>> report = judgekit.build_report(store, rubric, judgekit.ReportOptions())  # doctest: +SKIP
    >>> print(judgekit.render_report(report, "text"))      # doctest: +SKIP

Statistics live in :mod:`judgekit.stats`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "EndpointError": ("judgekit.errors", "EndpointError"),
    "InputError": ("judgekit.errors", "InputError"),
    "Item": ("judgekit.types", "Item"),
    "JudgeSpec": ("judgekit.clients", "JudgeSpec"),
    "JudgekitError": ("judgekit.errors", "JudgekitError"),
    "Judgment": ("judgekit.types", "Judgment"),
    "Label": ("judgekit.types", "Label"),
    "LocalJudge": ("judgekit.judging.local", "LocalJudge"),
    "ReportOptions": ("judgekit.report", "ReportOptions"),
    "Rubric": ("judgekit.types", "Rubric"),
    "RubricError": ("judgekit.errors", "RubricError"),
    "RunSummary": ("judgekit.judging.runner", "RunSummary"),
    "SamplingParams": ("judgekit.types", "SamplingParams"),
    "Scale": ("judgekit.types", "Scale"),
    "Store": ("judgekit.store", "Store"),
    "StoreError": ("judgekit.errors", "StoreError"),
    "Verdict": ("judgekit.types", "Verdict"),
    "arun_judgments": ("judgekit.judging.runner", "arun_judgments"),
    "build_report": ("judgekit.report", "build_report"),
    "from_frame": ("judgekit.io.frames", "from_frame"),
    "import_verdicts": ("judgekit.io.verdict_store", "import_verdicts"),
    "load_items": ("judgekit.io.items", "load_items"),
    "load_rubric": ("judgekit.rubrics", "load_rubric"),
    "open_store": ("judgekit.store", "open_store"),
    "parse_completion": ("judgekit.parsing", "parse_completion"),
    "render_messages": ("judgekit.rubrics", "render_messages"),
    "render_report": ("judgekit.report", "render"),
    "run_judgments": ("judgekit.judging.runner", "run_judgments"),
    "to_frame": ("judgekit.io.frames", "to_frame"),
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'judgekit' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value  # cache: later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return __all__
