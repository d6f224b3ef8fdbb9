"""Shared pieces of the adversarial suite: run the real CLI entry point, fingerprint a store.

Every refused command must exit 2 with one ``error:`` line on stderr and leave
the store exactly as it was, so tests compare the store's bytes (or its row
counts, where SQLite may legitimately rewrite pages) before and after.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import main

REPO = Path(__file__).resolve().parents[2]
FACTS = REPO / "judgekit" / "data" / "demo" / "facts.jsonl"


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    def assert_clean_error(self, *needles: str) -> None:
        """Exit 2, exactly one stderr line starting ``error:``, no traceback."""
        assert self.code == 2, (self.code, self.out, self.err)
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        assert lines[0].startswith("error: "), self.err
        assert "Traceback" not in self.err + self.out
        for needle in needles:
            assert needle in lines[0], (needle, lines[0])


def run(*args: str, env: dict[str, str] | None = None) -> Outcome:
    """``judgekit ARGS`` through :func:`judgekit.cli.main.main`, as the console script runs it."""
    runner = CliRunner()
    with runner.isolation(env=env) as (out, err, _):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        return Outcome(code, out.getvalue().decode(errors="replace"),
                       err.getvalue().decode(errors="replace"))


def run_process(*args: str, stdout: int | None = subprocess.PIPE,
                cwd: Path | None = None) -> Outcome:
    """``python -m judgekit ARGS`` in a child process (real file descriptors)."""
    proc = subprocess.run([sys.executable, "-m", "judgekit", *args], stdout=stdout,
                          stderr=subprocess.PIPE, cwd=cwd, timeout=120, check=False)
    out = proc.stdout.decode(errors="replace") if proc.stdout is not None else ""
    return Outcome(proc.returncode, out, proc.stderr.decode(errors="replace"))


def fingerprint(path: Path) -> tuple[str, dict[str, int]]:
    """The store file's sha256 and the row count of every table."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        counts = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()
    return digest, counts


@pytest.fixture
def store_path(tmp_path: Path) -> Iterator[Path]:
    """A closed store with the demo facts, a label and an imported verdict for every item."""
    db = tmp_path / "store.db"
    assert run("import", str(FACTS), "--db", str(db)).code == 0
    labels = tmp_path / "labels.jsonl"
    rows = [json.loads(line) for line in FACTS.read_text(encoding="utf-8").splitlines()]
    labels.write_text("".join(
        json.dumps({"item_id": r["id"], "annotator": "ref", "label": r["meta"]["gold"]}) + "\n"
        for r in rows), encoding="utf-8")
    assert run("labels", "import", str(labels), "-r", "correctness", "--db", str(db)).code == 0
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(
        json.dumps({"item_id": r["id"], "judge": "outside-judge", "label": r["meta"]["gold"]})
        + "\n" for r in rows), encoding="utf-8")
    result = run("judgments", "import", str(verdicts), "-r", "correctness", "--db", str(db))
    assert result.code == 0, result.err
    yield db
