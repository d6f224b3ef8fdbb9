"""The Alignment section is part of the report model: every format, the notebook and the
server's ``/report`` show it, and a report on a rubric never aligned has ``alignment: null``.

The split and its test use are stored through the Store API with the objects ``align``
itself records (a :class:`~judgekit.align.evaluate.PairedResult` and dev statistics).
"""

from __future__ import annotations

import html
import json
import math
import random
from pathlib import Path

import jsonschema
import pytest
from test_report_support import BINARY, Row, open_fresh, populate, rubric

from judgekit.align.evaluate import PairedResult
from judgekit.report import FORMATS, ReportOptions, build_report, render
from judgekit.report.model import Stat
from judgekit.report.render_text import render_text
from judgekit.store import Store, open_store
from judgekit.store.splits import SplitItem
from judgekit.types import Rubric
from tests.support.cli import run_cli
from tests.support.serve import running_service, token

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text()
)
#: Who ran the held-out comparison: markup and a control code, shown as written everywhere.
WHO = "<b>ana</b>\x1b[31m"


def aligned_store(tmp_path: Path, n: int = 60) -> tuple[Store, Rubric, str]:
    """A binary rubric judged and labeled on ``n`` items, split 50/25/25 and tested once."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(3)
    rows = []
    for i in range(n):
        human = rng.choice(["pass", "fail"])
        judge = human if rng.random() < 0.85 else ("fail" if human == "pass" else "pass")
        rows.append(Row(f"r{i}", judge, {"ann1": human}))
    populate(store, rub, rows)
    parts = ["train"] * (n // 2) + ["dev"] * (n // 4) + ["test"] * (n - n // 2 - n // 4)
    record = store.create_split(
        rub.sha256, "", 7, {"train": 0.5, "dev": 0.25, "test": 0.25},
        [SplitItem("ds", f"r{i}", part, f"r{i}") for i, part in enumerate(parts)])
    test = PairedResult("cohen_kappa", Stat(0.61, 0.40, 0.80, 15), Stat(0.78, 0.60, 0.93, 15),
                        Stat(0.17, 0.02, 0.33, 15), Stat(0.10, -0.05, 0.25, 15),
                        "McNemar exact test", 0.2, 15, None)
    dev = [{"name": "examples-4", "primary": Stat(0.74, 0.55, 0.90, 15).to_dict()},
           {"name": "baseline", "primary": Stat(math.nan, n=15, reason="one label").to_dict()}]
    store.record_split_use(record.id, "dev", WHO, [{"name": "examples-4"}], {"dev": dev})
    store.record_split_use(record.id, "test", WHO,
                           [{"name": "baseline"}, {"name": "examples-4"}],
                           {"test": test.to_dict(), "dev": dev})
    return store, rub, test.sentence()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_shows_the_alignment(tmp_path: Path, fmt: str) -> None:
    store, rub, sentence = aligned_store(tmp_path)
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    text = render(report, fmt)
    if fmt == "json":
        data = json.loads(text)
        jsonschema.validate(data, SCHEMA)
        alignment = data["alignment"]
        assert alignment["split"] == {"seed": 7, "fractions": {"train": 0.5, "dev": 0.25,
                                                               "test": 0.25},
                                      "counts": {"train": 30, "dev": 15, "test": 15}}
        assert alignment["test_uses"] == 1 and alignment["rubric_sha256"] == rub.sha256
        assert alignment["latest"]["who"] == WHO
        assert alignment["latest"]["test"]["sentence"] == sentence
        assert [d["name"] for d in alignment["latest"]["dev"]] == ["examples-4", "baseline"]
        return
    flat = " ".join(text.split())
    plain = html.unescape(flat.replace("\\", ""))  # Markdown's and HTML's escapes undone
    for needle in ("Alignment", "split (seed 7): 30 train, 15 dev, 15 test",
                   "test split used 1 time(s)", "examples-4: 0.74 [0.55, 0.90]",
                   "baseline: undefined (one label)"):
        assert needle in plain, needle
    assert "kappa 0.61 -> 0.78, +0.17 [+0.02, +0.33] on 15 held-out labels" in plain
    if fmt != "html":  # a control code is shown escaped, never sent to a terminal
        assert "\x1b" not in text
    if fmt != "text":
        assert "<b>ana</b>" not in text  # shown as written, never markup
    if fmt == "text":
        assert text.index("VERDICT:") < text.index("\nAlignment\n")
        assert "ana</b>\\x1b[31m" in text
    if fmt == "md":
        assert "\n## Alignment\n" in text
    if fmt == "html":
        assert '<section id="alignment"><h2>Alignment</h2>' in text
        assert text.index('id="alignment"') < text.index("</body>")
        assert "&lt;b&gt;ana&lt;/b&gt;" in text


def test_notebook_view_and_frame_have_the_alignment(tmp_path: Path) -> None:
    store, rub, _ = aligned_store(tmp_path)
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    assert 'id="alignment"' in report._repr_html_()
    frame = report.to_frame()
    rows = frame[frame["section"] == "alignment"].set_index("name")
    assert list(rows.index) == ["test:baseline", "test:candidate", "test:difference",
                                "dev:examples-4", "dev:baseline"]
    assert rows.loc["test:difference", "statistic"] == pytest.approx(0.17)
    assert rows.loc["test:difference", "ci_low"] == pytest.approx(0.02)
    assert math.isnan(rows.loc["dev:baseline", "statistic"])
    assert rows.loc["dev:baseline", "reason"] == "one label"


def test_a_rubric_never_aligned_has_none(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, [Row(f"r{i}", "pass", {"ann1": "pass" if i % 3 else "fail"})
                          for i in range(20)])
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    assert report.alignment is None
    assert json.loads(render(report, "json"))["alignment"] is None
    for fmt in ("text", "md", "html"):
        assert "Alignment" not in render(report, fmt)


def test_the_cli_prints_the_section_the_model_renders(tmp_path: Path) -> None:
    store, rub, _ = aligned_store(tmp_path)
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    store.close()
    code, out, err = run_cli("report", "--rubric", str(BINARY), "--db",
                             str(tmp_path / "judgekit.db"), "--resamples", "100")
    assert code in (0, 1, 3), err
    body = out[out.index("\n\nHealth"):]  # the provenance holds the time it was generated
    assert body == render_text(report, 80)[render_text(report, 80).index("\n\nHealth"):]
    assert out.count("\nAlignment\n") == 1


def test_the_servers_report_has_the_alignment(tmp_path: Path) -> None:
    store, rub, sentence = aligned_store(tmp_path)
    reader = token(store, "reader", "read")
    store.close()
    db = tmp_path / "judgekit.db"
    with running_service(db, tmp_path) as service:
        answer = service.get(f"/api/v1/report?rubric={rub.name}&resamples=100", reader)
        assert answer.status_code == 200, answer.text
        alignment = answer.json()["alignment"]
    assert alignment["test_uses"] == 1
    assert alignment["latest"]["test"]["sentence"] == sentence
    assert alignment["split"]["counts"]["test"] == 15
    with open_store(db) as again:  # the route reads the store; it writes nothing
        assert len(again.split_uses(again.get_split(rub.sha256, "").id)) == 2  # type: ignore[union-attr]
