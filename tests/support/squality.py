"""Twenty long items from SQuALITY (a 4-6k-word story, a question, a summary, a reference).

Read from the shared data folder, never copied into the repo; callers skip when it is
absent. Used by the long-document annotate test and ``benchmarks/bench_annotate_long.py``.
"""

from __future__ import annotations

import json

from judgekit.rubrics import rubric_from_text
from judgekit.types import Item, Rubric
from tests.support.shared_data import SHARED_DATA

FOLDER = SHARED_DATA / "squality_human_eval"

RUBRIC = '''
name = "summary"
version = "1"
description = "How well does the response answer the question about the story?"
guidelines = """
Read the question first (it is at the end of the Input), then the response.
Use **]** to jump from the story to the response, and to the reference.
"""
[scale]
kind = "ordinal"
min = 1
max = 5
[scale.levels]
"1" = "Wrong or off topic: misstates the story or does not answer the question."
"2" = "Mostly wrong: some true details, but the answer to the question is wrong."
"3" = "Partly right: answers the question with gaps or some invented detail."
"4" = "Right with small gaps: accurate, misses a detail the reference has."
"5" = "Complete and accurate: as good as the reference."
[prompt]
user = "{input}\\n\\nSummary: {response}\\n{scale}"
'''


def available() -> bool:
    return (FOLDER / "squality_human_eval.jsonl").is_file()


def rubric() -> Rubric:
    return rubric_from_text(RUBRIC, path="summary.toml")


def long_items(n: int = 20, system: str = "bart") -> list[Item]:
    """One item per story: the story and question as input, a summary as response."""
    documents = {}
    for line in (FOLDER / "documents.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        documents[record["passage_id"]] = record["document"]
    items = []
    seen: set[str] = set()
    for line in (FOLDER / "squality_human_eval.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        meta = record["meta"]
        passage = str(meta["passage_id"])
        if meta["system"] != system or passage in seen or passage not in documents:
            continue
        seen.add(passage)
        reference = record.get("reference") or []
        items.append(Item(
            id=record["id"],
            input=f"{documents[passage].strip()}\n\nQuestion: {record['input']}",
            response=record["response"],
            reference=reference[0] if isinstance(reference, list) and reference else None,
        ))
        if len(items) == n:
            break
    return items
