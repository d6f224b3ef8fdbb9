"""Files the label and judgment import tests write: a small ordinal rubric and JSONL rows."""

from __future__ import annotations

import json
from pathlib import Path

#: A 1-5 ordinal rubric, small enough to read in a test.
ORDINAL = """
name = "helpful"
version = "1"
description = "How helpful?"

[scale]
kind = "ordinal"
min = 1
max = 5

[scale.levels]
"1" = "no"
"2" = "barely"
"3" = "partly"
"4" = "mostly"
"5" = "fully"

[prompt]
system = "Rate."
user = "Q: {input}\\nA: {response}\\n{scale}"
"""


def rubric_file(tmp_path: Path, text: str, name: str) -> Path:
    """Write rubric ``text`` to ``tmp_path/name.toml``."""
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[object]) -> Path:
    """One JSON object per line."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
