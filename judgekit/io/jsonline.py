"""``json.loads`` for one line of an input file, with every failure as a ``JSONDecodeError``.

``json.loads`` alone lets three kinds of hostile but well-formed input escape as
other exceptions and end a command in a traceback: an array nested 100,000 deep
(``RecursionError``), an integer of 5,000 digits (``ValueError`` from Python's
int-string limit) and an escaped lone surrogate such as ``"\\ud800"`` (valid JSON,
but not text: SQLite and every output encoder refuse it later). Readers call
:func:`loads_line` and keep their one ``except json.JSONDecodeError`` that
already names the file, line and column.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = ["MAX_DEPTH", "loads_document", "loads_line"]

#: Deepest nesting of arrays and objects accepted (items need a few levels at most).
MAX_DEPTH = 100

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads_line(line: str) -> Any:
    """The JSON value of ``line``; too deep, too long a number or a lone surrogate is an error."""
    depth_at = _too_deep(line)
    if depth_at is not None:
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep", line, depth_at)
    return _decode(line)


def loads_document(text: str | bytes) -> Any:
    """The JSON value of a whole document (a tool's export, an archive member), with
    :func:`loads_line`'s errors. Nesting is bounded by the interpreter's recursion
    limit rather than scanned for (a document holds thousands of brackets)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not valid UTF-8 (byte {exc.start})", "", 0) from None
    return _decode(text)


def _decode(text: str) -> Any:
    """``json.loads`` with every way it can fail as a :class:`json.JSONDecodeError`: too deep,
    a number past the interpreter's digit limit, a lone surrogate in a string."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's int-string conversion limit (4300 digits by default)
        limit = sys.get_int_max_str_digits()
        raise json.JSONDecodeError(f"a number has more than {limit} digits", text, 0) from None
    position = _lone_surrogate(value, text)
    if position is not None:
        raise json.JSONDecodeError(
            "a string holds a lone surrogate (e.g. \\ud800), which is not valid Unicode text",
            text, position,
        )
    return value


def _too_deep(line: str) -> int | None:
    """Index where nesting first exceeds :data:`MAX_DEPTH` (brackets in strings ignored)."""
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return index
        elif char in "]}":
            depth -= 1
    return None


def _lone_surrogate(value: Any, line: str) -> int | None:
    """Where the first lone surrogate is (an index into ``line``), or None when there is none."""
    if ("\\u" not in line or _SURROGATE_ESCAPE.search(line) is None) and (
            line.isascii() or _SURROGATE.search(line) is None):
        return None  # no surrogate, raw or escaped, in the text: none in a value (common)
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            texts = [current]
        elif isinstance(current, dict):
            texts = [key for key in current if isinstance(key, str)]
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
            continue
        else:
            continue
        for text in texts:
            if _SURROGATE.search(text):
                escape = _SURROGATE_ESCAPE.search(line) or _SURROGATE.search(line)
                return escape.start() if escape else 0
    return None
