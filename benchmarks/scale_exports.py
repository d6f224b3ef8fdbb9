"""The ``exports`` step group of ``bench_scale.py``: exports and label commands at scale.

Each judgekit command is set against a bare baseline run in the same command:
``sqlite3`` reading the same rows with the same query and writing the same kind
of file with the ``json`` module (one ``json.dumps`` of a plain dict per row), so
the ratio shows what judgekit adds on top of reading and writing the rows.

- ``export`` (JSONL and CSV): every judge's latest verdicts, written to a file;
- ``labels export``: every annotator's latest label and each adjudication;
- ``labels disagreements --format json``: the labels read item by item, the
  items with more than one label or a flag written as JSON lines;
- ``labels export-tasks --with-judge-predictions``: 100 tasks drawn at random,
  the items read and written as a JSON list (run on a copy: it saves its queue).
"""

from __future__ import annotations

import csv
import itertools
import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

#: The rubric's latest judgment per call, in insertion order.
_LATEST_JUDGMENTS = (
    "SELECT * FROM judgments WHERE id IN (SELECT MAX(id) FROM judgments WHERE rubric_hash = ? "
    "GROUP BY cache_key) ORDER BY id"
)
_LATEST_LABELS = (
    "SELECT dataset, item_id, annotator, label, note, flagged, blind, seconds, created_at, "
    "source FROM labels WHERE id IN (SELECT MAX(id) FROM labels WHERE rubric_hash = ? AND "
    "source != 'adjudicate' GROUP BY dataset, item_id, annotator) ORDER BY {order}"
)
_TASKS = 100


def commands(judgekit: str, rubric: str, db: Path, folder: Path,
             ) -> list[tuple[str, list[str], str]]:
    """``(step, judgekit argv, baseline kind)`` of each step of the group."""
    base = ["--rubric", rubric, "--db", str(db)]
    tasks_db = folder / "tasks-copy.db"
    return [
        ("export (JSONL file)", [judgekit, "export", *base, "--out",
                                 str(folder / "export.jsonl")], "judgments"),
        ("export --format csv", [judgekit, "export", *base, "--format", "csv", "--out",
                                 str(folder / "export.csv")], "judgments-csv"),
        ("labels export (JSONL file)", [judgekit, "labels", "export", *base, "--out",
                                        str(folder / "labels.jsonl")], "labels"),
        ("labels disagreements --format json",
         ["sh", "-c", f'exec "$0" "$@" > {folder / "disagreements.jsonl"}', judgekit, "labels",
          "disagreements", *base, "--format", "json"], "disagreements"),
        (f"labels export-tasks ({_TASKS}, with predictions)",
         [judgekit, "labels", "export-tasks", "--rubric", rubric, "--db", str(tasks_db),
          "--sample", str(_TASKS), "--with-judge-predictions", "--out",
          str(folder / "tasks.json")], "tasks"),
    ]


def baseline(kind: str, db: str, out: str) -> None:
    """The bare counterpart of one step: the same rows read with sqlite3, written with json."""
    conn = sqlite3.connect(db)
    rubric = conn.execute("SELECT sha256 FROM rubrics LIMIT 1").fetchone()[0]
    with open(out, "w", encoding="utf-8", newline="") as handle:
        _BASELINES[kind](conn, rubric, handle.write)
    conn.close()


def _judgments(conn: sqlite3.Connection, rubric: str, write: Callable[[str], object]) -> None:
    _json_lines(conn.execute(_LATEST_JUDGMENTS, [rubric]), write)


def _json_lines(cursor: sqlite3.Cursor, write: Callable[[str], object]) -> None:
    """Each row of ``cursor`` as a JSON object of its columns, one per line."""
    names = [column[0] for column in cursor.description]
    while rows := cursor.fetchmany(5000):
        write("".join(json.dumps(dict(zip(names, row, strict=True)), ensure_ascii=False) + "\n"
                      for row in rows))


def _judgments_csv(conn: sqlite3.Connection, rubric: str,
                   write: Callable[[str], object]) -> None:
    cursor = conn.execute(_LATEST_JUDGMENTS, [rubric])
    writer = csv.writer(_Writer(write), lineterminator="\n")
    writer.writerow([column[0] for column in cursor.description])
    while rows := cursor.fetchmany(5000):
        writer.writerows(rows)


class _Writer:
    def __init__(self, write: Callable[[str], object]) -> None:
        self.write = write


def _labels(conn: sqlite3.Connection, rubric: str, write: Callable[[str], object]) -> None:
    _json_lines(conn.execute(_LATEST_LABELS.format(order="id"), [rubric]), write)


def _disagreements(conn: sqlite3.Connection, rubric: str,
                   write: Callable[[str], object]) -> None:
    rows = conn.execute(_LATEST_LABELS.format(order="dataset, item_id, annotator"), [rubric])
    for (dataset, item_id), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        said = list(group)
        if len({r[3] for r in said if r[3] is not None}) > 1 or any(r[5] for r in said):
            write(json.dumps({"dataset": dataset, "item_id": item_id, "labels": [
                {"annotator": r[2], "label": r[3], "note": r[4], "flagged": bool(r[5]),
                 "blind": bool(r[6])} for r in said]}, ensure_ascii=False) + "\n")


def _tasks(conn: sqlite3.Connection, rubric: str, write: Callable[[str], object]) -> None:
    ids = [row[0] for row in conn.execute("SELECT id FROM items ORDER BY rowid")]
    chosen = random.Random(0).sample(ids, min(_TASKS, len(ids)))
    marks = ", ".join("?" * len(chosen))
    conn.row_factory = sqlite3.Row
    items = conn.execute(f"SELECT * FROM items WHERE id IN ({marks})", chosen).fetchall()
    verdicts = conn.execute(
        f"SELECT item_id, label FROM judgments WHERE rubric_hash = ? AND item_id IN ({marks})",
        [rubric, *chosen]).fetchall()
    by_item = {row["item_id"]: row["label"] for row in verdicts}
    write(json.dumps([{"data": dict(item), "prediction": by_item.get(item["id"])}
                      for item in items], ensure_ascii=False, indent=1) + "\n")


_BASELINES: dict[str, Callable[[sqlite3.Connection, str, Callable[[str], object]], None]] = {
    "judgments": _judgments,
    "judgments-csv": _judgments_csv,
    "labels": _labels,
    "disagreements": _disagreements,
    "tasks": _tasks,
}

#: What the table's footnote says of these baselines.
BASELINE_NOTE = ("exports = sqlite3 reads of the same rows, json.dumps / csv per row to a file "
                 "(export-tasks: 100 random items and their verdicts)")

__all__ = ["BASELINE_NOTE", "baseline", "commands"]

