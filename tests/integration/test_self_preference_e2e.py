"""Self-preference end to end: items with model fields imported (JSONL, CSV, parquet), judged
through the test server by the real openai client, labels imported, and `judgekit report`
showing the section and failing; and the one-line errors of probes asked of data they do
not fit."""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from judgekit.store import open_store
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe

QUALITY = re.compile(r"\[q=(\d)\]")
#: The style the simulated gpt judge recognises as its own family's.
HOUSE_STYLE = "Certainly!"


def self_preferring_judge(bias: float) -> Any:
    """Picks the higher-quality answer, except that with probability ``bias`` it picks the
    one written in its own house style (the text, not the hidden model field, gives it away)."""

    def respond(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        text = str(body["messages"][-1]["content"])
        rng = random.Random(int(hashlib.sha256(text.encode()).hexdigest()[:12], 16))
        q_a, q_b = (int(q) for q in QUALITY.findall(text)[:2])
        a_text, b_text = text.split("Response B:", 1)
        own = "A" if HOUSE_STYLE in a_text else "B" if HOUSE_STYLE in b_text else None
        if own is not None and rng.random() < bias:
            verdict = own
        else:
            verdict = "A" if q_a > q_b else "B" if q_b > q_a else "tie"
        return Reply(json.dumps({"reasoning": "Compared.", "verdict": verdict}))

    return respond


def _rows(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(5)
    items, labels = [], []
    for i in range(n):
        q_a, q_b = rng.sample(range(1, 10), 2)
        gpt_a = i % 2 == 0
        other = ("llama-3.1-8b-instruct", "claude-3-5-haiku", "qwen2.5-7b")[i % 3]
        a = f"{HOUSE_STYLE} [q={q_a}] answer {i}" if gpt_a else f"[q={q_a}] answer {i}"
        b = f"[q={q_b}] other answer {i}" if gpt_a else f"{HOUSE_STYLE} [q={q_b}] answer {i}"
        items.append({"id": f"p{i:03d}", "input": f"Question {i}?", "response_a": a,
                      "response_b": b, "model_a": "gpt-4o" if gpt_a else other,
                      "model_b": other if gpt_a else "gpt-4o"})
        labels.append({"item_id": f"p{i:03d}", "annotator": "ana",
                       "label": "A" if q_a > q_b else "B"})
    return items, labels


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_items_with_model_fields_judged_and_reported_fail_on_self_preference(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    items, labels = _rows(120)
    data = _jsonl(tmp_path / "pairs.jsonl", items)
    db = str(tmp_path / "s.db")
    openai_server.responder = self_preferring_judge(bias=0.5)
    code, out, err = run_cli("judge", "-r", "preference", "--data", str(data), "--db", db,
                             "--base-url", openai_server.base_url, "--model", "gpt-4o-mini",
                             "--no-progress")
    assert code == 0, err
    assert len(openai_server.judge_requests()) == 120
    # the judge never saw who wrote what
    assert all("gpt-4o" not in json.dumps(b["messages"]) for b in openai_server.judge_requests())
    code, _, err = run_cli("labels", "import", str(_jsonl(tmp_path / "labels.jsonl", labels)),
                           "-r", "preference", "--db", db)
    assert code == 0, err
    with open_store(db, create=False) as store:
        stored = store.items_by_ids("pairs", ["p000"])["p000"]
        assert stored.meta["model_a"] == "gpt-4o"
    code, out, err = run_cli("report", "-r", "preference", "--db", db, "--resamples", "400")
    assert code == 1, err
    out = " ".join(out.split())  # the text report is wrapped at 80 columns
    assert "[self_preference probe, computed from the paired items]" in out
    assert "judge's family 'gpt'" in out
    assert "VERDICT: FAIL" in out and "--max-self-preference 0.1" in out
    assert re.search(r"self-preference: FAIL, [0-9.]+ \[[0-9., ]+\], n=[0-9]+; lower bound", out)
    code, out, _ = run_cli("report", "-r", "preference", "--db", db, "--resamples", "400",
                           "--format", "json")
    gate = next(g for g in json.loads(out)["verdict"]["gates"] if g["name"] == "self_preference")
    assert gate["tripped"] is True and gate["threshold"] == 0.1
    assert gate["statistic"]["ci_low"] > 0.1
    # scale use asked of a pairwise rubric: one line, nothing written
    report_file = tmp_path / "r.html"
    code, out, err = run_cli("report", "-r", "preference", "--db", db, "--min-variance-ratio",
                             "0.4", "--out", str(report_file))
    assert code == 2 and out == "" and not report_file.exists()
    assert err == ("error: --min-variance-ratio: scale use cannot be computed here: needs an "
                   "ordinal scale of three levels or more (this scale is pairwise)\n")


def test_csv_and_parquet_keep_model_fields_and_bad_ones_stop_the_import(tmp_path: Path) -> None:
    items, _ = _rows(6)
    db = str(tmp_path / "s.db")
    with (tmp_path / "c.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(items[0]))
        writer.writeheader()
        writer.writerows(items)
    pq.write_table(pa.Table.from_pylist(items), tmp_path / "q.parquet")
    for name in ("c.csv", "q.parquet"):
        code, _, err = run_cli("import", str(tmp_path / name), "--db", db)
        assert code == 0, err
    with open_store(db, create=False) as store:
        for dataset in ("c", "q"):
            item = store.items_by_ids(dataset, ["p001"])["p001"]
            assert (item.meta["model_a"], item.meta["model_b"]) == ("claude-3-5-haiku",
                                                                    "gpt-4o")
        before = store.datasets()
    bad = _jsonl(tmp_path / "bad.jsonl", [items[0], {**items[1], "model_b": 4}])
    code, _, err = run_cli("import", str(bad), "--db", db)
    assert code == 2
    assert err == (f"error: {bad}:2: field 'model_b' names a model and must be a string, "
                   "got int\n")
    with open_store(db, create=False) as store:
        assert store.datasets() == before


def test_judge_family_without_model_fields_and_ece_without_confidences_are_one_line(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    items = [{"id": f"i{i}", "input": "q", "response": str(i % 5 + 1)} for i in range(12)]
    data = _jsonl(tmp_path / "plain.jsonl", items)
    db = str(tmp_path / "s.db")
    code, _, err = run_cli("judge", "-r", "helpfulness", "--data", str(data), "--db", db,
                           "--base-url", openai_server.base_url, "--model", "gpt-4o",
                           "--no-logprobs", "--no-progress")
    assert code == 0, err
    labels = [{"item_id": f"i{i}", "annotator": "ana", "label": str(i % 5 + 1)}
              for i in range(12)]
    code, _, err = run_cli("labels", "import", str(_jsonl(tmp_path / "l.jsonl", labels)), "-r",
                           "helpfulness", "--db", db)
    assert code == 0, err
    code, out, _ = run_cli("report", "-r", "helpfulness", "--db", db, "--resamples", "200")
    assert "Self-preference not computed: no compared item names the model" in out
    code, out, err = run_cli("report", "-r", "helpfulness", "--db", db, "--judge-family", "gpt")
    assert code == 2 and out == ""
    assert err == ("error: --judge-family: self preference cannot be computed here: no "
                   "compared item names the model of its response (fields model; author is "
                   "accepted too)\n")
    code, out, err = run_cli("report", "-r", "helpfulness", "--db", db, "--max-ece", "0.1")
    assert code == 2 and out == ""
    assert err.startswith("error: --max-ece: confidence calibration cannot be computed here: "
                          "none of the compared verdicts carries a confidence")
    assert err.count("\n") == 1


def test_probes_asked_of_data_they_do_not_fit_change_nothing(tmp_path: Path) -> None:
    pairs = _jsonl(tmp_path / "pairs.jsonl", _rows(3)[0])
    single = _jsonl(tmp_path / "single.jsonl", [{"id": "i1", "input": "q", "response": "r"}])
    db = tmp_path / "s.db"
    url = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--db", str(db)]
    cases = [
        (["position", "-r", "helpfulness", "--data", str(pairs)], "needs single responses"),
        (["position", "-r", "preference", "--data", str(single)], "needs pairs"),
        (["length", "-r", "preference", "--data", str(single)], "needs pairs"),
        (["consistency", "-r", "correctness", "--data", str(pairs)], "needs single responses"),
        (["length", "-r", "helpfulness", "--data", str(single), "--min-gap", "5"],
         "--min-gap is for pairwise rubrics"),
        (["consistency", "-r", "correctness", "--dataset", "single"], "no store at"),
    ]
    for args, words in cases:
        code, _, err = run_cli("probe", *args, *url)
        assert code == 2 and words in err and err.count("\n") == 1, (args, err)
        assert not db.exists(), args
    code, _, err = run_cli("probe", "position", "--imported", "-r", "helpfulness", "--dataset",
                           "x", "--db", str(db))
    assert code == 2 and "--imported needs a pairwise rubric" in err and not db.exists()
