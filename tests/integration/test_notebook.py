"""judgekit from a notebook: judge -> report -> to_frame inside a running event loop, with
DataFrames in (pandas with NA, polars) and out, and an HTML view whose CSS is scoped."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

import judgekit
from judgekit.errors import InputError
from judgekit.io.verdict_store import import_verdicts
from judgekit.report.notebook import SCOPE, scoped_css
from judgekit.report.render_html import _CSS
from tests.support.openai_server import OpenAIServer, Reply

pd = pytest.importorskip("pandas")
N = 24


def responder(body: dict[str, Any]) -> Reply:
    """Says fail for responses marked wrong, pass otherwise."""
    text = json.dumps(body["messages"])
    verdict = "fail" if "wrong answer" in text else "pass"
    return Reply(json.dumps({"reasoning": "checked", "verdict": verdict}))


def items_frame() -> Any:
    return pd.DataFrame({
        "qid": [f"q{n}" for n in range(N)],
        "input": [f"What is {n}+1?" for n in range(N)],
        "answer": [str(n + 1) if n % 3 else "wrong answer" for n in range(N)],
        "reference": [str(n + 1) for n in range(N)],
        "slice": pd.array([None if n % 4 == 0 else ("even" if n % 2 else "odd")
                           for n in range(N)], dtype="string"),
        "difficulty": [n % 5 for n in range(N)],
    })


def labels_frame() -> Any:
    rows = []
    for n in range(N):
        truth = "fail" if n % 3 == 0 or n == 7 else "pass"  # the judge passes q7
        flipped = "pass" if truth == "fail" else "fail"
        rows.append({"item_id": f"q{n}", "annotator": "ann", "label": truth if n != 5 else flipped,
                     "note": pd.NA})
        rows.append({"item_id": f"q{n}", "annotator": "bob", "label": truth, "note": "ok"})
    frame = pd.DataFrame(rows)
    frame["note"] = frame["note"].astype("string")
    return frame


async def test_judge_report_to_frame_inside_a_running_loop(tmp_path: Path) -> None:
    asyncio.get_running_loop()  # a notebook cell runs inside one
    rubric = judgekit.load_rubric("correctness")
    items = judgekit.from_frame(items_frame(), "items", columns={"id": "qid", "response": "answer"})
    assert items[0].slice is None and items[1].slice == "even"  # pd.NA in a string column
    assert items[2].meta == {"difficulty": 2}
    with OpenAIServer(responder) as server, judgekit.open_store(tmp_path / "nb.db") as store:
        store.import_items("facts", items)
        spec = judgekit.JudgeSpec(base_url=server.base_url, model="m", concurrency=4)
        # The blocking form works inside the running loop (it used to raise
        # "asyncio.run() cannot be called from a running event loop")...
        summary = judgekit.run_judgments(store, rubric, items, spec, dataset="facts")
        assert summary.judged == N
        # ...and the async form is awaited directly.
        again = await judgekit.arun_judgments(store, rubric, items, spec, dataset="facts")
        assert again.cached == N and len(server.judge_requests()) == N
        labels = judgekit.from_frame(labels_frame(), "labels", store=store, rubric=rubric)
        assert len(labels) == 2 * N and labels[0].note is None
        store.add_labels(labels)
        report = judgekit.build_report(store, rubric, judgekit.ReportOptions())
        figures = report.to_frame()
        agreement = figures[figures["section"] == "agreement"]
        kappa = agreement[agreement["name"] == "cohen_kappa"].iloc[0]
        # q5: the two annotators disagree, no majority, so that item has no reference
        assert kappa["n"] == N - 1 and kappa["ci_low"] < kappa["statistic"] <= kappa["ci_high"]
        assert report.agreement is not None
        assert kappa["statistic"] == pytest.approx(report.agreement.stats["cohen_kappa"].statistic)
        joined = judgekit.to_frame(store, rubric, what="joined")
        assert len(joined) == 2 * N
        assert set(joined.columns) >= {"item_id", "judge", "judge_label", "annotator",
                                       "human_label"}
        bob = joined[joined["annotator"] == "bob"]
        assert (bob["judge_label"] == bob["human_label"]).sum() == N - 1
        assert len(judgekit.to_frame(store, rubric, what="judgments")) == N
        assert len(judgekit.to_frame(store, rubric, what="labels")) == 2 * N
        html = report._repr_html_()
    assert html.startswith(f'<div class="{SCOPE}">') and "<body" not in html
    assert "Cohen" in html


def test_scoped_css_restyles_nothing_outside_the_report() -> None:
    css = scoped_css(_CSS)
    selectors = [sel.strip() for rule in re.findall(r"([^{}]+)\{", css) for sel in rule.split(",")]
    assert selectors and all(sel.startswith(f".{SCOPE}") for sel in selectors)
    assert f".{SCOPE}{{font-family" in css.replace("\n", "")  # body's rule on the container


def test_polars_frames_and_errors(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"id": [1, 2], "input": ["q", "q"], "response": ["r", None]})
    with pytest.raises(InputError, match=r"DataFrame:2: missing field 'response'"):
        judgekit.from_frame(frame)
    (item,) = judgekit.from_frame(frame.head(1))
    assert item.id == "1"
    with pytest.raises(InputError, match="columns: 'answer' is not a field"):
        judgekit.from_frame(frame, columns={"answer": "response"})
    with pytest.raises(InputError, match="needs store= and rubric="):
        judgekit.from_frame(frame, "labels")
    with judgekit.open_store(tmp_path / "p.db") as store:
        store.import_items("d", [item])
        rubric = judgekit.load_rubric("correctness")
        verdicts = judgekit.from_frame(
            pl.DataFrame({"item_id": ["1"], "judge": ["tool"], "label": ["pass"],
                          "raw": ['{"pass": true}']}), "judgments", store=store, rubric=rubric)
        result = import_verdicts(store, verdicts, rubric, source="frame")
        assert result.added == 1
        out = judgekit.to_frame(store, rubric, backend="polars")
        assert out["raw_text"].to_list() == ['{"pass": true}']


def test_confidence_interval_and_to_dict_print_one_interval() -> None:
    from judgekit import stats

    result = stats.cohen_kappa(["a", "b", "a", "a", "b", "a"] * 5,
                               ["a", "b", "b", "a", "b", "a"] * 5)
    as_dict = result.to_dict()
    assert result.confidence_interval() == (as_dict["ci_low"], as_dict["ci_high"])
    assert result.confidence_interval() == result.confidence_interval()
