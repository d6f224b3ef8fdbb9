"""Entry point: ``judgekit <command>``.

Each command lives in its own module under ``judgekit/cli/`` and exposes a
click command named ``command``. This module only wires them together and turns
:class:`~judgekit.errors.JudgekitError` into a clean one-line message.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from judgekit import __version__
from judgekit.errors import JudgekitError
from judgekit.textsafe import terminal_safe

#: command name -> module under judgekit.cli that defines ``command``.
COMMAND_MODULES: dict[str, str] = {
    "demo": "demo",
    "import": "import_items",
    "judge": "judge",
    "export": "export",
    "serve-local": "serve_local",
    "annotate": "annotate",
    "labels": "labels",
    "judgments": "judgments",
    "probe": "probe",
    "report": "report",
    "estimate": "estimate",
    "compare": "compare",
    "plan": "plan",
    "agree": "agree",
    "runs": "runs",
    "rubric": "rubric",
    "batch": "batch",
    "tokens": "tokens",
    "queue": "queue",
    "queues": "queues",
    "serve": "serve",
}


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (fast ``--help``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module_name = COMMAND_MODULES.get(cmd_name)
        if module_name is None:
            return None
        module = importlib.import_module(f"judgekit.cli.{module_name}")
        command: click.Command = module.command
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="judgekit")
def cli() -> None:
    """Calibrate an LLM judge against humans before you trust it."""


def _detach_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a JudgekitError becomes ``error: message`` and its exit code.

    A failing stdout (a full disk, a closed pipe) is one line on stderr too,
    never a traceback.
    """
    try:
        result = cli.main(args=argv, prog_name="judgekit", standalone_mode=False)
        sys.stdout.flush()
    except BrokenPipeError:  # `judgekit ... | head`: the reader has all it wanted
        _detach_stdout()
        sys.exit(1)
    except OSError as exc:
        if exc.filename is None:  # stdout itself: files name themselves in their own errors
            _detach_stdout()
        where = f" {exc.filename}" if exc.filename else " to stdout"
        click.echo(f"error: cannot write{where}: {exc.strerror or exc}", err=True)
        sys.exit(2)
    except JudgekitError as exc:
        click.echo(f"error: {terminal_safe(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # one line, like every other error
        hint = f" (see: {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        message = " ".join(exc.format_message().split())
        click.echo(f"error: {terminal_safe(message)}{hint}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    # In non-standalone mode click returns ctx.exit(code)'s code instead of exiting.
    if isinstance(result, int) and not isinstance(result, bool):
        sys.exit(result)


if __name__ == "__main__":  # pragma: no cover
    main()
