"""Importing judge verdicts made elsewhere: provenance, BA mapping, idempotence, errors, LLMBar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.errors import InputError
from judgekit.io.judgments import llmbar_rows
from judgekit.io.verdict_store import import_judgments
from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store
from judgekit.types import Item, Rubric
from tests.support.io_files import ORDINAL, rubric_file, write_jsonl
from tests.support.shared_data import SHARED_DATA

PAIRWISE = """
name = "pref"
version = "2"
description = "Which is better?"

[scale]
kind = "pairwise"
allow_tie = true

[scale.levels]
A = "A is better."
B = "B is better."
tie = "Equal."

[prompt]
system = "Compare."
user = "Q: {input}\\nA: {response_a}\\nB: {response_b}\\n{scale}"
"""


LLMBAR = SHARED_DATA / "llmbar" / "llmbar.jsonl"


@pytest.fixture
def pairwise_path(tmp_path: Path) -> Path:
    return rubric_file(tmp_path, PAIRWISE, "pref")


@pytest.fixture
def pairwise(pairwise_path: Path) -> Rubric:
    return load_rubric(pairwise_path)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    with open_store(path) as store:
        pairs = [Item(id=f"p{n}", input=f"q{n}", response_a="a", response_b="b") for n in (1, 2, 3)]
        store.import_items("pairs", pairs)
        store.import_items("points", [Item(id="x1", input="q", response="r")])
    return path


@pytest.fixture
def store(db_path: Path) -> Store:
    opened = open_store(db_path)
    yield opened  # type: ignore[misc]
    opened.close()


def test_cli_import_maps_ba_back_and_records_provenance(
    tmp_path: Path, db_path: Path, pairwise_path: Path, pairwise: Rubric
) -> None:
    data = write_jsonl(tmp_path / "verdicts.jsonl", [
        {"item_id": "p1", "judge": "gpt-x", "label": "A", "order": "AB"},
        {"item_id": "p1", "judge": "gpt-x", "label": "A", "order": "BA"},   # -> B
        {"item_id": "p2", "judge": "gpt-x", "label": "tie", "order": "BA"},  # tie stays
        {"item_id": "p2", "judge": "gpt-x", "label": "B"},                    # order defaults AB
        {"item_id": "p3", "judge": "gpt-x", "status": "parse_error", "order": "BA"},
        {"item_id": "p3", "judge": "gpt-x", "label": "B", "sample": 1, "reasoning": "why"},
    ])
    result = CliRunner().invoke(cli, ["judgments", "import", str(data), "--rubric",
                                      str(pairwise_path), "--db", str(db_path)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "imported 6 verdict(s)" in result.output
    with open_store(db_path) as store:
        rows = {(j.item_id, j.variant, j.sample_index): j
                for j in store.judgments(rubric_hash=pairwise.sha256)}
        assert {k: (j.status, j.label) for k, j in rows.items()} == {
            ("p1", "", 0): ("ok", "A"),
            ("p1", "swapped", 0): ("ok", "B"),
            ("p2", "swapped", 0): ("ok", "tie"),
            ("p2", "", 0): ("ok", "B"),
            ("p3", "swapped", 0): ("parse_error", None),
            ("p3", "", 1): ("ok", "B"),
        }
        one = rows[("p3", "", 1)]
        assert one.reasoning == "why" and one.imported and one.model_requested == "gpt-x"
        assert one.base_url == "imported:verdicts.jsonl" and one.dataset == "pairs"
        assert (one.rubric_name, one.rubric_version) == ("pref", "2")
        assert one.item_hash == store.get_item("pairs", "p3").content_hash  # type: ignore[union-attr]
        runs = store.list_runs(kind="import")
        assert len(runs) == 1
        run = runs[0]
        assert (run.model, run.dataset, run.rubric_hash) == ("gpt-x", "pairs", pairwise.sha256)
        assert run.base_url == "imported:verdicts.jsonl" and run.finished_at
        assert run.summary["counts"] == {"ok": 5, "parse_error": 1}
        assert {j.run_id for j in rows.values()} == {run.id}
        assert store.get_rubric_text(pairwise.sha256) == PAIRWISE


def test_reimport_is_idempotent_even_renamed(tmp_path: Path, store: Store,
                                             pairwise: Rubric) -> None:
    rows = [{"item_id": "p1", "judge": "j", "label": "A", "order": o} for o in ("AB", "BA")]
    data = write_jsonl(tmp_path / "v.jsonl", rows)
    assert import_judgments(store, data, pairwise).added == 2
    again = import_judgments(store, data, pairwise)
    assert (again.added, again.unchanged, again.runs) == (0, 2, ())
    renamed = write_jsonl(tmp_path / "renamed.jsonl", rows)
    assert import_judgments(store, renamed, pairwise).added == 0
    assert len(store.list_runs(kind="import")) == 1
    assert store.count_judgments() == 2
    # a changed verdict supersedes the old one (latest per cache key wins)
    write_jsonl(data, [{"item_id": "p1", "judge": "j", "label": "tie"}])
    assert import_judgments(store, data, pairwise).added == 1
    latest = store.judgments(rubric_hash=pairwise.sha256, variant="")
    assert [j.label for j in latest] == ["tie"]
    assert store.count_judgments() == 3


def test_judge_option_filters_and_defaults(tmp_path: Path, store: Store,
                                           pairwise: Rubric) -> None:
    data = write_jsonl(tmp_path / "v.jsonl", [
        {"item_id": "p1", "judge": "one", "label": "A"},
        {"item_id": "p1", "judge": "two", "label": "B"},
        {"item_id": "p2", "label": "B"},
    ])
    result = import_judgments(store, data, pairwise, judge="two")
    assert result.judges == ("two",) and result.added == 2
    assert sorted(j.item_id for j in store.judgments(model="two")) == ["p1", "p2"]
    assert store.judgments(model="one") == []
    with pytest.raises(InputError, match=r"v\.jsonl:3: missing field 'judge' \(or give --judge\)"):
        import_judgments(store, data, pairwise)


def test_two_judges_make_two_runs_and_ordinal_scores(tmp_path: Path, store: Store) -> None:
    ordinal = load_rubric(rubric_file(tmp_path, ORDINAL, "helpful"))
    data = write_jsonl(tmp_path / "v.jsonl", [
        {"item_id": "x1", "judge": "a", "label": 4},
        {"item_id": "x1", "judge": "b", "label": "2", "score": 2.5},
    ])
    result = import_judgments(store, data, ordinal)
    assert len(result.runs) == 2
    scores = {j.model_requested: j.score for j in store.judgments(rubric_hash=ordinal.sha256)}
    assert scores == {"a": 4.0, "b": 2.5}
    assert {r.model for r in store.list_runs(kind="import")} == {"a", "b"}


def test_every_error_with_file_line_and_nothing_imported(
    tmp_path: Path, store: Store, pairwise: Rubric
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text("\n".join([
        json.dumps({"item_id": "p1", "judge": "j", "label": "A"}),                    # 1 ok
        json.dumps({"item_id": "zz", "judge": "j", "label": "A"}),                    # 2
        json.dumps({"item_id": "p1", "judge": "j", "label": "C", "order": "BA"}),     # 3
        json.dumps({"item_id": "p2", "judge": "j", "label": "A", "order": "ba"}),     # 4
        json.dumps({"item_id": "p2", "judge": "j", "label": "A", "status": "oops"}),  # 5
        json.dumps({"item_id": "p2", "judge": "j", "label": "A", "status": "timeout"}),  # 6
        json.dumps({"item_id": "p2", "judge": "j", "label": "A", "sample": -1}),      # 7
        json.dumps({"item_id": "p1", "judge": "j", "label": "B"}),                    # 8 dup
        "not json",                                                                  # 9
        json.dumps({"item_id": "p3", "judge": "j"}),                                  # 10
        json.dumps({"item_id": "p3", "judge": "j", "label": "A", "model": "m"}),      # 11
    ]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_judgments(store, data, pairwise)
    message = str(caught.value)
    assert "10 errors; nothing was imported" in message
    for line, fragment in [
        (2, "unknown item id 'zz'"),
        (3, "label 'C' is not on the 'pref' scale (allowed: A, B, tie)"),
        (4, "order must be 'AB' or 'BA', got 'ba'"),
        (5, "unknown status 'oops'"),
        (6, "a timeout verdict has no label"),
        (7, "'sample' must be a whole number >= 0"),
        (8, "same verdict as line 1"),
        (9, "invalid JSON"),
        (10, "missing field 'label' (required when status is ok)"),
        (11, "unknown field 'model'"),
    ]:
        assert f"{data}:{line}: {fragment}" in message, (line, message)
    assert store.count_judgments() == 0
    assert store.list_runs() == []


def test_ba_needs_a_pairwise_rubric(tmp_path: Path, store: Store) -> None:
    ordinal = load_rubric(rubric_file(tmp_path, ORDINAL, "helpful"))
    data = write_jsonl(tmp_path / "v.jsonl",
                       [{"item_id": "x1", "judge": "j", "label": "3", "order": "BA"}])
    with pytest.raises(InputError, match=r"v\.jsonl:1: order 'BA' needs a pairwise rubric"):
        import_judgments(store, data, ordinal)


def test_cli_error_exit_code(tmp_path: Path, db_path: Path, pairwise_path: Path) -> None:
    from judgekit.cli.main import main

    data = write_jsonl(tmp_path / "v.jsonl", [{"item_id": "nope", "judge": "j", "label": "A"}])
    with pytest.raises(SystemExit) as caught:
        main(["judgments", "import", str(data), "--rubric", str(pairwise_path),
              "--db", str(db_path)])
    assert caught.value.code == 2


def test_llmbar_rows_converter() -> None:
    record = {"id": "x", "meta": {"judge_verdicts": {
        "J/S": {"order_AB": "A", "order_BA": "B"},
        "K/S": {"order_AB": None, "order_BA": "A"},
    }}}
    assert list(llmbar_rows([record], judges=["J/S"])) == [
        {"item_id": "x", "judge": "J/S", "order": "AB", "label": "A"},
        {"item_id": "x", "judge": "J/S", "order": "BA", "orientation": "original", "label": "B"},
    ]
    rows = list(llmbar_rows([record], judges=["K/S"]))
    assert rows[0] == {"item_id": "x", "judge": "K/S", "order": "AB", "status": "parse_error"}
    assert rows[1]["label"] == "A"


# -- real data: LLMBar (Zeng et al., ICLR 2024) ---------------------------------------------


@pytest.mark.shared_data
@pytest.mark.skipif(not LLMBAR.is_file(), reason="../shared/data/llmbar is absent")
def test_llmbar_position_consistency_counts(tmp_path: Path, pairwise_path: Path,
                                            pairwise: Rubric) -> None:
    """Upstream statistics.json: correct in original order / swapped order / consistent."""
    records = [json.loads(line) for line in LLMBAR.read_text(encoding="utf-8").splitlines()]
    db_path = tmp_path / "llmbar.db"
    with open_store(db_path) as store:
        for subset in sorted({r["meta"]["subset"] for r in records}):
            items = [
                Item(id=r["id"], input=r["input"], response_a=r["response_a"],
                     response_b=r["response_b"], slice=subset,
                     meta={"subset": subset, "index_in_file": r["meta"]["index_in_file"]})
                for r in records if r["meta"]["subset"] == subset
            ]
            store.import_items(subset, items)
    gold_file = write_jsonl(tmp_path / "gold.jsonl", [
        {"item_id": r["id"], "annotator": h["annotator"], "label": h["label"]}
        for r in records for h in r["human_labels"]
    ])
    judges = ["GPT-4/Vanilla", "ChatGPT/Vanilla_NoRules", "Falcon/Vanilla_NoRules"]
    verdicts = write_jsonl(tmp_path / "llmbar_verdicts.jsonl", list(llmbar_rows(records, judges)))
    runner = CliRunner()
    for args in (["labels", "import", str(gold_file)],
                 ["judgments", "import", str(verdicts)]):
        result = runner.invoke(cli, [*args, "--rubric", str(pairwise_path), "--db", str(db_path)],
                               catch_exceptions=False)
        assert result.exit_code == 0, result.output

    with open_store(db_path) as store:
        gold = {(lb.dataset, lb.item_id): lb.label for lb in store.latest_labels(pairwise.sha256)}
        assert len(gold) == 419

        def counts(judge: str, dataset: str) -> tuple[int, int, int, int]:
            by_variant = {
                variant: {j.item_id: j.label for j in store.judgments(
                    rubric_hash=pairwise.sha256, model=judge, dataset=dataset, variant=variant)}
                for variant in ("", "swapped")
            }
            original, swapped = by_variant[""], by_variant["swapped"]
            correct_ab = sum(label == gold[(dataset, i)] for i, label in original.items())
            correct_ba = sum(label == gold[(dataset, i)] for i, label in swapped.items())
            consistent = sum(original[i] == swapped.get(i) for i in original)
            return correct_ab, correct_ba, consistent, len(original)

        assert counts("GPT-4/Vanilla", "Natural") == (95, 96, 95, 100)
        assert counts("ChatGPT/Vanilla_NoRules", "Adversarial/Neighbor") == (25, 23, 98, 134)
        assert counts("Falcon/Vanilla_NoRules", "Natural") == (75, 77, 60, 100)
        runs = store.list_runs(kind="import")
        assert len(runs) == 3 * 5  # one per judge and dataset (subset)
        assert all(run.base_url == "imported:llmbar_verdicts.jsonl" for run in runs)
