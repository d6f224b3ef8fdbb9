"""``judgekit labels import|export``: human labels made outside the annotate app.

Import validates the whole file against the rubric's scale and the stored
items first; a file with any error imports nothing and the error lists each
``file:line``. Export writes every annotator's current label per item.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO, cast

import click

from judgekit.cli._common import db_option, import_file_options, rubric_option
from judgekit.io.labels import ExportFormat, export_labels, import_labels
from judgekit.rubrics import load_rubric
from judgekit.store import open_store


@click.group("labels")
def command() -> None:
    """Import or export human labels (CSV or JSONL: item_id, annotator, label[, note])."""


@command.command("import")
@import_file_options
def import_command(file: Path, rubric: str, db: str, dataset: str | None) -> None:
    """Import the labels in FILE (JSONL, CSV, TSV, parquet); a bad line imports nothing."""
    loaded = load_rubric(rubric)
    with open_store(db) as store:
        result = import_labels(store, file, loaded, dataset=dataset)
    click.echo(
        f"imported {result.added} label(s) from {file} "
        f"({result.unchanged} already current) for rubric {loaded.name} "
        f"[{loaded.sha256[:12]}]; annotators: {', '.join(result.annotators) or '-'}"
    )


@command.command("export")
@rubric_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl",
              show_default=True, help="Output format.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of stdout.")
@click.option("--dataset", default=None, help="Only labels of this dataset.")
@click.option("--annotator", "annotators", multiple=True,
              help="Only these annotators (repeatable).")
def export_command(
    rubric: str, db: str, fmt: str, out: Path | None, dataset: str | None,
    annotators: tuple[str, ...],
) -> None:
    """Write each annotator's current label per item (skips left out)."""
    loaded = load_rubric(rubric)
    export_format = cast(ExportFormat, fmt)
    with open_store(db) as store, ExitStack() as stack:
        handle: TextIO = sys.stdout
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            handle = stack.enter_context(out.open("w", encoding="utf-8", newline=""))
        count = export_labels(store, loaded.sha256, handle, fmt=export_format,
                              dataset=dataset, annotators=annotators or None)
    click.echo(f"exported {count} label(s)" + (f" to {out}" if out else ""), err=True)
