"""build_report pauses the cyclic garbage collector and leaves it as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.report.build import build_report, collector_paused
from judgekit.rubrics import load_rubric
from judgekit.store import open_store


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_collector_is_off_inside_and_restored_after(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failing report")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled(collector_on: None) -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_build_report_restores_the_collector(tmp_path: Path, collector_on: None) -> None:
    rubric = load_rubric("preference")
    with open_store(tmp_path / "s.db") as store:
        store.save_rubric(rubric)
        build_report(store, rubric)  # an empty store: a report that says so
    assert gc.isenabled()
