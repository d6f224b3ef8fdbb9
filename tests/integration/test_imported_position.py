"""Imported both-order verdicts: orientation named in the file, the position probe without an
endpoint, stored and reported like a live probe, and a warning for the wrong orientation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.io.judgments import llmbar_rows
from judgekit.report import ReportOptions, build_report, render
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item
from tests.integration.test_judgments_io import PAIRWISE
from tests.support.cli import run_cli as invoke
from tests.support.io_files import rubric_file, write_jsonl
from tests.support.shared_data import SHARED_DATA

LLMBAR = SHARED_DATA / "llmbar" / "llmbar.jsonl"
N = 30


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    rubric = rubric_file(tmp_path, PAIRWISE, "pref")
    db = tmp_path / "p.db"
    with open_store(db) as store:
        store.import_items("pairs", [Item(id=f"p{n}", input=f"q{n}", response_a="a",
                                          response_b="b") for n in range(N)])
    return rubric, db


def verdicts(tmp_path: Path, *, mapped_back: bool, with_field: bool) -> Path:
    """A judge consistent on 27 of 30 pairs; BA labels written in either convention."""
    rows: list[dict[str, object]] = []
    for n in range(N):
        truth = "A" if n % 2 else "B"
        original_order_ba = truth if n >= 3 else ("A" if truth == "B" else "B")
        as_shown = {"A": "B", "B": "A"}[original_order_ba]
        rows.append({"item_id": f"p{n}", "judge": "j", "label": truth,
                     "raw": {"winner": truth}})
        ba: dict[str, object] = {"item_id": f"p{n}", "judge": "j", "order": "BA",
                                 "label": original_order_ba if mapped_back else as_shown}
        if with_field:
            ba["orientation"] = "original" if mapped_back else "presented"
        rows.append(ba)
    return write_jsonl(tmp_path / "v.jsonl", rows)


@pytest.mark.parametrize("mapped_back", [True, False])
def test_named_orientation_gives_the_same_consistency(
    tmp_path: Path, setup: tuple[Path, Path], mapped_back: bool
) -> None:
    rubric, db = setup
    path = verdicts(tmp_path, mapped_back=mapped_back, with_field=True)
    code, out, err = invoke("judgments", "import", str(path), "--rubric", str(rubric),
                            "--db", str(db))
    assert code == 0, err
    assert "  judge j" in out and "warning" not in err
    # until the probe is run, the report says how to use the verdicts imported in both orders
    with open_store(db) as store:
        before = build_report(store, load_rubric(rubric), ReportOptions(n_resamples=50))
    assert "probe position --imported --dataset pairs" in before.bias.absent["position"]
    position_gate = next(g for g in before.verdict.gates if g.name == "position_conflict")
    assert position_gate.reason is not None and "not yet used" in position_gate.reason
    assert "Position probe not computed: verdicts imported in both orders" in " ".join(
        render(before, "text").split())
    code, out, err = invoke("probe", "position", "--imported", "--rubric", str(rubric),
                            "--dataset", "pairs", "--db", str(db), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["imported"] is True and result["model"] == "j"
    assert result["position_consistency"]["statistic"] == pytest.approx(27 / 30)
    assert result["position_consistency"]["n"] == 30
    with open_store(db) as store:
        loaded = load_rubric(rubric)
        (stored,) = store.probe_results(loaded.sha256, "position")
        assert stored["result"]["position_consistency"]["statistic"] == pytest.approx(0.9)
        raw = {j.raw_text for j in store.judgments(rubric_hash=loaded.sha256, variant="")}
        assert '{"winner": "A"}' in raw
        report = build_report(store, loaded, ReportOptions())
    assert "position" not in report.bias.absent
    text = render(report, "text")
    assert "position consistency" in text.lower() and "0.90" in text


def test_wrong_orientation_warns_on_import_and_probe(
    tmp_path: Path, setup: tuple[Path, Path]
) -> None:
    rubric, db = setup
    path = verdicts(tmp_path, mapped_back=True, with_field=False)  # mapped back, not said
    code, _, err = invoke("judgments", "import", str(path), "--rubric", str(rubric),
                          "--db", str(db))
    assert code == 0
    assert "warning: judge 'j': position consistency 3/30 (0.10) is far below chance" in err
    assert "--orientation original" in err
    code, out, err = invoke("probe", "position", "--imported", "--rubric", str(rubric),
                            "--dataset", "pairs", "--db", str(db))
    assert code == 0 and "far below chance" in err
    assert "position probe (imported verdicts)" in out


def test_imported_probe_errors(tmp_path: Path, setup: tuple[Path, Path]) -> None:
    rubric, db = setup
    code, _, err = invoke("probe", "position", "--imported", "--rubric", str(rubric),
                          "--dataset", "pairs", "--db", str(db))
    assert code == 2 and "no imported BA verdicts" in err
    code, _, err = invoke("probe", "position", "--imported", "--rubric", str(rubric),
                          "--db", str(db))
    assert code == 2 and "--imported needs --dataset NAME" in err


def test_csv_verdicts_with_orientation_column(tmp_path: Path, setup: tuple[Path, Path]) -> None:
    rubric, db = setup
    path = tmp_path / "v.csv"
    path.write_text("item_id,judge,label,order,orientation,raw\n"
                    "p1,j,A,AB,,first\np1,j,A,BA,original,\np2,j,B,BA,sideways,\n")
    code, _, err = invoke("judgments", "import", str(path), "--rubric", str(rubric),
                          "--db", str(db))
    assert code == 2
    assert "v.csv:4: orientation must be 'presented' or 'original', got 'sideways'" in err


@pytest.mark.shared_data
@pytest.mark.skipif(not LLMBAR.is_file(), reason="../shared/data/llmbar is absent")
def test_llmbar_gpt4_both_conventions(tmp_path: Path) -> None:
    """GPT-4/Vanilla on LLMBar Natural: 95 of 100 consistent (upstream statistics.json).

    Imported without saying that LLMBar's BA labels are already mapped back, the
    same verdicts look 0.05 consistent; the import and the probe warn.
    """
    records = [json.loads(line) for line in LLMBAR.read_text(encoding="utf-8").split("\n")
               if line.strip()]
    natural = [r for r in records if r["meta"]["subset"] == "Natural"]
    rubric = rubric_file(tmp_path, PAIRWISE, "pref")
    rows = list(llmbar_rows(natural, ["GPT-4/Vanilla"]))
    wrong = [{k: v for k, v in row.items() if k != "orientation"} for row in rows]
    for name, file_rows, expected in (("right", rows, 0.95), ("wrong", wrong, 0.05)):
        db = tmp_path / f"{name}.db"
        with open_store(db) as store:
            store.import_items("Natural", [Item(id=r["id"], input=r["input"],
                                                response_a=r["response_a"],
                                                response_b=r["response_b"]) for r in natural])
        path = write_jsonl(tmp_path / f"{name}.jsonl", file_rows)
        code, _, err = invoke("judgments", "import", str(path), "--rubric", str(rubric),
                              "--db", str(db))
        assert code == 0
        assert ("far below chance" in err) == (name == "wrong")
        code, out, err = invoke("probe", "position", "--imported", "--rubric", str(rubric),
                                "--dataset", "Natural", "--db", str(db), "--json")
        result = json.loads(out)
        assert result["position_consistency"]["statistic"] == pytest.approx(expected)
        assert result["n_items"] == 100


def test_probe_run_stands_for_exactly_the_verdicts_it_used(
    tmp_path: Path, setup: tuple[Path, Path]
) -> None:
    """``runs``, ``export --run`` and a report by the probe's run see the 60 verdicts it read:
    not a second sample, not an item judged in one order only, not another judge's."""
    rubric, db = setup
    with open_store(db) as store:
        store.import_items("pairs", [Item(id="solo", input="q", response_a="a", response_b="b")])
    rows = [json.loads(line) for line in verdicts(
        tmp_path, mapped_back=True, with_field=True).read_text().splitlines()]
    rows[11] = {"item_id": "p5", "judge": "j", "order": "BA", "status": "parse_error"}
    rows += [{"item_id": "p0", "judge": "j", "label": "A", "sample": 1},
             {"item_id": "solo", "judge": "j", "label": "A"},
             {"item_id": "p0", "judge": "k", "label": "A"},
             {"item_id": "p0", "judge": "k", "label": "A", "order": "BA"}]
    path = write_jsonl(tmp_path / "mixed.jsonl", rows)
    code, _, err = invoke("judgments", "import", str(path), "--rubric", str(rubric),
                          "--db", str(db))
    assert code == 0, err
    code, out, err = invoke("probe", "position", "--imported", "--judge", "j", "--rubric",
                            str(rubric), "--dataset", "pairs", "--db", str(db), "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    used = {(f"p{n}", variant) for n in range(N) for variant in ("", "swapped")}

    code, out, err = invoke("runs", "--kind", "probe:position", "--db", str(db),
                            "--format", "json")
    assert code == 0, err
    (listed,) = json.loads(out)
    assert listed["id"] == run_id and listed["judged"] == 0 and listed["cached"] == 60
    assert listed["counts"] == {"ok": 59, "parse_error": 1}

    code, out, err = invoke("export", "--run", run_id, "--rubric", str(rubric), "--db", str(db))
    assert code == 0, err
    exported = [json.loads(line) for line in out.splitlines()]
    assert {(r["item_id"], r["variant"]) for r in exported} == used and len(exported) == 60
    assert {r["sample_index"] for r in exported} == {0}
    assert {r["model_requested"] for r in exported} == {"j"}

    with open_store(db) as store:
        loaded = load_rubric(rubric)
        assert len(store.judgments(run_id=run_id)) == 60
        report = build_report(store, loaded, ReportOptions(judge_run=run_id, n_resamples=50))
    # the plain (AB) verdicts it used, one per item: not "solo", not sample 1, not judge k
    assert report.provenance.n_judgments == N and report.health.total == N
    assert report.provenance.judge_models_requested == ("j",)
