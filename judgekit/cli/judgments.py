"""``judgekit judgments import``: judge verdicts made elsewhere, stored as imported runs.

The file is validated completely first (unknown item ids, labels off the
rubric's scale, bad ``order``/``status``/``sample`` values are ``file:line``
errors and nothing is imported). Re-importing the same verdicts adds nothing.
"""

from __future__ import annotations

from pathlib import Path

import click

from judgekit.cli._common import import_file_options
from judgekit.io.judgments import import_judgments
from judgekit.rubrics import load_rubric
from judgekit.store import open_store


@click.group("judgments")
def command() -> None:
    """Judge verdicts made elsewhere (JSONL: item_id, judge, label[, order, sample, status])."""


@command.command("import")
@import_file_options
@click.option("--judge", default=None, help="Import only this judge's verdicts; also the "
              "judge name for lines without a 'judge' field.")
def import_command(
    file: Path, rubric: str, db: str, dataset: str | None, judge: str | None
) -> None:
    """Import the verdicts in FILE as runs of kind "import" (one per judge and dataset)."""
    loaded = load_rubric(rubric)
    with open_store(db) as store:
        result = import_judgments(store, file, loaded, dataset=dataset, judge=judge)
    click.echo(
        f"imported {result.added} verdict(s) from {file} ({result.unchanged} already stored) "
        f"for rubric {loaded.name} [{loaded.sha256[:12]}]; judges: "
        f"{', '.join(result.judges) or '-'}"
    )
    for run_id in result.runs:
        click.echo(f"  run {run_id}")
