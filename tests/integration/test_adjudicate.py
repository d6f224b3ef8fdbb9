"""Disagreements listed, adjudicated in the app, stored as such and used as the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.report import ReportOptions, build_report
from judgekit.review import adjudication_queue, opinion_text, review_items
from judgekit.store import Store
from judgekit.tui.app import make_app
from judgekit.types import ADJUDICATED_SOURCE, Label, Rubric
from tests.support.annotate import (
    RUBRIC_TEXT,
    judgment,
    make_items,
    record_judgments,
    rubric,
    run_cli,
    screen_text,
)

SECRET = "JUDGE-SAYS-8d1e"

SIZES = [(80, 24), (160, 48)]


def seed(store: Store) -> Rubric:
    """Six items: two ties, one flagged (with a note), the rest agreed; a judge on all."""
    rub = rubric("binary")
    items = make_items("binary", 6)
    store.import_items("d", items)
    store.save_rubric(rub)
    record_judgments(store, rub, [
        judgment(rub, "d", item.id, "pass", reasoning=SECRET, model="judge-zeta")
        for item in items
    ])
    labels = []
    for i, item in enumerate(items):
        h1 = "pass"
        h2 = "fail" if i < 2 else "pass"
        labels.append(Label("d", item.id, rub.sha256, "ann", h1,
                            note="ambiguous question" if i == 0 else None))
        labels.append(Label("d", item.id, rub.sha256, "bea", h2))
    labels.append(Label("d", "item-004", rub.sha256, "cyd", None, flagged=True,
                        note="the answer quotes a private email"))
    store.add_labels(labels)
    return rub


def test_review_items_lists_ties_and_flags_with_notes(tmp_db: Store) -> None:
    rub = seed(tmp_db)
    items = review_items(tmp_db, rub)
    assert [(i.item_id, i.reasons) for i in items] == [
        ("item-000", ("no majority",)), ("item-001", ("no majority",)),
        ("item-004", ("flagged",)),
    ]
    text = opinion_text(items[0].opinions)
    assert "ann: pass" in text and "bea: fail" in text and "note: ambiguous question" in text
    assert "cyd: (no label)  ⚑ flagged" in opinion_text(items[2].opinions)


def test_labels_disagreements_command(tmp_path: Path, tmp_db: Store) -> None:
    rub = seed(tmp_db)
    rubric_file = tmp_path / "r.toml"
    rubric_file.write_text(RUBRIC_TEXT["binary"])
    args = ["labels", "disagreements", "--rubric", str(rubric_file), "--db", str(tmp_db.path)]
    code, text = run_cli(*args)
    assert code == 0, text
    assert "d/item-000: no majority" in text
    assert "note: the answer quotes a private email" in text
    assert "3 item(s) to review; 2 with no majority" in text
    assert SECRET not in text and "judge-zeta" not in text
    lines = run_cli(*args, "--format", "json")[1].splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["labels"][0] == {"annotator": "ann", "label": "pass",
                                       "note": "ambiguous question", "flagged": False,
                                       "blind": True}
    code, text = run_cli(*args[:-1], str(tmp_path / "none.db"))
    assert code == 2 and "no store at" in text
    assert not (tmp_path / "none.db").exists()
    assert rub.sha256


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_adjudicating_in_the_app(tmp_db: Store, size: tuple[int, int]) -> None:
    rub = seed(tmp_db)
    before = build_report(tmp_db, rub, ReportOptions(n_resamples=100))
    assert before.provenance.label_counts["no_majority_items"] == 2
    items = review_items(tmp_db, rub)
    app = make_app(tmp_db, rub, adjudication_queue(items), annotator="lead",
                   opinions={i.key: opinion_text(i.opinions) for i in items})
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = screen_text(app)
        assert "adjudicating" in screen and "0/3 adjudicated" in screen
        app.label_screen.document.jump_to("annotators")
        await pilot.pause()
        screen = screen_text(app)
        assert "ann: pass" in screen and "bea: fail" in screen and "ambiguous question" in screen
        for key in ("f", "p", "s"):
            assert SECRET not in screen_text(app) and "judge-zeta" not in screen_text(app)
            await pilot.press(key)
            await app.label_screen.settled()
            await pilot.pause()
    adjudicated = tmp_db.adjudicated_labels(rub.sha256)
    assert [(a.item_id, a.label, a.annotator, a.source, a.blind) for a in adjudicated] == [
        ("item-000", "fail", "lead", ADJUDICATED_SOURCE, True),
        ("item-001", "pass", "lead", ADJUDICATED_SOURCE, True),
    ]
    # the annotators' own labels are untouched, and the adjudicator is not among them
    assert {lb.annotator for lb in tmp_db.latest_labels(rub.sha256)} == {"ann", "bea"}
    after = build_report(tmp_db, rub, ReportOptions(n_resamples=100))
    counts = after.provenance.label_counts
    assert counts["adjudicated_items"] == 2 and counts["no_majority_items"] == 0
    assert after.agreement is not None
    assert after.agreement.n_items == before.agreement.n_items + 2  # type: ignore[union-attr]
    # reopening resumes at the item not yet adjudicated
    again = make_app(tmp_db, rub, adjudication_queue(review_items(tmp_db, rub)),
                     annotator="lead",
                     opinions={i.key: opinion_text(i.opinions) for i in items})
    async with again.run_test(size=size) as pilot:
        await pilot.pause()
        assert "item 3/3" in screen_text(again) and "2/3 adjudicated" in screen_text(again)


def test_cli_adjudicate_refuses_nothing_to_do_and_show_judge(tmp_path: Path,
                                                              tmp_db: Store) -> None:
    rub = rubric("binary")
    tmp_db.import_items("d", make_items("binary", 2))
    tmp_db.save_rubric(rub)
    rubric_file = tmp_path / "r.toml"
    rubric_file.write_text(RUBRIC_TEXT["binary"])
    base = ["annotate", "--rubric", str(rubric_file), "--db", str(tmp_db.path),
            "--annotator", "lead", "--adjudicate"]
    code, text = run_cli(*base)
    assert code == 2 and "nothing to adjudicate" in text
    code, text = run_cli(*base, "--show-judge")
    assert code == 2 and "never shows the judge" in text


def test_disagreements_name_the_rule_and_count_two_annotator_splits(
    tmp_path: Path, tmp_db: Store
) -> None:
    """Two annotators who said 2 and 1: the reference is the lower median, and it says so."""
    rub = rubric("ordinal")
    items = make_items("ordinal", 3)
    tmp_db.import_items("d", items)
    tmp_db.save_rubric(rub)
    said = [("2", "1"), ("3", "3"), ("4", "2")]
    tmp_db.add_labels([Label("d", item.id, rub.sha256, who, label)
                       for item, pair in zip(items, said, strict=True)
                       for who, label in zip(("ann", "bea"), pair, strict=True)])
    rubric_file = tmp_path / "r.toml"
    rubric_file.write_text(RUBRIC_TEXT["ordinal"])
    code, text = run_cli("labels", "disagreements", "--rubric", str(rubric_file),
                         "--db", str(tmp_db.path))
    assert code == 0, text
    assert "d/item-000: split · reference: 1 (lower median)" in text
    assert "d/item-002: split · reference: 2 (lower median)" in text
    assert "majority: 1" not in text
    assert ("2 item(s) rest on a split between two annotators: their reference is the lower "
            "median rule's pick") in text
    records = [json.loads(line) for line in run_cli(
        "labels", "disagreements", "--rubric", str(rubric_file), "--db", str(tmp_db.path),
        "--format", "json")[1].splitlines()]
    assert [r["rule"] for r in records] == ["lower median", "lower median"]
