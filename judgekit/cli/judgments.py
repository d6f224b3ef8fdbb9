"""``judgekit judgments import``: judge verdicts made elsewhere, stored as imported runs.

The file is validated completely first (unknown item ids, labels off the
rubric's scale, bad ``order``/``status``/``sample`` values are ``file:line``
errors and nothing is imported). Re-importing the same verdicts adds nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from judgekit.cli._common import echo, import_file_options, read_store
from judgekit.cli._progress import progress_bar
from judgekit.types import Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.io.judgments import Orientation
    from judgekit.io.verdict_store import JudgmentImportResult

#: How a verdict's label is oriented (``judgekit.io.judgments.ORIENTATIONS``, named here
#: for a fast ``--help``).
ORIENTATIONS = ("presented", "original")

_FIELDS_HELP = """\b
One verdict per JSONL line or CSV/TSV/parquet row (docs/import.md):
  item_id      the item's id (required)
  judge        judge name (required unless --judge is given)
  label        the verdict, on the rubric's scale (required when status is ok)
  order        AB (as written, default) or BA (shown with the responses swapped)
  orientation  of a BA label: presented (names the slots as shown; mapped back)
               or original (already mapped back); default --orientation
  sample       repeated-sample index (default 0)
  status       ok (default), api_error, timeout, rate_limited, parse_error,
               refusal, truncated (a failure has no label)
  reasoning    the judge's explanation
  score        a number (default: the label's score on the scale)
  raw          the grader's raw output, stored as the raw text
  dataset      the item's dataset (else --dataset, else the one holding the id)
"""


@click.group("judgments")
def command() -> None:
    """Judge verdicts made elsewhere (item_id, judge, label[, order, sample, status, raw])."""


@command.command("import", epilog=_FIELDS_HELP)
@import_file_options
@click.option("--judge", default=None, help="Import only this judge's verdicts; also the "
              "judge name for lines without a 'judge' field.")
@click.option("--orientation", type=click.Choice(ORIENTATIONS), default="presented",
              show_default=True,
              help="How BA labels are written when a line has no 'orientation' field: "
                   "'presented' = as the judge saw the swapped pair (mapped back here), "
                   "'original' = already mapped back to the original order.")
def import_command(
    file: Path, rubric: str, db: str, dataset: str | None, judge: str | None,
    orientation: Orientation,
) -> None:
    """Import the verdicts in FILE as runs of kind "import" (one per judge and dataset)."""
    from judgekit.io.verdict_store import import_judgments
    from judgekit.rubrics import load_rubric

    loaded = load_rubric(rubric)
    with read_store(db, importing=True) as store, progress_bar("judgments import"):
        result = import_judgments(store, file, loaded, dataset=dataset, judge=judge,
                                  orientation=orientation)
    echo_import(result, str(file), loaded)


def echo_import(result: JudgmentImportResult, source: str, rubric: Rubric) -> None:
    """The import summary: counts, each judge (with its model where known), runs, warnings."""
    echo(
        f"imported {result.added} verdict(s) from {source} ({result.unchanged} already stored) "
        f"for rubric {rubric.name} [{rubric.sha256[:12]}]"
    )
    for name in result.judges:
        model = result.models.get(name)
        echo(f"  judge {name}" + (f" (model {model})" if model and model != name else ""))
    for run_id in result.runs:
        echo(f"  run {run_id}")
    for warning in result.warnings:
        echo(f"warning: {warning}", err=True)
