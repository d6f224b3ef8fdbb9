"""What the browser session processes share: their command line, the store, the app's exit code.

``session.py`` (an annotator's queue) and ``adjudicate_session.py`` (a lead's
adjudication) are started by the web bridge, never by a person, each with
``--db``, the one option that says what to open, and ``--annotator``
(``session_command`` writes that line for the bridge, ``launch`` reads it). Both
open the store, build the annotate app, run it and exit with its code; an error the user
can cause (a queue or rubric gone from the store) is one ``error:`` line and the
error's exit code, never a traceback. The heavy imports (the store, the Textual
app) stay inside the functions so a process starts only what it runs.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.tui.app import AnnotateApp
    from judgekit.types import Rubric

#: Builds the app from the open store, the value of the session's own option and
#: the annotator.
BuildApp = Callable[["Store", str, str], "AnnotateApp"]


def session_command(module: str, db: Path, option: str, value: str, annotator: str) -> str:
    """The shell command of one session's app (names quoted: they are user text)."""
    return shlex.join([sys.executable, "-m", module, "--db", str(db), f"--{option}", value,
                       "--annotator", annotator])


def stored_rubric(store: Store, sha256: str, missing: str) -> Rubric:
    """The rubric stored under ``sha256``; ``missing`` is the error when there is none."""
    from judgekit.rubrics import rubric_from_text

    text = store.get_rubric_text(sha256)
    if text is None:
        raise JudgekitError(missing)
    return rubric_from_text(text, path=f"<store:{sha256[:12]}>")


def launch(
    prog: str, option: str, build: BuildApp, argv: list[str] | None, *, help: str | None = None
) -> int:
    """Parse ``--db OPTION --annotator``, run the app ``build`` makes; the process's exit code."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--db", required=True)
    parser.add_argument(f"--{option}", required=True, help=help)
    parser.add_argument("--annotator", required=True)
    args = parser.parse_args(argv)

    from judgekit.store import open_store

    try:
        with open_store(args.db) as store:
            app = build(store, getattr(args, option), args.annotator)
            app.run()
            return int(app.return_code or 0)
    except JudgekitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
