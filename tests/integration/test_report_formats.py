"""Every report format renders the same numbers; the JSON validates against its schema."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from test_report_support import (
    BINARY,
    ORDINAL,
    PAIRWISE,
    Row,
    create_run,
    open_fresh,
    populate,
    rubric,
)

from judgekit.cli.main import cli
from judgekit.report import FORMATS, ReportOptions, build_report, render, report_to_dict
from judgekit.report.model import Report
from judgekit.store import Store

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text()
)


def rich_store(tmp_path: Path, path: Path = ORDINAL) -> tuple[Store, Report]:
    """A store exercising every section: failures, slices, two annotators, a queue, probes."""
    store = open_fresh(tmp_path)
    rub = rubric(path)
    rng = random.Random(7)
    labels = list(rub.scale.labels)
    rows = []
    for i in range(120):
        h = rng.choice(labels)
        j = h if rng.random() < 0.7 else rng.choice(labels)
        humans = {"ann1": h}
        if i % 3 == 0:
            humans["ann2"] = h if rng.random() < 0.8 else rng.choice(labels)
        rows.append(
            Row(
                f"r{i}",
                j,
                humans,
                slice=["a", "b", "c"][i % 3],
                cluster=f"c{i // 2}",
                response="w" * rng.randint(20, 900),
            )
        )
    for r in rows[:6]:
        r.judge, r.status = None, "parse_error"
    populate(store, rub, rows)
    create_run(store, rub, "probe-pos", kind="probe:position")
    create_run(store, rub, "probe-len", kind="probe:length")
    stat = {"statistic": 0.8, "ci_low": 0.72, "ci_high": 0.86, "n": 120}
    store.save_probe_result(
        "probe-pos",
        "position",
        rub.sha256,
        {
            "probe": "position",
            "position_consistency": stat,
            "first_slot_rate": {
                "statistic": 0.12,
                "ci_low": 0.07,
                "ci_high": 0.19,
                "n": 120,
                "pvalue": 0.01,
            },
            "second_slot_rate": {"statistic": 0.08, "ci_low": 0.04, "ci_high": 0.14, "n": 120},
            "bpde": {
                "statistic": None,
                "ci_low": None,
                "ci_high": None,
                "n": 0,
                "reason": "no pairs",
            },
            "slot_counts": {"consistent": 96, "first": 14, "second": 10},
        },
    )
    store.save_probe_result(
        "probe-len",
        "length",
        rub.sha256,
        {
            "probe": "length",
            "length_correlation": {**stat, "statistic": 0.31, "pvalue": 0.001},
            "padding_shift": {**stat, "statistic": 0.4},
            "length_slope": {**stat, "statistic": 0.42, "pvalue": 0.002},
            "points": [[10, 1.0], [500, 4.0]],
        },
    )
    create_run(store, rub, "probe-inj", kind="probe:injection")
    low = {"statistic": 0.05, "ci_low": 0.01, "ci_high": 0.09, "n": 120}
    store.save_probe_result(
        "probe-inj",
        "injection",
        rub.sha256,
        {
            "probe": "injection",
            "injection_net": low,
            "injection_flip_rate": low,
            "injection_flip_rate[fake_json@end]": low,
            "injection_shift[fake_json@end]": {**low, "pvalue": 0.2},
            "worst_cell": "fake_json@end",
            "templates": ["fake_json"],
        },
    )
    create_run(store, rub, "probe-same", kind="probe:identical")
    store.save_probe_result(
        "probe-same",
        "identical",
        rub.sha256,
        {
            "probe": "identical",
            "identical_decisive_rate": {**low, "statistic": 0.1},
            "identical_first_slot_share": {**low, "statistic": 0.5, "pvalue": 1.0},
            "verdict_counts": {"A": 6, "B": 6, "tie": 108},
            "allow_tie": True,
        },
    )
    return store, build_report(store, rub, ReportOptions(n_resamples=100))


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_every_section(tmp_path: Path, fmt: str) -> None:
    _, report = rich_store(tmp_path)
    text = render(report, fmt)
    ag = report.agreement
    assert ag is not None
    kappa = ag.stats["weighted_kappa"]
    if fmt == "json":
        data = json.loads(text)
        assert data["weighted_kappa"]["statistic"] == pytest.approx(kappa.statistic)
        assert data["agreement"]["statistics"]["spearman"]["n"] == ag.n_items
        return
    assert f"{kappa.statistic:.3f}" in text and f"{kappa.ci_low:.3f}, {kappa.ci_high:.3f}" in text
    for needle in (
        "parse_error",
        "Human-human ceiling",
        "Per slice",
        "Position consistency",
        "Score change per doubling of length (fixed effects by prompt)",
        "Injection net move toward the target, toward - away (worst template and position; "
        "simultaneous CI)",
        "Injection shift: fake_json at the end",
        "Decisive verdicts on identical pairs",
        report.provenance.rubric_sha256[:12],  # shortened in text; whole in the JSON
        report.verdict.decision,
        "failed judgment(s) counted as disagreements",
    ):
        assert needle in " ".join(text.split()), needle  # text is wrapped at 80 columns


def test_json_validates_against_schema_for_every_scale(tmp_path: Path) -> None:
    for i, path in enumerate((ORDINAL, BINARY, PAIRWISE)):
        _, report = rich_store(tmp_path / str(i), path)
        data = json.loads(render(report, "json"))
        jsonschema.validate(data, SCHEMA)
        for key in ("cohen_kappa", "percent_agreement", "krippendorff_alpha"):
            if key in data:
                assert set(data[key]) >= {"statistic", "ci_low", "ci_high", "n"}
        assert data["bias"]["position_consistency"]["n"] == 120
        assert data["bias"]["length_correlation"]["statistic"] == 0.31
        length = next(p for p in data["bias"]["probes"] if p["probe"] == "length")
        assert length["statistics"]["length_slope"]["pvalue"] == 0.002
        assert data["bias"]["injection_net"]["ci_low"] == 0.01
        assert data["bias"]["identical_decisive_rate"]["n"] == 120
        injection = next(p for p in data["bias"]["probes"] if p["probe"] == "injection")
        assert injection["details"]["worst_cell"] == "fake_json@end"
    empty = open_fresh(tmp_path / "empty")
    rub = rubric(BINARY)
    empty.save_rubric(rub)
    jsonschema.validate(report_to_dict(build_report(empty, rub)), SCHEMA)


def test_schema_rejects_a_statistic_without_n(tmp_path: Path) -> None:
    _, report = rich_store(tmp_path)
    data = report_to_dict(report)
    del data["agreement"]["statistics"]["spearman"]["n"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_html_is_self_contained_with_its_plots(tmp_path: Path) -> None:
    _, report = rich_store(tmp_path)
    html = render(report, "html")
    for plot in ("confusion-heatmap", "slice-forest", "length-scatter", "position-bars"):
        assert f'<svg id="{plot}"' in html
    assert not re.search(r"""(src|href)\s*=|url\(|@import|<script|<link""", html, re.I)
    assert html.count("<circle") >= 100  # scatter points and forest points are drawn


def test_cli_writes_html_file_and_keeps_exit_code(tmp_path: Path) -> None:
    store, report = rich_store(tmp_path)
    out = tmp_path / "reports" / "report.html"
    result = CliRunner().invoke(
        cli,
        [
            "report",
            "-r",
            str(ORDINAL),
            "--db",
            str(store.path),
            "--format",
            "html",
            "--out",
            str(out),
            "--resamples",
            "100",
        ],
    )
    assert result.exit_code == report.verdict.exit_code
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_text_figures_never_run_into_a_long_name() -> None:
    from judgekit.report.model import Stat
    from judgekit.report.render_text import NAME_WIDTH, _stat_lines

    stat = Stat(statistic=0.5, ci_low=0.25, ci_high=0.75, n=10)
    long_key = "x" * (NAME_WIDTH + 5)
    lines = _stat_lines({"percent_agreement": stat, long_key: stat})
    assert lines[0].startswith("  ") and lines[0].rstrip().endswith("n=10")
    assert lines[1].strip().lower() == long_key  # the name alone on its line
    assert lines[2].strip().startswith("0.500 [0.250, 0.750] n=10")
