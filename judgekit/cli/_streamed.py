"""Where an export streams its text: the ``--out`` file, or stdout.

``export``, ``labels export`` and ``labels disagreements`` write rows as they
read them (flat memory on a large store). The ``--out`` file is complete or
not there at all: the text goes to a temporary file beside it, renamed over
it only when the export has finished (:func:`~judgekit.cli._common.open_out`).
Stdout gets the text as it comes, unless stdout is a terminal: then the text
is held until the progress bar on stderr is gone (a terminal shows both, and
rows printed under a live bar would be mixed with it), and written with every
control code escaped, as before.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, cast

from judgekit.cli._common import echo, open_out
from judgekit.textsafe import terminal_safe


class _Echo(io.TextIOBase):
    """Stdout through :func:`~judgekit.cli._common.echo` (controls escaped), piece by piece.

    Pieces end in a newline, so escaping each one gives the escape of the whole.
    """

    def write(self, text: str) -> int:
        echo(text, nl=False)
        return len(text)


@contextmanager
def export_stream(
    out: str | None, *, store: Path, always_escape: bool = False, dash_is_stdout: bool = True,
) -> Iterator[TextIO]:
    """A text stream for the export: ``out`` (None, or ``-`` if ``dash_is_stdout``: stdout).

    Open it outside the progress bar (``with export_stream(...) as handle,
    progress_bar(...)``) so that text held for a terminal is written once the
    bar is gone. ``always_escape`` escapes control codes on any stdout (the
    command's text output), not only on a terminal (raw rows).
    """
    if out is not None and (out != "-" or not dash_is_stdout):
        with open_out(out, store=store) as handle:
            yield handle
        return
    if sys.stdout.isatty():
        buffer = io.StringIO()
        yield buffer
        text = buffer.getvalue()
        if always_escape:
            echo(text, nl=False)
        else:
            sys.stdout.write(terminal_safe(text))
    elif always_escape:
        yield cast(TextIO, _Echo())
    else:
        yield sys.stdout
    sys.stdout.flush()


__all__ = ["export_stream"]
