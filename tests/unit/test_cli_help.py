"""``--help`` is fast and truthful: no heavy library imported, each summary the command's own."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from judgekit.cli.main import COMMAND_MODULES, COMMAND_SUMMARIES, cli

#: Libraries that cost hundreds of milliseconds to import; help needs none of them.
HEAVY = ("numpy", "scipy", "sqlite_utils", "openai", "textual", "rich", "pydantic", "krippendorff")


def _command(name: str) -> click.Command:
    module = importlib.import_module(f"judgekit.cli.{COMMAND_MODULES[name]}")
    command: click.Command = module.command
    return command


def _help_invocations() -> list[list[str]]:
    """``--help`` of the group, of every command and of every subcommand."""
    out = [["--help"]]
    for name in sorted(COMMAND_MODULES):
        out.append([name, "--help"])
        command = _command(name)
        if isinstance(command, click.Group):
            out.extend([name, sub, "--help"] for sub in sorted(command.commands))
    return out


def test_every_command_has_its_own_summary() -> None:
    assert sorted(COMMAND_SUMMARIES) == sorted(COMMAND_MODULES)
    for name, summary in COMMAND_SUMMARIES.items():
        assert summary == _command(name).get_short_help_str(limit=1000), name


def test_group_help_is_what_click_would_print_with_every_command_loaded() -> None:
    plain = click.Group(
        "judgekit",
        commands={name: _command(name) for name in COMMAND_MODULES},
        help=cli.help,
        params=cli.params,
        context_settings=cli.context_settings,
    )
    runner = CliRunner()
    ours = runner.invoke(cli, ["--help"], prog_name="judgekit")
    reference = runner.invoke(plain, ["--help"], prog_name="judgekit")
    assert ours.exit_code == 0
    assert ours.output == reference.output


def test_choices_named_in_the_cli_match_their_modules() -> None:
    from judgekit.cli import agree, annotate, judgments, report, tokens
    from judgekit.compare.agree import LEVELS
    from judgekit.io.judgments import ORIENTATIONS
    from judgekit.report import FORMATS
    from judgekit.sampling import STRATEGIES
    from judgekit.store.access import ROLES

    assert report.FORMATS == FORMATS
    assert annotate.STRATEGIES == STRATEGIES
    assert agree.LEVELS == LEVELS
    assert judgments.ORIENTATIONS == ORIENTATIONS
    assert tokens.ROLES == ROLES


_PROBE = """
import json, sys
from judgekit.cli.main import main
heavy, invocations = json.loads(sys.argv[1])
for argv in invocations:
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code == 0, (argv, exc.code)
    loaded = [name for name in heavy if name in sys.modules]
    if loaded:
        print(json.dumps([argv, loaded]))
        break
"""


@pytest.mark.slow
def test_help_imports_no_heavy_library() -> None:
    """Each help, run in turn in one fresh interpreter, leaves every heavy library unimported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps([HEAVY, _help_invocations()])],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    first_heavy = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    assert first_heavy == []
    assert "Usage: judgekit" in done.stdout
