"""Shared pieces of the adversarial suite: run the real CLI entry point, fingerprint a store,
and a hostile endpoint with items it can tell apart.

Every refused command must exit 2 with one ``error:`` line on stderr and leave
the store exactly as it was, so tests compare the store's bytes (or its row
counts, where SQLite may legitimately rewrite pages) before and after.

The endpoint tests run a :class:`~tests.support.hostile_server.HostileServer`;
their items carry ``ITEM:<id>`` in the prompt so the server counts calls per
item, and ``judge_process`` runs ``judgekit judge`` in its own process so it can
be interrupted or killed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import main
from judgekit.rubrics import load_rubric
from judgekit.types import Item, Rubric
from tests.support.hostile_server import HostileServer

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
    """The sha256 of the store file (and of its -wal, if any) and every table's row count.

    Read ``immutable`` so that looking leaves no -wal/-shm file behind.
    """
    wal = Path(f"{path}-wal")
    digest = hashlib.sha256(path.read_bytes()
                            + (wal.read_bytes() if wal.exists() else b"")).hexdigest()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
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


# -- the hostile endpoint ----------------------------------------------------------


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer() as server:
        yield server


@pytest.fixture
def rubric() -> Rubric:
    return load_rubric("rubrics/correctness.toml")


def make_items(n: int) -> list[Item]:
    """Items whose prompts carry ``ITEM:<id>``, so the server counts calls per item."""
    return [Item(id=f"i{k}", input=f"ITEM:i{k} What is {k}+1?", response=str(k + 1),
                 reference=str(k + 1)) for k in range(n)]


def write_items(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for item in make_items(n):
            handle.write(json.dumps({"id": item.id, "input": item.input,
                                     "response": item.response,
                                     "reference": item.reference}) + "\n")
    return path


def judge_process(base_url: str, data: Path, db: Path, *extra: str) -> subprocess.Popen[str]:
    """``judgekit judge`` in its own process (so it can be interrupted or killed)."""
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", "-r", "rubrics/correctness.toml",
         "--data", str(data), "--db", str(db), "--base-url", base_url, "--model", "m",
         "--no-progress", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def wait_until(condition: Callable[[], bool], *, limit_s: float = 300.0,
               proc: subprocess.Popen[str] | None = None) -> None:
    """Poll ``condition`` until true; fail (never hang) after ``limit_s`` or if ``proc`` ends."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"the process ended (exit {proc.returncode}) first: {err[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {limit_s:g} s")
        time.sleep(0.02)
