"""An OpenAI Batch API output file made elsewhere, imported as a judge run.

The lines are read by :mod:`judgekit.judging.batch.lines` (the one Batch output
parser) and each answer is parsed with the rubric's parser exactly as a live
call's, so a refusal, a truncated answer or one without a verdict is a failure,
never a score. The file holds no items: ``custom_id`` names an item already in
the store, as ``ITEM_ID``, optionally followed by ``::BA`` (the pair was sent
swapped; the label names the slots as shown) and ``::sN`` (sample N). The judge
is the model the answers name (``--judge`` overrides it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgekit.io.tools import ToolRun
from judgekit.judging.batch.lines import line_result, read_output_lines
from judgekit.types import Rubric

_CUSTOM_ID = re.compile(r"^(?P<item>.+?)(?:::(?P<order>AB|BA))?(?:::s(?P<sample>\d+))?$")


def split_custom_id(custom_id: str) -> tuple[str, str, int]:
    """``(item id, order, sample)`` of a custom id ``ITEM[::AB|::BA][::sN]``."""
    match = _CUSTOM_ID.match(custom_id)
    assert match is not None  # the pattern matches any non-empty string
    return match["item"], match["order"] or "AB", int(match["sample"] or 0)


def read(path: Path, rubric: Rubric) -> ToolRun:
    """One verdict record per output line (answered or failed)."""
    verdicts: list[dict[str, Any]] = []
    models: set[str] = set()
    for line in read_output_lines(path):
        result = line_result(line, rubric.scale, structured=False)
        item_id, order, sample = split_custom_id(line.custom_id)
        model = result.model_returned or (
            line.body.get("model") if isinstance(line.body, dict) else None)
        if isinstance(model, str):
            models.add(model)
        row: dict[str, Any] = {"item_id": item_id, "order": order, "sample": sample,
                               "judge": model or "openai-batch", "status": result.status}
        if result.verdict is not None:
            row["raw"] = result.raw_text
            if result.verdict.status == "ok":
                row["label"] = result.verdict.label
                row["reasoning"] = result.verdict.reasoning
            else:
                row["reasoning"] = result.verdict.detail
        elif result.failure is not None:
            row["reasoning"] = result.failure.message
        verdicts.append(row)
    provenance = {"grader_model": ", ".join(sorted(models)) or None}
    return ToolRun("openai-batch", [], verdicts, provenance, needs_stored_items=True)
