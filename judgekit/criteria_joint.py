"""Every criterion of a rubric file in one judge call: the prompt, the answer's schema, identity.

A criteria file without ``per_call = true`` (:mod:`judgekit.criteria`) is judged
with one call per item that names every criterion, its description and its
levels, and asks for one JSON object with a verdict per criterion::

    {"coherence": {"reasoning": "...", "verdict": "4"},
     "fluency": {"reasoning": "...", "verdict": "3"}}

The call uses the file's shared ``[prompt]``: its ``{scale}`` placeholder becomes
the list of criteria with their levels (without ``{scale}`` the list goes before
the answer-format line), and the answer-format line asks for the object above.
Each criterion's verdict is stored as a judgment of that criterion's derived
rubric (``NAME.CRITERION``), so every command reads it as it reads a verdict of
one call. What was sent depends on the whole file, so :attr:`JointPlan.whole`
carries the file's text and sha256: the store keeps the text, and every
judgment of a joint call names that sha256 (see :mod:`judgekit.judging.joint`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judgekit.criteria import criteria_data, is_joint, load_criteria, split_reference
from judgekit.errors import RubricError
from judgekit.prompts import (
    parse_template,
    placeholders,
    render_messages,
    render_scale,
    verdict_json_schema,
)
from judgekit.types import Item, Rubric, Scale, canonical_json, sha256_text

#: Heads the list of criteria in the prompt.
CRITERIA_HEADING = "Judge the response on each criterion below, each on its own scale."


@dataclass(frozen=True)
class JointPlan:
    """One call per item for every criterion of a file.

    ``whole``: the file as a rubric record (its name, version, shared prompt, full
    text and sha256; its scale is the first criterion's, only so that the shared
    prompt renders). ``criteria``: (criterion name, derived rubric), in file order.
    """

    whole: Rubric
    criteria: tuple[tuple[str, Rubric], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.criteria)

    @property
    def rubrics(self) -> list[Rubric]:
        return [rubric for _, rubric in self.criteria]

    @property
    def scales(self) -> dict[str, Scale]:
        return {name: rubric.scale for name, rubric in self.criteria}

    def criteria_text(self) -> str:
        """Every criterion with its description and levels (the ``{scale}`` of the call)."""
        blocks = [CRITERIA_HEADING]
        for name, rubric in self.criteria:
            head = f"{name}: {rubric.description}" if rubric.description else name
            blocks.append(f"{head}\n{render_scale(rubric.scale)}")
        return "\n\n".join(blocks)

    def answer_format(self) -> str:
        """The answer-format line: one object, one reasoning-first verdict per criterion."""
        entries = []
        for name, rubric in self.criteria:
            choices = " or ".join(f'"{label}"' for label in rubric.scale.labels)
            entries.append(f'{json.dumps(name)}: {{"reasoning": "your reason", '
                           f'"verdict": {choices}}}')
        return ("Write your answer as one JSON object with an entry for every criterion: "
                f"{{{', '.join(entries)}}}")

    def messages(self, item: Item) -> list[dict[str, str]]:
        """The chat messages of one item's call."""
        system = parse_template(self.whole.system_prompt, "prompt.system", self.whole.scale.kind)
        user = parse_template(self.whole.user_prompt, "prompt.user", self.whole.scale.kind)
        listed = "scale" in placeholders(system) | placeholders(user)
        criteria = self.criteria_text()
        instructions = self.answer_format()
        if not listed:
            instructions = f"{criteria}\n\n{instructions}"
        return render_messages(self.whole, item, scale_text=criteria, instructions=instructions)

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the answer, for structured output: every criterion required."""
        properties = {name: verdict_json_schema(rubric) for name, rubric in self.criteria}
        return {"type": "object", "properties": properties, "required": list(self.names),
                "additionalProperties": False}


def plan_of(source_text: str, path: str, data: Mapping[str, Any]) -> JointPlan:
    """The joint plan of a parsed criteria file (``data`` from :func:`criteria_data`)."""
    derived = load_criteria(source_text, path, data)
    names = list(data["criteria"])
    prompt = data.get("prompt") or {}
    whole = replace(
        derived[0], name=str(data.get("name")), description=str(data.get("description", "")),
        system_prompt=str(prompt.get("system", "")), user_prompt=str(prompt.get("user", "")),
        sha256=sha256_text(canonical_json(json.loads(json.dumps(
            {k: v for k, v in data.items() if k != "display"}, default=str)))),
        source_text=source_text, path=path, examples=(),
    )
    return JointPlan(whole, tuple(zip(names, derived, strict=True)))


def joint_plan(path_or_name: str | Path) -> JointPlan | None:
    """The joint plan of a criteria file judged in one call; None for any other valid rubric.

    ``FILE#CRITERION`` names one criterion: judged with its own call, so None too.
    A file that is no valid rubric raises the loader's :class:`RubricError`.
    """
    from judgekit.rubrics import read_source, rubric_from_text

    if split_reference(path_or_name)[1] is not None and not Path(str(path_or_name)).is_file():
        return None
    path, text = read_source(path_or_name)
    data = criteria_data(text, str(path))
    if data is None:
        rubric_from_text(text, path=str(path))  # an error names the file and line
        return None
    if not is_joint(data):
        return None
    return plan_of(text, str(path), data)


def refuse_one_call(path_or_name: str | Path, command: str) -> None:
    """A :class:`RubricError` when ``path_or_name`` (or one of its criteria) belongs to a
    criteria file judged in one call: ``command`` makes one call per rubric."""
    from judgekit.rubrics import read_source

    target = split_reference(path_or_name)[0] if not Path(str(path_or_name)).is_file() \
        else path_or_name
    path, text = read_source(target)
    data = criteria_data(text, str(path))
    if data is not None and is_joint(data):
        raise RubricError(
            f"{path}: {command} makes one call per criterion, and this file judges every "
            "criterion in one call (live only, with judge); set per_call = true in it to use "
            f"{command}")


__all__ = ["CRITERIA_HEADING", "JointPlan", "joint_plan", "plan_of", "refuse_one_call"]
