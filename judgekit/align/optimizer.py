"""Instruction revisions proposed by an optimizer model on any OpenAI-compatible endpoint.

The optimizer reads the rubric and a sample of the judge's disagreements with people on
the **train** split (with annotators' notes) and proposes revised instructions (the
rubric's system prompt); each proposal becomes a rubric version (:func:`derive`). Its
answers are stored by the hash of the request (``align_proposals``), so a resumed
``align`` neither pays for them again nor judges different text. An answer that is not
the JSON asked for, or whose text makes an invalid rubric, is recorded, skipped and
counted; it never stops the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.align.candidates import Candidate, derive
from judgekit.errors import RubricError
from judgekit.prompts import render_scale
from judgekit.redaction import redact
from judgekit.report.pairing import ItemKey
from judgekit.store import Store
from judgekit.types import Item, Rubric, canonical_json, sha256_text

#: Disagreements shown to the optimizer, and how much of each item's text.
MAX_CASES = 8
CASE_CHARS = 600
_JSON_RE = re.compile(r"\{.*\}", re.DOTALL)

SYSTEM = ("You improve the instructions given to an LLM judge so that its verdicts agree "
          "with the verdicts people gave. You answer with JSON only.")


@dataclass(frozen=True)
class Optimizer:
    """The optimizer endpoint (credentials only in ``api_key``, never stored)."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    endpoint: str = ""  # the URL without credentials, as stored
    timeout: float = 120.0
    temperature: float = 0.7


@dataclass(frozen=True)
class Proposal:
    """One optimizer answer: ``ok`` (a candidate), ``garbage``, ``invalid_rubric`` or
    ``api_error`` (the last is not stored: asked again on a rerun)."""

    index: int
    status: str
    text: str | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "status": self.status, "text": self.text,
                "error": self.error}


def _cut(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= CASE_CHARS else text[:CASE_CHARS] + " [...cut]"


def optimizer_messages(rubric: Rubric, cases: Sequence[ItemKey], items: Mapping[ItemKey, Item],
                       reference: Mapping[ItemKey, str], verdicts: Mapping[ItemKey, Any],
                       notes: Mapping[ItemKey, str]) -> list[dict[str, str]]:
    """The request: the rubric, its scale and the disagreements (train items only)."""
    parts = [
        f"Rubric: {rubric.name}. {rubric.description}".strip(),
        f"Current instructions to the judge:\n{rubric.system_prompt}",
        f"Prompt template (placeholders in braces are filled per item):\n{rubric.user_prompt}",
        f"Verdicts:\n{render_scale(rubric.scale)}",
        "Cases where the judge disagreed with people:",
    ]
    for number, key in enumerate(cases, start=1):
        item = items[key]
        shown = (f"Response A: {_cut(item.response_a)}\nResponse B: {_cut(item.response_b)}"
                 if item.is_pairwise else f"Response: {_cut(item.response)}")
        note = f"\nPeople's note: {notes[key]}" if notes.get(key) else ""
        parts.append(f"Case {number}\nInput: {_cut(item.input)}\n{shown}\n"
                     f"Judge's verdict: {verdicts.get(key)}\nPeople's verdict: {reference[key]}"
                     f"{note}")
    parts.append(
        "Write revised instructions for the judge that would make it agree with the people. "
        "Keep them general: do not quote these cases. Do not use curly braces. "
        'Answer with JSON only: {"instructions": "the revised instructions"}')
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)}]


def parse_instructions(text: str | None) -> str | None:
    """The ``instructions`` string of the answer's JSON object, or None for anything else."""
    if not text:
        return None
    found = _JSON_RE.search(text)
    if found is None:
        return None
    try:
        data = json.loads(found.group(0))
    except (ValueError, RecursionError):
        return None
    value = data.get("instructions") if isinstance(data, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _ask(optimizer: Optimizer, messages: list[dict[str, str]], seed: int) -> str | None:
    import openai  # the slowest import of judgekit: only when the optimizer is asked

    client = openai.OpenAI(base_url=optimizer.base_url, api_key=optimizer.api_key or "none",
                           timeout=optimizer.timeout, max_retries=2)
    try:
        reply = client.chat.completions.create(
            model=optimizer.model, messages=messages,  # type: ignore[arg-type]
            temperature=optimizer.temperature, seed=seed, max_tokens=1024)
    finally:
        client.close()
    return reply.choices[0].message.content if reply.choices else None


def propose(store: Store, optimizer: Optimizer, baseline: Rubric, n: int,
            messages: list[dict[str, str]]) -> tuple[list[Candidate], list[Proposal]]:
    """``n`` revisions of ``baseline``'s instructions; stored answers are reused, not re-asked."""
    candidates: list[Candidate] = []
    proposals: list[Proposal] = []
    for index in range(1, n + 1):
        request = {"endpoint": optimizer.endpoint, "model": optimizer.model,
                   "messages": messages, "seed": index, "temperature": optimizer.temperature}
        key = sha256_text(canonical_json(request))
        stored = store.get_proposal(key)
        if stored is not None:
            status, text, error = stored
        else:
            try:
                text, error = _ask(optimizer, messages, index), None
            except Exception as exc:  # any failure of the endpoint: recorded, never fatal
                secrets = [optimizer.api_key] if optimizer.api_key else []
                proposals.append(Proposal(index, "api_error", None,
                                          redact(f"{type(exc).__name__}: {exc}", secrets)))
                continue  # not stored: a transient failure is asked again on a rerun
            status = "ok" if parse_instructions(text) is not None else "garbage"
            if status == "garbage":
                error = "not a JSON object with a non-empty \"instructions\" string"
            store.save_proposal(key, optimizer.model, optimizer.endpoint, status, text, error)
        instructions = parse_instructions(text) if status == "ok" else None
        if instructions is None:
            proposals.append(Proposal(index, status, text, error))
            continue
        try:
            rubric = derive(baseline, suffix=f"revision{index}",
                            changes=f"instructions revised by {optimizer.model} "
                                    f"(proposal {index})", system=instructions)
        except RubricError as exc:
            proposals.append(Proposal(index, "invalid_rubric", instructions, str(exc)))
            continue
        proposals.append(Proposal(index, "ok", instructions))
        candidates.append(Candidate(f"revision-{index}", "revision", rubric, rubric.changes))
    return candidates, proposals
