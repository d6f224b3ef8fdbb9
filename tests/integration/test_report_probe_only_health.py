"""A store with only probe runs: the report's Health section says why it has no rates.

Probe runs are not the judge (docs/reports.md), so such a store has no judgment
to count and every status rate is undefined. Each format must say why instead of
printing ``ok 0 n/a [n/a]``: text, Markdown and HTML replace the table with one
line naming the reason, and the JSON gives every rate a null statistic with that
reason. The store is a real SQLite file written through the Store API and the
report is made by the real ``judgekit report`` command.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from test_report_selection import SCHEMA, add_run, judged_rows
from test_report_support import BINARY, open_fresh, populate, rubric

from judgekit.cli.main import cli
from judgekit.report.manifest import NO_JUDGMENTS_REASON
from judgekit.types import STATUSES, Item, Label


def probe_only_store(tmp_path: Path) -> Path:
    """20 labeled items and one position probe run's plain judgments; no judge run."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = judged_rows(20)
    store.save_rubric(rub)
    store.import_items("ds", [Item(id=r.item_id, input="q", response=r.response) for r in rows])
    store.add_labels([Label(dataset="ds", item_id=r.item_id, rubric_hash=rub.sha256,
                            annotator="h", label=r.judge) for r in rows])
    add_run(store, rub, "pos", {r.item_id: r.judge or "pass" for r in rows},
            kind="probe:position")
    path = store.path
    store.close()
    return path


def judged_store(tmp_path: Path) -> Path:
    store = open_fresh(tmp_path)
    populate(store, rubric(BINARY), judged_rows(20))
    path = store.path
    store.close()
    return path


def report(db: Path, fmt: str) -> str:
    result = CliRunner().invoke(cli, ["report", "-r", str(BINARY), "--db", str(db),
                                      "--format", fmt, "--resamples", "50"])
    assert result.exit_code in (0, 1, 3), result.output
    return result.output


class _Text(HTMLParser):
    """The visible text of a page, one string per text node."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.parts.append(data.strip())


def html_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return "\n".join(parser.parts)


def health_section(text: str, start: str, end: str) -> str:
    """The report's Health section (from its heading to the next section's)."""
    begin = text.index(start)
    return text[begin:text.index(end, begin)]


#: Per format: how to get readable text, the Health heading and the next section's heading.
SECTIONS = {
    "text": (str, "Health (n=", "Judge vs human"),
    "md": (str, "## Health", "## Judge vs human"),
    "html": (html_text, "Health (n=", "Judge vs human"),
}


def reason_in(section: str) -> str:
    """The reason text as the format prints it (Markdown escapes its backticks)."""
    return section.replace("\\`", "`")


@pytest.mark.parametrize("fmt", sorted(SECTIONS))
def test_health_says_why_it_has_no_rates(fmt: str, tmp_path: Path) -> None:
    readable, start, end = SECTIONS[fmt]
    section = health_section(readable(report(probe_only_store(tmp_path), fmt)), start, end)
    section = " ".join(section.split())  # the text report is wrapped at 80 columns
    assert "n/a" not in section, section  # no rate left without its reason
    assert NO_JUDGMENTS_REASON in reason_in(section), section
    assert "probe runs are not the judge" in section
    assert "Wilson" not in section  # no heading promises intervals the section does not have


def test_json_rates_are_null_with_the_reason(tmp_path: Path) -> None:
    data = json.loads(report(probe_only_store(tmp_path), "json"))
    jsonschema.validate(data, SCHEMA)
    assert data["n_judgments"] == 0
    assert set(data["status_rates"]) == set(STATUSES)
    for status, rate in data["status_rates"].items():
        assert rate["statistic"] is None and rate["ci_low"] is None, status
        assert rate["reason"] == NO_JUDGMENTS_REASON, status


@pytest.mark.parametrize("fmt", sorted(SECTIONS))
def test_a_judged_store_keeps_its_table_of_rates(fmt: str, tmp_path: Path) -> None:
    """The control: with judgments every status has a count, a rate and a Wilson interval."""
    readable, start, end = SECTIONS[fmt]
    section = health_section(readable(report(judged_store(tmp_path), fmt)), start, end)
    assert "No status rates" not in section and "n/a" not in section
    assert re.search(r"ok\W+20\W+100\.0%", section), section
    assert "api_error" in section
    if fmt == "text":
        assert "Wilson 95% CIs" in section
