"""The verdict where a bootstrap interval misleads: constant raters and perfect agreement.

Each case is a real SQLite store filled through the Store API, as in test_report.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from test_report_support import BINARY, ORDINAL, REPO, Row, open_fresh, populate, rubric

from judgekit import stats
from judgekit.cli.main import cli
from judgekit.report import ReportOptions, build_report, render_json, render_text
from judgekit.report.model import Report
from judgekit.rubrics import load_rubric
from judgekit.store import Store
from judgekit.types import Item


def _rows(judge_human: list[tuple[str, str]], cluster_size: int | None = None) -> list[Row]:
    return [
        Row(
            f"i{i:03d}",
            j,
            {"h": h},
            cluster=None if cluster_size is None else f"c{i // cluster_size}",
        )
        for i, (j, h) in enumerate(judge_human)
    ]


def _report(tmp_path: Path, rows: list[Row], path: Path = BINARY, spare: int = 500,
            **opts: object) -> Report:
    """The report on ``rows`` in a dataset with ``spare`` more items nobody labeled yet."""
    store: Store = open_fresh(tmp_path)
    rub = load_rubric(path)
    populate(store, rub, rows)
    if spare:
        store.import_items("ds", [Item(id=f"spare{i}", input="q", response="r")
                                  for i in range(spare)])
    options = ReportOptions(**{"n_resamples": 200, **opts})  # type: ignore[arg-type]
    return build_report(store, rub, options)


def test_judge_saying_pass_on_everything_fails(tmp_path: Path) -> None:
    rows = _rows([("pass", "pass" if i % 2 else "fail") for i in range(24)])
    report = _report(tmp_path, rows)
    kappa = report.agreement.stats["cohen_kappa"] if report.agreement else None
    # kappa is 0 by construction: no zero-width interval, a reason instead
    assert kappa is not None and kappa.statistic == 0
    assert math.isnan(kappa.ci_low) and math.isnan(kappa.ci_high)
    assert kappa.note is not None and "0 by construction" in kappa.note
    v = report.verdict
    assert v.decision == "FAIL" and v.exit_code == 1 and v.labels_needed is None
    low, high = stats.wilson_interval(0, 12)
    assert v.reason == (
        "The judge gave 'pass' on all 24 items; it cannot tell the classes apart "
        f"(TNR 0.000 [{low:.3f}, {high:.3f}], n=12: even the upper bound is below 0.6)."
    )


def test_constant_judge_fails_whatever_the_primary(tmp_path: Path) -> None:
    """AC1 keeps an ordinary interval for a constant judge; the judge still cannot discriminate."""
    rows = _rows([("fail", "pass" if i % 2 else "fail") for i in range(24)])
    report = _report(tmp_path, rows, primary="gwet_ac1")
    assert report.agreement is not None
    ac1 = report.agreement.stats["gwet_ac1"]
    assert ac1.ci_high > ac1.ci_low  # an ordinary interval ...
    assert report.verdict.decision == "FAIL"  # ... but the constant-judge rule decides
    assert "gave 'fail' on all 24 items" in report.verdict.reason
    assert "(TPR 0.000" in report.verdict.reason


def test_constant_judge_on_an_ordinal_scale_fails(tmp_path: Path) -> None:
    humans = ["1", "2", "3", "4", "5", "3", "3", "2", "4", "3", "3", "1"]
    report = _report(tmp_path, _rows([("3", h) for h in humans]), path=ORDINAL)
    assert report.verdict.decision == "FAIL"
    high = stats.wilson_interval(0, 7)[1]
    assert (
        f"agreement on the items humans labeled otherwise 0.000 [0.000, {high:.3f}], n=7"
        in report.verdict.reason
    )


def test_constant_judge_with_few_other_items_is_insufficient(tmp_path: Path) -> None:
    """0 of 2 'fail' items has a Wilson upper bound of 0.66: not yet evidence of a FAIL."""
    rows = _rows([("pass", "fail" if i < 2 else "pass") for i in range(12)])
    v = _report(tmp_path, rows).verdict
    assert v.decision == "INSUFFICIENT DATA" and v.labels_needed is not None
    assert "gave 'pass' on all 12 items" in v.reason and "too few" in v.reason
    assert "TNR 0.000" in v.reason and "n=2" in v.reason


def test_constant_human_labels_are_insufficient(tmp_path: Path) -> None:
    rows = _rows([("fail" if i % 4 == 0 else "pass", "pass") for i in range(24)])
    v = _report(tmp_path, rows).verdict
    assert v.decision == "INSUFFICIENT DATA"
    assert v.reason.startswith("Every human label is 'pass'")
    assert v.reason.endswith("label items of the other class(es) too.")


def _perfect(n: int, cluster_size: int | None = None) -> list[Row]:
    labels = ["pass" if i % 2 else "fail" for i in range(n)]
    return _rows([(x, x) for x in labels], cluster_size)


def test_perfect_agreement_on_few_items_needs_the_labels_a_wilson_bound_asks_for(
    tmp_path: Path,
) -> None:
    small = _report(tmp_path / "small", _perfect(12)).verdict
    assert small.decision == "INSUFFICIENT DATA"
    low = stats.wilson_interval(12, 12)[0]  # 0.758; kappa >= (0.758 - 0.5) / 0.5 = 0.515
    assert f"lower bound on agreement over 12 items is {low:.3f}" in small.reason
    assert f"as low as {(low - 0.5) / 0.5:.3f}, below 0.6" in small.reason
    # kappa >= 0.6 needs agreement >= 0.8: n / (n + z^2) >= 0.8 at n = 16
    assert small.labels_needed == 4
    enough = _report(tmp_path / "enough", _perfect(16)).verdict
    assert enough.decision == "PASS" and enough.exit_code == 0
    assert "which clears 0.6" in enough.reason
    short = _report(tmp_path / "short", _perfect(14)).verdict
    assert short.decision == "INSUFFICIENT DATA"


def test_perfect_agreement_counts_each_cluster_once(tmp_path: Path) -> None:
    flat = _report(tmp_path / "flat", _perfect(30), cluster_by="item").verdict
    assert flat.decision == "PASS"
    clustered = _report(tmp_path / "clustered", _perfect(30, cluster_size=2)).verdict
    # 15 clusters: Wilson lower bound 15 / (15 + 1.96^2) = 0.796, kappa bound 0.59 < 0.6
    assert clustered.decision == "INSUFFICIENT DATA"
    assert "over 15 clusters" in clustered.reason


def test_collapsed_cluster_bootstrap_of_a_proportion_falls_back_to_wilson(
    tmp_path: Path,
) -> None:
    """Every pair of items holds exactly one agreement: the cluster bootstrap is a point."""
    pairs = [(("pass", "pass"), ("pass", "fail")), (("fail", "fail"), ("fail", "pass"))]
    judge_human = [jh for k in range(12) for jh in pairs[k % 2]]
    report = _report(tmp_path, _rows(judge_human, cluster_size=2), primary="percent_agreement")
    assert report.agreement is not None and report.agreement.n_clusters == 12
    pa = report.agreement.stats["percent_agreement"]
    assert pa.statistic == 0.5 and pa.n == 24
    assert (pa.ci_low, pa.ci_high) == pytest.approx(stats.wilson_interval(6, 12))
    assert pa.note is not None and "each of the 12 clusters counted once" in pa.note
    assert pa.method == "wilson over clusters"
    # the verdict reads the Wilson interval, not a point
    assert report.verdict.decision == "INSUFFICIENT DATA"
    assert "straddles 0.6" in report.verdict.reason
    text = render_text(report)
    assert "every cluster has the same rate" in " ".join(text.split())  # wrapped at 80
    data = json.loads(render_json(report))
    assert data["agreement"]["statistics"]["percent_agreement"]["note"] == pa.note
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)


def test_cli_exit_code_of_a_constant_judge(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    populate(
        store, rubric(BINARY), _rows([("pass", "pass" if i % 2 else "fail") for i in range(24)])
    )
    db = str(store.path)
    store.close()
    result = CliRunner().invoke(
        cli, ["report", "-r", str(BINARY), "--db", db, "--format", "json", "--resamples", "100"]
    )
    assert result.exit_code == 1, result.output
    assert json.loads(result.output)["verdict"]["decision"] == "FAIL"
