"""Item 2: ``judgekit demo`` deletes only a store it made itself.

``demo --out DIR`` used to delete any ``DIR/judgekit.db`` (407 judgments and 300
labels gone). The demo now marks its store (``store_meta.created_by = demo``) and
stops with one line, leaving the file byte-identical, when the mark is missing.
"""

from __future__ import annotations

from pathlib import Path

from judgekit.cli.demo import DB_NAME, made_by_demo, run_demo, step_fresh_database
from judgekit.store import open_store
from tests.adversarial.conftest import fingerprint, run


def test_demo_refuses_a_store_it_did_not_make(store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    out.mkdir()
    target = out / DB_NAME
    target.write_bytes(store_path.read_bytes())
    before = fingerprint(target)
    result = run("demo", "--out", str(out), "--base-url", "http://127.0.0.1:9/v1",
                 "--model", "m")
    result.assert_clean_error("was not made by the demo")
    assert fingerprint(target) == before
    assert sorted(p.name for p in out.iterdir()) == [DB_NAME]


def test_demo_refuses_a_file_that_is_not_a_store(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    out.mkdir()
    (out / DB_NAME).write_text("my notes\n", encoding="utf-8")
    run("demo", "--out", str(out)).assert_clean_error("was not made by the demo")
    assert (out / DB_NAME).read_text(encoding="utf-8") == "my notes\n"


def test_demo_refuses_an_explicit_db_it_did_not_make(store_path: Path, tmp_path: Path) -> None:
    before = fingerprint(store_path)
    run("demo", "--out", str(tmp_path / "o"), "--db", str(store_path)) \
        .assert_clean_error("was not made by the demo")
    assert fingerprint(store_path) == before


def test_demo_replaces_its_own_store(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    first = run_demo(out, steps=[step_fresh_database], echo=lambda _: None)
    assert made_by_demo(first.db_path)
    with open_store(first.db_path) as store:
        store.import_items("scratch", [])  # something the next demo run must clear
        store.set_meta("note", "from the first run")
    run_demo(out, steps=[step_fresh_database], echo=lambda _: None)
    with open_store(out / DB_NAME) as store:
        assert store.get_meta("created_by") == "demo"
        assert store.get_meta("note") is None
