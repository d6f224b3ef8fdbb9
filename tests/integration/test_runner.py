"""The runner over real HTTP (real ``openai`` client) against the test server, real SQLite."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from judgekit import __version__
from judgekit.clients import JudgeSpec
from judgekit.judging.runner import WorkUnit, run_judgments, swapped_pair, unit_for, unit_key
from judgekit.rubrics import load_rubric, rubric_from_text
from judgekit.store import Store
from judgekit.types import Item, SamplingParams
from tests.support.openai_server import OpenAIServer, Reply

ROOT_RUBRICS = "rubrics"


def facts(n: int) -> list[Item]:
    return [
        Item(id=f"f{i}", input=f"What is {i} + {i}?", response=str(2 * i), reference=str(2 * i))
        for i in range(n)
    ]


def pairs(n: int) -> list[Item]:
    return [
        Item(id=f"p{i}", input=f"Say {i}", response_a=f"{i}", response_b=f"not {i}")
        for i in range(n)
    ]


def spec_for(server: OpenAIServer, **kw: Any) -> JudgeSpec:
    return JudgeSpec(base_url=server.base_url, model="judge-m", **kw)


@pytest.fixture
def correctness():
    return load_rubric(f"{ROOT_RUBRICS}/correctness.toml")


@pytest.fixture
def preference():
    return load_rubric(f"{ROOT_RUBRICS}/preference.toml")


def test_first_run_judges_everything_with_provenance(
    openai_server: OpenAIServer, tmp_db: Store, correctness
) -> None:
    items = facts(12)
    spec = spec_for(openai_server, sampling=SamplingParams(temperature=0.0, max_tokens=200,
                                                           top_p=0.9, seed=7))
    summary = run_judgments(tmp_db, correctness, items, spec, dataset="facts")

    assert summary.total == 12 and summary.judged == 12 and summary.cached == 0
    assert summary.counts["ok"] == 12
    assert len(openai_server.judge_requests()) == 12
    assert summary.requests == 12
    for body in openai_server.judge_requests():
        # sampling parameters always sent explicitly
        assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"]) == (
            0.0, 200, 0.9, 7)
        assert body["response_format"]["type"] == "json_schema"
        assert body["model"] == "judge-m"

    rows = tmp_db.judgments(dataset="facts")
    assert len(rows) == 12
    run = tmp_db.get_run(summary.run_id)
    assert run is not None and run.capabilities["response_format"] == "json_schema"
    assert run.finished_at is not None and run.summary["judged"] == 12
    for row in rows:
        assert row.status == "ok" and row.label == "pass" and row.score == 1.0
        assert row.run_id == summary.run_id
        assert row.model_requested == "judge-m" and row.model_returned == "test-model"
        assert row.base_url == openai_server.base_url
        assert dict(row.sampling) == {"temperature": 0.0, "max_tokens": 200, "top_p": 0.9,
                                      "seed": 7}
        assert (row.rubric_name, row.rubric_version, row.rubric_hash) == (
            "correctness", correctness.version, correctness.sha256)
        assert row.prompt_tokens == 20 and row.completion_tokens == 10
        assert row.latency_ms is not None and row.latency_ms > 0
        assert row.finish_reason == "stop" and row.judgekit_version == __version__
        assert row.raw_text and json.loads(row.raw_text)["verdict"] == "pass"
        assert row.created_at
    assert tmp_db.get_rubric_text(correctness.sha256) == correctness.source_text


def test_rerun_makes_zero_requests(openai_server: OpenAIServer, tmp_db: Store, correctness) -> None:
    items = facts(20)
    spec = spec_for(openai_server)
    run_judgments(tmp_db, correctness, items, spec, dataset="facts")
    before = openai_server.request_count
    again = run_judgments(tmp_db, correctness, items, spec, dataset="facts")
    assert openai_server.request_count == before
    assert again.cached == 20 and again.judged == 0 and again.counts["ok"] == 20
    # the cached-only run is still recorded, without touching the endpoint
    assert tmp_db.get_run(again.run_id) is not None


def test_changes_rejudge_exactly_what_changed(
    openai_server: OpenAIServer, tmp_db: Store, correctness
) -> None:
    items = facts(10)
    spec = spec_for(openai_server)
    run_judgments(tmp_db, correctness, items, spec, dataset="facts")

    def judged(**kw: Any) -> int:
        before = len(openai_server.judge_requests())
        run_judgments(tmp_db, kw.get("rubric", correctness), kw.get("items", items),
                      kw.get("spec", spec), dataset="facts", force=kw.get("force", False))
        return len(openai_server.judge_requests()) - before

    edited = [*items[:3], replace(items[3], response="wrong"), *items[4:]]
    assert judged(items=edited) == 1  # one edited item
    assert judged(items=edited) == 0
    changed_text = correctness.source_text.replace("strict grader", "careful grader")
    new_rubric = rubric_from_text(changed_text)
    assert new_rubric.sha256 != correctness.sha256
    assert judged(rubric=new_rubric, items=edited) == 10
    hotter = replace(spec, sampling=SamplingParams(temperature=0.7))
    assert judged(spec=hotter, items=edited) == 10
    other_model = replace(spec, model="judge-2")
    assert judged(spec=other_model, items=edited) == 10
    assert judged(items=edited, force=True) == 10
    assert judged(items=edited) == 0


def test_samples_are_independent_calls(
    openai_server: OpenAIServer, tmp_db: Store, correctness
) -> None:
    summary = run_judgments(tmp_db, correctness, facts(4), spec_for(openai_server),
                            dataset="facts", samples=3)
    assert summary.judged == 12
    rows = tmp_db.judgments(dataset="facts")
    assert sorted((r.item_id, r.sample_index) for r in rows) == sorted(
        (f"f{i}", s) for i in range(4) for s in range(3))
    assert len({r.cache_key for r in rows}) == 12
    again = run_judgments(tmp_db, correctness, facts(4), spec_for(openai_server),
                          dataset="facts", samples=4)
    assert again.judged == 4 and again.cached == 12


def test_swapped_pairs_are_mapped_back(tmp_db: Store, preference) -> None:
    def always_a(body: dict[str, Any]) -> Reply:
        return Reply(json.dumps({"reasoning": "A is first.", "verdict": "A"}))

    items = pairs(3)
    with OpenAIServer(always_a) as server:
        summary = run_judgments(tmp_db, preference, items, spec_for(server), dataset="pairs",
                                variants=("", "swapped"))
        assert summary.judged == 6
        swapped_bodies = [b for b in server.judge_requests()
                          if "Response A: not 0" in b["messages"][-1]["content"]]
        assert len(swapped_bodies) == 1  # the judge really saw B's text in slot A
    rows = tmp_db.judgments(dataset="pairs")
    original = {r.item_id: r for r in rows if r.variant == ""}
    swapped = {r.item_id: r for r in rows if r.variant == "swapped"}
    assert {r.label for r in original.values()} == {"A"}
    assert {r.label for r in swapped.values()} == {"B"}  # "A" in swapped order = original B
    for item in items:
        assert json.loads(swapped[item.id].raw_text or "")["verdict"] == "A"  # raw kept
        assert swapped[item.id].item_hash == item.content_hash  # matches the dataset's item


def test_work_units_from_a_caller(openai_server: OpenAIServer, tmp_db: Store, preference) -> None:
    item = pairs(1)[0]
    units = [
        WorkUnit(item),
        WorkUnit(swapped_pair(item), "swapped", swap_labels=True, source_hash=item.content_hash),
        WorkUnit(replace(item, response_a=item.response_a + " Indeed, indeed."), "pad50",
                 source_hash=item.content_hash),
        unit_for(item, "reversed_levels"),
    ]
    summary = run_judgments(tmp_db, preference, units, spec_for(openai_server), dataset="pairs",
                            kind="probe:position")
    assert summary.judged == 4
    variants = sorted(r.variant for r in tmp_db.judgments(dataset="pairs"))
    assert variants == ["", "pad50", "reversed_levels", "swapped"]
    bodies = [b["messages"][-1]["content"] for b in openai_server.judge_requests()]
    reversed_body = next(b for b in bodies if b.index("- tie") < b.index("- A"))
    assert reversed_body.index("- B") < reversed_body.index("- A")
    assert tmp_db.get_run(summary.run_id).kind == "probe:position"  # type: ignore[union-attr]
    again = run_judgments(tmp_db, preference, units, spec_for(openai_server), dataset="pairs")
    assert again.judged == 0
    # a caller reads back the latest outcome of each unit, cached or not
    keys = [unit_key(preference, u, spec_for(openai_server), dataset="pairs") for u in units]
    found = tmp_db.cached_judgments(keys)
    assert [found[k].variant for k in keys] == ["", "swapped", "pad50", "reversed_levels"]
    assert {found[k].run_id for k in keys} == {summary.run_id}


def test_structured_output_fallbacks_are_recorded(tmp_db: Store, correctness) -> None:
    with OpenAIServer(mimic_llamacpp=True) as server:
        summary = run_judgments(tmp_db, correctness, facts(3), spec_for(server), dataset="facts")
        assert summary.response_format == "json_object"
        formats = {b["response_format"]["type"] for b in server.judge_requests()}
        assert formats == {"json_object"}
        assert "schema" in server.judge_requests()[0]["response_format"]
        # llama.cpp answers json_schema with HTTP 500: probed once, then cached
        assert tmp_db.get_capabilities(server.base_url, "judge-m")["json_schema"] is False
    with OpenAIServer(json_schema=False, json_object=False, logprobs=False) as server:
        summary = run_judgments(tmp_db, correctness, facts(3), spec_for(server), dataset="facts")
        assert summary.response_format == "none" and summary.counts["ok"] == 3
        assert all("response_format" not in b for b in server.judge_requests())
        run = tmp_db.get_run(summary.run_id)
        assert run is not None
        assert run.capabilities["response_format"] == "none"
        assert run.capabilities["logprobs"] is False
        rows = tmp_db.judgments(run_id=summary.run_id)
        assert {r.status for r in rows} == {"ok"}


def test_capabilities_cached_per_endpoint_and_model(
    openai_server: OpenAIServer, tmp_db: Store, correctness
) -> None:
    run_judgments(tmp_db, correctness, facts(2), spec_for(openai_server), dataset="facts")
    probes = len(openai_server.probe_requests())
    assert probes >= 2
    caps = tmp_db.get_capabilities(openai_server.base_url, "judge-m")
    assert caps is not None and caps["json_schema"] is True and caps["logprobs"] is True
    run_judgments(tmp_db, correctness, facts(4), spec_for(openai_server), dataset="facts")
    assert len(openai_server.probe_requests()) == probes
    spec2 = replace(spec_for(openai_server), model="other")
    run_judgments(tmp_db, correctness, facts(2), spec2, dataset="facts")
    assert len(openai_server.probe_requests()) > probes


def test_concurrency_is_bounded(tmp_db: Store, correctness) -> None:
    with OpenAIServer(latency=0.05) as server:
        run_judgments(tmp_db, correctness, facts(40), spec_for(server, concurrency=5),
                      dataset="facts")
        assert 2 <= server.max_in_flight <= 5


def test_rpm_limits_request_starts(tmp_db: Store, correctness) -> None:
    with OpenAIServer() as server:
        run_judgments(tmp_db, correctness, facts(1), spec_for(server), dataset="warm")
        summary = run_judgments(tmp_db, correctness, facts(7),
                                spec_for(server, rpm=300, concurrency=7), dataset="facts")
    # 7 starts planned at once: the first at once, six held back to 0.2 s apart (the
    # schedule itself is checked on an injected clock in tests/unit/test_pacing.py)
    [paced] = summary.replicas
    assert paced["waits"] == {"rpm": 6} and paced["requests"] == 7


def test_mismatched_rubric_fails_before_any_request(
    openai_server: OpenAIServer, tmp_db: Store, preference
) -> None:
    from judgekit.errors import InputError

    with pytest.raises(InputError, match="pairwise"):
        run_judgments(tmp_db, preference, facts(3), spec_for(openai_server), dataset="facts")
    assert openai_server.request_count == 0


def test_iterators_stream_in_chunks(openai_server: OpenAIServer, tmp_db: Store,
                                    correctness, monkeypatch) -> None:
    import judgekit.judging.runner as runner

    monkeypatch.setattr(runner, "CHUNK_SIZE", 7)
    summary = run_judgments(tmp_db, correctness, iter(facts(30)), spec_for(openai_server),
                            dataset="facts")
    assert summary.total == 30 and summary.judged == 30
    again = run_judgments(tmp_db, correctness, iter(facts(30)), spec_for(openai_server),
                          dataset="facts")
    assert again.cached == 30


def test_verdict_confidence_from_logprobs(tmp_db: Store, correctness) -> None:
    """Logprobs are requested only where supported; the confidence is stored per judgment."""

    def answer(body: dict[str, Any]) -> Reply:
        item = body["messages"][-1]["content"]
        unsure = "What is 1 + 1?" in item
        verdict = "fail" if unsure else "pass"
        alternatives = {"pass": 0.35, "f": 0.05} if unsure else {"fail": 0.1, "your": 0.1}
        return Reply(json.dumps({"reasoning": "Checked.", "verdict": verdict}),
                     alternatives=alternatives)

    with OpenAIServer(answer) as server:
        summary = run_judgments(tmp_db, correctness, facts(3), spec_for(server), dataset="facts")
        bodies = server.judge_requests()
        assert all(b["logprobs"] is True and b["top_logprobs"] == 5 for b in bodies)
    run = tmp_db.get_run(summary.run_id)
    assert run is not None and run.capabilities["logprobs_used"] is True
    rows = {r.item_id: r for r in tmp_db.judgments(run_id=summary.run_id)}
    # "fail" at 0.6 vs "pass" 0.35 + nothing else on the scale ("f" begins fail too)
    assert rows["f1"].label == "fail"
    assert rows["f1"].confidence == pytest.approx(0.65 / 1.0)
    # "pass" at 0.8 vs "fail" 0.1; "your" begins no label and drops out
    assert rows["f0"].confidence == pytest.approx(0.8 / 0.9)

    # a caller may turn them off where they are expensive (the demo on the local judge)
    with OpenAIServer(answer) as server:
        spec = spec_for(server, logprobs=False)
        summary = run_judgments(tmp_db, correctness, facts(2), spec, dataset="off")
        assert all("logprobs" not in b for b in server.judge_requests())
    run = tmp_db.get_run(summary.run_id)
    assert run is not None and run.capabilities["logprobs_used"] is False

    with OpenAIServer(answer, logprobs=False) as server:
        summary = run_judgments(tmp_db, correctness, facts(2), spec_for(server), dataset="facts")
        assert all("logprobs" not in b for b in server.judge_requests())
    run = tmp_db.get_run(summary.run_id)
    assert run is not None and run.capabilities["logprobs_used"] is False
    assert {r.confidence for r in tmp_db.judgments(run_id=summary.run_id)} == {None}
