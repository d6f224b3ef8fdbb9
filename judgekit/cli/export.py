"""``judgekit export``: judgments with their full provenance, as JSONL or CSV."""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
from collections.abc import Iterable
from contextlib import closing
from typing import Any, TextIO

import click

from judgekit.cli._common import SHA256, db_option, echo, out_format, read_store, rubric_option
from judgekit.cli._progress import progress_bar
from judgekit.cli._streamed import export_stream
from judgekit.progress import advance, phase
from judgekit.textsafe import json_safe, spreadsheet_cell
from judgekit.types import Judgment

#: Export columns, in order: every field of a judgment.
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Judgment))
#: The two fields that are not plain text or numbers: an object and a boolean.
_SAMPLING_AT, _IMPORTED_AT = COLUMNS.index("sampling"), COLUMNS.index("imported")
#: First characters of a cell :func:`spreadsheet_cell` may change (a cheap test per cell).
_FORMULA_FIRST = frozenset("=+-@\t\r")


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def write_records(out: TextIO, pages: Iterable[list[dict[str, Any]]], fmt: str) -> int:
    """Write pages of judgment records; returns how many were written.

    JSONL is one object per line, with C1 controls and bidi overrides escaped
    (:func:`~judgekit.textsafe.json_safe`): the same values, but safe to ``cat`` on
    a terminal. CSV has a header row; ``sampling`` is a JSON object, booleans are
    ``true``/``false`` and missing values empty; a text cell that a spreadsheet
    would run as a formula (``=``, ``+``, ``-``, ``@`` first) starts with ``'``
    (:func:`~judgekit.textsafe.spreadsheet_cell`).
    """
    count = 0
    if fmt == "jsonl":
        encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(r, ensure_ascii=False)
        for records in pages:  # json_safe maps characters one by one: a page at once is the same
            out.write(json_safe("".join([encode(r) + "\n" for r in records])))
            count += len(records)
            advance(len(records))
        return count
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for records in pages:
        rows = [list(r.values()) for r in records]
        for row in rows:  # the csv module writes None as "" and numbers as str() does
            row[_SAMPLING_AT] = _csv_cell(row[_SAMPLING_AT])
            row[_IMPORTED_AT] = _csv_cell(row[_IMPORTED_AT])
            for at, value in enumerate(row):
                if isinstance(value, str) and value[:1] in _FORMULA_FIRST:
                    row[at] = spreadsheet_cell(value)
        writer.writerows(rows)
        count += len(records)
        advance(len(records))
    return count


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
    from judgekit.report_inputs import require_dataset
    from judgekit.rubrics import load_rubric
    from judgekit.store import JudgmentSelection
    from judgekit.store.exports import judgment_pages, snapshot

    rubric_hash = rubric if SHA256.match(rubric) else load_rubric(rubric).sha256
    fmt = out_format(out, fmt, formats=("jsonl", "csv"), default="jsonl")
    to_file = out is not None and out != "-"
    with read_store(db) as store, export_stream(out, store=store.path) as handle, \
            progress_bar("export", 2):
        require_dataset(store, dataset)
        if run_id is None:
            selection = JudgmentSelection(rubric_hash=rubric_hash, dataset=dataset, variant=variant)
        else:  # the run's judge: its cached judgments count too (see docs/reports.md)
            selection = store.run_selection(
                run_id, rubric_hash=rubric_hash, dataset=dataset, variant=variant
            )
        with snapshot(store), closing(
                judgment_pages(store, selection, latest_only=not history)) as pages:
            phase("reading judgments")
            first = next(pages, [])
            phase("writing")
            count = write_records(handle, itertools.chain([first], pages), fmt)
    echo(
        f"exported {count} judgments (rubric {rubric_hash[:12]}) "
        f"as {fmt} to {out if to_file else 'stdout'}",
        err=True,
    )
