"""Reading another tool's JSON without trusting its shape.

A tool's file is whatever the user holds: written by another version, edited, cut
short, or not that tool's at all. The readers (:mod:`judgekit.io.promptfoo` and its
siblings) reach every value through :class:`At`, which names the value's place in the
file (``results.results[3].vars``) and turns any shape the tool could not have written
into one ``file: place: what is wrong`` :class:`InputError` (exit 2), never a
traceback. Text that will be stored goes through :meth:`At.text`, which also applies
the stored-text cap of :mod:`judgekit.io.caps`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from judgekit.errors import InputError
from judgekit.io.caps import text_too_long
from judgekit.io.file_checks import type_name


@dataclass(frozen=True)
class At:
    """A place in a tool's file: the file, and the JSON path to a value in it."""

    file: str | Path
    path: str = ""

    def key(self, name: str) -> At:
        return At(self.file, f"{self.path}.{name}" if self.path else name)

    def index(self, number: int) -> At:
        return At(self.file, f"{self.path}[{number}]")

    def fail(self, message: str) -> NoReturn:
        raise InputError(f"{self.file}: {self.path}: {message}" if self.path
                         else f"{self.file}: {message}")

    # Containers: absent (or null) is empty; any other type is refused.

    def obj(self, parent: dict[str, Any], name: str) -> dict[str, Any]:
        """``parent[name]`` as an object (``{}`` when absent or null)."""
        value = parent.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.key(name).fail(f"expected an object, got {type_name(value)}")
        return value

    def items(self, parent: dict[str, Any], name: str) -> list[Any]:
        """``parent[name]`` as a list (``[]`` when absent or null)."""
        value = parent.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            self.key(name).fail(f"expected a list, got {type_name(value)}")
        return value

    def each_obj(self, parent: dict[str, Any], name: str) -> list[tuple[At, dict[str, Any]]]:
        """``parent[name]``'s entries, each an object with its place."""
        place = self.key(name)
        found = []
        for number, entry in enumerate(self.items(parent, name)):
            if not isinstance(entry, dict):
                place.index(number).fail(f"expected an object, got {type_name(entry)}")
            found.append((place.index(number), entry))
        return found

    # Scalars.

    def string(self, parent: dict[str, Any], name: str, *, required: bool = False
               ) -> str | None:
        """``parent[name]`` as a string (None when absent, unless ``required``)."""
        value = parent.get(name)
        if value is None:
            if required:
                self.fail(f"missing field {name!r}")
            return None
        if not isinstance(value, str):
            self.key(name).fail(f"expected a string, got {type_name(value)}")
        return value

    def ident(self, parent: dict[str, Any], name: str, *, required: bool = False
              ) -> str | None:
        """An id: a non-empty string or an integer, as a string."""
        value = parent.get(name)
        if value is None:
            if required:
                self.fail(f"missing field {name!r}")
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str) or not value.strip():
            self.key(name).fail(f"expected a non-empty string or an integer id, "
                                f"got {type_name(value) if value != '' else 'an empty string'}")
        return value

    def integer(self, parent: dict[str, Any], name: str, default: int) -> int:
        value = parent.get(name)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool):
            self.key(name).fail(f"expected an integer, got {type_name(value)}")
        return value

    def text(self, value: Any, name: str | None = None) -> str:
        """A value that becomes stored text: a string as it is, other JSON as JSON; capped."""
        place = self.key(name) if name else self
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                place.fail("holds a lone surrogate (e.g. \\ud800), which is not text")
        problem = text_too_long(text)
        if problem is not None:
            place.fail(problem)
        return text

    def optional_text(self, parent: dict[str, Any], name: str) -> str | None:
        """``parent[name]`` as stored text, None when absent or null."""
        value = parent.get(name)
        return None if value is None else self.key(name).text(value)
