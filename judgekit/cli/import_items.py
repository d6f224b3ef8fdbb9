"""``judgekit import``: load a JSONL/CSV dataset into the store, all or nothing."""

from __future__ import annotations

from pathlib import Path

import click

from judgekit.cli._common import db_option, echo, resolve_db_path
from judgekit.errors import InputError
from judgekit.io.items import dataset_name_for, load_items
from judgekit.store import open_store


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", default=None, help="Dataset name (default: the file name, no extension).")
@db_option
@click.option(
    "--replace",
    is_flag=True,
    help="Update items whose id already exists with different content (otherwise an error).",
)
def command(file: Path, name: str | None, db: str, replace: bool) -> None:
    """Load the items in FILE (.jsonl, .csv, .tsv or .parquet) into the store as a dataset.

    The whole file is validated first; any problem stops the import with
    ``file:line: what is wrong`` and leaves the store unchanged. Re-importing the
    same file adds nothing.
    """
    dataset = name if name is not None else dataset_name_for(file)
    if not dataset.strip():
        raise InputError("--name: the dataset name must not be empty")
    items = load_items(file)
    db_path = resolve_db_path(db)
    with open_store(db_path) as store:
        changed = store.import_items(dataset, items, replace=replace)
        total = store.count_items(dataset)
    echo(
        f"imported {len(items)} item(s) from {file} into dataset {dataset!r} "
        f"({changed} new or changed; {total} in the dataset) in {db_path}"
    )
