"""A rubric with several criteria: judged per criterion, labels imported, one report each,
and the table across criteria with the overall decision."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe

RUBRIC = """
name = "summeval"
version = "1"
description = "Summary quality on two criteria."
per_call = true

[scale]
kind = "ordinal"
min = 1
max = 5

[scale.levels]
"1" = "Very poor."
"2" = "Poor."
"3" = "Fair."
"4" = "Good."
"5" = "Very good."

[prompt]
system = "You rate summaries of news articles."
user = "Article: {input}\\n\\nSummary: {response}\\n\\n{scale}"

[criteria.coherence]
description = "The summary is well structured and organised."

[criteria.fluency]
description = "Every sentence is grammatical and reads naturally."

[criteria.fluency.scale]
kind = "ordinal"
min = 1
max = 3
levels = { "1" = "Broken.", "2" = "Some slips.", "3" = "Fluent." }
"""
N = 40


def human(criterion: str, i: int) -> int:
    return 1 + (i % 5) if criterion == "coherence" else 1 + (i % 3)


def answer(body: dict[str, Any]) -> Reply:
    """Coherence: the human level exactly; fluency: always the middle level."""
    if is_probe(body):
        return default_responder(body)
    system = body["messages"][0]["content"]
    i = int(re.search(r"Article: doc (\d+)", body["messages"][-1]["content"]).group(1))
    verdict = human("coherence", i) if "Criterion: coherence." in system else 2
    return Reply(json.dumps({"reasoning": "Read it.", "verdict": str(verdict)}))


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, str]:
    rubric = tmp_path / "summeval.toml"
    rubric.write_text(RUBRIC)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"s{i}", "input": f"doc {i}",
                                         "response": f"summary {i}", "model": f"M{i % 4}"})
                             + "\n" for i in range(N)))
    db = str(tmp_path / "judgekit.db")
    assert run_cli("import", str(items), "--name", "news", "--db", db)[0] == 0
    return rubric, db


def test_every_criterion_is_judged_labeled_reported_and_summarised(
    study: tuple[Path, str],
) -> None:
    rubric, db = study
    with OpenAIServer(answer) as server:
        server.inject("server_error", times=1)  # one failed attempt, retried
        code, out, err = run_cli("judge", "-r", str(rubric), "--dataset", "news", "--db", db,
                                 "--base-url", server.base_url, "--model", "judge-m")
        assert code == 0, err
        assert len(server.judge_requests()) >= 2 * N
    assert "summeval.coherence" in err and "summeval.fluency" in err
    # a rubric file without a criterion cannot stand for one rubric in a label import
    labels = rubric.parent / "labels.jsonl"
    for criterion in ("coherence", "fluency"):
        labels.write_text("".join(json.dumps({"item_id": f"s{i}", "annotator": "h1",
                                              "label": str(human(criterion, i))}) + "\n"
                                  for i in range(N)))
        code, _, err = run_cli("labels", "import", str(labels), "--rubric",
                               f"{rubric}#{criterion}", "--db", db)
        assert code == 0, err
    code, out, _ = run_cli("report", "-r", str(rubric), "--db", db, "--format", "json",
                           "--resamples", "200")
    summary = json.loads(out)
    assert [row["criterion"] for row in summary["criteria"]] == ["coherence", "fluency"]
    by_name = {row["criterion"]: row for row in summary["criteria"]}
    assert by_name["coherence"]["statistic"]["statistic"] == pytest.approx(1.0)
    assert by_name["fluency"]["decision"] == "FAIL"
    assert summary["decision"] == "FAIL" and code == 1
    code, text, _ = run_cli("report", "-r", str(rubric), "--db", db, "--resamples", "200")
    assert "OVERALL: FAIL (FAIL if any criterion fails)" in text and code == 1
    # one criterion, by --criterion or FILE#NAME, is an ordinary report
    code, one, _ = run_cli("report", "-r", str(rubric), "--criterion", "coherence", "--db", db,
                           "--format", "json", "--resamples", "200")
    assert json.loads(one)["provenance"]["rubric_name"] == "summeval.coherence"
    code, _, err = run_cli("report", "-r", f"{rubric}#nosuch", "--db", db)
    assert code == 2 and "no criterion 'nosuch' (criteria: coherence, fluency)" in err


def test_a_criteria_file_without_per_call_is_judged_in_one_call_per_item(
    study: tuple[Path, str],
) -> None:
    rubric, db = study
    rubric.write_text(RUBRIC.replace("per_call = true\n", ""))

    def both(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        return Reply(json.dumps({"coherence": {"reasoning": "Ordered.", "verdict": "4"},
                                 "fluency": {"reasoning": "Fine.", "verdict": "3"}}))

    with OpenAIServer(both) as server:
        code, _, err = run_cli("judge", "-r", str(rubric), "--dataset", "news", "--db", db,
                               "--base-url", server.base_url, "--model", "judge-m")
        assert code == 0, err
        assert len(server.judge_requests()) == N
    labels = rubric.parent / "x.jsonl"
    labels.write_text(json.dumps({"item_id": "s0", "annotator": "h1", "label": "3"}) + "\n")
    code, _, err = run_cli("labels", "import", str(labels), "--rubric",
                           f"{rubric}#coherence", "--db", db)
    assert code == 0, err
    code, out, _ = run_cli("export", "--rubric", f"{rubric}#fluency", "--db", db,
                           "--format", "jsonl")
    assert code == 0 and len(out.splitlines()) == N and '"label": "3"' in out


async def test_each_criterion_is_annotated_in_the_app_under_its_own_rubric(
    study: tuple[Path, str],
) -> None:
    from judgekit.rubrics import load_rubric
    from judgekit.store import open_store
    from judgekit.store.labels import QueueEntry
    from judgekit.tui.app import make_app
    from tests.support.annotate import screen_text

    rubric, db = study
    pressed = {"coherence": ["5", "4", "3"], "fluency": ["3", "1", "2"]}
    with open_store(db) as store:
        for criterion, keys in pressed.items():
            derived = load_rubric(f"{rubric}#{criterion}")
            queue = [QueueEntry(i, "news", f"s{i}", 1.0, "random") for i in range(3)]
            app = make_app(store, derived, queue, annotator="h2")
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                # the help opens first for a new annotator: the criterion's own description
                assert f"summeval.{criterion} v1" in screen_text(app)
                assert ("well structured" if criterion == "coherence"
                        else "grammatical") in screen_text(app)
                await pilot.press("escape")
                await pilot.pause()
                assert "doc 0" in screen_text(app)
                for key in keys:
                    await pilot.press(key)
                    await app.label_screen.settled()
                await pilot.pause()
            stored = {lb.item_id: lb.label
                      for lb in store.latest_labels(derived.sha256) if lb.annotator == "h2"}
            assert stored == {f"s{i}": key for i, key in enumerate(keys)}
