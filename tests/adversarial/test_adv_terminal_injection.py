"""Item 7: control sequences and markup from items, names and the endpoint never act.

Every piece of outside text (item text, slice names, annotator names, the
judge's model name and reasoning) carries an OSC title change, a screen clear,
backspaces, a C1 CSI and a bidi override. Whatever judgekit prints must hold
none of them raw; the Markdown report, rendered by an independent Markdown
parser, must contain no tag, image or ``javascript:`` link.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from judgekit.store import open_store
from judgekit.textsafe import json_safe, markdown_code, markdown_text, one_line, terminal_safe
from judgekit.tui.app import make_app
from tests.adversarial.conftest import run
from tests.support.annotate import queue_for, screen_text

#: Every way outside text tried to act on the terminal.
HOSTILE = "\x1b]2;PWNED\x07\x1b[2J\x1bc\x08\x08\x9b31m\u202eevil\x7f\u2028"
RAW = ("\x1b", "\x07", "\x08", "\x9b", "\u202e", "\x7f", "\u2028")
MARKUP = '<script>alert(1)</script><img src=x onerror=alert(2)>[click](javascript:alert(3))'


def assert_inert(text: str) -> None:
    for char in RAW:
        assert char not in text, (repr(char), text[:400])


def test_terminal_safe_shows_every_control_and_keeps_lines() -> None:
    shown = terminal_safe("a\tb\r\nc" + HOSTILE + "\ud800")
    assert_inert(shown)
    assert shown.startswith("a\tb\nc\\x1b]2;PWNED\\x07\\x1b[2J")
    assert "\\u202e" in shown and "\\x9b" in shown and "\\ud800" in shown
    assert one_line("x\ny\tz") == "x\\ny\\tz"
    shown.encode("utf-8")  # a lone surrogate no longer breaks printing


def test_json_safe_is_the_same_json() -> None:
    value = {"k" + HOSTILE: [HOSTILE, "\ud800", "plain"]}
    dumped = json_safe(json.dumps(value, ensure_ascii=False))
    assert_inert(dumped)
    assert json.loads(dumped) == value


def test_markdown_text_cannot_form_html_or_links() -> None:
    html = MarkdownIt("commonmark").enable("table").render(
        "| a |\n|---|\n| " + markdown_text(MARKUP + " | *x* `y`") + " |\n\n"
        + markdown_text(MARKUP) + " " + markdown_code("a`b<script>") + "\n"
    )
    assert "<script" not in html and "<img" not in html and "href" not in html
    assert "&lt;script&gt;" in html
    assert html.count("<td>") == 1  # the | inside the text did not open a second cell


@pytest.fixture
def hostile_store(tmp_path: Path) -> Path:
    """A store whose items, slice names, annotator and judge model names are all hostile."""
    db = tmp_path / "hostile.db"
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({
        "id": f"i{n}", "input": f"question {n} {HOSTILE} {MARKUP}", "response": "answer",
        "reference": "answer", "slice": f"s{n % 2}{HOSTILE}{MARKUP}",
    }) + "\n" for n in range(12)), encoding="utf-8")
    assert run("import", str(items), "--db", str(db)).code == 0
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({
        "item_id": f"i{n}", "annotator": f"ann{HOSTILE}", "label": "pass" if n % 3 else "fail",
    }) + "\n" for n in range(12)), encoding="utf-8")
    result = run("labels", "import", str(labels), "-r", "correctness", "--db", str(db))
    assert result.code == 0, result.err
    assert_inert(result.out)
    assert "ann\\x1b]2;PWNED" in result.out  # the summary names the annotator, escaped
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({
        "item_id": f"i{n}", "judge": f"model{HOSTILE}", "label": "pass" if n % 4 else "fail",
        "reasoning": f"because {HOSTILE} {MARKUP}",
    }) + "\n" for n in range(12)), encoding="utf-8")
    result = run("judgments", "import", str(verdicts), "-r", "correctness", "--db", str(db))
    assert result.code == 0, result.err
    assert_inert(result.out)
    return db


def test_text_report_prints_no_control_code(hostile_store: Path) -> None:
    result = run("report", "-r", "correctness", "--db", str(hostile_store), "--annotator",
                 f"ann{HOSTILE}")
    assert result.code in (0, 1, 3), result.err
    assert_inert(result.out + result.err)
    assert "model\\x1b]2;PWNED" in result.out and "s0\\x1b]2;PWNED" in result.out


def test_markdown_report_embeds_no_html_and_no_link(hostile_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    result = run("report", "-r", "correctness", "--db", str(hostile_store), "--out", str(out),
                 "--annotator", f"ann{HOSTILE}")
    assert result.code in (0, 1, 3), result.err
    text = out.read_text(encoding="utf-8")
    assert_inert(text)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in html and "<img" not in html
    assert "javascript:" not in html.replace("(javascript:alert(3))", "")
    assert "href=" not in html
    assert "&lt;script&gt;" in html  # shown as text, not dropped


def test_rubric_show_data_prints_the_item_escaped(hostile_store: Path, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    for fmt in ("text", "json"):
        result = run("rubric", "show", "correctness", "--data", str(items), "--format", fmt)
        assert result.code == 0, result.err
        assert_inert(result.out)
    assert json.loads(result.out)["messages"][-1]["content"].count(HOSTILE) == 1


def test_runs_compare_and_errors_print_no_control_code(hostile_store: Path) -> None:
    for args in (["runs"], ["runs", "--format", "json"],
                 ["compare", "judges", "-r", "correctness", "--resamples", "50"]):
        result = run(*args, "--db", str(hostile_store))
        assert_inert(result.out + result.err)
    listed = json.loads(run("runs", "--db", str(hostile_store), "--format", "json").out)
    assert listed[0]["model"] == f"model{HOSTILE}"  # JSON stays lossless
    result = run("rubric", "show", "correctness", "--data",
                 str(hostile_store.parent / "items.jsonl"), "--item", HOSTILE)
    result.assert_clean_error("--item")
    assert_inert(result.err)


def test_agree_prints_rater_names_escaped(tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.jsonl"
    ratings.write_text("".join(
        json.dumps({"item_id": f"i{n}", "rater": f"r{k}{HOSTILE}", "label": (n + k) % 2})
        + "\n" for n in range(10) for k in range(2)), encoding="utf-8")
    for fmt in ("text", "json"):
        result = run("agree", str(ratings), "--format", fmt, "--resamples", "50")
        assert result.code == 0, result.err
        assert_inert(result.out)


async def test_annotate_app_shows_hostile_text_escaped(tmp_path: Path) -> None:
    """A slice name with backspaces used to crash the app (StopIteration in the renderer)."""
    from judgekit.rubrics import rubric_from_text
    from judgekit.types import Item
    from tests.support.annotate import RUBRIC_TEXT

    with open_store(tmp_path / "a.db") as store:
        # ids and slices on the status line: blind sessions show them only when allowed
        rub = rubric_from_text(RUBRIC_TEXT["binary"] + "\n[display]\nshow_id = true\n")
        items = [Item(id=f"id{HOSTILE}{n}", input=f"input {HOSTILE} {MARKUP} [bold]x[/bold]",
                      response=f"resp {HOSTILE}", slice=f"slice\x08\x08\x08{HOSTILE}")
                 for n in range(3)]
        store.import_items("d", items)
        store.save_rubric(rub)
        app = make_app(store, rub, queue_for("d", items), annotator=f"bob{HOSTILE}")
        async with app.run_test(size=(260, 30)) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert_inert(text)
            assert "input \\x1b]2;PWNED" in text and "[bold]x[/bold]" in text
            assert "bob\\x1b]2;PWNED" in text
            assert "slice\\x08\\x08\\x08" in text
            await pilot.press("p")
            await app.label_screen.settled()
            await pilot.press("q")
        assert app.return_code == 0
        assert "\x1b" not in app.sub_title
