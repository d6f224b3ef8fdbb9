"""The store on real SQLite files: schema, round trips, latest-wins, concurrency, durability."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
from sqlite_utils import Database, Migrations

from judgekit.errors import InputError, StoreError
from judgekit.store import QueueEntry, RunRecord, Store, open_store, resolve_db_path
from judgekit.store.schema import MIGRATION_SET, initial, migrations
from judgekit.types import Item, Judgment, Label, Rubric, Scale, ScaleLevel

RUBRIC_HASH = "r" * 64


def make_run(run_id: str = "run-1", **overrides: object) -> RunRecord:
    fields: dict[str, object] = {
        "id": run_id,
        "kind": "judge",
        "dataset": "ds",
        "rubric_hash": RUBRIC_HASH,
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
        "sampling": {"temperature": 0.0, "seed": 0},
        "capabilities": {"json_schema": True},
        "judgekit_version": "0.1.0",
        "started_at": "2026-01-01T00:00:00+00:00",
    }
    fields.update(overrides)
    return RunRecord(**fields)  # type: ignore[arg-type]


def make_judgment(item_id: str = "i1", **overrides: object) -> Judgment:
    fields: dict[str, object] = {
        "run_id": "run-1",
        "dataset": "ds",
        "item_id": item_id,
        "sample_index": 0,
        "status": "ok",
        "label": "pass",
        "score": 1.0,
        "reasoning": "because",
        "raw_text": '{"verdict": "pass"}',
        "model_requested": "m",
        "model_returned": "m-2026",
        "base_url": "http://127.0.0.1:9/v1",
        "sampling": {"temperature": 0.0, "seed": 0},
        "rubric_name": "correct",
        "rubric_version": "1",
        "rubric_hash": RUBRIC_HASH,
        "cache_key": f"key-{item_id}",
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "latency_ms": 12.5,
        "finish_reason": "stop",
        "judgekit_version": "0.1.0",
        "item_hash": "h",
    }
    fields.update(overrides)
    return Judgment(**fields)  # type: ignore[arg-type]


def make_label(item_id: str = "i1", label: str | None = "pass", **overrides: object) -> Label:
    fields: dict[str, object] = {
        "dataset": "ds",
        "item_id": item_id,
        "rubric_hash": RUBRIC_HASH,
        "annotator": "ann",
        "label": label,
    }
    fields.update(overrides)
    return Label(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = open_store(tmp_path / "store.db")
    yield opened  # type: ignore[misc]
    opened.close()


@pytest.fixture
def run_store(store: Store) -> Store:
    store.create_run(make_run())
    return store


# -- opening -------------------------------------------------------------------


def test_open_creates_parent_dirs_wal_and_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "j.db"
    with open_store(path) as store:
        assert store.path == path
        assert path.exists()
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 30_000
        assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_path_resolution_flag_env_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEKIT_DB", raising=False)
    assert resolve_db_path(None) == tmp_path / "judgekit.db"
    monkeypatch.setenv("JUDGEKIT_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path("flag.db") == tmp_path / "flag.db"
    with open_store() as store:
        assert store.path == tmp_path / "env.db"
    assert (tmp_path / "env.db").exists()


def test_migrations_are_named_recorded_and_applied_once(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    open_store(path).close()
    open_store(path).close()
    conn = sqlite3.connect(path)
    applied = conn.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [MIGRATION_SET]
    ).fetchall()
    conn.close()
    assert [name for (name,) in applied] == [m.name for m in migrations._migrations]
    assert applied[0][0] == "0001_initial"


def test_store_of_the_first_release_gains_the_confidence_column(tmp_path: Path) -> None:
    """A file migrated to 0001 only (older judgekit) opens, keeps its rows, reads None."""
    path = tmp_path / "old.db"
    db = Database(str(path))
    first = Migrations(MIGRATION_SET)
    first(name="0001_initial")(initial)
    first.apply(db)
    db.conn.execute("INSERT INTO runs (id, kind, dataset, rubric_hash, model, base_url, "
                    "judgekit_version, started_at) VALUES ('run-1', 'judge', 'ds', ?, 'm', "
                    "'http://h/v1', '0.1.0', '2026')", [RUBRIC_HASH])
    db.conn.execute(
        "INSERT INTO judgments (run_id, dataset, item_id, sample_index, status, label, "
        "model_requested, base_url, rubric_name, rubric_version, rubric_hash, cache_key, "
        "created_at) VALUES ('run-1', 'ds', 'i1', 0, 'ok', 'pass', 'm', 'http://h/v1', 'c', "
        "'1', ?, 'old-key', '2026')", [RUBRIC_HASH])
    db.conn.commit()
    db.conn.close()
    with open_store(path) as store:
        old = store.cached_judgments(["old-key"])["old-key"]
        assert old.label == "pass" and old.confidence is None
        store.record_judgment(make_judgment("i2", confidence=0.625))
        assert store.cached_judgments(["key-i2"])["key-i2"].confidence == 0.625


def test_hot_query_indexes_exist(store: Store) -> None:
    indexes = {
        row[1]: row[2]
        for row in store._conn.execute("SELECT type, name, tbl_name FROM sqlite_master")
        if row[0] == "index"
    }
    assert {"judgments_by_cache_key", "judgments_by_rubric_dataset", "judgments_by_run",
            "labels_by_key"} <= set(indexes)
    plan = store._conn.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM judgments WHERE cache_key = ?", ["x"]
    ).fetchall()
    assert "judgments_by_cache_key" in str(plan)


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all, just some bytes" * 100)
    with pytest.raises(StoreError, match="cannot open store"):
        open_store(bad)


# -- items -----------------------------------------------------------------------


def test_items_round_trip_and_order(store: Store) -> None:
    items = [
        Item(id="b", input="q1", response="r1", reference="ref", slice="s1", cluster="c",
             meta={"lang": "en", "n": 1}),
        Item(id="a", input="q2", response_a="x", response_b="y"),
    ]
    assert store.import_items("ds", items) == 2
    assert store.get_item("ds", "b") == items[0]
    assert store.get_item("ds", "a") == items[1]
    assert store.get_item("ds", "zzz") is None
    assert store.get_item("other", "a") is None
    assert [item.id for item in store.iter_items("ds")] == ["b", "a"]
    assert store.count_items("ds") == 2
    assert store.count_items("nope") == 0
    assert store.datasets() == ["ds"]
    assert store.item_ids("ds") == ["b", "a"]
    assert set(store.items_by_ids("ds", ["a", "missing"])) == {"a"}


def test_iter_items_pages_through_everything(store: Store) -> None:
    items = [Item(id=f"i{n:04d}", input=str(n), response="r") for n in range(2_345)]
    store.import_items("big", items)
    got = [item.id for item in store.iter_items("big", page_size=100)]
    assert got == [item.id for item in items]


def test_reimport_identical_is_noop_and_changed_needs_replace(store: Store) -> None:
    items = [Item(id="1", input="q", response="r"), Item(id="2", input="q2", response="r2")]
    assert store.import_items("ds", items) == 2
    assert store.import_items("ds", items) == 0
    changed = [Item(id="3", input="new", response="r"), Item(id="2", input="q2", response="EDIT")]
    with pytest.raises(InputError, match="'2'"):
        store.import_items("ds", changed)
    # all or nothing: the new item "3" of the failed batch is absent
    assert store.get_item("ds", "3") is None
    assert store.get_item("ds", "2") == items[1]
    assert store.import_items("ds", changed, replace=True) == 2
    assert store.get_item("ds", "2") == changed[1]
    assert [i.id for i in store.iter_items("ds")] == ["1", "2", "3"]  # update keeps its place


def test_slice_change_counts_as_change(store: Store) -> None:
    store.import_items("ds", [Item(id="1", input="q", response="r", slice="a")])
    with pytest.raises(InputError):
        store.import_items("ds", [Item(id="1", input="q", response="r", slice="b")])


def test_duplicate_ids_in_one_batch_rejected(store: Store) -> None:
    with pytest.raises(InputError, match="duplicate item id 'x'"):
        store.import_items("ds", [Item(id="x", input="a"), Item(id="x", input="b")])
    assert store.count_items("ds") == 0


# -- rubrics and runs --------------------------------------------------------------


def test_save_rubric_once_per_hash(store: Store) -> None:
    scale = Scale("binary", (ScaleLevel("pass", "p"), ScaleLevel("fail", "f")))
    rubric = Rubric(name="r", version="1", description="", scale=scale, system_prompt="s",
                    user_prompt="u", sha256="abc", source_text="name = 'r'\n")
    store.save_rubric(rubric)
    store.save_rubric(rubric)
    assert store.get_rubric_text("abc") == "name = 'r'\n"
    assert store.get_rubric_text("nope") is None
    assert [r["sha256"] for r in store.list_rubrics()] == ["abc"]


def test_runs_round_trip_finish_and_list(store: Store) -> None:
    run = make_run("r1")
    store.create_run(run)
    store.create_run(make_run("r2", kind="probe:position", rubric_hash="other"))
    assert store.get_run("r1") == run
    assert store.get_run("none") is None
    store.finish_run("r1", {"ok": 3, "elapsed_s": 1.5})
    finished = store.get_run("r1")
    assert finished is not None and finished.finished_at
    assert finished.summary == {"ok": 3, "elapsed_s": 1.5}
    assert [r.id for r in store.list_runs()] == ["r1", "r2"]
    assert [r.id for r in store.list_runs(rubric_hash=RUBRIC_HASH)] == ["r1"]
    assert [r.id for r in store.list_runs(kind="probe:position")] == ["r2"]
    with pytest.raises(StoreError, match="already exists"):
        store.create_run(run)
    with pytest.raises(StoreError, match="unknown run"):
        store.finish_run("ghost", {})


def test_a_refused_run_insert_says_what_sqlite_said(store: Store) -> None:
    """Only a repeated id is "already exists"; another refusal keeps SQLite's reason."""
    conn = sqlite3.connect(store.path)
    conn.execute("CREATE TRIGGER no_runs BEFORE INSERT ON runs "
                 "BEGIN SELECT RAISE(ABORT, 'runs are read-only here'); END")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="runs are read-only here") as refused:
        store.create_run(make_run("r1"))
    assert "already exists" not in str(refused.value)
    assert store.get_run("r1") is None


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("https://user:sk-secret@api.example.com/v1", "https://api.example.com/v1"),
        ("http://sk-only@127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("https://host/v1?api_key=sk-1&x=2", "https://host/v1?x=2"),
        ("https://api.example.com/v1", "https://api.example.com/v1"),
        ("imported:verdicts.jsonl", "imported:verdicts.jsonl"),
    ],
)
def test_credentials_never_stored(store: Store, given: str, stored: str) -> None:
    store.create_run(make_run("r", base_url=given))
    store.record_judgment(make_judgment(run_id="r", base_url=given))
    store.set_capabilities(given, "m", {"logprobs": False})
    run = store.get_run("r")
    assert run is not None and run.base_url == stored
    assert store.judgments(run_id="r")[0].base_url == stored
    assert store.get_capabilities(stored, "m") == {"logprobs": False}
    raw = store.path.read_bytes() + Path(f"{store.path}-wal").read_bytes()
    assert b"sk-" not in raw


# -- judgments --------------------------------------------------------------------


def test_judgment_round_trip(run_store: Store) -> None:
    judgment = make_judgment(created_at="2026-01-01T00:00:01+00:00", imported=True,
                             confidence=0.8125)
    run_store.record_judgment(judgment)
    assert run_store.cached_judgments(["key-i1"]) == {"key-i1": judgment}


def test_record_fills_created_at(run_store: Store) -> None:
    run_store.record_judgment(make_judgment())
    assert run_store.judgments()[0].created_at.startswith("20")


def test_latest_per_cache_key_wins_history_kept(run_store: Store) -> None:
    run_store.record_judgment(make_judgment(status="timeout", label=None, score=None))
    run_store.record_judgment(make_judgment(label="fail", score=0.0))
    run_store.record_judgment(make_judgment("i2"))
    cached = run_store.cached_judgments(["key-i1", "key-i2", "key-missing"])
    assert set(cached) == {"key-i1", "key-i2"}
    assert cached["key-i1"].label == "fail"
    assert [j.label for j in run_store.judgments()] == ["fail", "pass"]
    assert len(run_store.judgments(latest_only=False)) == 3
    assert run_store.count_judgments(run_id="run-1") == 3


def test_judgment_filters(run_store: Store) -> None:
    run_store.create_run(make_run("run-2"))
    run_store.record_judgment(make_judgment("a"))
    run_store.record_judgment(make_judgment("a", run_id="run-2", variant="swapped",
                                            cache_key="key-a-swapped"))
    run_store.record_judgment(make_judgment("b", dataset="other", cache_key="key-b"))
    run_store.record_judgment(make_judgment("c", rubric_hash="x" * 64, cache_key="key-c"))
    run_store.record_judgment(make_judgment("d", model_requested="m2", status="parse_error",
                                            label=None, cache_key="key-d"))
    assert [j.item_id for j in run_store.judgments(rubric_hash=RUBRIC_HASH)] == ["a", "a", "b", "d"]
    assert [j.item_id for j in run_store.judgments(run_id="run-2")] == ["a"]
    assert [j.item_id for j in run_store.judgments(dataset="other")] == ["b"]
    assert [j.cache_key for j in run_store.judgments(variant="swapped")] == ["key-a-swapped"]
    assert [j.item_id for j in run_store.judgments(variant="")] == ["a", "b", "c", "d"]
    assert [j.item_id for j in run_store.judgments(model="m2")] == ["d"]
    assert [j.item_id for j in run_store.judgments(status="parse_error")] == ["d"]
    assert [j.item_id for j in run_store.judgments(status="ok", latest_only=False,
                                                   dataset="ds", variant="")] == ["a", "c"]


def test_judgments_for_items(run_store: Store) -> None:
    run_store.record_judgment(make_judgment("a"))
    run_store.record_judgment(make_judgment("a", sample_index=1, cache_key="key-a-1"))
    run_store.record_judgment(make_judgment("b", variant="swapped"))
    run_store.record_judgment(make_judgment("c"))
    grouped = run_store.judgments_for_items(RUBRIC_HASH, "ds", ["a", "b", "zz"])
    assert {k: len(v) for k, v in grouped.items()} == {"a": 2, "b": 1}
    only_plain = run_store.judgments_for_items(RUBRIC_HASH, "ds", ["a", "b"], variant="")
    assert set(only_plain) == {"a"}


def test_judgments_for_items_filters_run_and_model(run_store: Store) -> None:
    run_store.create_run(make_run("run-2"))
    run_store.record_judgment(make_judgment("a"))
    run_store.record_judgment(make_judgment("a", run_id="run-2", model_requested="m2",
                                            cache_key="key-a-m2"))
    by_run = run_store.judgments_for_items(RUBRIC_HASH, "ds", ["a"], run_id="run-2")
    assert [j.model_requested for j in by_run["a"]] == ["m2"]
    by_model = run_store.judgments_for_items(RUBRIC_HASH, "ds", ["a"], model="m", variant="")
    assert [j.run_id for j in by_model["a"]] == ["run-1"]


def _history_store(store: Store) -> Store:
    """History, repeats, probe variants, two runs and two models: every selection rule."""
    store.create_run(make_run("run-2", judgekit_version="0.2.0"))
    store.import_items("ds", [Item(id=i, input="q", response="r" * (n + 1))
                              for n, i in enumerate("abcdef")])
    rows = [
        make_judgment("a", status="timeout", label=None, score=None,
                      created_at="2026-01-01T00:00:01+00:00"),
        make_judgment("a", label="fail", score=None, created_at="2026-01-01T00:00:02+00:00"),
        make_judgment("a", sample_index=1, cache_key="key-a-1", status="parse_error",
                      label=None),
        make_judgment("b", score=float("inf"), created_at="2026-01-01T00:00:03+00:00"),
        make_judgment("b", variant="swapped", cache_key="key-b-swapped", status="api_error"),
        make_judgment("c", sample_index=2, cache_key="key-c-2", label="fail", score=None),
        make_judgment("c", sample_index=1, cache_key="key-c-1", status="refusal", label=None,
                      run_id="run-2", sampling={"temperature": 1.0}, model_returned=None,
                      judgekit_version="0.2.0"),
        make_judgment("d", score=0.25, dataset="other", cache_key="key-d-other"),
        make_judgment("e", model_requested="m2", cache_key="key-e-m2", label="fail",
                      score=None),
        make_judgment("f", label="maybe", score=None, imported=True),
    ]
    store.record_judgments(rows)
    return store


def _reference(store: Store, **filters: object) -> list[Judgment]:
    from judgekit.report.pairing import select_judgments

    return list(select_judgments(store.judgments(**filters)).values())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "filters",
    [
        {"rubric_hash": RUBRIC_HASH, "variant": ""},
        {"rubric_hash": RUBRIC_HASH, "variant": "", "dataset": "ds", "model": "m"},
        {"rubric_hash": RUBRIC_HASH, "variant": "", "run_id": "run-2"},
        {"rubric_hash": "x" * 64},
    ],
)
def test_judgment_summary_matches_loaded_rows(run_store: Store, filters: dict[str, object]) -> None:
    store = _history_store(run_store)
    expected = _reference(store, **filters)
    summary = store.judgment_summary(one_per_item=True, **filters)  # type: ignore[arg-type]
    counts: dict[str, int] = {}
    for j in expected:
        counts[j.status] = counts.get(j.status, 0) + 1
    assert summary.n == len(expected)
    assert dict(summary.status_counts) == counts
    assert store.status_counts(one_per_item=True, **filters) == counts  # type: ignore[arg-type]
    assert summary.run_ids == tuple(sorted({j.run_id for j in expected}))
    assert summary.datasets == tuple(sorted({j.dataset for j in expected}))
    assert summary.models_requested == tuple(sorted({j.model_requested for j in expected}))
    assert summary.models_returned == tuple(
        sorted({j.model_returned for j in expected if j.model_returned is not None})
    )
    assert summary.endpoints == tuple(sorted({j.base_url for j in expected}))
    assert summary.judgekit_versions == tuple(sorted({j.judgekit_version for j in expected}))
    sampling = {tuple(sorted(dict(j.sampling).items())): dict(j.sampling) for j in expected}
    assert summary.sampling == tuple(sampling.values())
    dates = sorted(j.created_at for j in expected if j.created_at)
    assert summary.first_created_at == (dates[0] if dates else None)
    assert summary.last_created_at == (dates[-1] if dates else None)
    assert summary.imported == any(j.imported for j in expected)


def test_status_counts_per_cache_key_and_per_item(run_store: Store) -> None:
    store = _history_store(run_store)
    per_key = store.status_counts(rubric_hash=RUBRIC_HASH, dataset="ds")
    latest = [j.status for j in store.judgments(rubric_hash=RUBRIC_HASH, dataset="ds")]
    assert per_key == {s: latest.count(s) for s in set(latest)}
    per_item = store.status_counts(rubric_hash=RUBRIC_HASH, dataset="ds", variant="",
                                   one_per_item=True)
    assert per_item == {"ok": 4, "refusal": 1}  # a: latest of sample 0; c: lowest sample index
    assert store.status_counts(rubric_hash="none") == {}
    assert store.judgment_summary(rubric_hash="none").n == 0


def test_judgment_models_most_recent_last(run_store: Store) -> None:
    store = _history_store(run_store)
    assert store.judgment_models(rubric_hash=RUBRIC_HASH, variant="") == ["m2", "m"]
    assert store.judgment_models(rubric_hash=RUBRIC_HASH, run_id="run-2") == ["m"]
    assert store.judgment_models(rubric_hash="none") == []


def test_score_sample_thins_evenly_in_item_order(run_store: Store) -> None:
    store = _history_store(run_store)
    values = {"pass": 1.0, "fail": 0.0}
    points, total = store.score_sample(values, max_points=10, rubric_hash=RUBRIC_HASH,
                                       variant="")
    # ok and scored, in first-appearance order: a (label fail), b (inf score -> label pass),
    # d (score 0.25, item not stored in dataset "other"), e (fail); f's label has no value
    assert total == 4
    assert [(p.item_id, p.score, p.response_length) for p in points] == [
        ("a", 0.0, 1), ("b", 1.0, 2), ("d", 0.25, None), ("e", 0.0, 5),
    ]
    thinned, total = store.score_sample(values, max_points=3, rubric_hash=RUBRIC_HASH,
                                        variant="")
    assert total == 4 and [p.item_id for p in thinned] == ["a", "d"]  # every 2nd
    assert store.score_sample(values, max_points=5, rubric_hash="none") == ([], 0)
    with pytest.raises(ValueError, match="max_points"):
        store.score_sample(values, max_points=0)


def test_judgment_needs_its_run(store: Store) -> None:
    with pytest.raises(StoreError, match="create_run"):
        store.record_judgment(make_judgment(run_id="ghost"))
    assert store.count_judgments() == 0


def test_record_judgments_all_or_nothing(run_store: Store) -> None:
    batch = [make_judgment("a"), make_judgment("b", run_id="ghost")]
    with pytest.raises(StoreError):
        run_store.record_judgments(batch)
    assert run_store.count_judgments() == 0


def test_record_import_creates_run_and_rows_atomically(store: Store) -> None:
    run = make_run("imp", kind="import")
    with pytest.raises(StoreError):  # a bad row rolls the run back too
        store.record_import(run, [make_judgment(run_id="imp"), make_judgment(run_id="other")])
    assert store.get_run("imp") is None
    assert store.record_import(run, [make_judgment(run_id="imp")]) == 1
    assert store.get_run("imp") is not None


@pytest.mark.slow
def test_cached_judgments_100k_keys(run_store: Store) -> None:
    """Far more keys than SQLite's variable limit: every one is looked up (speed: bench_store)."""
    n = 100_000
    run_store.record_judgments([make_judgment(f"i{k}", cache_key=f"k{k}") for k in range(n)])
    keys = [f"k{k}" for k in range(n)] + [f"missing{k}" for k in range(1000)]
    cached = run_store.cached_judgments(keys)
    assert len(cached) == n
    assert cached["k99999"].item_id == "i99999" and "missing0" not in cached


def test_capabilities_upsert(store: Store) -> None:
    assert store.get_capabilities("http://h/v1", "m") is None
    store.set_capabilities("http://h/v1", "m", {"json_schema": False})
    store.set_capabilities("http://h/v1", "m", {"json_schema": True, "logprobs": True})
    assert store.get_capabilities("http://h/v1", "m") == {"json_schema": True, "logprobs": True}
    assert store.get_capabilities("http://h/v1", "other") is None


# -- labels -------------------------------------------------------------------------


def test_labels_latest_wins_history_and_skips(store: Store) -> None:
    first_id = store.add_label(make_label("i1", "pass", note="sure"))
    second_id = store.add_label(make_label("i1", "fail", flagged=True, blind=False, seconds=3.5))
    assert second_id > first_id
    store.add_label(make_label("i2", "pass"))
    store.add_label(make_label("i2", None))  # skipped after labeling: withdrawn
    store.add_label(make_label("i3", None))
    store.add_label(make_label("i1", "pass", annotator="other"))
    latest = store.latest_labels(RUBRIC_HASH)
    assert [(lb.item_id, lb.annotator, lb.label) for lb in latest] == [
        ("i1", "ann", "fail"), ("i1", "other", "pass")]
    assert latest[0].flagged and not latest[0].blind and latest[0].seconds == 3.5
    mine = store.latest_labels(RUBRIC_HASH, annotator="ann", include_skips=True)
    assert [(lb.item_id, lb.label) for lb in mine] == [("i1", "fail"), ("i2", None), ("i3", None)]
    history = store.label_history(RUBRIC_HASH, "ds", "i1", "ann")
    assert [lb.label for lb in history] == ["pass", "fail"]
    assert history[0].note == "sure" and history[0].created_at
    assert store.label_counts(RUBRIC_HASH) == {"ann": 1, "other": 1}
    assert len(store.all_labels(RUBRIC_HASH)) == 6
    assert store.latest_labels("other-rubric") == []
    assert store.latest_labels(RUBRIC_HASH, dataset="nope") == []


def test_add_labels_all_or_nothing(store: Store) -> None:
    good = make_label("i1")
    bad = make_label("i2", annotator=None)  # NOT NULL violation
    with pytest.raises(StoreError):
        store.add_labels([good, bad])
    assert store.all_labels(RUBRIC_HASH) == []
    assert store.add_labels([good, make_label("i2", source="import")]) == 2
    assert {lb.source for lb in store.all_labels(RUBRIC_HASH)} == {"annotate", "import"}


# -- queues and probes -----------------------------------------------------------------


def test_queue_persists_across_sessions(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    entries = [QueueEntry(0, "ds", "b", 0.5, "slice-x"), QueueEntry(1, "ds", "a", 0.25)]
    with open_store(path) as first:
        first.save_queue("q1", RUBRIC_HASH, "stratified", 7, entries, params={"sample": 2})
        first.save_queue("q1", RUBRIC_HASH, "stratified", 7, entries)  # identical: no-op
    with open_store(path) as second:
        found = second.get_queue("q1")
        assert found is not None
        meta, got = found
        assert got == entries
        assert meta["strategy"] == "stratified" and meta["seed"] == 7 and meta["size"] == 2
        assert meta["params"] == {"sample": 2} and meta["rubric_hash"] == RUBRIC_HASH
        assert second.get_queue("nope") is None
        assert second.list_queues() == ["q1"]
        with pytest.raises(StoreError, match="already exists"):
            second.save_queue("q1", RUBRIC_HASH, "random", 1, entries[:1])
        second.save_queue("q1", RUBRIC_HASH, "random", 1, entries[:1], replace=True)
        replaced = second.get_queue("q1")
        assert replaced is not None and replaced[0]["strategy"] == "random"
        assert replaced[1] == entries[:1]


def test_probe_results(run_store: Store) -> None:
    run_store.save_probe_result("run-1", "position", RUBRIC_HASH, {"consistency": 0.95, "n": 100})
    run_store.save_probe_result("run-1", "length", RUBRIC_HASH, {"spearman": 0.1})
    results = run_store.probe_results(RUBRIC_HASH)
    assert [r["probe"] for r in results] == ["position", "length"]
    assert results[0]["result"] == {"consistency": 0.95, "n": 100}
    assert results[0]["run_id"] == "run-1"
    assert [r["probe"] for r in run_store.probe_results(RUBRIC_HASH, "length")] == ["length"]
    with pytest.raises(StoreError):
        run_store.save_probe_result("ghost", "position", RUBRIC_HASH, {})


# -- concurrency and durability -------------------------------------------------------------


def _writer(path: str, who: str, n: int, start_at: float) -> None:
    """Child process: wait for the common start, then interleave judgments and labels."""
    with open_store(path) as store:
        store.create_run(make_run(f"run-{who}"))
        while time.time() < start_at:
            time.sleep(0.001)
        for k in range(n):
            store.record_judgment(
                make_judgment(f"{who}-{k}", run_id=f"run-{who}", cache_key=f"{who}-{k}"))
            store.add_label(make_label(f"{who}-{k}", annotator=who))


@pytest.mark.slow
def test_two_processes_write_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    open_store(path).close()
    ctx = multiprocessing.get_context("spawn")
    start_at = time.time() + 2.0
    n = 300
    procs = [ctx.Process(target=_writer, args=(path, who, n, start_at)) for who in ("p", "q")]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0, 0]
    with open_store(path) as store:
        assert store.count_judgments() == 2 * n
        assert store.label_counts(RUBRIC_HASH) == {"p": n, "q": n}
        assert len(store.cached_judgments(f"{w}-{k}" for w in "pq" for k in range(n))) == 2 * n


def _opener(path: str, start_at: float) -> None:
    while time.time() < start_at:
        time.sleep(0.001)
    with open_store(path) as store:
        store.set_capabilities("http://h/v1", f"m{os.getpid()}", {"ok": True})


@pytest.mark.slow
def test_many_processes_create_one_fresh_store(tmp_path: Path) -> None:
    """Racing first opens: WAL switch and migrations happen once, nobody fails."""
    path = str(tmp_path / "fresh.db")
    ctx = multiprocessing.get_context("spawn")
    start_at = time.time() + 2.0
    procs = [ctx.Process(target=_opener, args=(path, start_at)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM _sqlite_migrations").fetchone()[0] == len(
        migrations._migrations)
    assert conn.execute("SELECT COUNT(*) FROM capabilities").fetchone()[0] == 4
    conn.close()


def test_threads_share_one_store(run_store: Store) -> None:
    import threading

    errors: list[BaseException] = []

    def work(tag: str) -> None:
        try:
            for k in range(50):
                run_store.record_judgment(make_judgment(f"{tag}{k}", cache_key=f"{tag}{k}"))
                run_store.add_label(make_label(f"{tag}{k}"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(tag,)) for tag in "xyz"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert run_store.count_judgments() == 150
    assert len(run_store.latest_labels(RUBRIC_HASH)) == 150


CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_store import make_judgment, make_run
    from judgekit.store import open_store

    store = open_store({path!r})
    store.create_run(make_run())
    k = 0
    while True:
        store.record_judgment(make_judgment(f"i{{k}}", cache_key=f"k{{k}}"))
        print(k, flush=True)
        k += 1
        time.sleep(0.001)
    """
)


@pytest.mark.slow
def test_sigkill_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    script = CHILD.format(tests=str(Path(__file__).parent), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).parents[2])
    assert proc.stdout is not None
    reported = -1
    wanted = 200
    deadline = time.time() + 60
    while reported < wanted - 1 and time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        reported = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert reported == wanted - 1, "child did not report progress"
    with open_store(path) as store:
        cached = store.cached_judgments(f"k{k}" for k in range(wanted))
        assert len(cached) == wanted  # every reported (committed) judgment survived
        assert store.count_judgments() >= wanted


def test_store_usable_after_failed_write(run_store: Store) -> None:
    with pytest.raises(StoreError):
        run_store.record_judgment(make_judgment(run_id="ghost"))
    run_store.record_judgment(replace(make_judgment(), label="fail"))
    assert run_store.judgments()[0].label == "fail"
