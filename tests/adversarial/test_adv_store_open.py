"""Items 10 and 11: a store from a newer schema is refused; read commands never create one.

A mistyped ``--db`` used to create an empty store, and ``report`` then exited 3
(INSUFFICIENT DATA), which a CI gate reads as "label more". A store migrated by a
newer judgekit was opened and written as if it were current.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from judgekit.errors import StoreError
from judgekit.store import open_store
from judgekit.store.schema import known_migrations
from tests.adversarial.conftest import FACTS, fingerprint, run

#: Every command that reads a store (and those that only add to an existing one).
READERS = {
    "report": ["report", "-r", "correctness"],
    "export": ["export", "-r", "correctness"],
    "runs": ["runs"],
    "compare judges": ["compare", "judges", "-r", "correctness"],
    "compare candidates": ["compare", "candidates", "-r", "correctness",
                           "--dataset-a", "a", "--dataset-b", "b"],
    "labels export": ["labels", "export", "-r", "correctness"],
    "labels import": ["labels", "import", "LABELS", "-r", "correctness"],
    "judgments import": ["judgments", "import", "VERDICTS", "-r", "correctness"],
    "annotate": ["annotate", "-r", "correctness", "--annotator", "ann"],
    "batch status": ["batch", "status"],
    "batch collect": ["batch", "collect", "--output", "VERDICTS"],
    "estimate": ["estimate", "-r", "correctness"],
    "labels disagreements": ["labels", "disagreements", "-r", "correctness"],
    "labels export-tasks": ["labels", "export-tasks", "-r", "correctness", "--out", "TASKS"],
    "agree": ["agree", "--rubric", "correctness"],
    "plan": ["plan", "--estimate", "ppi", "-r", "correctness"],
    "queues": ["queues"],
    "tokens list": ["tokens", "list"],
    "probe imported": ["probe", "position", "-r", "preference", "--imported",
                       "--dataset", "pairs"],
    "serve": ["serve", "--port", "0"],
    # a stored dataset needs an existing store (only --data FILE may create one)
    "judge stored dataset": ["judge", "-r", "correctness", "--dataset", "facts",
                             "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
    "probe stored dataset": ["probe", "position", "-r", "preference", "--dataset", "pairs",
                             "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
    "batch prepare stored dataset": ["batch", "prepare", "-r", "correctness", "--dataset",
                                     "facts", "--base-url", "http://127.0.0.1:9/v1",
                                     "--model", "m", "--out", "TASKS"],
}


def _args(name: str, tmp_path: Path) -> list[str]:
    files = {"LABELS": tmp_path / "labels.jsonl", "VERDICTS": tmp_path / "verdicts.jsonl",
             "TASKS": tmp_path / "out" / "tasks.json"}
    files["LABELS"].write_text('{"item_id": "q01a", "annotator": "a", "label": "pass"}\n',
                               encoding="utf-8")
    files["VERDICTS"].write_text('{"item_id": "q01a", "judge": "j", "label": "pass"}\n',
                                 encoding="utf-8")
    return [str(files.get(arg, arg)) for arg in READERS[name]]


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_missing_store_is_an_error_and_is_not_created(name: str, tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "judgkit.db"
    result = run(*_args(name, tmp_path), "--db", str(missing))
    result.assert_clean_error(f"no store at {missing}")
    assert not missing.exists() and not missing.parent.exists()


def test_the_envvar_path_is_checked_the_same_way(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    result = run("report", "-r", "correctness", env={"JUDGEKIT_DB": str(missing)})
    result.assert_clean_error("no store at")
    assert not missing.exists()


def test_library_open_store_without_create(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store at"):
        open_store(tmp_path / "x.db", create=False)
    assert not (tmp_path / "x.db").exists()


def _newer(store: Path) -> str:
    """Record a migration this judgekit does not know, as a newer release would."""
    name = "9999_from_the_future"
    with sqlite3.connect(store) as conn:
        conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
                     "VALUES ('judgekit', ?, '2030-01-01 00:00:00')", [name])
    conn.close()
    return name


@pytest.mark.parametrize("args", [
    ["report", "-r", "correctness"],
    ["runs"],
    ["export", "-r", "correctness"],
    ["import", str(FACTS), "--name", "more"],
    ["labels", "export", "-r", "correctness"],
])
def test_a_store_from_a_newer_schema_is_refused_naming_both(
    args: list[str], store_path: Path
) -> None:
    future = _newer(store_path)
    before = fingerprint(store_path)
    result = run(*args, "--db", str(store_path))
    result.assert_clean_error(future, known_migrations()[-1], "upgrade judgekit")
    assert fingerprint(store_path) == before


def test_a_read_only_store_is_read_and_never_written(store_path: Path, tmp_path: Path) -> None:
    """On a read-only filesystem, reads work (even without a -shm file) and writes say why."""
    mount = _read_only_mount(tmp_path, store_path)
    db = mount / store_path.name
    assert run("runs", "--db", str(db)).code == 0
    result = run("report", "-r", "correctness", "--db", str(db))
    assert result.code in (0, 1, 3), result.err
    for args in (["import", str(FACTS), "--name", "x"],
                 ["labels", "import", str(tmp_path / "labels.jsonl"), "-r", "correctness"]):
        run(*args, "--db", str(db)).assert_clean_error("read-only")
    run("import", str(FACTS), "--db", str(mount / "new.db")).assert_clean_error("cannot create")


def _read_only_mount(tmp_path: Path, store: Path) -> Path:
    """A tmpfs holding a copy of ``store``, remounted read-only (root only; else skip)."""
    import shutil
    import subprocess

    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    shutil.copy(store, mount / store.name)
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    _MOUNTS.append(mount)
    return mount


_MOUNTS: list[Path] = []


@pytest.fixture(autouse=True)
def _unmount() -> object:
    yield None
    import subprocess

    while _MOUNTS:
        subprocess.run(["umount", str(_MOUNTS.pop())], check=False)
