"""The size limits of what an import reads: text kept per field, bytes decompressed per file.

A file from elsewhere decides how much memory and disk an import costs. Two limits keep
that bounded, both documented in ``docs/import.md`` and overridable by environment
variable (for one command: ``JUDGEKIT_MAX_TEXT_BYTES=50000000 judgekit import ...``):

- **Stored text** (an item's input, response, reference; a verdict's reasoning or raw
  answer): at most :data:`DEFAULT_MAX_TEXT_BYTES` (8 MiB, the size at which a live
  judge's answer is cut off, ``clients/spec.py``) UTF-8 bytes per field,
  ``JUDGEKIT_MAX_TEXT_BYTES`` to change it. A longer field is refused with its place.
- **Decompressed bytes** of a compressed input (an Inspect ``.eval`` archive, a parquet
  file): at most 100 times the file's size and never more than 2 GB, checked against
  the sizes the file declares before anything is decompressed and again while the data
  is streamed (a declared size can lie). ``JUDGEKIT_MAX_UNCOMPRESSED_BYTES`` replaces
  both bounds with one number.
"""

from __future__ import annotations

import os
from typing import NoReturn

from judgekit.errors import InputError

#: As ``clients.spec.DEFAULT_MAX_RESPONSE_BYTES``: a live answer is cut off there too.
DEFAULT_MAX_TEXT_BYTES = 8 * 1024 * 1024
#: Decompressed bytes per byte of a compressed file (JSON compresses 5-30x; bombs 1000x+).
MAX_EXPANSION = 100
#: Decompressed bytes of one file, whatever its size.
MAX_UNCOMPRESSED_BYTES = 2 * 1000 * 1000 * 1000
#: A parquet file may always decompress to this much (see :func:`max_uncompressed_bytes`).
PARQUET_FLOOR_BYTES = 512 * 1000 * 1000
TEXT_ENV = "JUDGEKIT_MAX_TEXT_BYTES"
UNCOMPRESSED_ENV = "JUDGEKIT_MAX_UNCOMPRESSED_BYTES"


def _env_bytes(name: str) -> int | None:
    value = os.environ.get(name, "").strip().replace("_", "")
    if not value:
        return None
    if not value.isdigit() or int(value) <= 0:
        raise InputError(f"${name}: expected a positive number of bytes, got {value!r}")
    return int(value)


def max_text_bytes() -> int:
    """Largest UTF-8 size of one stored text field."""
    return _env_bytes(TEXT_ENV) or DEFAULT_MAX_TEXT_BYTES


def max_uncompressed_bytes(file_size: int, floor: int = 0) -> int:
    """Most bytes a compressed file of ``file_size`` bytes may decompress to (at least
    ``floor``: parquet's dictionary encoding legitimately shrinks a repeated column far
    more than 100x, and it is read a batch at a time)."""
    override = _env_bytes(UNCOMPRESSED_ENV)
    if override is not None:
        return override
    return min(MAX_UNCOMPRESSED_BYTES, max(floor, MAX_EXPANSION * max(file_size, 1)))


def text_too_long(text: str, limit: int | None = None) -> str | None:
    """Why ``text`` is too long to store, or None. Cheap for short text (no encoding)."""
    limit = max_text_bytes() if limit is None else limit
    if len(text) * 4 <= limit:  # a character is at most 4 UTF-8 bytes
        return None
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return None
    return (f"{size:,} bytes of text, over the {limit:,}-byte limit for one stored field "
            f"(${TEXT_ENV} raises it)")


def check_text(text: str, where: str) -> str:
    """``text``, or an InputError at ``where`` when it is over :func:`max_text_bytes`."""
    problem = text_too_long(text)
    if problem is not None:
        raise InputError(f"{where}: {problem}")
    return text


def refuse_expansion(where: str, size: int, limit: int, declared: bool) -> NoReturn:
    """The one-line refusal of a file that decompresses to more than its limit."""
    how = "declares" if declared else "decompresses to"
    raise InputError(f"{where}: {how} more than {limit:,} bytes uncompressed "
                     f"({size:,} so far; the limit is {MAX_EXPANSION}x the file's size, at most "
                     f"{MAX_UNCOMPRESSED_BYTES:,}; ${UNCOMPRESSED_ENV} changes it)")
