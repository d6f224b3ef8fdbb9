"""One exception tree for everything judgekit raises on purpose.

The CLI catches :class:`JudgekitError` and prints its message with a non-zero
exit code, so a user sees ``data.jsonl:12: missing field 'input'`` rather than a
traceback. Statistical functions raise plain :class:`ValueError` for invalid
arguments (the scipy convention); :class:`InputError` subclasses it so both
catch styles work.
"""

from __future__ import annotations


class JudgekitError(Exception):
    """Base class of every error judgekit raises deliberately."""

    exit_code: int = 2


class InputError(JudgekitError, ValueError):
    """A user-supplied file or value is malformed (names file:line or the field)."""


class RubricError(InputError):
    """A rubric file is invalid; the message names the offending field."""


class EndpointError(JudgekitError):
    """The judge endpoint could not be used at all (not a per-item failure)."""


class StoreError(JudgekitError):
    """The SQLite store is unusable or inconsistent."""


class LocalJudgeError(JudgekitError):
    """The bundled local judge could not be started (missing extra, no model)."""
