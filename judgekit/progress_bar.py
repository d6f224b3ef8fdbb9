"""The one look of every progress bar judgekit draws, and when it draws one.

Shared by the CLI's phase bar (:mod:`judgekit.cli._progress`) and the live bar of
a judging run (:mod:`judgekit.judging.progress`), which may not import the CLI.
A bar goes to stderr only, and only when it is a terminal: ``JUDGEKIT_PROGRESS=1``
asks for it anyway (then, off a terminal, plain lines a CI log can keep) and
``JUDGEKIT_PROGRESS=0`` turns it off. ``rich`` is imported only when a bar is drawn.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn

#: Environment variable: 1 (or true/yes/on) always shows the bar, 0 (false/no/off) never.
PROGRESS_ENV = "JUDGEKIT_PROGRESS"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def progress_setting() -> bool | None:
    """``$JUDGEKIT_PROGRESS`` as True (on), False (off) or None (unset or unreadable)."""
    value = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return None


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (False for a closed or replaced stream)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_wanted(stream: TextIO | None = None) -> bool:
    """``$JUDGEKIT_PROGRESS`` when set, else whether ``stream`` (stderr) is a terminal."""
    setting = progress_setting()
    if setting is not None:
        return setting
    return is_terminal(sys.stderr if stream is None else stream)


def rich_bar(stream: TextIO, *extra: ProgressColumn, transient: bool = True,
             force_terminal: bool | None = None) -> Progress:
    """A rich bar on ``stream``: description, bar, ``done/total``, time elapsed, then ``extra``.

    stdout and stderr are never redirected into it, so a report or an export on
    stdout stays byte for byte what it is without a bar.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(file=stream, force_terminal=force_terminal, force_jupyter=False)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        *extra,
        console=console,
        transient=transient,
        redirect_stdout=False,
        redirect_stderr=False,
    )


__all__ = ["PROGRESS_ENV", "is_terminal", "progress_setting", "progress_wanted", "rich_bar"]
