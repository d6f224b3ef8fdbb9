"""Write a rubric's parsed TOML back as TOML text (no writer ships with Python).

Only what a rubric holds: strings, numbers, booleans, tables, arrays of tables and of
scalars. Long strings are written as multi-line literal strings so the aligned rubric a
user reads keeps its line breaks; anything a literal string cannot hold is a basic
string with escapes. :func:`dump` is checked against :func:`tomllib.loads` by the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_LITERAL_OK = re.compile(r"^[^\x00-\x08\x0b-\x1f\x7f]*$")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _basic(key)


def _basic(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, plus DEL, which JSON leaves raw."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _string(text: str) -> str:
    if ("\n" in text and "'''" not in text and not text.endswith("'")
            and _LITERAL_OK.match(text) and "\r" not in text):
        return f"'''\n{text}'''"
    return _basic(text)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _table(lines: list[str], path: str, table: Mapping[str, Any]) -> None:
    for key, value in table.items():
        if not isinstance(value, Mapping) and not _is_table_array(value):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        sub = f"{path}.{_key(key)}" if path else _key(key)
        if isinstance(value, Mapping):
            lines += ["", f"[{sub}]"]
            _table(lines, sub, value)
        elif _is_table_array(value):
            for entry in value:
                lines += ["", f"[[{sub}]]"]
                _table(lines, sub, entry)


def dump(data: Mapping[str, Any], *, header: str = "") -> str:
    """``data`` as TOML text (``header``: comment lines written first)."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    _table(lines, "", data)
    return "\n".join(lines).lstrip("\n") + "\n"
