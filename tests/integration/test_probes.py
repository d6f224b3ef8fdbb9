"""The probes end to end: simulated judges with planted biases behind the real test server,
the real openai client over 127.0.0.1, and a real SQLite store."""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.clients import JudgeSpec
from judgekit.judging.probes import run_consistency_probe, run_length_probe, run_position_probe
from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store
from judgekit.types import Item, Label, SamplingParams
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe

QUALITY = re.compile(r"\[q=(\d)\]")


def _user(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _rng(body: dict[str, Any], seed: int, salt: str = "") -> random.Random:
    """Randomness fixed by the request's content: reproducible whatever the arrival order."""
    digest = hashlib.sha256(f"{seed}|{salt}|{_user(body)}".encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def _answer(verdict: str) -> Reply:
    return Reply(json.dumps({"reasoning": "Compared on the stated criteria.", "verdict": verdict}))


def pairwise_judge(first_slot_bias: float, noise: float, seed: int) -> Callable[..., Reply]:
    """Picks the better answer by its hidden quality tag; with probability ``first_slot_bias``
    it picks whatever is shown first, with probability ``noise`` a slot-blind coin flip."""

    def respond(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        rng = _rng(body, seed)
        q_a, q_b = (int(q) for q in QUALITY.findall(_user(body))[:2])
        if rng.random() < first_slot_bias:
            return _answer("A")
        if rng.random() < noise:
            return _answer(rng.choice(["A", "B"]))
        return _answer("A" if q_a > q_b else "B" if q_b > q_a else "tie")

    return respond


def pairs(n: int, seed: int) -> list[Item]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        q_a, q_b = rng.sample(range(1, 10), 2)
        out.append(Item(id=f"pair{i}", input=f"Question {i}?",
                        response_a=f"[q={q_a}] First answer to {i}.",
                        response_b=f"[q={q_b}] Second answer to {i}."))
    return out


def spec_for(server: OpenAIServer, **sampling: Any) -> JudgeSpec:
    return JudgeSpec(base_url=server.base_url, model="sim-judge", concurrency=4,
                     sampling=SamplingParams(**sampling) if sampling else SamplingParams())


@pytest.fixture
def preference():
    return load_rubric("rubrics/preference.toml")


@pytest.fixture
def helpfulness():
    return load_rubric("rubrics/helpfulness.toml")


def test_a_20_percent_first_slot_preference_is_detected(
    openai_server: OpenAIServer, tmp_db: Store, preference
) -> None:
    openai_server.responder = pairwise_judge(first_slot_bias=0.2, noise=0.0, seed=1)
    items = pairs(80, seed=1)
    outcome = run_position_probe(tmp_db, preference, items, spec_for(openai_server),
                                 dataset="pairs", progress=False)
    r = outcome.result
    assert r["position_consistency"]["n"] == 80 and r["n_excluded"] == 0
    assert r["position_consistency"]["ci_high"] < 0.95
    assert r["first_slot_test"]["pvalue"] < 0.05
    assert r["first_slot_rate"]["statistic"] > 0.1 and r["second_slot_rate"]["statistic"] == 0
    assert r["position_fairness"]["ci_high"] < 0
    assert set(r["inconsistent_items"]) <= {i.id for i in items} and r["inconsistent_items"]

    # the judge really saw every pair in both orders
    seen: dict[str, list[tuple[str, str]]] = {}
    for body in openai_server.judge_requests():
        text = _user(body)
        seen.setdefault(re.search(r"Question (\d+)\?", text).group(1), []).append(
            tuple(QUALITY.findall(text)[:2]))
    assert len(seen) == 80
    for orders in seen.values():
        assert len(orders) == 2 and orders[0] == orders[1][::-1]

    stored = tmp_db.probe_results(preference.sha256, "position")
    assert len(stored) == 1 and stored[0]["run_id"] == outcome.summary.run_id
    assert stored[0]["result"]["position_consistency"] == r["position_consistency"]
    run = tmp_db.get_run(outcome.summary.run_id)
    assert run is not None and run.kind == "probe:position"


def test_an_unbiased_judge_is_not_flagged_and_a_rerun_is_free(
    openai_server: OpenAIServer, tmp_db: Store, preference
) -> None:
    openai_server.responder = pairwise_judge(first_slot_bias=0.0, noise=0.3, seed=2)
    items = pairs(80, seed=2)
    spec = spec_for(openai_server)
    r = run_position_probe(tmp_db, preference, items, spec, dataset="pairs",
                           progress=False).result
    assert r["conflict_rate"]["statistic"] > 0  # noisy, but not slot-driven
    assert r["first_slot_test"]["pvalue"] >= 0.05
    assert r["position_fairness"]["ci_low"] < 0 < r["position_fairness"]["ci_high"]

    before = len(openai_server.judge_requests())
    again = run_position_probe(tmp_db, preference, items, spec, dataset="pairs", progress=False)
    assert len(openai_server.judge_requests()) == before  # everything cached
    assert again.summary.cached == 160
    assert again.result["position_consistency"] == r["position_consistency"]
    assert len(tmp_db.probe_results(preference.sha256, "position")) == 2


def test_failed_judgments_are_excluded_not_scored(
    openai_server: OpenAIServer, tmp_db: Store, preference
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        if "Question 0?" in _user(body):
            return Reply("I would rather not say.")  # unparseable
        return pairwise_judge(0.0, 0.0, 3)(body)

    openai_server.responder = respond
    r = run_position_probe(tmp_db, preference, pairs(10, seed=3), spec_for(openai_server),
                           dataset="pairs", progress=False).result
    assert r["n_excluded"] == 1 and r["position_consistency"]["n"] == 9
    assert r["position_consistency"]["statistic"] == 1.0
    assert r["status_counts"][""].get("parse_error") == 1


# -- length -------------------------------------------------------------------------

LONG = 300  # characters from which the simulated judge adds a point


def ordinal_length_judge(seed: int, noise: float = 0.0) -> Callable[..., Reply]:
    """Scores the hidden quality, +1 (max 5) when the response is longer than LONG chars;
    with probability ``noise`` one level up or down (per repeated call)."""
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        text = _user(body)
        response = text.split("Response: ", 1)[1].split("\n\nRate the response:", 1)[0]
        score = int(QUALITY.search(response).group(1)) + (len(response) > LONG)
        with lock:
            calls[text] += 1
            nth = calls[text]
        rng = _rng(body, seed, salt=str(nth))
        if rng.random() < noise:
            score += rng.choice([-1, 1])
        return _answer(str(min(5, max(1, score))))

    return respond


def answers(n: int, seed: int) -> tuple[list[Item], dict[str, int]]:
    rng = random.Random(seed)
    items, quality = [], {}
    for i in range(n):
        q = rng.randint(1, 4)
        body = " ".join(["word"] * rng.randint(8, 110))
        items.append(Item(id=f"r{i}", input=f"Explain thing {i}.", response=f"[q={q}] {body}"))
        quality[f"r{i}"] = q
    return items, quality


def test_a_judge_that_rewards_length_shows_a_length_effect_and_padding_shift(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness
) -> None:
    openai_server.responder = ordinal_length_judge(seed=4)
    items, quality = answers(60, seed=4)
    tmp_db.add_labels([Label(dataset="answers", item_id=item_id, rubric_hash=helpfulness.sha256,
                             annotator="ann", label=str(q)) for item_id, q in quality.items()])
    r = run_length_probe(tmp_db, helpfulness, items, spec_for(openai_server), dataset="answers",
                         progress=False).result
    assert r["length_correlation"]["statistic"] > 0 and r["length_correlation"]["ci_low"] > 0
    # humans scored the hidden quality only, which is unrelated to length
    human = r["human_length_correlation"]
    assert human["n"] == 60 and human["ci_low"] < 0.1 < r["length_correlation"]["statistic"]
    assert r["padding_level"] == 100
    assert r["padding_shift"]["statistic"] > 0 and r["padding_shift"]["ci_low"] > 0
    assert r["padding_flip_rate"]["statistic"] > 0
    assert set(r["padding_levels"]) == {"25", "50", "100"}
    shifts = [r["padding_levels"][k]["padding_shift"]["statistic"] for k in ("25", "50", "100")]
    assert shifts == sorted(shifts)  # more filler, more points
    assert len(r["points"]) == 60 and len(r["human_points"]) == 60
    assert r["points"][0] == [float(len(items[0].response)), pytest.approx(r["points"][0][1])]
    assert tmp_db.probe_results(helpfulness.sha256, "length")[0]["result"]["padding_shift"] == (
        r["padding_shift"])
    # the padded prompts carried the neutral filler, never a new quality tag
    padded = [b for b in openai_server.judge_requests() if "I hope this helps." in _user(b)
              or "Thank you for the question." in _user(b)]
    assert padded and all(len(QUALITY.findall(_user(b))) == 1 for b in padded)


def test_the_stored_length_correlation_counts_prompts_when_answers_share_one(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness
) -> None:
    """Five answers per prompt are not five independent items: the stored judge figure
    carries the p-value by prompt (delete-one-prompt jackknife on Fisher's z, t on G - 1
    degrees of freedom), written out here over SciPy's spearmanr."""
    import math

    import numpy as np
    from scipy import stats as sps

    openai_server.responder = ordinal_length_judge(seed=5)
    answered, _ = answers(60, seed=5)
    items = [Item(id=a.id, input=f"Explain thing {i // 5}.", response=a.response)
             for i, a in enumerate(answered)]
    r = run_length_probe(tmp_db, helpfulness, items, spec_for(openai_server), dataset="shared",
                         progress=False).result
    stat = r["length_correlation"]
    assert stat["cluster_by"] == "prompt" and stat["n_clusters"] == 12
    x = np.array([p[0] for p in r["points"]], float)
    y = np.array([p[1] for p in r["points"]], float)
    groups = np.array([i // 5 for i in range(60)])
    rho = sps.spearmanr(x, y).statistic
    leave = np.array([sps.spearmanr(x[groups != g], y[groups != g]).statistic
                      for g in range(12)])
    se = math.sqrt(11 / 12 * float(np.sum((leave - leave.mean()) ** 2)))
    expected = 2 * sps.t.sf(abs(math.atanh(rho) * (1 - rho * rho) / se), 11)
    assert stat["cluster_pvalue"] == pytest.approx(expected, rel=1e-9)
    assert stat["pvalue"] == pytest.approx(sps.spearmanr(x, y).pvalue, rel=1e-9)


def test_a_judge_that_rewards_length_has_a_positive_slope_within_prompts(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness
) -> None:
    openai_server.responder = ordinal_length_judge(seed=7)
    answered, quality = answers(120, seed=7)
    # three answers to each of 40 prompts (the fixed effects compare answers to one prompt)
    items = [Item(id=i.id, input=f"Explain thing {n // 3}.", response=i.response)
             for n, i in enumerate(answered)]
    r = run_length_probe(tmp_db, helpfulness, items, spec_for(openai_server), dataset="shared",
                         levels=(25,), progress=False).result
    slope = r["length_slope"]
    assert slope["n"] == 120 and slope["statistic"] > 0 and slope["ci_low"] > 0
    assert slope["pvalue"] < 0.05
    assert "length_slope_human_adjusted" not in r  # no labels yet
    tmp_db.add_labels([Label(dataset="shared", item_id=item_id, rubric_hash=helpfulness.sha256,
                             annotator="ann", label=str(q)) for item_id, q in quality.items()])
    r = run_length_probe(tmp_db, helpfulness, items, spec_for(openai_server), dataset="shared",
                         levels=(25,), progress=False).result
    # humans scored the hidden quality only: the length effect beyond them stays
    adjusted = r["length_slope_human_adjusted"]
    assert adjusted["n"] == 120 and adjusted["ci_low"] > 0
    assert r["length_slope"] == slope  # cached judgments, seeded bootstrap
    # an item's cluster, when given, is its prompt: one answer per cluster leaves nothing
    clustered = [Item(id=i.id, input=i.input, response=i.response, cluster=i.id) for i in items]
    r = run_length_probe(tmp_db, helpfulness, clustered, spec_for(openai_server),
                         dataset="shared", levels=(25,), progress=False).result
    assert r["length_slope"]["statistic"] is None
    assert "no prompt has two or more" in r["length_slope"]["reason"]


def test_a_length_neutral_judge_shows_no_padding_shift(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        return _answer(QUALITY.search(_user(body)).group(1))

    openai_server.responder = respond
    items, _ = answers(30, seed=5)
    r = run_length_probe(tmp_db, helpfulness, items, spec_for(openai_server), dataset="answers",
                         levels=(50,), progress=False).result
    assert r["padding_shift"]["statistic"] == 0 and r["padding_flip_rate"]["statistic"] == 0
    assert r["human_length_correlation"]["n"] == 0 and "reason" in r["human_length_correlation"]


def test_pairwise_length_probe_reports_prefer_longer(
    openai_server: OpenAIServer, tmp_db: Store, preference
) -> None:
    def longer(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        text = _user(body)
        a = text.split("Response A: ", 1)[1].split("\n\nResponse B:", 1)[0]
        b = text.split("Response B: ", 1)[1].split("\n\nWhich response", 1)[0]
        return _answer("A" if len(a) > len(b) else "B")

    openai_server.responder = longer
    rng = random.Random(6)
    items = [Item(id=f"l{i}", input=f"Q{i}", response_a="[q=5] " + "a" * rng.randint(10, 200),
                  response_b="[q=5] " + "b" * rng.randint(10, 200)) for i in range(40)]
    r = run_length_probe(tmp_db, preference, items, spec_for(openai_server), dataset="long",
                         progress=False).result
    assert r["prefer_longer_rate"]["statistic"] == 1.0 and r["prefer_longer_rate"]["n"] > 10
    assert r["prefer_longer_rate"]["pvalue"] < 0.05
    assert r["human_prefer_longer_rate"]["n"] == 0
    assert r["padding_shift"]["statistic"] > 0  # the padded side wins more often
    # a 0/1 preference against a continuous gap cannot reach rho = 1 (ties in y)
    assert r["length_correlation"]["statistic"] > 0.8


# -- consistency ----------------------------------------------------------------------


def test_repeats_measure_a_noisy_judge_and_a_stable_one(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness
) -> None:
    items, _ = answers(30, seed=7)
    openai_server.responder = ordinal_length_judge(seed=7, noise=0.4)
    spec = spec_for(openai_server, temperature=0.7)
    noisy = run_consistency_probe(tmp_db, helpfulness, items, spec, dataset="answers",
                                  samples=5, progress=False).result
    assert len(openai_server.judge_requests()) == 150
    assert noisy["samples"] == 5 and noisy["temperature"] == 0.7
    assert noisy["repetition_stability"]["n"] == 30
    assert 0.3 < noisy["repetition_stability"]["statistic"] < 0.95
    assert noisy["flip_rate"]["statistic"] > 0.5
    assert noisy["repeat_alpha"]["statistic"] < 0.95 and noisy["repeat_fleiss_kappa"]["n"] == 30
    assert noisy["unstable_items"]

    openai_server.responder = ordinal_length_judge(seed=7, noise=0.0)
    stable = run_consistency_probe(tmp_db, helpfulness, items, spec_for(openai_server),
                                   dataset="answers", samples=3, progress=False).result
    assert stable["repetition_stability"]["statistic"] == 1.0
    assert stable["flip_rate"]["statistic"] == 0.0 and stable["unstable_items"] == []
    assert stable["repeat_alpha"]["statistic"] == pytest.approx(1.0)


# -- command line ----------------------------------------------------------------------


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _write(path: Path, items: list[Item]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            row = {k: v for k, v in vars(item).items() if v is not None and k != "meta"}
            handle.write(json.dumps(row) + "\n")
    return path


def test_cli_position_prints_figures_with_n_and_intervals(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = pairwise_judge(first_slot_bias=0.2, noise=0.0, seed=8)
    data = _write(tmp_path / "pairs.jsonl", pairs(30, seed=8))
    db = str(tmp_path / "p.db")
    common = ["--rubric", "rubrics/preference.toml", "--data", str(data), "--db", db,
              "--base-url", openai_server.base_url, "--model", "sim", "--no-progress"]
    out = _invoke("probe", "position", *common)
    assert "position probe: rubric preference v1" in out
    assert re.search(r"position consistency\s+\d\.\d{3}\s+95% CI \[\d\.\d{3}, \d\.\d{3}\]\s+n=30",
                     out)
    assert "first slot" in out and "exact binomial test" in out and "p=" in out
    stored = json.loads(_invoke("probe", "position", *common, "--json"))
    assert stored["position_consistency"]["n"] == 30 and stored["probe"] == "position"
    assert len(openai_server.judge_requests()) == 60  # the second run was free
    with open_store(db) as store:
        rubric = load_rubric("rubrics/preference.toml")
        assert len(store.probe_results(rubric.sha256, "position")) == 2


def test_cli_length_with_filler_file_and_consistency_samples(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = ordinal_length_judge(seed=9)
    items, _ = answers(20, seed=9)
    data = _write(tmp_path / "answers.jsonl", items)
    filler = tmp_path / "filler.txt"
    filler.write_text("# neutral\nThat is all.\n", encoding="utf-8")
    db = str(tmp_path / "l.db")
    common = ["--rubric", "rubrics/helpfulness.toml", "--data", str(data), "--db", db,
              "--base-url", openai_server.base_url, "--model", "sim", "--no-progress"]
    out = _invoke("probe", "length", *common, "--levels", "50", "--filler", str(filler))
    assert "padding +50% shift" in out and "length correlation (judge)" in out
    assert "slope per doubling" in out
    padded = [b for b in openai_server.judge_requests() if "That is all." in _user(b)]
    assert len(padded) == 20
    out = _invoke("probe", "consistency", *common, "--samples", "3", "--temperature", "0.7")
    assert "3 samples per item at temperature 0.7" in out and "repetition stability" in out
    result = CliRunner().invoke(cli, ["probe", "length", *common, "--levels", "x"])
    assert result.exit_code != 0


def test_a_pointwise_position_probe_prints_what_it_varied() -> None:
    """No pairs on a pointwise rubric: the lines speak of the levels listed reversed."""
    from judgekit.cli.probe import _position_lines

    stat = {"statistic": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 40}
    result = {"mode": "pointwise", "position_consistency": stat, "conflict_rate": stat,
              "first_slot_rate": stat, "second_slot_rate": stat, "position_fairness": stat,
              "first_slot_test": {"k": 5, "n": 8, "statistic": 0.6, "ci_low": 0.2,
                                  "ci_high": 0.9, "pvalue": 0.7},
              "level_order_shift": stat}
    text = "\n".join(_position_lines(result))
    assert "level-order consistency" in text and "toward level listed first" in text
    assert "(5 of 8 changed verdicts" in text
    assert "slot" not in text and "fairness" not in text and "pairs" not in text
    pairwise = "\n".join(_position_lines({**result, "mode": "pairwise"}))
    assert "first slot" in pairwise and "position fairness" in pairwise
