"""``judgekit labels import|export``: human labels made outside the annotate app.

Import validates the whole file against the rubric's scale and the stored
items first; a file with any error imports nothing and the error lists each
``file:line``. Export writes every annotator's current label per item.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from judgekit.cli._common import (
    check_out_path,
    check_out_suffix,
    db_option,
    echo,
    import_file_options,
    out_format,
    read_store,
    rubric_option,
    write_out,
)
from judgekit.cli._progress import progress_bar
from judgekit.cli._streamed import export_stream
from judgekit.cli.annotate import STRATEGIES
from judgekit.progress import phase


@click.group("labels")
def command() -> None:
    """Import, export or review human labels (CSV or JSONL: item_id, annotator, label[, note])."""


@command.command("import")
@import_file_options
@click.option("--from", "tool", type=click.Choice(["label-studio", "argilla"]), default=None,
              help="FILE is a Label Studio JSON export (tasks with annotations, e.g. of tasks "
                   "written by `labels export-tasks`) or Argilla records (records.to_json).")
def import_command(
    file: Path, rubric: str, db: str, dataset: str | None, tool: str | None
) -> None:
    """Import the labels in FILE (JSONL, CSV, TSV, parquet); a bad line imports nothing."""
    from judgekit.io.labeling_tools import import_tool_labels
    from judgekit.io.labels import import_labels
    from judgekit.rubrics import load_rubric

    loaded = load_rubric(rubric)
    with read_store(db, importing=True) as store, progress_bar("labels import"):
        if tool is None:
            result = import_labels(store, file, loaded, dataset=dataset)
        else:
            result = import_tool_labels(store, file, loaded, dataset=dataset, tool=tool)
    echo(
        f"imported {result.added} label(s) from {file} "
        f"({result.unchanged} already current) for rubric {loaded.name} "
        f"[{loaded.sha256[:12]}]; annotators: {', '.join(result.annotators) or '-'}"
    )


@command.command("disagreements")
@rubric_option
@db_option
@click.option("--dataset", default=None, help="Only items of this dataset.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text, or JSON lines (one item per line).")
def disagreements_command(rubric: str, db: str, dataset: str | None, fmt: str) -> None:
    """Items whose annotators disagree, and flagged items, with each label and note.

    Items with no majority are left out of reports until someone adjudicates
    them with ``judgekit annotate --adjudicate``.
    """
    from judgekit.io.streaming import batched
    from judgekit.report_inputs import require_dataset
    from judgekit.review import iter_review_items, json_lines, text_blocks
    from judgekit.rubrics import load_rubric

    loaded = load_rubric(rubric)
    with read_store(db) as store, export_stream(None, store=store.path,
                                                always_escape=True) as handle, \
            progress_bar("labels disagreements", 2):
        require_dataset(store, dataset)
        items = iter_review_items(store, loaded, dataset=dataset)
        pieces = json_lines(items) if fmt == "json" else text_blocks(items)
        for chunk in batched(pieces, 1000):
            handle.write("".join(chunk))


@command.command("export")
@rubric_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default=None,
              help="Output format [default: from the --out suffix (.csv, .jsonl), else jsonl].")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of stdout (never the store itself).")
@click.option("--dataset", default=None, help="Only labels of this dataset.")
@click.option("--annotator", "annotators", multiple=True,
              help="Only these annotators (repeatable).")
@click.option("--labeled-only", is_flag=True,
              help="Leave out skipped items and notes or flags on unlabeled items.")
def export_command(
    rubric: str, db: str, fmt: str | None, out: str | None, dataset: str | None,
    annotators: tuple[str, ...], labeled_only: bool,
) -> None:
    """Write each annotator's current label per item, with notes, flags and skips.

    Adjudicated labels are rows with source "adjudicate"; rows with an empty
    label are skips, or notes and flags on items not labeled.
    """
    from judgekit.io.labels import ExportFormat, export_labels
    from judgekit.report_inputs import require_dataset
    from judgekit.rubrics import load_rubric

    loaded = load_rubric(rubric)
    export_format = cast(ExportFormat, out_format(out, fmt, formats=("jsonl", "csv"),
                                                  default="jsonl"))
    with read_store(db) as store, export_stream(
            out, store=store.path, dash_is_stdout=False) as handle, \
            progress_bar("labels export", 2):
        require_dataset(store, dataset)
        count = export_labels(store, loaded.sha256, handle, fmt=export_format,
                              dataset=dataset, annotators=annotators or None,
                              labeled_only=labeled_only)
    echo(f"exported {count} label(s)" + (f" to {out}" if out else ""), err=True)


@command.command("export-tasks")
@rubric_option
@db_option
@click.option("--to", "tool", type=click.Choice(["label-studio"]), default="label-studio",
              show_default=True, help="The labeling tool's task format.")
@click.option("--queue", "queue_name", default=None,
              help="A stored labeling queue (judgekit annotate draws and names them); "
                   "default: draw one with --dataset, --strategy, --sample and --seed.")
@click.option("--dataset", default=None, help="Draw the queue from this dataset only.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default="random", show_default=True)
@click.option("--sample", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--with-judge-predictions", "predictions", is_flag=True, default=False,
              help="Add the judge's verdict as each task's prediction. Off by default: Label "
                   "Studio shows predictions as pre-annotations, so annotators would see the "
                   "judge, and their labels are imported as not blind (the report leaves "
                   "them out unless --include-unblinded).")
@click.option("--no-predictions", is_flag=True, hidden=True, expose_value=False,
              help="Blind tasks (the default; kept so older scripts still run).")
@click.option("--out", type=click.Path(dir_okay=False), required=True,
              help="Tasks JSON file; the labeling config is written beside it (.xml).")
def export_tasks_command(
    rubric: str, db: str, tool: str, queue_name: str | None, dataset: str | None,
    strategy: str, sample: int, seed: int, predictions: bool, out: str,
) -> None:
    """Write a labeling queue as Label Studio tasks, blind to the judge by default.

    The judge's verdict goes in as each task's prediction only with
    --with-judge-predictions: labels made while seeing it are anchored on it, and
    a calibration against anchored labels overstates the judge's agreement.
    """
    from judgekit.cli.annotate import prepare_queue
    from judgekit.io.labeling_tools import export_tasks
    from judgekit.rubrics import load_rubric

    check_out_suffix(out, "json")
    loaded = load_rubric(rubric)
    with read_store(db) as store, progress_bar("labels export-tasks", 3):
        check_out_path(out, store=store.path)
        phase("drawing the queue")
        queue = prepare_queue(store, loaded, dataset=dataset, strategy=strategy, sample=sample,
                              seed=seed, name=queue_name)
        phase("reading items" + (" and the judge's verdicts" if predictions else ""))
        written = export_tasks(store, loaded, queue.name, queue.entries,
                               predictions=predictions)
        phase("writing tasks")
        write_out(out, written.tasks_json, store=store.path)
        config = str(Path(out).with_suffix(".xml"))
        check_out_path(config, store=store.path)
        write_out(config, written.config, store=store.path)
    shown = (f"{written.predicted} with the judge's prediction" if predictions
             else "blind: no judge predictions")
    echo(f"wrote {written.count} task(s) of queue {written.queue!r} to {out} "
         f"({shown}); labeling config: {config}")
