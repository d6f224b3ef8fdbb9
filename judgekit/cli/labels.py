"""``judgekit labels import|export``: human labels made outside the annotate app.

Import validates the whole file against the rubric's scale and the stored
items first; a file with any error imports nothing and the error lists each
``file:line``. Export writes every annotator's current label per item.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import cast

import click

from judgekit.cli._common import (
    check_out_path,
    db_option,
    echo,
    import_file_options,
    read_store,
    resolve_db_path,
    rubric_option,
    write_out,
)
from judgekit.io.labels import ExportFormat, export_labels, import_labels
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.textsafe import terminal_safe


@click.group("labels")
def command() -> None:
    """Import or export human labels (CSV or JSONL: item_id, annotator, label[, note])."""


@command.command("import")
@import_file_options
def import_command(file: Path, rubric: str, db: str, dataset: str | None) -> None:
    """Import the labels in FILE (JSONL, CSV, TSV, parquet); a bad line imports nothing."""
    loaded = load_rubric(rubric)
    with open_store(resolve_db_path(db), create=False) as store:
        result = import_labels(store, file, loaded, dataset=dataset)
    echo(
        f"imported {result.added} label(s) from {file} "
        f"({result.unchanged} already current) for rubric {loaded.name} "
        f"[{loaded.sha256[:12]}]; annotators: {', '.join(result.annotators) or '-'}"
    )


@command.command("export")
@rubric_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl",
              show_default=True, help="Output format.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of stdout (never the store itself).")
@click.option("--dataset", default=None, help="Only labels of this dataset.")
@click.option("--annotator", "annotators", multiple=True,
              help="Only these annotators (repeatable).")
def export_command(
    rubric: str, db: str, fmt: str, out: str | None, dataset: str | None,
    annotators: tuple[str, ...],
) -> None:
    """Write each annotator's current label per item (skips left out)."""
    loaded = load_rubric(rubric)
    export_format = cast(ExportFormat, fmt)
    buffer = io.StringIO()
    with read_store(db) as store:
        if out is not None:
            check_out_path(out, store=store.path)
        count = export_labels(store, loaded.sha256, buffer, fmt=export_format,
                              dataset=dataset, annotators=annotators or None)
        if out is not None:
            write_out(out, buffer.getvalue(), store=store.path)
    if out is None:
        text = buffer.getvalue()
        sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)
        sys.stdout.flush()
    echo(f"exported {count} label(s)" + (f" to {out}" if out else ""), err=True)
