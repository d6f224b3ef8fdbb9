"""Item 8: hostile input files and option values are one ``error:`` line, exit 2, no change.

Each of these used to end in a traceback (or, for NaN sampling values, to send
``NaN`` in the request JSON): a lone surrogate, JSON nested 100,000 deep, TOML
nested 2,000 deep, a 5,000-digit number, ``sample: 1e30``, out-of-range
bootstrap options, an absurd ``--limit``, and a disk filling up during ``judge``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import FACTS, Outcome, fingerprint, run
from tests.support.openai_server import OpenAIServer

ITEM = '{"id": "x1", "input": "q", "response": "r", "reference": "r"'


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


HOSTILE_ITEMS = {
    "lone surrogate": (ITEM + ', "slice": "\\ud800"}\n', "lone surrogate"),
    "lone surrogate in meta": (ITEM + ', "meta": {"k": ["\\udfff"]}}\n', "lone surrogate"),
    "nested 100k deep": (ITEM + ', "meta": {"k": ' + "[" * 100_000 + "]" * 100_000 + "}}\n",
                         "nested"),
    "5,000-digit id": ('{"id": ' + "7" * 5000 + ', "input": "q", "response": "r"}\n', "digits"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ITEMS))
def test_hostile_items_are_one_line_errors(case: str, store_path: Path, tmp_path: Path) -> None:
    text, needle = HOSTILE_ITEMS[case]
    data = _write(tmp_path / "bad.jsonl", text)
    before = fingerprint(store_path)
    result = run("import", str(data), "--db", str(store_path))
    result.assert_clean_error(f"{data}:1", needle)
    assert len(result.err) < 400  # the 5,000 digits are not echoed back
    assert fingerprint(store_path) == before
    run("rubric", "show", "correctness", "--data", str(data)).assert_clean_error(needle)


@pytest.mark.parametrize("annotator", ['"ann\\ud83d"', "[" * 100_000 + "]" * 100_000,
                                       "9" * 5000], ids=["surrogate", "deep", "5000 digits"])
def test_hostile_labels_are_one_line_errors(
    annotator: str, store_path: Path, tmp_path: Path
) -> None:
    data = _write(tmp_path / "labels.jsonl",
                  '{"item_id": "q01a", "annotator": ' + annotator + ', "label": "pass"}\n')
    before = fingerprint(store_path)
    result = run("labels", "import", str(data), "-r", "correctness", "--db", str(store_path))
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert f"{data}:1" in result.err
    assert fingerprint(store_path) == before


@pytest.mark.parametrize("sample", ["1e30", str(10**30), "-1", '"12345678901234567890"'],
                         ids=["1e30", "10**30", "-1", "20-digit string"])
def test_sample_out_of_range_in_a_judgments_import(
    sample: str, store_path: Path, tmp_path: Path
) -> None:
    data = _write(tmp_path / "v.jsonl",
                  '{"item_id": "q01a", "judge": "j2", "label": "pass", "sample": ' + sample + "}\n")
    before = fingerprint(store_path)
    result = run("judgments", "import", str(data), "-r", "correctness", "--db", str(store_path))
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert "'sample' must be a whole number" in result.err
    assert fingerprint(store_path) == before


def test_non_finite_score_in_a_judgments_import(store_path: Path, tmp_path: Path) -> None:
    data = _write(tmp_path / "v.jsonl",
                  '{"item_id": "q01a", "judge": "j2", "label": "pass", "score": NaN}\n')
    result = run("judgments", "import", str(data), "-r", "correctness", "--db", str(store_path))
    assert result.code == 2 and "'score' must be a finite number" in result.err


@pytest.mark.parametrize("toml", [
    "a = " + "[" * 2000 + "]" * 2000 + "\n",
    "a = " + "{b = " * 2000 + "1" + "}" * 2000 + "\n",
])
def test_toml_nested_2000_deep(toml: str, store_path: Path, tmp_path: Path) -> None:
    rubric = _write(tmp_path / "deep.toml", toml)
    run("rubric", "show", str(rubric)).assert_clean_error("nested too deeply")
    run("report", "-r", str(rubric), "--db", str(store_path)).assert_clean_error("nested")
    result = run("rubric", "check", str(rubric))
    assert result.code == 1 and "nested too deeply" in result.out and not result.err


@pytest.mark.parametrize(("args", "needle"), [
    (["report", "-r", "correctness", "--resamples", "0"], "--resamples"),
    (["report", "-r", "correctness", "--resamples", "1e9"], "--resamples"),
    (["report", "-r", "correctness", "--seed", "-1"], "--seed"),
    (["report", "-r", "correctness", "--min-agreement", "nan"], "--min-agreement"),
    (["report", "-r", "correctness", "--confidence", "nan"], "--confidence"),
    (["compare", "judges", "-r", "correctness", "--resamples", "0"], "--resamples"),
    (["compare", "judges", "-r", "correctness", "--seed", "-1"], "--seed"),
    (["agree", str(FACTS), "--resamples", "0"], "--resamples"),
    (["annotate", "-r", "correctness", "--annotator", "a", "--seed", "-1"], "--seed"),
])
def test_bad_option_values_are_one_line(args: list[str], needle: str, store_path: Path) -> None:
    before = fingerprint(store_path)
    run(*args, "--db", str(store_path)).assert_clean_error(needle) if args[0] != "agree" \
        else run(*args).assert_clean_error(needle)
    assert fingerprint(store_path) == before


@pytest.mark.parametrize(("option", "value"), [
    ("--limit", "1e23"), ("--limit", str(10**23)), ("--limit", "0"),
    ("--temperature", "nan"), ("--temperature", "inf"), ("--top-p", "nan"), ("--top-p", "0"),
    ("--rpm", "nan"), ("--rpm", "inf"), ("--timeout", "nan"), ("--seed", "-1"),
    ("--tpm", "0"), ("--tpm", "-1"), ("--tpm", "nan"), ("--tpm", "inf"),
])
def test_judge_options_are_checked_before_any_request(
    option: str, value: str, store_path: Path, openai_server: OpenAIServer
) -> None:
    before = fingerprint(store_path)
    result = run("judge", "-r", "correctness", "--dataset", "facts", "--db", str(store_path),
                 "--base-url", openai_server.base_url, "--model", "m", option, value)
    result.assert_clean_error(option)
    assert openai_server.requests == []  # nothing was sent, NaN least of all
    assert fingerprint(store_path) == before


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs (root only; else skip)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_disk_full_during_judge_keeps_finished_judgments_and_says_so(
    small_disk: Path, openai_server: OpenAIServer
) -> None:
    data = small_disk / "many.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{n}", "input": "q" * 200, "response": "r" * 200,
                                        "reference": "r"}) + "\n" for n in range(1500)),
                    encoding="utf-8")
    db = small_disk / "s.db"
    assert run("import", str(data), "--db", str(db)).code == 0
    data.unlink()
    result = run("judge", "-r", "correctness", "--dataset", "many", "--db", str(db),
                 "--base-url", openai_server.base_url, "--model", "m", "--no-progress")
    # stderr: status lines ("judging 1500 item(s)" ...), then the one error line
    lines = result.err.strip().splitlines()
    assert lines[0].startswith("judging 1500 item(s)")
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.err
    error = errors[0]
    Outcome(result.code, result.out, error).assert_clean_error("disk is full", "rerun")
    # the in-process test server may log a dropped connection; judgekit itself prints no frame
    assert "judgekit/cli" not in result.err and "judgekit/judging" not in result.err
    found = re.search(r"(\d+) judgment\(s\) of this rubric and dataset are saved", error)
    assert found is not None, error
    saved = int(found.group(1))
    assert 0 < saved < 1500
    for suffix in ("", "-wal"):  # the store (and its log) is still a readable store
        if Path(f"{db}{suffix}").exists():
            shutil.copy(f"{db}{suffix}", f"{small_disk.parent / 'copy.db'}{suffix}")
    listed = run("runs", "--db", str(small_disk.parent / "copy.db"), "--format", "json")
    assert listed.code == 0, listed.err
    export = run("export", "-r", "correctness", "--db", str(small_disk.parent / "copy.db"))
    assert export.out.count("\n") == saved
