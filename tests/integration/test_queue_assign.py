"""``queue assign``, ``queues``, ``tokens`` and the browsing views, on a real store file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from judgekit.assignment import plan_assignment
from judgekit.errors import InputError
from judgekit.store import open_store
from judgekit.types import ADJUDICATED_SOURCE, Label
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.cli import run_cli


def run(*args: str) -> tuple[int, str]:
    """Through ``main``, as a shell runs it: a JudgekitError is one line and its exit code."""
    code, out, err = run_cli(*args)
    return code, out + err


@pytest.mark.parametrize(("n", "k", "overlap"), [(30, 3, 0.2), (7, 2, 1.0), (100, 4, 0.0),
                                                 (1, 3, 0.0)])
def test_plan_gives_every_item_once_and_a_share_twice(n: int, k: int, overlap: float) -> None:
    keys = [("d", f"i{i}") for i in range(n)]
    names = [f"a{j}" for j in range(k)]
    plan = plan_assignment(keys, names, overlap=overlap, seed=1)
    seen = Counter(key for name in names for key in plan.items[name])
    assert set(seen) == set(keys)
    assert sum(1 for c in seen.values() if c == 2) == round(overlap * n)
    assert max(seen.values()) <= 2
    for name in names:  # nobody labels one item twice
        assert len(set(plan.items[name])) == len(plan.items[name])
    loads = [plan.workload(name) for name in names]
    assert max(loads) - min(loads) <= 1  # the docs promise workloads within one
    assert plan_assignment(keys, names, overlap=overlap, seed=1).items == plan.items
    if n > 5:
        assert plan_assignment(keys, names, overlap=overlap, seed=2).items != plan.items


def test_workloads_are_within_one_over_random_sizes_and_overlaps() -> None:
    """The docs' promise, shared items included, over 300 seeded random plans."""
    import random

    rng = random.Random(29)
    for trial in range(300):
        n, k = rng.randint(1, 80), rng.randint(2, 6)
        overlap = rng.choice([0.0, 1.0, round(rng.random(), 2)])
        keys = [("d", f"i{i}") for i in range(n)]
        names = [f"a{j}" for j in range(k)]
        plan = plan_assignment(keys, names, overlap=overlap, seed=trial)
        loads = [plan.workload(name) for name in names]
        assert max(loads) - min(loads) <= 1, (n, k, overlap, loads)
        assert sum(loads) == n + round(overlap * n)
        seen = Counter(key for name in names for key in plan.items[name])
        assert set(seen) == set(keys) and set(seen.values()) <= {1, 2}
        assert all(len(set(plan.items[a])) == len(plan.items[a]) for a in names)


def test_two_annotators_half_overlap_split_evenly() -> None:
    """queue assign --overlap 0.5 on 12 items: 9 each, not 7 and 11."""
    keys = [("d", f"i{i}") for i in range(12)]
    for seed in range(20):
        plan = plan_assignment(keys, ["ana", "bo"], overlap=0.5, seed=seed)
        assert (plan.workload("ana"), plan.workload("bo")) == (9, 9)


@pytest.mark.parametrize(("names", "overlap", "message"), [
    ([], 0.2, "at least one"), (["a"], 0.2, "two annotators"), (["a", "b"], 1.5, "between"),
])
def test_plan_refuses_bad_input(names: list[str], overlap: float, message: str) -> None:
    with pytest.raises(InputError, match=message):
        plan_assignment([("d", "i")], names, overlap=overlap, seed=0)


def test_assign_and_progress_through_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 20)
    code, out = run("queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                    "--annotators", "ana,bo", "--overlap", "0.5", "--seed", "3")
    assert code == 0, out
    assert "20 items, 10 of them to two annotators" in out
    with open_store(db) as store:
        name = next(n for n in store.list_queues() if n.endswith(":ana"))
        found = store.get_queue(name)
        assert found is not None
        first = found[1][0]
        store.add_label(Label(dataset="d", item_id=first.item_id, rubric_hash=rub.sha256,
                              annotator="ana", label="pass", flagged=True))
        store.add_label(Label(dataset="d", item_id=found[1][1].item_id, rubric_hash=rub.sha256,
                              annotator="ana", label=None))
    code, out = run("queues", "--db", str(db), "--format", "json")
    assert code == 0, out
    rows = {row["annotator"]: row for row in json.loads(out)}
    assert (rows["ana"]["labeled"], rows["ana"]["skipped"], rows["ana"]["flagged"]) == (1, 1, 1)
    assert rows["ana"]["remaining"] == rows["ana"]["total"] - 2
    assert rows["bo"]["labeled"] == 0
    code, text = run("queues", "--db", str(db))
    assert code == 0 and "ana" in text and "remaining" in text


def test_a_single_annotator_gets_every_item_and_no_overlap(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 12)
    code, out = run("queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                    "--annotators", "ana")
    assert code == 0, out
    assert "12 items, 0 of them to two annotators (overlap 0" in out
    assert "note: one annotator: overlap 0" in out
    with open_store(db) as store:
        [name] = store.list_queues()
        found = store.get_queue(name)
        assert found is not None and len(found[1]) == 12
    # an overlap asked for explicitly still needs a second annotator
    code, out = run("queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                    "--annotators", "ana", "--overlap", "0.3")
    assert code == 2 and "at least two annotators" in out
    # two annotators keep the default share
    code, out = run("queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                    "--annotators", "ana,bo")
    assert code == 0 and "(overlap 0.2," in out


def test_read_commands_never_create_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    for args in (["queues"], ["tokens", "list"], ["tokens", "revoke", "--name", "x"],
                 ["queue", "assign", "--rubric", "correctness", "--annotators", "a"],
                 ["serve", "--port", "0"]):
        code, out = run(*args, "--db", str(missing))
        assert code == 2, (args, out)
        assert "no store at" in out
    assert not missing.exists()


def test_tokens_cli(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    code, out = run("tokens", "create", "--db", str(db), "--name", "ana", "--role", "annotate")
    assert code == 0
    token = out.splitlines()[0]
    assert token.startswith("jk_") and len(token) > 40
    code, out = run("tokens", "list", "--db", str(db), "--format", "json")
    listed = json.loads(out)
    assert [(t["name"], t["role"], t["revoked_at"]) for t in listed] == [("ana", "annotate", None)]
    assert token not in out and token[3:] not in db.read_bytes().decode("latin-1")
    assert run("tokens", "create", "--db", str(db), "--name", "x", "--role", "root")[0] == 2
    assert run("tokens", "revoke", "--db", str(db), "--name", "ana")[0] == 0
    assert run("tokens", "revoke", "--db", str(db), "--name", "ana")[0] == 2
    with open_store(db) as store:
        assert store.token_for(token) is None


def test_views_apply_latest_wins(tmp_path: Path) -> None:
    with open_store(tmp_path / "judgekit.db") as store:
        rub, items = seed_store(store, "binary", 3)
        record_judgments(store, rub, [judgment(rub, "d", it.id, "pass") for it in items])
        # the same call again with another verdict: the later row wins
        record_judgments(store, rub, [judgment(rub, "d", items[0].id, "fail")])
        for label in ("fail", "pass"):
            store.add_label(Label(dataset="d", item_id=items[0].id, rubric_hash=rub.sha256,
                                  annotator="ana", label=label))
        latest = store._rows("SELECT item_id, label FROM latest_judgments ORDER BY item_id")
        assert [tuple(r) for r in latest] == [(items[0].id, "fail"), (items[1].id, "pass"),
                                              (items[2].id, "pass")]
        rows = store._rows("SELECT item_id, judge_label, human_label, agree FROM judge_vs_human")
        assert [tuple(r) for r in rows] == [(items[0].id, "fail", "pass", 0)]
        # ana then settles the item: her adjudication is a row apart from her label
        store.add_label(Label(dataset="d", item_id=items[0].id, rubric_hash=rub.sha256,
                              annotator="ana", label="fail", source=ADJUDICATED_SOURCE))
        rows = store._rows("SELECT source, label FROM latest_labels ORDER BY id")
        assert [tuple(r) for r in rows] == [("annotate", "pass"), (ADJUDICATED_SOURCE, "fail")]
        rows = store._rows("SELECT label_source, agree FROM judge_vs_human ORDER BY label_source")
        assert [tuple(r) for r in rows] == [(ADJUDICATED_SOURCE, 1), ("annotate", 0)]


def test_queues_lists_who_opened_a_shared_queue_and_never_counts_adjudications(
    tmp_path: Path,
) -> None:
    """A label on an item of a shared queue may come from another queue holding the same
    item; an adjudication is nobody's work through a queue."""
    from judgekit.store.labels import QueueEntry

    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", 12)
    code, out = run("queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                    "--annotators", "ana,bo", "--overlap", "0.5", "--seed", "3")
    assert code == 0, out
    every = [QueueEntry(i, "d", item.id, 1.0) for i, item in enumerate(items)]
    with open_store(db) as store:
        ana_queue = next(n for n in store.list_queues() if n.endswith(":ana"))
        found = store.get_queue(ana_queue)
        assert found is not None
        for name in ("shared", "older"):  # drawn by `annotate`: nobody assigned
            store.save_queue(name, rub.sha256, "random", 0, every)
        store.note_queue_opened("shared", "cy")
        store.note_queue_opened("shared", "cy")  # twice: listed once
        for entry in found[1][:2]:  # ana labels in her own queue only
            store.add_label(Label(dataset="d", item_id=entry.item_id, rubric_hash=rub.sha256,
                                  annotator="ana", label="pass"))
        store.add_label(Label(dataset="d", item_id=items[0].id, rubric_hash=rub.sha256,
                              annotator="cy", label="fail"))
        for item in items[:2]:  # the lead settles two items
            store.add_label(Label(dataset="d", item_id=item.id, rubric_hash=rub.sha256,
                                  annotator="dee", label="pass", source=ADJUDICATED_SOURCE))
    code, out = run("queues", "--db", str(db), "--format", "json")
    assert code == 0, out
    rows = [(r["queue"], r["annotator"], r["labeled"], r["remaining"]) for r in json.loads(out)]
    assert [r for r in rows if r[0] == "shared"] == [("shared", "cy", 1, 11)]
    assert next(r for r in rows if r[0] == ana_queue)[1:] == ("ana", 2, len(found[1]) - 2)
    # a queue whose openings were never recorded (an older store) lists who labeled its items
    assert [r[1:] for r in rows if r[0] == "older"] == [("ana", 2, 10), ("cy", 1, 11)]
    assert all(r[1] != "dee" for r in rows)
    code, text = run("queues", "--db", str(db))
    assert code == 0 and "dee" not in text
