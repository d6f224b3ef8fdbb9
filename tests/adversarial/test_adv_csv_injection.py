"""CSV exports do not carry formulas into a spreadsheet, and a terminal never sees raw controls.

A judge's reasoning or an annotator's note such as ``=HYPERLINK("http://...")``
runs as a formula when the CSV is opened in a spreadsheet: OWASP advises a
leading ``'`` for every cell starting with ``=``, ``+``, ``-``, ``@``, tab or
carriage return. An export written to a terminal device (``--out /dev/tty``)
shows control codes escaped, as stdout does.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judgekit.textsafe import spreadsheet_cell
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply

REPO = Path(__file__).resolve().parents[2]
FORMULA = '=HYPERLINK("http://evil.example","click")'
ESCAPE = "\x1b]2;owned\x07"


def responder(body: dict[str, Any]) -> Reply:
    return Reply(json.dumps({"reasoning": FORMULA + ESCAPE, "verdict": "pass"}))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("csv")
    data = tmp / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "input": f"What is {i}+1?",
                                        "response": str(i + 1), "reference": str(i + 1)}) + "\n"
                            for i in range(3)), encoding="utf-8")
    db = tmp / "j.db"
    with OpenAIServer(responder) as server:
        assert run_cli("judge", "-r", "correctness", "--data", str(data), "--db", str(db),
                       "--base-url", server.base_url, "--model", "m", "--no-progress")[0] == 0
    labels = tmp / "labels.jsonl"
    notes = [FORMULA, "+1+2", "@SUM(A1)"]
    labels.write_text("".join(json.dumps({"item_id": f"i{i}", "label": "pass",
                                          "annotator": "ann", "note": notes[i]}) + "\n"
                              for i in range(3)), encoding="utf-8")
    assert run_cli("labels", "import", str(labels), "-r", "correctness", "--db", str(db))[0] == 0
    return db


def test_cells_that_would_run_as_formulas_start_with_a_quote(store: Path) -> None:
    code, out, err = run_cli("export", "-r", "correctness", "--db", str(store),
                             "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 3
    assert all(r["reasoning"].startswith("'=HYPERLINK(") for r in rows)
    assert all(r["score"] == "1.0" for r in rows)
    code, out, err = run_cli("labels", "export", "-r", "correctness", "--db", str(store),
                             "--format", "csv")
    assert code == 0, err
    notes = sorted(r["note"] for r in csv.DictReader(io.StringIO(out)))
    assert notes == ["'+1+2", "'=HYPERLINK(\"http://evil.example\",\"click\")", "'@SUM(A1)"]
    # JSONL keeps every value as it is
    code, out, err = run_cli("labels", "export", "-r", "correctness", "--db", str(store))
    assert FORMULA in {json.loads(line)["note"] for line in out.splitlines()}


@pytest.mark.parametrize(("cell", "safe"), [
    ("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-2+3", "'-2+3"), ("@x", "'@x"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("-1.5", "-1.5"), ("+3", "+3"), ("-2e5", "-2e5"),
    ("plain", "plain"), ("", ""), ("a=b", "a=b"),
])
def test_spreadsheet_cell(cell: str, safe: str) -> None:
    assert spreadsheet_cell(cell) == safe


def test_an_export_to_a_terminal_device_escapes_controls(store: Path) -> None:
    master, slave = pty.openpty()
    try:
        tty = os.ttyname(slave)
        proc = subprocess.run(
            [sys.executable, "-m", "judgekit", "export", "-r", "correctness", "--db",
             str(store), "--format", "csv", "--out", tty],
            env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        os.set_blocking(master, False)
        seen = b""
        try:
            while chunk := os.read(master, 65536):
                seen += chunk
        except (BlockingIOError, OSError):
            pass
    finally:
        os.close(master)
        os.close(slave)
    assert b"HYPERLINK" in seen
    assert b"\x1b" not in seen and b"\x07" not in seen
    assert b"\\x1b]2;owned\\x07" in seen
