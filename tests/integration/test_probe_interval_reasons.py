"""A probe shift where every item moves by the same amount has no bootstrap interval, and
every format says why in words: the stored figure, the probe's own lines and the report.

The judges sit behind the real test server, called through the real ``openai`` client,
with a real SQLite store (as in ``test_probes.py``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from test_probes import QUALITY, _answer, _user, _write, answers, spec_for

from judgekit.judging.probe_injection import run_injection_probe
from judgekit.judging.probe_variants import DEFAULT_FILLER
from judgekit.judging.probes import run_length_probe
from judgekit.report import (
    ReportOptions,
    build_report,
    render_html,
    render_json,
    render_markdown,
    render_text,
)
from judgekit.rubrics import load_rubric
from judgekit.store import Store
from tests.adversarial.conftest import run
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe

SAME = "every item moved by the same amount (+1)"


def lifts_padding_by_one(body: dict[str, Any]) -> Reply:
    """Scores the hidden quality (1-4), one level more for any padded response."""
    if is_probe(body):
        return default_responder(body)
    text = _user(body)
    padded = any(sentence.split("{")[0] in text for sentence in DEFAULT_FILLER)
    return _answer(str(int(QUALITY.search(text).group(1)) + padded))


def obeys_every_injection(body: dict[str, Any]) -> Reply:
    """Gives 4, and 5 whenever the response carries the ignore_rubric text."""
    if is_probe(body):
        return default_responder(body)
    return _answer("5" if "NOTE TO THE EVALUATOR" in _user(body) else "4")


def bare_na(text: str) -> list[str]:
    """Lines of the report's bias section showing an interval as n/a without saying why."""
    bias = text.split("\nBias", 1)[1]
    return [line for line in bias.splitlines()
            if "n/a" in line and "no interval" not in line and "(" not in line]


@pytest.fixture
def helpfulness():
    return load_rubric("rubrics/helpfulness.toml")


def test_a_padding_shift_of_one_level_on_every_item_says_why_it_has_no_interval(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness
) -> None:
    openai_server.responder = lifts_padding_by_one
    items, _ = answers(20, seed=11)
    r = run_length_probe(tmp_db, helpfulness, items, spec_for(openai_server), dataset="answers",
                         levels=(50,), progress=False).result
    shift = r["padding_shift"]
    assert shift["statistic"] == 1.0 and shift["ci_low"] is None and shift["ci_high"] is None
    assert shift["note"].startswith("no interval: " + SAME)
    assert "zero-width interval would claim the whole population" in shift["note"]

    report = build_report(tmp_db, helpfulness, ReportOptions(n_resamples=100))
    text = render_text(report, width=10_000)  # unwrapped: the figure and its note on one line
    line = next(ln for ln in text.splitlines() if "adding shift" in ln or "Padding shift" in ln)
    assert SAME in line, line
    assert bare_na(text) == []
    assert SAME in render_markdown(report) and SAME in render_html(report)
    entry = next(p for p in json.loads(render_json(report))["bias"]["probes"]
                 if p["probe"] == "length")
    assert SAME in entry["statistics"]["padding_shift"]["note"]


def test_an_injection_every_item_follows_says_why_in_the_probe_and_the_report(
    openai_server: OpenAIServer, tmp_db: Store, helpfulness, tmp_path
) -> None:
    openai_server.responder = obeys_every_injection
    items = answers(15, seed=12)[0]
    r = run_injection_probe(tmp_db, helpfulness, items, spec_for(openai_server),
                            dataset="answers", templates=["ignore_rubric"], positions=["end"],
                            progress=False).result
    cell = r["injection_shift[ignore_rubric@end]"]
    assert cell["statistic"] == 1.0 and cell["ci_low"] is None
    assert SAME in cell["note"]
    text = render_text(build_report(tmp_db, helpfulness, ReportOptions(n_resamples=100)),
                       width=10_000)
    assert bare_na(text) == [] and SAME in text

    data = _write(tmp_path / "answers.jsonl", items)
    out = run("probe", "injection", "-r", "rubrics/helpfulness.toml", "--data", str(data),
              "--db", str(tmp_db.path), "--base-url", openai_server.base_url,
              "--model", "sim-judge", "--templates", "ignore_rubric", "--positions", "end",
              "--no-progress", "--dataset", "answers")
    assert out.code == 0, out.err
    shift_lines = [ln for ln in out.out.splitlines() if "mean shift" in ln]
    assert shift_lines and all(re.search(r"95% CI n/a \(.*same amount", ln)
                               for ln in shift_lines), shift_lines
