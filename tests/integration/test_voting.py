"""Self-consistency voting (a rubric's ``[sampling]``) over real HTTP: K seedless calls per
item at the rubric's temperature, every sample stored, one vote per item that the report
reads; votes checked against hand computations (ties, failures), reruns free."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, is_probe
from tests.support.sampling_judge import sampling_judge, script

REPO = Path(__file__).resolve().parents[2]
SAMPLING = '\n[sampling]\nsamples = 5\ntemperature = 0.7\naggregate = "majority"\n'


def voting_rubric(tmp_path: Path, base: str = "correctness.toml") -> Path:
    path = tmp_path / base.replace(".toml", "-vote.toml")
    path.write_text((REPO / "rubrics" / base).read_text() + SAMPLING)
    return path


def seed(db: Path, scripts: dict[str, str]) -> None:
    with open_store(db) as store:
        store.import_items("d", [Item(i, f"question {i}?", response=f"answer {s}",
                                      reference="ref") for i, s in scripts.items()])


def judge(db: Path, server: OpenAIServer, rubric: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("judge", "--rubric", str(rubric), "--dataset", "d", "--db", str(db),
                   "--base-url", server.base_url, "--model", "m", "--no-progress", *extra)


def votes(db: Path) -> dict[str, tuple[str, str | None, dict]]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT item_id, status, label, raw_text FROM judgments WHERE variant = '' "
        "AND id IN (SELECT MAX(id) FROM judgments GROUP BY cache_key)").fetchall()
    conn.close()
    return {i: (status, label, json.loads(raw)) for i, status, label, raw in rows}


BINARY = {
    "clear": script("pass", "fail", "pass", "fail", "pass"),   # 3-2: pass
    "partial": script("pass", "fail", "fail", "x", "fail"),    # 4 ok of 5, 3-1: fail
    "tie": script("fail", "pass", "x", "fail", "pass"),        # 2-2: the scale's first, pass
    "one": script("x", "!", "x", "!", "fail"),                 # the only ok sample: fail
    "failed": script("x", "!", "x", "!", "x"),                 # none ok: parse_error (3 of 5)
}


def test_binary_votes_match_a_hand_computation(tmp_path: Path) -> None:
    db = tmp_path / "v.db"
    seed(db, BINARY)
    rubric = voting_rubric(tmp_path)
    with OpenAIServer(sampling_judge()) as server:
        code, out, err = judge(db, server, rubric)
        assert code == 0, err
        calls = [b for b in server.requests if not is_probe(b)]
        assert len(calls) == 25  # K = 5 calls per item
        assert all(b["temperature"] == 0.7 and "seed" not in b for b in calls)
        found = votes(db)
        assert {i: (s, label) for i, (s, label, _) in found.items()} == {
            "clear": ("ok", "pass"), "partial": ("ok", "fail"), "tie": ("ok", "pass"),
            "one": ("ok", "fail"), "failed": ("parse_error", None)}
        assert found["partial"][2]["ok"] == 4 and found["partial"][2]["failed"] == {
            "parse_error": 1}
        assert found["one"][2]["votes"] == {"fail": 1}
        assert found["failed"][2]["failed"] == {"parse_error": 3, "refusal": 2}
        assert "votes: the judge's verdict per item is the majority of 5 samples" in out
        assert "ok 4, parse_error 1; 5 new, 0 unchanged" in out
        # every sample is stored, failures as data, under the variant "sample"
        conn = sqlite3.connect(db)
        samples = conn.execute("SELECT status, COUNT(*) FROM judgments WHERE variant = "
                               "'sample' GROUP BY status").fetchall()
        conn.close()
        assert dict(samples) == {"ok": 14, "parse_error": 7, "refusal": 4}
        # a rerun makes no request and writes no vote
        before = server.request_count
        code, out, err = judge(db, server, rubric)
        assert code == 0, err
        assert server.request_count == before
        assert "0 new, 5 unchanged" in out
    code, out, err = run_cli("runs", "--db", str(db), "--format", "json")
    runs = json.loads(out)
    assert runs[0]["sampling"]["vote"] == {"aggregate": "majority", "samples": 5}
    assert runs[0]["sampling"]["temperature"] == 0.7 and runs[0]["sampling"]["seed"] is None
    code, out, err = run_cli("runs", "--db", str(db))
    assert "majority of 5 samples per item" in out, out


def test_ordinal_votes_round_the_mean_ties_down(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    seed(db, {
        "mid": script("1", "2", "4", "5", "x"),     # mean 3.0: 3
        "half": script("2", "3", "x", "x", "!"),    # mean 2.5, between 2 and 3: the lower, 2
        "high": script("5", "5", "4", "x", "!"),    # mean 4.67: 5
    })
    rubric = voting_rubric(tmp_path, "helpfulness.toml")
    with OpenAIServer(sampling_judge()) as server:
        code, out, err = judge(db, server, rubric)
        assert code == 0, err
    found = votes(db)
    assert {i: label for i, (_, label, _) in found.items()} == {
        "mid": "3", "half": "2", "high": "5"}
    assert found["half"][2]["mean"] == 2.5
    assert "mean score rounded to the nearest level of 5 samples" in out


def test_report_reads_the_vote_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    seed(db, BINARY)
    rubric = voting_rubric(tmp_path)
    loaded = load_rubric(rubric)
    with OpenAIServer(sampling_judge()) as server:
        assert judge(db, server, rubric)[0] == 0
    from judgekit.types import Label
    with open_store(db) as store:
        store.add_labels([Label("d", i, loaded.sha256, "ann", "pass") for i in BINARY])
    code, out, err = run_cli("report", "--rubric", str(rubric), "--db", str(db),
                             "--format", "json")
    assert code != 2 and "Traceback" not in err, err  # 3: too few labels to decide
    report = json.loads(out)
    # the votes: pass, fail, pass, fail and one all-failed item; the samples are not read
    assert report["n_judgments"] == 5 and report["status_counts"]["parse_error"] == 1
    agreement = report["agreement"]["statistics"]["percent_agreement"]
    assert (agreement["n"], agreement["statistic"]) == (4, 0.5)
    code, out, err = run_cli("report", "--rubric", str(rubric), "--db", str(db))
    assert "verdict is the majority of 5 samples" in out


def test_options_that_contradict_the_rubric_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    seed(db, BINARY)
    rubric = voting_rubric(tmp_path)
    size = db.stat().st_size
    with OpenAIServer(sampling_judge()) as server:
        for extra in (("--temperature", "0"), ("--samples", "3"), ("--seed", "4")):
            code, _out, err = judge(db, server, rubric, *extra)
            assert code == 2, err
            assert f"{extra[0]}: rubric correctness declares [sampling] samples = 5" in err
            assert "Traceback" not in err
        assert server.request_count == 0
    assert db.stat().st_size == size


def test_bad_sampling_tables_name_the_field(tmp_path: Path) -> None:
    base = (REPO / "rubrics" / "correctness.toml").read_text()
    for table, field in (("samples = 1\ntemperature = 0.7", "sampling.samples"),
                         ("samples = 3\ntemperature = 0", "sampling.temperature"),
                         ("samples = 3\ntemperature = 0.7\naggregate = \"mean\"",
                          "sampling.aggregate"),
                         ("samples = 3\ntemperature = 0.7\nseed = 1", "sampling.seed")):
        path = tmp_path / "bad.toml"
        path.write_text(base + "\n[sampling]\n" + table + "\n")
        code, out, err = run_cli("rubric", "check", str(path))
        assert code == 1, (table, err)
        assert field in out + err, (table, out, err)


def test_align_winner_is_adopted_by_judge_with_the_same_votes(tmp_path: Path) -> None:
    """align's samples-3 wins; judge --rubric on the written file reuses every call and vote
    align made (no new request on dev or test) and its report on the test split gives the
    figure align confirmed there."""
    from judgekit.types import Label

    db = tmp_path / "a.db"
    baseline = load_rubric(REPO / "rubrics" / "correctness.toml")
    truth = {f"i{i}": ("pass" if (i * 7919) % 5 < 3 else "fail") for i in range(120)}
    flip = {"pass": "fail", "fail": "pass"}
    # greedy decoding (temperature 0) is wrong on every third item; two of three samples
    # are right on every item
    scripts = {i: script(flip[h], h, h) if n % 3 == 0 else script(h, h, flip[h])
               for n, (i, h) in enumerate(truth.items())}
    with open_store(db) as store:
        store.import_items("qa", [Item(i, f"question {i}?", response=f"answer {i} {s}",
                                       reference="ref") for i, s in scripts.items()])
        store.add_labels([Label("qa", i, baseline.sha256, "ann", h) for i, h in truth.items()])
    aligned = tmp_path / "correctness.aligned.toml"
    endpoint = ("--db", str(db), "--model", "m", "--concurrency", "4", "--no-progress")
    with OpenAIServer(sampling_judge()) as server:
        code, out, err = run_cli(
            "align", "--rubric", str(REPO / "rubrics" / "correctness.toml"), *endpoint,
            "--base-url", server.base_url, "--examples", "0", "--samples", "3",
            "--out", str(aligned), "--format", "json")
        assert code == 0, err
        result = json.loads(out)
        assert result["picked"]["name"] == "samples-3" and result["written"] == str(aligned)
        adopted = load_rubric(aligned)
        assert adopted.voting is not None and adopted.voting.samples == 3
        assert adopted.voting.temperature == 0.7 and adopted.parent == baseline.sha256
        with open_store(db) as store:
            record = store.get_split(baseline.sha256, "")
            assert record is not None
            parts = {s.item_id: s.part for s in store.split_items(record.id)}
        before = len(server.judge_requests())
        code, out, err = run_cli("judge", "--rubric", str(aligned), "--dataset", "qa",
                                 *endpoint, "--base-url", server.base_url)
        assert code == 0, err
        new = server.judge_requests()[before:]
    # only train items, which align never judged with samples-3, cost calls
    judged = {b["messages"][-1]["content"].split("answer ")[1].split(" ")[0] for b in new}
    assert {parts[i] for i in judged} == {"train"}
    assert len(new) == 3 * sum(p == "train" for p in parts.values())
    assert f"{sum(p != 'train' for p in parts.values())} unchanged" in out
    # the adopted rubric's report on the test split: align's confirmed figure
    with open_store(db) as store:
        store.add_labels([Label("qa", i, adopted.sha256, "ann", truth[i])
                          for i, p in parts.items() if p == "test"])
    code, out, err = run_cli("report", "--rubric", str(aligned), "--db", str(db),
                             "--format", "json")
    assert code != 2 and "Traceback" not in err, err
    report = json.loads(out)
    kappa = report["agreement"]["statistics"]["cohen_kappa"]
    assert kappa["n"] == result["test"]["n"] == sum(p == "test" for p in parts.values())
    assert kappa["statistic"] == result["test"]["candidate"]["statistic"]
    assert result["test"]["improvement_shown"]
    # compare reads the votes too: always right here, where greedy decoding is right on 2/3
    # (a sample read in their place would be wrong on a third of the items)
    with OpenAIServer(sampling_judge()) as server:
        code, out, err = run_cli("judge", "--rubric", str(REPO / "rubrics" / "correctness.toml"),
                                 "--dataset", "qa", *endpoint, "--base-url", server.base_url)
        assert code == 0, err
    code, out, err = run_cli("compare", "judges", "-r", str(REPO / "rubrics" / "correctness.toml"),
                             "--rubric-b", str(aligned), "--db", str(db), "--format", "json")
    assert code == 0, err
    compared = json.loads(out)
    assert compared["b"]["rubric"] == "correctness v1+samples3"
    assert (compared["b"]["percent_agreement"]["statistic"], compared["b"]["status_counts"]) == (
        1.0, {"ok": 120})
    assert compared["a"]["percent_agreement"]["statistic"] == 80 / 120


def test_retried_samples_make_a_new_vote_that_supersedes_the_old(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    seed(db, BINARY)
    rubric = voting_rubric(tmp_path)
    with OpenAIServer(sampling_judge()) as server:
        assert judge(db, server, rubric)[0] == 0
        assert votes(db)["tie"][1] == "pass"
        before = server.request_count
        code, out, err = judge(db, server, rubric, "--retry-failed")
        assert code == 0, err
        # the 11 failed samples are asked again; their next answers (the scripts from the
        # start) turn the tie's lone parse_error into a third fail
        assert server.request_count - before == 11
        assert "4 new, 1 unchanged" in out
    found = votes(db)
    assert found["tie"][:2] == ("ok", "fail") and found["tie"][2]["ok"] == 5
    assert found["failed"][0] == "parse_error"
    conn = sqlite3.connect(db)
    (superseded,) = conn.execute(
        "SELECT COUNT(*) FROM judgments WHERE variant = '' AND supersedes IS NOT NULL"
    ).fetchone()
    conn.close()
    assert superseded == 4


def test_batch_prepare_refuses_a_voting_rubric(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    seed(db, BINARY)
    rubric = voting_rubric(tmp_path)
    with OpenAIServer(sampling_judge()) as server:
        code, _out, err = run_cli("batch", "prepare", "-r", str(rubric), "--dataset", "d",
                                 "--db", str(db), "--base-url", server.base_url, "--model", "m",
                                 "--out", str(tmp_path / "req.jsonl"))
    assert code == 2, err
    assert "declares [sampling]" in err and "Traceback" not in err
    assert not (tmp_path / "req.jsonl").exists()


def test_a_file_of_several_criteria_may_not_declare_a_vote(tmp_path: Path) -> None:
    path = tmp_path / "criteria.toml"
    path.write_text((REPO / "rubrics" / "helpfulness.toml").read_text()
                    + SAMPLING + '\n[criteria.a]\ndescription = "A."\n')
    code, out, err = run_cli("rubric", "check", str(path))
    assert code == 1 and "sampling: a vote ([sampling]) is declared in a rubric of one" in out + err


def test_samples_that_never_got_an_answer_are_asked_again_and_the_vote_follows(
        tmp_path: Path) -> None:
    """A sample the server failed (api_error, no answer) is a failed sample of its vote; the
    next plain run asks only those again and votes as if nothing had failed."""
    db = tmp_path / "e.db"
    seed(db, BINARY)
    rubric = voting_rubric(tmp_path)
    with OpenAIServer(sampling_judge()) as server:
        assert judge(db, server, rubric, "--limit", "1")[0] == 0  # the endpoint is known now
        server.inject("server_error", times=3)
        before = server.request_count
        code, _out, err = judge(db, server, rubric, "--max-retries", "0")
        assert code == 0, err
        assert server.request_count - before == 20  # the 4 other items' samples
        conn = sqlite3.connect(db)
        (failed,) = conn.execute("SELECT COUNT(*) FROM judgments WHERE variant = 'sample' AND "
                                 "status = 'api_error'").fetchone()
        conn.close()
        assert failed == 3
        before = server.request_count
        code, out, err = judge(db, server, rubric)
        assert code == 0, err
        assert server.request_count - before == 3
        new, unchanged = map(int, re.search(r"(\d+) new, (\d+) unchanged", out).groups())
        assert 1 <= new <= 3 and new + unchanged == 5  # new votes for the items it hit
    assert {i: (s, label) for i, (s, label, _) in votes(db).items()} == {
        "clear": ("ok", "pass"), "partial": ("ok", "fail"), "tie": ("ok", "pass"),
        "one": ("ok", "fail"), "failed": ("parse_error", None)}
