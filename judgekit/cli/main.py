"""Entry point: ``judgekit <command>``.

Each command lives in its own module under ``judgekit/cli/`` and exposes a
click command named ``command``. This module only wires them together and turns
:class:`~judgekit.errors.JudgekitError` into a clean one-line message.

``judgekit --help`` lists every command with its one-line summary from
:data:`COMMAND_SUMMARIES`, so it imports no command module; a test holds each
summary equal to its command's own. ``judgekit CMD --help`` imports only that
command's module, and command modules import numpy, scipy, sqlite-utils and the
like inside the functions that use them, so help stays as fast as click itself.
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
    "split": "split",
    "align": "align",
}


#: command name -> its one-line help, as ``judgekit --help`` lists it without importing it
#: (``tests/unit/test_cli_help.py`` checks each against the command's own short help).
COMMAND_SUMMARIES: dict[str, str] = {
    "agree": "Agreement among raters in FILE (CSV, TSV or JSONL with item_id, rater, label), "
    "or among the annotators in the store (--rubric, --db).",
    "align": "Improve a judge from the humans' labels; the held-out test difference is the "
    "result.",
    "annotate": "Label items in the terminal, blind to the judge, one key per label.",
    "batch": "Judge through Batch API files: OpenAI's Batch API or `vllm run-batch`.",
    "compare": "Compare two judges, or two candidate models scored by one judge.",
    "demo": "Run the whole flow on shipped demo data with the local judge and a fresh database.",
    "estimate": "Estimate the humans' rate on every judged item: judge only, labels only, PPI++.",
    "export": "Write the judgments of a rubric with their provenance (judge, endpoint, rubric, "
    "sampling).",
    "import": "Load the items in FILE (.jsonl, .csv, .tsv or .parquet) into the store as a "
    "dataset.",
    "judge": "Judge a dataset with a rubric; finished judgments are reused on reruns.",
    "judgments": "Judge verdicts made elsewhere (item_id, judge, label[, order, sample, status, "
    "raw]).",
    "labels": "Import, export or review human labels (CSV or JSONL: item_id, annotator, label[, "
    "note]).",
    "plan": "How many labels for a confidence interval of +/- HALF-WIDTH.",
    "probe": "Measure a judge's biases: position, length, consistency, injection, identical "
    "pairs.",
    "report": "Calibration report: does the judge agree with humans well enough to trust?",
    "queue": "Labeling queues for a team (see also `judgekit queues` for progress).",
    "queues": "Per-annotator progress (labeled, skipped, flagged, remaining) through each queue.",
    "rubric": "List, check and preview rubrics.",
    "runs": "List the runs in the store, oldest first, with their judge, rubric and outcome "
    "counts.",
    "serve": "Serve the store to a team: API under /api/v1/, /report/RUBRIC, /annotate.",
    "serve-local": "Serve the local judge (llama.cpp + SmolLM2-135M) on an OpenAI-compatible URL.",
    "split": "Split labeled items into train, dev and test, once (grouped by prompt and "
    "cluster).",
    "tokens": "API tokens for `judgekit serve`: create, list, revoke.",
}


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs or shows its own help."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMAND_SUMMARIES` (a command without one is imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            summary = COMMAND_SUMMARIES.get(name)
            # a bare command with the summary as its help shortens it exactly as click does
            command = self.get_command(ctx, name) if summary is None else click.Command(
                name, help=summary
            )
            rows.append((name, "" if command is None else command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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
