"""A queue drawn for a whole multi-criteria rubric file is counted as a whole: by the store, by
``judgekit queues`` and ``queue assign``, by ``judgekit serve``'s API and lead page, and found by
the file and by each of its criteria. Real SQLite files, the real CLI, a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.store import Store, open_store
from judgekit.types import ADJUDICATED_SOURCE, Item, Label
from tests.integration.test_criteria import RUBRIC
from tests.support.cli import run_cli
from tests.support.serve import Service, running_service, token

N_ITEMS = 6


@pytest.fixture
def rubric_file(tmp_path: Path) -> Path:
    path = tmp_path / "summeval.toml"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


def assigned(tmp_path: Path, rubric_file: Path) -> tuple[Path, dict[str, str], str]:
    """A store of N_ITEMS items assigned whole to ana alone: (db, criterion -> sha, queue)."""
    from judgekit.cli._annotate_criteria import criteria_file

    db = tmp_path / "judgekit.db"
    with open_store(db) as setup:
        setup.import_items("news", [Item(id=f"s{i}", input=f"doc {i}", response=f"r {i}")
                                    for i in range(N_ITEMS)])
    code, _, err = run_cli("queue", "assign", "--rubric", str(rubric_file), "--db", str(db),
                           "--annotators", "ana")
    assert code == 0, err
    whole = criteria_file(str(rubric_file))
    assert whole is not None
    with open_store(db) as store:
        [queue] = store.list_queues()
    return db, {c.name: c.rubric.sha256 for c in whole.criteria}, queue


def label(store: Store, sha: str, i: int, value: str | None, *, who: str = "ana",
          flagged: bool = False, source: str = "annotate") -> None:
    store.add_label(Label(dataset="news", item_id=f"s{i}", rubric_hash=sha, annotator=who,
                          label=value, flagged=flagged, source=source))


def half_done(db: Path, shas: dict[str, str]) -> None:
    """ana: s0 both criteria labeled, s1 coherence labeled and fluency skipped, s2 and s3
    coherence only (s3 flagged), s4 fluency only; an adjudication of s5's fluency."""
    with open_store(db) as store:
        for i in (0, 1, 2, 3):
            label(store, shas["coherence"], i, "4", flagged=i == 3)
        label(store, shas["fluency"], 0, "2")
        label(store, shas["fluency"], 1, None)
        label(store, shas["fluency"], 4, "3")
        label(store, shas["fluency"], 5, "1", who="lee", source=ADJUDICATED_SOURCE)


def test_the_store_counts_an_item_done_when_every_criterion_has_a_row(
    tmp_path: Path, rubric_file: Path,
) -> None:
    from judgekit.store.queues import QueueMatch

    db, shas, queue = assigned(tmp_path, rubric_file)
    half_done(db, shas)
    with open_store(db) as store:
        [head] = store.queue_heads()
        assert head.name == queue and head.size == N_ITEMS
        assert [c for c, _ in head.criteria] == ["coherence", "fluency"]
        progress = store.queue_progress(queue, head.rubric_hash, criteria=head.criteria)
        assert list(progress) == ["ana"]  # the adjudication is nobody's work
        ana = progress["ana"]
        # the first criterion alone would say 4 labeled, 2 remaining
        assert (ana.labeled, ana.skipped, ana.remaining, ana.flagged) == (1, 1, 4, 1)
        by_name = {c.name: c for c in ana.criteria}
        assert (by_name["coherence"].done, by_name["coherence"].remaining) == (4, 2)
        assert (by_name["fluency"].labeled, by_name["fluency"].skipped,
                by_name["fluency"].remaining) == (2, 1, 3)
        # a later label replaces the skip; a later skip of coherence on s0 still leaves it done
        label(store, shas["fluency"], 1, "3")
        label(store, shas["coherence"], 0, None)
        again = store.queue_progress(queue, head.rubric_hash, criteria=head.criteria)["ana"]
        assert (again.labeled, again.skipped, again.remaining) == (1, 1, 4)
        # listed under each criterion, not under a rubric it does not collect
        for sha in shas.values():
            assert [h.name for h in store.queue_heads(QueueMatch.of([sha]))] == [queue]
        assert store.queue_heads(QueueMatch.of(["0" * 64])) == []
        assert [h.name for h in store.queue_heads(QueueMatch.of(files=["summeval"]))] == [queue]


def test_judgekit_queues_counts_the_whole_file_and_finds_it_by_file_and_criterion(
    tmp_path: Path, rubric_file: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    db, shas, queue = assigned(tmp_path, rubric_file)
    half_done(db, shas)
    monkeypatch.chdir(tmp_path)
    for reference in (None, str(rubric_file), f"{rubric_file}#coherence",
                      f"{rubric_file}#fluency", shas["fluency"], "summeval.fluency", "summeval"):
        args = ("--rubric", reference) if reference else ()
        code, out, err = run_cli("queues", "--db", str(db), "--format", "json", *args)
        assert code == 0, (reference, err)
        [row] = json.loads(out)
        assert row["queue"] == queue, reference
        assert (row["labeled"], row["skipped"], row["remaining"], row["total"]) == (1, 1, 4, 6)
        assert {name: (c["done"], c["remaining"]) for name, c in row["criteria"].items()} == {
            "coherence": (4, 2), "fluency": (3, 3)}
    code, text, err = run_cli("queues", "--db", str(db), "--rubric", f"{rubric_file}#fluency")
    assert code == 0, err
    assert "coherence 2 left, fluency 3 left" in text
    # a name that is neither a file nor a stored rubric nor a queue's file is still an error
    code, out, err = run_cli("queues", "--db", str(db), "--rubric", "nosuch")
    assert code == 2 and "nosuch" in err and "Traceback" not in err


def test_queue_assign_reports_each_queue_s_progress_on_every_criterion(
    tmp_path: Path, rubric_file: Path,
) -> None:
    db, shas, queue = assigned(tmp_path, rubric_file)
    half_done(db, shas)
    code, out, err = run_cli("queue", "assign", "--rubric", str(rubric_file), "--db", str(db),
                             "--annotators", "ana")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith(queue))
    assert line == (f"{queue}: {N_ITEMS} items for ana (2 done, 4 remaining; coherence 2 left, "
                    "fluency 3 left)")


@pytest.fixture
def served(tmp_path: Path, rubric_file: Path) -> Iterator[tuple[Service, dict[str, str],
                                                                dict[str, str], str]]:
    db, shas, queue = assigned(tmp_path, rubric_file)
    half_done(db, shas)
    with open_store(db) as store:
        tokens = {name: token(store, name, role)
                  for name, role in (("ana", "annotate"), ("reader", "read"))}
    with running_service(db, tmp_path) as service:
        yield service, tokens, shas, queue


def test_the_server_counts_the_whole_file_in_its_api_and_on_the_lead_page(
    served: tuple[Service, dict[str, str], dict[str, str], str],
) -> None:
    service, tokens, shas, queue = served
    for rubric in ("", "?rubric=summeval.fluency", f"?rubric={shas['coherence']}",
                   "?rubric=summeval"):
        for who in ("reader", "ana"):
            response = service.get(f"/api/v1/queues{rubric}", tokens[who])
            assert response.status_code == 200, (rubric, who, response.text)
            [row] = response.json()
            assert row["queue"] == queue and row["annotator"] == "ana"
            assert (row["labeled"], row["skipped"], row["remaining"]) == (1, 1, 4)
            assert row["criteria"]["fluency"]["remaining"] == 3
    assert service.get("/api/v1/queues?rubric=nosuch", tokens["reader"]).status_code == 404
    page = service.get(f"/lead?rubric={shas['fluency']}", tokens["reader"])
    assert page.status_code == 200
    text = page.text
    assert f"<td>{queue}</td>" in text
    assert "2 of 6 queue entries done (4 remaining)" in text
    assert "coherence 2 left, fluency 3 left" in text
    # an annotate token may post a label of any criterion of its whole-file queue
    posted = service.post("/api/v1/labels", {"rubric": "summeval.fluency",
                                             "labels": [{"item_id": "s2", "label": "3"}]},
                          tokens["ana"])
    assert posted.status_code == 200, posted.text
    [row] = service.get("/api/v1/queues", tokens["ana"]).json()
    assert (row["labeled"], row["remaining"]) == (2, 3)


def test_a_shared_whole_file_queue_lists_its_openers_counted_whole(
    tmp_path: Path, rubric_file: Path,
) -> None:
    """A queue drawn by ``annotate`` on the whole file: its openers are listed, each counted on
    every criterion; someone who labeled its items elsewhere is not; an annotator sees only
    their own row."""
    from judgekit.serve.progress import queue_rows
    from judgekit.store.labels import QueueEntry
    from judgekit.store.queues import QueueMatch

    db, shas, _ = assigned(tmp_path, rubric_file)
    half_done(db, shas)
    with open_store(db) as store:
        [head] = store.queue_heads()
        entries = [QueueEntry(i, "news", f"s{i}", 1.0) for i in range(N_ITEMS)]
        store.save_queue("shared", head.rubric_hash, "random", 0, entries, params=head.params
                         | {"annotator": None})
        for who in ("cy", "ana"):
            store.note_queue_opened("shared", who)
        for i in range(3):
            for sha in shas.values():
                label(store, sha, i, "1", who="cy")
        label(store, shas["fluency"], 3, "1", who="cy", flagged=True)
        for sha in shas.values():  # dee labeled s0 in some other queue: not listed here
            label(store, sha, 0, "2", who="dee")
        rows = [(r["annotator"], r["labeled"], r["remaining"], r["flagged"],
                 r["criteria"]["fluency"]["remaining"])
                for r in queue_rows(store, shas["fluency"]) if r["queue"] == "shared"]
        assert rows == [("ana", 1, 4, 1, 3), ("cy", 3, 3, 1, 2)]
        mine = queue_rows(store, QueueMatch.of(files=["summeval"]), annotator="cy")
        assert [(r["queue"], r["labeled"]) for r in mine] == [("shared", 3)]
