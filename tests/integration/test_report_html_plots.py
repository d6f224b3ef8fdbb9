"""Every plot of the HTML report, for every shipped scale kind, drawn by headless Chromium.

The screenshots are kept as test artefacts under the test's own temporary folder
(``<pytest tmp>/.../<kind>.png``: look at them after a run); the geometry checks
read the SVG itself, so they run without Chromium too: no label starts left of
its plot (clipped), no point is drawn outside its axes, ticks are round numbers,
gates are ordered failed first and coloured, and no table is empty.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_report_html_chromium import CHROMIUM, chromium
from test_report_layout import BUNDLED, SHIPPED, _with_position_probe
from test_report_scale_probes import _store_with

from judgekit.report import ReportOptions, build_report, render
from judgekit.report._svg import _CHAR
from judgekit.report.model import Report
from judgekit.store import Store, open_store
from tests.support.annotate import rubric

SVG = re.compile(r'<svg id="([\w-]+)".*?</svg>', re.S)
TEXT = re.compile(r'<text x="([-\d.]+)" y="[-\d.]+" text-anchor="(\w+)"([^>]*)>([^<]*)</text>')
POINT = re.compile(r'<circle class="point" cx="([-\d.]+)" cy="([-\d.]+)"')


def _reports(tmp_path: Path) -> dict[str, Report]:
    reports = {p.stem: _with_position_probe(tmp_path / p.stem, p) for p in SHIPPED}
    # an ordinal judge with stated confidences: the reliability diagram
    store: Store = open_store(tmp_path / "calibration.db")
    judge = [str(1 + i % 5) for i in range(120)]
    human = [j if i % 3 else str(1 + (i + 1) % 5) for i, j in enumerate(judge)]
    _store_with(store, judge, human, confidence=[0.6 + (i % 4) / 10 for i in range(120)])
    reports["calibration"] = build_report(store, rubric("ordinal"),
                                          ReportOptions(n_resamples=100))
    return reports


def _plots(html: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in SVG.finditer(html)}


def _check_geometry(name: str, svg: str) -> None:
    for x, anchor, attrs, text in TEXT.findall(svg):
        if "rotate" in attrs:  # an axis title turned on its side
            continue
        left = float(x) - (len(text) * _CHAR if anchor == "end"
                           else len(text) * _CHAR / 2 if anchor == "middle" else 0)
        assert left >= -1, f"{name}: label {text!r} is clipped (starts at {left:.0f})"
    if name == "length-scatter":
        for cx, cy in POINT.findall(svg):
            assert 60 <= float(cx) <= 560 and 20 <= float(cy) <= 260, (name, cx, cy)


def test_every_plot_of_every_scale_kind(tmp_path: Path) -> None:
    seen: set[str] = set()
    for kind, report in _reports(tmp_path).items():
        html = render(report, "html")
        page = tmp_path / f"{kind}.html"
        page.write_text(html, encoding="utf-8")
        plots = _plots(html)
        assert "confusion-heatmap" in plots, kind
        for name, svg in plots.items():
            _check_geometry(f"{kind}/{name}", svg)
        seen |= set(plots)
        assert "<table></table>" not in html and "<table><tr><th>statistic</th><th>value" \
            "</th><th>95% CI</th><th>n</th></tr></table>" not in html, kind
        assert "the darker the cell, the more items it holds" in html
        gates = html.split('id="gates"', 1)[1].split("</table>", 1)[0]
        order = [row.split('"')[1] for row in gates.split("<tr class=")[1:]]
        rank = ["gate-FAIL", "gate-ok", "gate-not"]
        assert order == sorted(order, key=rank.index), (kind, order)
        if kind != "preference" and "position-bars" in plots:  # levels reversed, no slots
            assert "First-slot" not in plots["position-bars"]
            assert "Moved toward the level listed first" in plots["position-bars"]
        if kind in ("helpfulness", "calibration"):  # a 1-5 scale: ticks at whole numbers
            scatter = plots.get("length-scatter", "")
            ticks = [t for _, a, _, t in TEXT.findall(scatter) if a == "end"]
            assert all(re.fullmatch(r"\d", t) for t in ticks), ticks
        if CHROMIUM is not None:
            shot = tmp_path / f"{kind}.png"
            result = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,7000",
                              "--hide-scrollbars", page.as_uri())
            assert result.returncode == 0, result.stderr[-2000:]
            data = shot.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 40_000, kind
    assert {"confusion-heatmap", "slice-forest", "length-scatter", "position-bars",
            "estimate-intervals", "reliability"} <= seen


@pytest.mark.parametrize("counts", [((30, 1), (2, 1)), ((1, 0), (0, 40))])
def test_the_confusion_shade_follows_the_count(counts: tuple[tuple[int, int], ...]) -> None:
    """The darkest cell holds the most items, whatever its column's total."""
    from judgekit.report._svg import confusion_heatmap
    from judgekit.report.model import Confusion

    svg = confusion_heatmap(Confusion(("pass", "fail"), counts))
    fills = [int(m) for m in re.findall(r'class="cell"[^>]*fill="rgb\((\d+),', svg)]
    flat = [c for row in counts for c in row]
    assert fills.index(min(fills)) == flat.index(max(flat))


def test_ticks_are_round_numbers() -> None:
    from judgekit.report._svg import nice_ticks

    assert nice_ticks(1, 5) == [1, 2, 3, 4, 5]
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(-0.2, 1)[0] <= -0.2 and nice_ticks(10, 900) == [0, 200, 400, 600, 800,
                                                                      1000]


def test_bundled_rubrics_are_the_shipped_kinds() -> None:
    kinds = {p.stem for p in SHIPPED}
    assert kinds == {"correctness", "helpfulness", "preference", "safety"}
    assert BUNDLED.is_dir()
