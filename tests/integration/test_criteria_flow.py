"""A multi-criteria rubric from judging to the decision, through the real parts.

One study, one test, in both ways of calling the judge (one call per item answering
every criterion, the default, and one call per criterion): two criteria judged against
the fault server (a transient 500, a call that keeps failing, an answer with no
coherence verdict in it), every
criterion of every item labeled on one annotate screen (the real command and app,
driven with Pilot), a second annotator's labels imported, then one report per
criterion and the table across criteria with the overall decision. The coherence
figures are checked against scikit-learn and SciPy on the same pairs.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from judgekit.tui.app import AnnotateApp
from tests.integration.test_criteria import RUBRIC
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, _error, default_responder, is_probe

N = 30
UNPARSEABLE = 5  # coherence of this item: an answer without a verdict (parse_error)
FAILING = 8  # fluency of this item: HTTP 500 on every attempt (api_error)


def first(criterion: str, i: int) -> int:
    """The first annotator's level (given in the app)."""
    return 1 + (i % 5) if criterion == "coherence" else 1 + (i % 3)


def second(criterion: str, i: int) -> int:
    """The second annotator's level (imported): one step off the first on every sixth item."""
    level, top = first(criterion, i), 5 if criterion == "coherence" else 3
    if i % 6 == 0:
        return level + 1 if level < top else level - 1
    return level


def judge(criterion: str, i: int) -> int:
    """Coherence: the first annotator's level, one higher on every fourth item; fluency: 2."""
    if criterion == "fluency":
        return 2
    level = first(criterion, i)
    return min(5, level + 1) if i % 4 == 1 else level


def item_of(body: dict[str, Any]) -> tuple[str, int]:
    """(criterion, item) of a call; the criterion is "*" for a call asking every criterion."""
    system = body["messages"][0]["content"]
    criterion = ("coherence" if "Criterion: coherence." in system
                 else "fluency" if "Criterion: fluency." in system else "*")
    found = re.search(r"Article: doc (\d+)", body["messages"][-1]["content"])
    assert found is not None
    return criterion, int(found.group(1))


def answer(body: dict[str, Any]) -> Reply:
    if is_probe(body):
        return default_responder(body)
    criterion, i = item_of(body)
    if criterion == "*":  # one object for every criterion; coherence left out of one
        entries = {name: {"reasoning": "Read it.", "verdict": str(judge(name, i))}
                   for name in ("coherence", "fluency")
                   if (name, i) != ("coherence", UNPARSEABLE)}
        return Reply(json.dumps(entries))
    if (criterion, i) == ("coherence", UNPARSEABLE):
        return Reply("I would rather not put a number on this summary.")
    return Reply(json.dumps({"reasoning": "Read it.", "verdict": str(judge(criterion, i))}))


class FaultServer(OpenAIServer):
    """The test server with two HTTP 500s of its own: the first coherence call of item 3
    (retried, then answered) and every fluency call of item ``FAILING`` (in one-call
    mode: the first call of item 3 and every call of item ``FAILING``)."""

    transient_left = 1

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if not is_probe(body):
            which = item_of(body)
            if which in (("coherence", 3), ("*", 3)) and self.transient_left:
                self.transient_left -= 1
                return _error(500, "The server had an error.", None)
            if which in (("fluency", FAILING), ("*", FAILING)):
                return _error(500, "The server had an error.", None)
        return super()._completion(body)


def stored(db: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.mark.parametrize("per_call", [False, True], ids=["one-call-per-item", "per-criterion"])
def test_a_multi_criteria_rubric_from_judge_to_the_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_call: bool,
) -> None:
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    rubric = tmp_path / "summeval.toml"
    assert "per_call = true\n" in RUBRIC
    rubric.write_text(RUBRIC if per_call else RUBRIC.replace("per_call = true\n", ""),
                      encoding="utf-8")
    # one call per item: the failing call takes both criteria of its item
    coherence_failed = set() if per_call else {f"s{FAILING}"}
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"s{i}", "input": f"doc {i}",
                                         "response": f"summary {i}"}) + "\n"
                             for i in range(N)), encoding="utf-8")
    db = str(tmp_path / "judgekit.db")
    assert run_cli("import", str(items), "--name", "news", "--db", db)[0] == 0

    # 1. judge every criterion through the faults: failures are data, per criterion
    with FaultServer(answer) as server:
        code, out, err = run_cli("judge", "-r", str(rubric), "--dataset", "news", "--db", db,
                                 "--base-url", server.base_url, "--model", "judge-m",
                                 "--max-retries", "1")
        assert code == 0, err
        # every call once, the transient 500 once more, the failing call twice (one retry)
        calls = N if not per_call else 2 * N
        assert len(server.judge_requests()) == calls + 1 + 1
    coherence_counts = [("summeval.coherence", "ok", N - 1 - len(coherence_failed)),
                        ("summeval.coherence", "parse_error", 1)]
    if coherence_failed:
        coherence_counts.insert(0, ("summeval.coherence", "api_error", 1))
    assert sorted(stored(db, "SELECT rubric_name, status, COUNT(*) FROM latest_judgments "
                             "GROUP BY 1, 2")) == [
        *coherence_counts, ("summeval.fluency", "api_error", 1), ("summeval.fluency", "ok", 29)]

    # 2. the first annotator labels every criterion of every item on one screen, blind
    screens: list[str] = []

    def drive(self: AnnotateApp) -> None:
        from tests.support.annotate import screen_text

        async def session() -> None:
            async with self.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                await pilot.press("escape")  # the help opens first on a new queue
                criteria = self.criteria  # type: ignore[attr-defined]
                while not criteria.finished:
                    item = int(criteria.current_key[1][1:])
                    await pilot.pause()
                    screens.append(screen_text(self))
                    for _ in criteria.criteria:  # the focus moves on by itself
                        name = criteria.criteria[criteria.focus].name
                        await pilot.press(str(first(name, item)))
                        await self.label_screen.settled()
                await pilot.pause()
                screens.append(screen_text(self))
                await pilot.press("q")

        asyncio.run(session())

    monkeypatch.setattr(AnnotateApp, "run", drive)
    code, out, err = run_cli("annotate", "--rubric", str(rubric), "--db", db,
                             "--annotator", "h1", "--sample", str(N))
    assert code == 0, err
    assert "h1: 30/30 items labeled on every criterion" in out
    assert len(screens) == N + 1 and "Queue complete" in screens[-1]
    for screen in screens[:-1]:  # each item once, both criteria under it
        assert "coherence" in screen and "fluency" in screen and "0/2 criteria" in screen
        assert "judge" not in screen.lower()  # blind: no verdict, no model
    h1 = {name: dict(stored(db, "SELECT l.item_id, l.label FROM labels l JOIN rubrics r ON "
                               "r.sha256 = l.rubric_hash WHERE r.name = ? AND "
                               "l.annotator = 'h1'", f"summeval.{name}"))
          for name in ("coherence", "fluency")}
    for name, given in h1.items():  # one row per key, under the criterion's own rubric
        assert given == {f"s{i}": str(first(name, i)) for i in range(N)}

    # 3. the second annotator's labels, imported per criterion
    labels = tmp_path / "h2.jsonl"
    for criterion in ("coherence", "fluency"):
        labels.write_text("".join(json.dumps({"item_id": f"s{i}", "annotator": "h2",
                                              "label": str(second(criterion, i))}) + "\n"
                                  for i in range(N)), encoding="utf-8")
        code, out, err = run_cli("labels", "import", str(labels), "--rubric",
                                 f"{rubric}#{criterion}", "--db", db)
        assert code == 0, err

    # 4. one report per criterion, checked against scikit-learn and SciPy
    code, out, err = run_cli("report", "-r", f"{rubric}#coherence", "--db", db,
                             "--format", "json", "--resamples", "200")
    report = json.loads(out)
    n_ok = N - 1 - len(coherence_failed)
    assert report["status_counts"]["parse_error"] == 1 and report["status_counts"]["ok"] == n_ok
    assert report["status_counts"].get("api_error", 0) == len(coherence_failed)
    verdicts = {item: (int(label), score) for item, label, score in stored(
        db, "SELECT item_id, label, score FROM latest_judgments WHERE rubric_name = ? "
            "AND status = 'ok'", "summeval.coherence")}
    assert len(verdicts) == n_ok and f"s{UNPARSEABLE}" not in verdicts
    assert not coherence_failed & set(verdicts)
    keys = sorted(verdicts)
    # two annotators per item: the ordinal reference is their lower median, the smaller level
    reference = [min(first("coherence", int(k[1:])), second("coherence", int(k[1:])))
                 for k in keys]
    judged = [verdicts[k][0] for k in keys]
    figures = report["agreement"]["statistics"]
    assert report["agreement"]["primary"] == "weighted_kappa"
    assert figures["weighted_kappa"]["n"] == n_ok
    assert figures["weighted_kappa"]["statistic"] == pytest.approx(
        cohen_kappa_score(reference, judged, weights="quadratic"), abs=1e-12)
    assert figures["cohen_kappa"]["statistic"] == pytest.approx(
        cohen_kappa_score(reference, judged), abs=1e-12)
    assert figures["exact_agreement"]["statistic"] == pytest.approx(
        sum(a == b for a, b in zip(reference, judged, strict=True)) / n_ok)
    scores = [verdicts[k][1] if verdicts[k][1] is not None else verdicts[k][0] for k in keys]
    assert figures["spearman"]["statistic"] == pytest.approx(
        spearmanr(scores, reference).statistic, abs=1e-12)
    low, high = figures["weighted_kappa"]["ci_low"], figures["weighted_kappa"]["ci_high"]
    assert low < figures["weighted_kappa"]["statistic"] < high
    ceiling = report["human_ceiling"]["statistics"]["mean_pairwise_weighted_kappa"]
    assert ceiling["statistic"] == pytest.approx(cohen_kappa_score(
        [first("coherence", i) for i in range(N)], [second("coherence", i) for i in range(N)],
        weights="quadratic"), abs=1e-12)
    code, out, _ = run_cli("report", "-r", f"{rubric}#fluency", "--db", db, "--format", "json",
                           "--resamples", "200")
    fluency = json.loads(out)
    assert fluency["status_counts"]["api_error"] == 1
    assert fluency["agreement"]["statistics"]["weighted_kappa"]["n"] == N - 1

    # 5. the table across criteria and the overall decision
    code, out, _ = run_cli("report", "-r", str(rubric), "--db", db, "--format", "json",
                           "--resamples", "200")
    summary = json.loads(out)
    rows = {row["criterion"]: row for row in summary["criteria"]}
    assert list(rows) == ["coherence", "fluency"]
    assert rows["coherence"]["statistic"] == figures["weighted_kappa"]
    assert rows["coherence"]["decision"] == "PASS" and rows["fluency"]["decision"] == "FAIL"
    assert summary["decision"] == "FAIL" and code == 1
    code, text, _ = run_cli("report", "-r", str(rubric), "--db", db, "--resamples", "200")
    assert code == 1 and "OVERALL: FAIL (FAIL if any criterion fails)" in text
    assert re.search(r"coherence\s+PASS", text) and re.search(r"fluency\s+FAIL", text)
