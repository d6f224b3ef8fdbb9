"""``judgekit import``: load a dataset into the store, all or nothing; or, with ``--from``,
another eval tool's judge run (its items and its grader's verdicts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from judgekit.cli._common import db_option, echo, resolve_db_path
from judgekit.cli._progress import progress_bar
from judgekit.errors import InputError
from judgekit.io.items import dataset_name_for, import_item_file

#: The tools ``--from`` reads (judgekit.io.tools.TOOLS, listed here to keep --help fast).
TOOL_CHOICES = ("promptfoo", "inspect", "deepeval", "lm-eval", "openai-batch")


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", default=None, help="Dataset name (default: the file name, no extension).")
@db_option
@click.option(
    "--replace",
    is_flag=True,
    help="Update items whose id already exists with different content (otherwise an error).",
)
@click.option("--from", "tool", type=click.Choice(TOOL_CHOICES), default=None,
              help="FILE is this tool's output: import its items and its graders' verdicts as "
                   "imported judge runs (promptfoo eval -o results.json/.jsonl/.yaml/.csv, an "
                   "Inspect AI .eval log, DeepEval's .deepeval/.latest_test_run.json or "
                   "evaluate() result as JSON, lm-eval --log_samples JSONL, an OpenAI Batch "
                   "output file). Needs --rubric.")
@click.option("-r", "--rubric", default=None,
              help="With --from: the rubric the tool's verdicts are on (name or .toml file).")
@click.option("--judge", default=None, metavar="NAME",
              help="With --from: the judge's name (default: the tool's grader model).")
@click.option("--grader", "--scorer", "--metric", "--assertion", "grader", default=None,
              metavar="NAME",
              help="With --from: import only this grader (an Inspect scorer, a DeepEval or "
                   "lm-eval metric, a promptfoo assertion's metric or type; in a promptfoo "
                   "CSV a named metric, or Status for each test's overall status); by default "
                   "each grader in the file is imported as its own judge.")
@click.option("--id-from", default=None, metavar="custom_id|metadata.FIELD",
              help="With --from openai-batch: where a line's item id is: its custom_id "
                   "(default) or the request body's metadata.FIELD in --requests.")
@click.option("--strip-prefix", default=None, metavar="TEXT",
              help="With --from openai-batch: drop this prefix from each item id "
                   "(judge- of judge-arith-01).")
@click.option("--requests", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="With --from openai-batch: the batch input file (the requests), for "
                   "--id-from metadata.FIELD and the model of failed lines.")
def command(file: Path, name: str | None, db: str, replace: bool, tool: str | None,
            rubric: str | None, judge: str | None, grader: str | None, id_from: str | None,
            strip_prefix: str | None, requests: Path | None) -> None:
    """Load the items in FILE (.jsonl, .csv, .tsv or .parquet) into the store as a dataset.

    The whole file is validated first; any problem stops the import with
    ``file:line: what is wrong`` and leaves the store unchanged. Re-importing the
    same file adds nothing. With --from TOOL, FILE is another eval tool's output
    (see docs/import.md for each tool's field mapping).
    """
    dataset = name if name is not None else dataset_name_for(file)
    if not dataset.strip():
        raise InputError("--name: the dataset name must not be empty")
    if tool is not None:
        options = {"id_from": id_from, "strip_prefix": strip_prefix, "requests": requests}
        _import_tool(file, tool, dataset, db, replace, rubric, judge, grader, options)
        return
    if any(v is not None for v in (rubric, judge, grader, id_from, strip_prefix, requests)):
        raise InputError("--rubric, --judge, --grader, --id-from, --strip-prefix and "
                         "--requests go with --from TOOL")
    db_path = resolve_db_path(db)
    with progress_bar("import"):
        done = import_item_file(db_path, file, dataset, replace=replace)
    # an unchanged file imports nothing: say it was checked, not imported
    verb, into = ("imported", "into") if done.changed else ("checked", "against")
    echo(
        f"{verb} {done.items} item(s) from {file} {into} dataset {dataset!r} "
        f"({done.changed} new or changed; {done.total} in the dataset) in {db_path}"
    )


def _import_tool(file: Path, tool: str, dataset: str, db: str, replace: bool,
                 rubric: str | None, judge: str | None, grader: str | None,
                 options: dict[str, Any]) -> None:
    from judgekit.cli.judgments import echo_import
    from judgekit.io.tools import import_tool_run, read_tool
    from judgekit.rubrics import load_rubric
    from judgekit.store import open_store

    if rubric is None:
        raise InputError(f"--from {tool} needs --rubric (the rubric its verdicts are on)")
    loaded = load_rubric(rubric)
    run = read_tool(tool, file, loaded, grader, **options)
    db_path = resolve_db_path(db)
    with open_store(db_path, defer_migrations=True) as store:
        result = import_tool_run(store, run, loaded, source=file.name, dataset=dataset,
                                 judge=judge, replace=replace)
    if run.items:
        verb, into = ("imported", "into") if result.items_changed else ("checked", "against")
        echo(f"{verb} {result.items} item(s) from {file} {into} dataset {dataset!r} "
                   f"({result.items_changed} new or changed) in {db_path}")
    echo_import(result.verdicts, f"{file} ({tool})", loaded)
    for found in run.graders:  # which grader became which judge, always said
        echo(f"  grader: {found.kind} {found.name!r} -> judge "
             f"{judge if judge is not None else found.judge}")
