"""Run the CLI in-process exactly as ``judgekit`` does: errors become one line and an exit code."""

from __future__ import annotations

import contextlib
import io

from judgekit.cli.main import main


def run_cli(*args: str) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``judgekit ARGS``."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()
