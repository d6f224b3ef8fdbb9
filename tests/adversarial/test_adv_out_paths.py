"""Item 1 and the --out part of item 8: no --out can destroy the store or end in a traceback.

``report --out a.db`` used to replace the SQLite file with the report, and
``labels export --out`` truncated it; a symlink or a hard link to the store, or
its ``-wal`` file, must be refused the same way, and the store stay byte-identical.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.adversarial.conftest import fingerprint, run, run_process

#: (command line before --db/--out) for every command that writes a file.
WRITERS = {
    "report": ["report", "-r", "correctness"],
    "export": ["export", "-r", "correctness"],
    "labels export": ["labels", "export", "-r", "correctness"],
}


def _names_for_the_store(store: Path) -> dict[str, Path]:
    """Every way to name the store (or a file SQLite keeps beside it)."""
    link = store.parent / "link-to-store.db"
    link.symlink_to(store)
    hard = store.parent / "hard-link.db"
    os.link(store, hard)
    relative = Path(os.path.relpath(store))
    return {"same path": store, "relative": relative, "symlink": link, "hard link": hard,
            "wal": Path(f"{store}-wal"), "shm": Path(f"{store}-shm")}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_out_naming_the_store_is_refused_and_the_store_unchanged(
    command: str, store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before = fingerprint(store_path)
    for how, out in _names_for_the_store(store_path).items():
        result = run(*WRITERS[command], "--db", str(store_path), "--out", str(out))
        result.assert_clean_error("is the store")
        assert fingerprint(store_path) == before, how
    # the symlink is still a symlink to the store: nothing was renamed over it
    assert (tmp_path / "link-to-store.db").is_symlink()


def test_db_given_through_a_symlink_still_protects_the_real_file(store_path: Path) -> None:
    link = store_path.parent / "alias.db"
    link.symlink_to(store_path)
    before = fingerprint(store_path)
    run("report", "-r", "correctness", "--db", str(link), "--out", str(store_path)) \
        .assert_clean_error("is the store")
    assert fingerprint(store_path) == before


def test_out_through_a_symlink_writes_the_target_and_keeps_the_link(
    store_path: Path, tmp_path: Path
) -> None:
    target = tmp_path / "real-report.md"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "report-link.md"
    link.symlink_to(target)
    result = run("report", "-r", "correctness", "--db", str(store_path), "--out", str(link))
    assert result.code == 3  # no judgments: INSUFFICIENT DATA, but the file is written
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text(encoding="utf-8").startswith("# judgekit calibration report")


@pytest.fixture
def devices(tmp_path: Path) -> dict[str, Path]:
    """Private copies of /dev/null and /dev/full (root only; else skip).

    The tests never name the real devices as --out: code that renamed over its
    --out (the bug) would replace the machine's /dev/null with a regular file.
    """
    made = {}
    for name, minor in (("null", 3), ("full", 7)):
        path = tmp_path / f"dev-{name}"
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        except (PermissionError, OSError):
            pytest.skip("cannot make device nodes here (needs root)")
        made[name] = path
    return made


def test_out_to_a_device_is_written_through_not_renamed_over(
    store_path: Path, devices: dict[str, Path]
) -> None:
    null = devices["null"]
    result = run("export", "-r", "correctness", "--db", str(store_path), "--out", str(null))
    assert result.code == 0, result.err
    assert null.is_char_device()


@pytest.mark.parametrize(
    ("out", "needle"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 300 + ".md", "too long"),
        ("/".join(["d"] * 2100) + "/r.md", "too long"),
        ("/proc/self/comm", "/proc"),
        ("/sys/kernel/x.md", "/sys"),
        ("FULL", "No space left"),  # a private /dev/full, see ``devices``
    ],
)
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_bad_out_paths_are_one_line_errors(
    command: str, out: str, needle: str, store_path: Path, devices: dict[str, Path]
) -> None:
    out = str(devices["full"]) if out == "FULL" else out
    before = fingerprint(store_path)
    result = run(*WRITERS[command], "--db", str(store_path), "--out", out)
    result.assert_clean_error(needle)
    assert fingerprint(store_path) == before


def test_out_that_is_a_folder_is_refused(store_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "folder.md"
    folder.mkdir()
    run("report", "-r", "correctness", "--db", str(store_path), "--out", str(folder)) \
        .assert_clean_error("folder")


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_stdout_on_a_full_disk_is_one_line(command: str, store_path: Path) -> None:
    with open("/dev/full", "wb") as full:
        result = run_process(*WRITERS[command], "--db", str(store_path), stdout=full.fileno())
    result.assert_clean_error("No space left")
    assert "Exception ignored" not in result.err


def test_a_failed_write_keeps_the_previous_report(store_path: Path, tmp_path: Path) -> None:
    """The report is renamed into place: a refused or failed write never leaves half a file."""
    out = tmp_path / "report.md"
    assert run("report", "-r", "correctness", "--db", str(store_path),
               "--out", str(out)).code == 3
    first = out.read_bytes()
    mode = out.stat().st_mode
    assert run("report", "-r", "correctness", "--db", str(store_path),
               "--out", str(out)).code == 3
    assert out.stat().st_mode == mode
    assert out.read_bytes().split(b"| Generated")[0] == first.split(b"| Generated")[0]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []
