"""``import --from TOOL`` on mutated copies of the tools' own files: exit 0 or one clean error.

Each reader gets hypothesis-mutated copies of the real fixtures its tool wrote
(tests/fixtures/*): a value's type swapped (null, a number, a string, a list, an
object, a lone surrogate), a field removed, a value wrapped in a list or replaced
by its own JSON text. Whatever the copy holds, the real CLI entry point either
imports it (exit 0) or refuses it with exit 2, an ``error:`` first line and no
traceback, and a refused import leaves the store's bytes as they were.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.adversarial.conftest import fingerprint, run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PAIRS = FIXTURES / "openai-batch" / "pairs.jsonl"
PAIRWISE_RUBRIC = """
name = "pref"
version = "1"
[scale]
kind = "pairwise"
[prompt]
system = "Compare."
user = "{input}\\nA: {response_a}\\nB: {response_b}"
"""

#: Values a mutation puts in place of another (each a type the tool would not write there).
SWAPS: list[Any] = [None, 7, -1, 1e308, True, "x", "", "\ud800", [], [7], {}, {"x": 1}]
Path_ = tuple[Any, ...]


def paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every place in a JSON value (the root excluded), depth first."""
    found: list[Path_] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found.append((*prefix, key))
            found.extend(paths(inner, (*prefix, key)))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.append((*prefix, index))
            found.extend(paths(inner, (*prefix, index)))
    return found


def mutate(document: Any, place: Path_, how: int, swap: Any) -> Any:
    """A copy of ``document`` with the value at ``place`` removed, swapped, wrapped or dumped."""
    copy = json.loads(json.dumps(document))
    parent = copy
    for step in place[:-1]:
        parent = parent[step]
    last = place[-1]
    if how == 0:
        del parent[last]
    elif how == 1:
        parent[last] = swap
    elif how == 2:
        parent[last] = [parent[last]]
    else:
        parent[last] = json.dumps(parent[last])
    return copy


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` after one to three mutations at places hypothesis picks."""
    for _ in range(draw(st.integers(1, 3))):
        places = paths(document)
        if not places:
            break
        # Places near the root matter most (a whole list or object swapped): favour them.
        place = draw(st.sampled_from(sorted(places, key=len)[: max(8, len(places) // 3)])
                     if draw(st.booleans()) else st.sampled_from(places))
        document = mutate(document, place, draw(st.integers(0, 3)), draw(st.sampled_from(SWAPS)))
    return document


def check(file: Path, tool: str, rubric: str, template: Path, *extra: str) -> None:
    """The CLI on ``file``: imported, or exit 2 with a clean error and the store unchanged."""
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "store.db"
        shutil.copy(template, db)
        before = fingerprint(db)
        outcome = run("import", str(file), "--from", tool, "--rubric", rubric, "--name", "run",
                      "--db", str(db), *extra)
        assert "Traceback" not in outcome.err + outcome.out, outcome.err
        assert outcome.code in (0, 2), (outcome.code, outcome.err)
        if outcome.code == 2:
            assert outcome.err.startswith("error: "), outcome.err
            assert fingerprint(db) == before


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the Batch fixture's items (the Batch output names stored items)."""
    folder = tmp_path_factory.mktemp("fuzz")
    db = folder / "template.db"
    shutil.copy(PAIRS, folder / "run.jsonl")
    assert run("import", str(folder / "run.jsonl"), "--db", str(db)).code == 0
    return db


@pytest.fixture(scope="module")
def pairwise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rubric") / "pref.toml"
    path.write_text(PAIRWISE_RUBRIC)
    return path


FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])


def _write_json(document: Any, path: Path) -> None:
    path.write_text(json.dumps(document), encoding="utf-8")


def _write_jsonl(lines: list[Any], path: Path) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _fuzz_document(source: Path, suffix: str, tool: str, rubric: str, template: Path,
                   write: Callable[[Any, Path], None], document: Any, data: st.DataObject,
                   *extra: str) -> None:
    changed = data.draw(mutated(document))
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"{source.stem}{suffix}"
        write(changed, path)
        check(path, tool, rubric, template, *extra)


JSON_FIXTURES = {
    "promptfoo": [FIXTURES / "promptfoo" / "results.json",
                  FIXTURES / "promptfoo" / "two-graders" / "results.json",
                  FIXTURES / "promptfoo" / "repeat3" / "results.json"],
    "deepeval": [FIXTURES / "deepeval" / "test_run.json",
                 FIXTURES / "deepeval" / "two-metrics" / "latest_test_run.json",
                 FIXTURES / "deepeval" / "two-metrics" / "evaluation_result.json"],
}


@pytest.mark.parametrize(("tool", "source"), [(tool, path) for tool, files in
                                              JSON_FIXTURES.items() for path in files],
                         ids=lambda v: v.parent.name + "/" + v.name if isinstance(v, Path) else v)
@FUZZ
@given(data=st.data())
def test_mutated_json_exports(tool: str, source: Path, template: Path,
                              data: st.DataObject) -> None:
    document = json.loads(source.read_text(encoding="utf-8"))
    _fuzz_document(source, ".json", tool, "correctness", template, _write_json, document, data)


JSONL_FIXTURES = [("promptfoo", FIXTURES / "promptfoo" / "two-graders" / "results.jsonl"),
                  ("lm-eval", FIXTURES / "lm-eval" / "samples_capitals.jsonl")]


@pytest.mark.parametrize(("tool", "source"), JSONL_FIXTURES, ids=["promptfoo", "lm-eval"])
@FUZZ
@given(data=st.data())
def test_mutated_jsonl_exports(tool: str, source: Path, template: Path,
                               data: st.DataObject) -> None:
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    _fuzz_document(source, ".jsonl", tool, "correctness", template, _write_jsonl, lines, data)


@FUZZ
@given(data=st.data())
def test_mutated_batch_output(template: Path, pairwise: Path, data: st.DataObject) -> None:
    source = FIXTURES / "openai-batch" / "output.jsonl"
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    _fuzz_document(source, ".jsonl", "openai-batch", str(pairwise), template, _write_jsonl,
                   lines, data)


def _eval_members(source: Path) -> dict[str, Any]:
    from backports.zstd import zipfile  # type: ignore[import-not-found, unused-ignore]

    with zipfile.ZipFile(source) as archive:
        return {name: json.loads(archive.read(name)) for name in archive.namelist()}


def _write_eval(members: dict[str, Any], path: Path) -> None:
    from backports.zstd import zipfile  # type: ignore[import-not-found, unused-ignore]

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_ZSTANDARD) as archive:
        for name, value in members.items():
            archive.writestr(name, json.dumps(value))


@pytest.mark.parametrize("name", ["capitals.eval", "capitals_scorers.eval"])
@FUZZ
@given(data=st.data())
def test_mutated_inspect_logs(name: str, template: Path, data: st.DataObject) -> None:
    pytest.importorskip("backports.zstd")
    source = FIXTURES / "inspect" / name
    members = _eval_members(source)
    # Mutate the header or one sample (a whole member's shape is the tool's unit).
    member = data.draw(st.sampled_from(sorted(n for n in members
                                              if n == "header.json" or n.startswith("samples/"))))
    changed = dict(members)
    if data.draw(st.booleans()):
        changed[member] = data.draw(mutated(members[member]))
    elif data.draw(st.booleans()):
        del changed[member]
    else:
        changed[member] = data.draw(st.sampled_from(SWAPS))
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / name
        _write_eval(changed, path)
        check(path, "inspect", "correctness", template)


@FUZZ
@given(cut=st.integers(0, 16_000), flips=st.lists(st.integers(0, 16_000), max_size=4))
def test_damaged_inspect_archives(cut: int, flips: list[int], template: Path) -> None:
    pytest.importorskip("backports.zstd")
    raw = bytearray((FIXTURES / "inspect" / "capitals.eval").read_bytes())
    for at in flips:
        if at < len(raw):
            raw[at] ^= 0xFF
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "damaged.eval"
        path.write_bytes(bytes(raw[: len(raw) - cut % len(raw)] if cut else raw))
        check(path, "inspect", "correctness", template)


#: What a cell of promptfoo's CSV becomes: statuses it never writes, formula escapes, a
#: quote, a newline, a BOM, a header name in a row, a lone surrogate's escape as text, and
#: metric scores promptfoo never writes (out of 0..1, not finite).
CSV_CELLS = ["", "PASS", "FAIL", "ERROR", "MAYBE", "'=x", "'", '"', "a\nb", "\ufeff",
             "Status", "[p] {{question}}", "1e308", "\\ud800", "Metric: correctness", "0.50",
             "-0.00", "1.5", "NaN", "Infinity"]


@pytest.mark.parametrize("source", [FIXTURES / "promptfoo" / "csv" / "results.csv",
                                    FIXTURES / "promptfoo" / "repeat3" / "results.csv",
                                    FIXTURES / "promptfoo" / "two-graders" / "results.csv",
                                    FIXTURES / "promptfoo" / "csv-0.118" / "results.csv",
                                    FIXTURES / "promptfoo" / "csv-providers" / "results.csv",
                                    FIXTURES / "promptfoo" / "csv-metrics" / "results.csv",
                                    FIXTURES / "promptfoo" / "csv-metrics-0.118" / "results.csv"],
                         ids=lambda v: v.parent.name)
@FUZZ
@given(data=st.data())
def test_mutated_promptfoo_csv(source: Path, template: Path, data: st.DataObject) -> None:
    """Cells removed, added or replaced, rows dropped or doubled, the text cut or given a
    stray quote: imported, or one clean error naming the file."""
    import csv
    import io

    text = source.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    for _ in range(data.draw(st.integers(1, 3))):
        how = data.draw(st.integers(0, 5))
        row = rows[data.draw(st.integers(0, len(rows) - 1))] if rows else []
        if how == 0 and row:
            del row[data.draw(st.integers(0, len(row) - 1))]
        elif how == 1:
            row.insert(data.draw(st.integers(0, len(row))), data.draw(st.sampled_from(CSV_CELLS)))
        elif how == 2 and row:
            row[data.draw(st.integers(0, len(row) - 1))] = data.draw(st.sampled_from(CSV_CELLS))
        elif how == 3 and rows:
            rows.pop(data.draw(st.integers(0, len(rows) - 1)))
        elif how == 4 and rows:
            rows.append(list(data.draw(st.sampled_from(rows))))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    written = out.getvalue()
    if data.draw(st.booleans()):  # damage the text itself: cut it, or a stray quote
        at = data.draw(st.integers(0, max(0, len(written) - 1)))
        written = written[:at] if data.draw(st.booleans()) else written[:at] + '"' + written[at:]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "results.csv"
        path.write_text(written, encoding="utf-8")
        check(path, "promptfoo", "correctness", template)


def test_the_yaml_output_is_fuzzed_as_json_too() -> None:
    """promptfoo's .yaml is the .json's document; the JSON cases above cover its shapes.
    Here: YAML that is not a document at all is one clean error."""
    pytest.importorskip("yaml")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "results.yaml"
        for text in ("results: [\n", "? [a, b]\n: 1\n", "- 1\n- 2\n", "results: {results: 7}\n",
                     'results: {results: [{response: {output: "\\ud800"}}]}\n'):
            path.write_text(text)
            outcome = run("import", str(path), "--from", "promptfoo", "--rubric", "correctness",
                          "--db", str(Path(scratch) / "x.db"))
            assert outcome.code == 2 and outcome.err.startswith("error: "), outcome.err
            assert not (Path(scratch) / "x.db").exists()




# -- the labeling tools' exports (labels import --from) ----------------------------------------


@pytest.fixture(scope="module")
def facts_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding items i0..i4 of dataset 'facts' (what the exports name)."""
    folder = tmp_path_factory.mktemp("facts")
    data = folder / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{n}", "input": f"What is {n}+1?",
                                        "response": str(n + 1)}) + "\n" for n in range(5)))
    db = folder / "template.db"
    assert run("import", str(data), "--db", str(db)).code == 0
    return db


@pytest.mark.parametrize(("tool", "source"), [
    ("label-studio", FIXTURES / "label-studio" / "export.json"),
    ("argilla", FIXTURES / "argilla" / "records.json")], ids=["label-studio", "argilla"])
@FUZZ
@given(data=st.data())
def test_mutated_labeling_exports(tool: str, source: Path, facts_store: Path,
                                  data: st.DataObject) -> None:
    changed = data.draw(mutated(json.loads(source.read_text(encoding="utf-8"))))
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / source.name
        _write_json(changed, path)
        db = Path(scratch) / "store.db"
        shutil.copy(facts_store, db)
        before = fingerprint(db)
        outcome = run("labels", "import", str(path), "--from", tool, "--rubric", "correctness",
                      "--db", str(db))
        assert "Traceback" not in outcome.err + outcome.out, outcome.err
        assert outcome.code in (0, 2), (outcome.code, outcome.err)
        if outcome.code == 2:
            assert outcome.err.startswith("error: "), outcome.err
            assert fingerprint(db) == before
