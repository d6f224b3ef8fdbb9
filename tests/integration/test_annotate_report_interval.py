"""The annotate app's running agreement shows the interval ``judgekit report`` gives.

The header's kappa is the report's primary statistic with the report's interval
rule (a BCa bootstrap for weighted kappa on an ordinal scale; a percentile
bootstrap would differ), because both call the same code. Labels are given
through the real Textual app driven by Pilot on a real SQLite store; the report
is then made by the real ``judgekit report --format json`` on that store (with
``--include-unblinded``: labels given with the judge shown are not blind).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.rubrics import load_rubric
from judgekit.stats import cohen_kappa
from judgekit.store import Store
from judgekit.tui.app import make_app
from tests.support.annotate import (
    RUBRIC_TEXT,
    judgment,
    make_items,
    queue_for,
    record_judgments,
    screen_text,
)

N = 30
#: The judge's level per item, and the annotator's (off by one on a third of the items).
JUDGE = [str(1 + i % 5) for i in range(N)]
HUMAN = [str(min(5, int(j) + 1)) if i % 3 == 0 else j for i, j in enumerate(JUDGE)]


def report_json(db: Path, rubric_file: Path) -> dict:
    result = CliRunner().invoke(cli, ["report", "-r", str(rubric_file), "--db", str(db),
                                      "--format", "json", "--include-unblinded"])
    assert result.exit_code in (0, 1, 3), result.output
    return json.loads(result.output)


@pytest.mark.parametrize("kind", ["ordinal", "binary"])
async def test_header_interval_is_the_reports(kind: str, tmp_db: Store, tmp_path: Path) -> None:
    rubric_file = tmp_path / f"{kind}.toml"
    rubric_file.write_text(RUBRIC_TEXT[kind], encoding="utf-8")
    rub = load_rubric(rubric_file)
    items = make_items(kind, N)
    tmp_db.import_items("d", items)
    tmp_db.save_rubric(rub)
    judge, human = JUDGE, HUMAN
    if kind == "binary":
        judge = ["pass" if int(level) >= 3 else "fail" for level in JUDGE]
        human = ["pass" if int(level) >= 3 else "fail" for level in HUMAN]
    record_judgments(tmp_db, rub, [judgment(rub, "d", item.id, label)
                                   for item, label in zip(items, judge, strict=True)])
    app = make_app(tmp_db, rub, queue_for("d", items), annotator="alice", show_judge=True)
    async with app.run_test(size=(120, 30)) as pilot:
        for label in human:
            await pilot.press("p" if label == "pass" else "f" if label == "fail" else label)
            await app.label_screen.settled()
        await pilot.pause()
        shown = app.session.agreement()
        header = "\n".join(screen_text(app).splitlines()[:2])
    assert shown is not None and shown.kappa is not None and shown.kappa_interval is not None

    data = report_json(tmp_db.path, rubric_file)
    agreement = data["agreement"]
    assert agreement["n_items"] == N and agreement["cluster_by"] is None
    kappa = agreement["statistics"][agreement["primary"]]
    assert (shown.kappa, *shown.kappa_interval) == (
        kappa["statistic"], kappa["ci_low"], kappa["ci_high"])
    percent = agreement["statistics"]["exact_agreement" if kind == "ordinal"
                                      else "percent_agreement"]
    assert (shown.percent, *shown.percent_interval) == (
        percent["statistic"], percent["ci_low"], percent["ci_high"])
    if kind == "ordinal":
        assert agreement["primary"] == "weighted_kappa"
        assert shown.kappa_method == "BCa bootstrap"
        # the rule matters here: a percentile bootstrap gives another interval
        percentile = cohen_kappa(judge, human, weights="quadratic", labels=rub.scale.labels)
        other = percentile.confidence_interval(method="bootstrap", n_resamples=1000,
                                               random_state=0)
        assert (float(other[0]), float(other[1])) != shown.kappa_interval
    low, high = shown.kappa_interval
    assert f"κ {shown.kappa:.2f} [{low:.2f}, {high:.2f}] · n={N}" in header, header
