"""``judgekit export``: judgments with their full provenance, as JSONL or CSV."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sys
from collections.abc import Sequence
from typing import Any

import click

from judgekit.cli._common import (
    SHA256,
    check_out_path,
    db_option,
    echo,
    read_store,
    rubric_option,
    write_out,
)
from judgekit.cli._progress import progress_bar
from judgekit.progress import phase
from judgekit.textsafe import json_safe, terminal_safe
from judgekit.types import Judgment

#: Export columns, in order: every field of a judgment.
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Judgment))


def judgment_record(judgment: Judgment) -> dict[str, Any]:
    """A judgment as a plain JSON-ready dict (sampling as an object)."""
    record = dataclasses.asdict(judgment)
    record["sampling"] = dict(judgment.sampling)
    return record


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def render(judgments: Sequence[Judgment], fmt: str) -> str:
    """The export text: one JSON object per line, or CSV with a header row.

    JSONL escapes C1 controls and bidi overrides (:func:`~judgekit.textsafe.json_safe`):
    the same values, but safe to ``cat`` on a terminal.
    """
    if fmt == "jsonl":
        return "".join(
            json_safe(json.dumps(judgment_record(j), ensure_ascii=False)) + "\n"
            for j in judgments
        )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for judgment in judgments:
        record = judgment_record(judgment)
        writer.writerow([_csv_cell(record[column]) for column in COLUMNS])
    return buffer.getvalue()


@click.command("export")
@rubric_option
@db_option
@click.option("--dataset", default=None, help="Only judgments of this dataset.")
@click.option(
    "--run",
    "run_id",
    default=None,
    metavar="ID",
    help="Only the judgments of the judge this run used (its model, endpoint, sampling and "
    "dataset), cached ones included.",
)
@click.option("--variant", default=None, help='Only this presentation variant ("" = as written).')
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    default=None,
    help="Output format (default: from the --out suffix, else jsonl).",
)
@click.option("--out", default=None, metavar="FILE",
              help="Output file (default: stdout); never the store itself.")
@click.option("--history", is_flag=True, help="Every stored row, not only the latest per call.")
def command(
    rubric: str,
    db: str,
    dataset: str | None,
    run_id: str | None,
    variant: str | None,
    fmt: str | None,
    out: str | None,
    history: bool,
) -> None:
    """Write the judgments of a rubric with their provenance (judge, endpoint, rubric, sampling).

    --rubric takes a rubric file or name (its current sha256 selects the
    judgments) or the sha256 of a rubric version saved in the store.
    """
    from judgekit.rubrics import load_rubric
    from judgekit.store import JudgmentSelection

    rubric_hash = rubric if SHA256.match(rubric) else load_rubric(rubric).sha256
    if fmt is None:
        fmt = "csv" if out is not None and out.lower().endswith(".csv") else "jsonl"
    with read_store(db) as store, progress_bar("export", 3):
        if out is not None and out != "-":
            check_out_path(out, store=store.path)
        if run_id is None:
            selection = JudgmentSelection(rubric_hash=rubric_hash, dataset=dataset, variant=variant)
        else:  # the run's judge: its cached judgments count too (see docs/reports.md)
            selection = store.run_selection(
                run_id, rubric_hash=rubric_hash, dataset=dataset, variant=variant
            )
        phase("reading judgments")
        judgments = store.judgments(latest_only=not history, **selection.filters())
        phase("formatting")
        text = render(judgments, fmt)
    if out is None or out == "-":
        sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)
        sys.stdout.flush()
        destination = "stdout"
    else:
        write_out(out, text, store=store.path)
        destination = out
    echo(
        f"exported {len(judgments)} judgments (rubric {rubric_hash[:12]}) "
        f"as {fmt} to {destination}",
        err=True,
    )
