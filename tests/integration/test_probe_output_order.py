"""Every probe's text reads top-down when stdout and stderr share one pipe (``2>&1 | less``,
a CI log): the title first, then the run's summary (stderr), then the figures. The real CLI
in a subprocess, the real openai client against the test server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_probes import _write, pairs, pairwise_judge

from tests.support.openai_server import OpenAIServer

#: probe -> (extra options, the first figure line's label).
PROBES = {
    "position": ([], "position consistency"),
    "identical": ([], "verdicts on identical pairs"),
    "consistency": (["--samples", "2", "--temperature", "0.7"], "repetition stability"),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_title_then_run_summary_then_figures_in_one_pipe(
    probe: str, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = pairwise_judge(first_slot_bias=0.2, noise=0.0, seed=3)
    data = _write(tmp_path / "pairs.jsonl", pairs(8, seed=3))
    extra, first_figure = PROBES[probe]
    env = {**os.environ, "JUDGEKIT_PROGRESS": "1"}  # phase lines on stderr too
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", "probe", probe, "--rubric", "rubrics/preference.toml",
         "--data", str(data), "--db", str(tmp_path / "p.db"),
         "--base-url", openai_server.base_url, "--model", "sim", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith(f"{probe} probe: "))
    summary = next(i for i, line in enumerate(lines) if line.startswith("run ")
                   and " judgments (" in line)
    figure = next(i for i, line in enumerate(lines) if line.lstrip().startswith(first_figure))
    assert title < summary < figure, done.stdout
    assert lines[title + 1].startswith("  run "), done.stdout  # the title's two lines together
    assert "tokens:" in lines[summary + 2], done.stdout  # the summary is not split by figures
