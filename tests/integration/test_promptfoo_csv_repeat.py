"""promptfoo's CSV output and ``--repeat N`` runs, from files promptfoo wrote
(tests/fixtures/promptfoo/csv/ and repeat3/; their README says how), and the CSV a
user's editor or spreadsheet can break: each refused with one ``file:line`` line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from tests.adversarial.conftest import fingerprint
from tests.adversarial.conftest import run as run_inproc
from tests.support.cli import run_cli as run

PROMPTFOO = Path(__file__).resolve().parents[1] / "fixtures" / "promptfoo"
CSV = PROMPTFOO / "csv"
REPEAT = PROMPTFOO / "repeat3"


def _import(path: Path, db: Path, *extra: str) -> str:
    code, out, err = run("import", str(path), "--from", "promptfoo", "--rubric", "correctness",
                         "--name", "run", "--db", str(db), *extra)
    assert code == 0, err
    return out


def _verdicts(db: Path) -> dict[tuple[str, int], tuple[str, str | None, str | None]]:
    """(item id, sample) -> (judge, label, reasoning) of the stored verdicts."""
    rubric = load_rubric("correctness")
    with open_store(db) as store:
        return {(j.item_id, j.sample_index): (j.model_requested, j.label, j.reasoning)
                for j in store.judgments(rubric_hash=rubric.sha256)}


def test_csv_from_promptfoo_imports_the_same_answers_as_its_json(tmp_path: Path) -> None:
    csv_db, json_db = tmp_path / "csv.db", tmp_path / "json.db"
    out = _import(CSV / "results.csv", csv_db)
    assert "grader: column 'Status' -> judge promptfoo-csv-grader" in out
    _import(CSV / "results.json", json_db)
    found = _verdicts(csv_db)
    # the CSV has no metadata ids: the tests' descriptions (unique) name the items
    assert found == {
        ("capital-france", 0): ("promptfoo-csv-grader", "pass", None),
        ("capital-japan", 0): ("promptfoo-csv-grader", "pass", None),
        ("arithmetic", 0): ("promptfoo-csv-grader", "fail", "Wrong answer."),
        ("planet", 0): ("promptfoo-csv-grader", "fail", "Wrong answer."),
    }
    with open_store(csv_db) as store:
        from_csv = {i.id: i for i in store.iter_items("run")}
    with open_store(json_db) as store:
        from_json = {i.meta["promptfoo"]["vars"]["question"]: i for i in store.iter_items("run")}
    assert len(from_csv) == len(from_json) == 4
    for item in from_csv.values():
        twin = from_json[item.meta["promptfoo"]["vars"]["question"]]
        # the prompt filled in as promptfoo rendered it (a quoted comma and newline kept)
        assert (item.input, item.response, item.reference) == (
            twin.input, twin.response, twin.reference)
    # promptfoo wrote the reference "=4" as "'=4" (spreadsheet-formula escaping)
    assert from_csv["arithmetic"].reference == "=4"
    assert "\n" in from_csv["capital-japan"].input


def test_csv_with_two_providers_names_items_as_the_json_does(tmp_path: Path) -> None:
    """One block of columns per provider: items ``<id>-p<n>-<provider>`` as from the JSON."""
    csv_db, json_db = tmp_path / "csv.db", tmp_path / "json.db"
    assert "imported 8 verdict(s)" in _import(PROMPTFOO / "csv-providers" / "results.csv",
                                             csv_db)
    _import(PROMPTFOO / "csv-providers" / "results.json", json_db)
    with open_store(csv_db) as store:
        from_csv = {(i.id.split("-p", 1)[1], i.input, i.response) for i in store.iter_items("run")}
    with open_store(json_db) as store:
        from_json = {(i.id.split("-p", 1)[1], i.input, i.response)
                     for i in store.iter_items("run")}
    assert from_csv == from_json and len(from_csv) == 8
    assert {suffix for suffix, _, _ in from_csv} == {"0-openai:chat:second-model",
                                                     "1-openai:chat:answer-model"}


def test_an_older_releases_csv_gives_the_same_items_and_verdicts(tmp_path: Path) -> None:
    """promptfoo 0.118 wrote status, answer and reason into one cell per prompt."""
    old_db, new_db = tmp_path / "old.db", tmp_path / "new.db"
    _import(PROMPTFOO / "csv-0.118" / "results.csv", old_db)
    _import(CSV / "results.csv", new_db)
    with open_store(old_db) as store:
        old = sorted((i.input, i.response, i.reference) for i in store.iter_items("run"))
        ids = {i.id for i in store.iter_items("run")}
    with open_store(new_db) as store:
        new = sorted((i.input, i.response, i.reference) for i in store.iter_items("run"))
    assert old == new and ids == {"t0", "t1", "t2", "t3"}  # no descriptions in that form
    assert sorted(v[1:] for v in _verdicts(old_db).values()) == sorted(
        v[1:] for v in _verdicts(new_db).values())


def test_csv_names_the_judge_with_judge_and_keeps_named_scores(tmp_path: Path) -> None:
    """``--grader Status``: the test's overall status as one judge, even beside metrics."""
    db = tmp_path / "pf.db"
    out = _import(PROMPTFOO / "two-graders" / "results.csv", db, "--grader", "Status",
                  "--judge", "grader-model")
    assert "imported 4 verdict(s)" in out
    rubric = load_rubric("correctness")
    with open_store(db) as store:
        rows = {j.item_id: j for j in store.judgments(rubric_hash=rubric.sha256)}
    assert {j.model_requested for j in rows.values()} == {"grader-model"}
    raw = json.loads(rows["planet"].raw_text or "{}")
    assert raw["status"] == "FAIL" and json.loads(raw["named_scores"]) == {
        "correctness": 0, "concise": 0}


@pytest.mark.parametrize("form", ["results.json", "results.jsonl", "results.csv"])
def test_repeat_runs_are_samples_of_one_item(form: str, tmp_path: Path) -> None:
    """``--repeat 3``: 12 results, 4 tests; each test one item with samples 0, 1, 2."""
    db = tmp_path / "pf.db"
    out = _import(REPEAT / form, db)
    assert "imported 4 item(s)" in out and "imported 12 verdict(s)" in out
    found = _verdicts(db)
    first = "capital-france" if form.endswith(".csv") else "q1"
    assert {sample for item, sample in found if item == first} == {0, 1, 2}
    assert len({item for item, _ in found}) == 4
    with open_store(db) as store:
        items = {i.id: i for i in store.iter_items("run")}
        # one verdict per item where a statistic counts items (the lowest sample)
        per_item = store.status_counts(rubric_hash=load_rubric("correctness").sha256,
                                       one_per_item=True)
    assert per_item == {"ok": 4}
    assert items[first].meta["promptfoo"]["test_index"] == 0


def test_repeat_items_are_the_single_runs_items(tmp_path: Path) -> None:
    """A repeated run adds samples to the items one run made, not new items."""
    db = tmp_path / "pf.db"
    _import(CSV / "results.json", db)
    out = _import(REPEAT / "results.json", db)
    # the items are the single run's; its verdicts are the repeats' sample 0
    assert "(0 new or changed)" in out and "(4 already stored)" in out, out
    with open_store(db) as store:
        assert len(list(store.iter_items("run"))) == 4
    assert len(_verdicts(db)) == 12


def test_repeats_with_different_answers_are_items_of_one_cluster(tmp_path: Path) -> None:
    data = json.loads((REPEAT / "results.json").read_text())
    results = data["results"]["results"]
    second = next(r for r in results if r["testIdx"] == 1)  # q1's second run
    second["response"]["output"] = "Paris, France"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    db = tmp_path / "pf.db"
    out = _import(path, db)
    assert "imported 6 item(s)" in out
    with open_store(db) as store:
        items = {i.id: i for i in store.iter_items("run")}
    assert {i for i in items if i.startswith("q1")} == {"q1-r0", "q1-r1", "q1-r2"}
    assert {items[f"q1-r{k}"].cluster for k in range(3)} == {"q1"}
    assert items["q1-r1"].response == "Paris, France"
    assert {s for i, s in _verdicts(db) if i.startswith("q1")} == {0}
    assert items["q2"].cluster is None


HEADER = ("Description,question,expected,[openai:chat:answer-model] Answer: {{question}},"
          "Status,Score,Named Scores,Grader Reason,Comment\n")
ROW = "d1,What is 2 + 2?,4,5,FAIL,0.00,,Wrong answer.,\n"


@pytest.mark.parametrize(("text", "needles"), [
    ("Description,question,output,Score\nd1,q,a,1\n",
     ["results.csv:1: not promptfoo's CSV header: no 'Status' column"]),
    (HEADER.replace("Score,Named Scores", "Named Scores,Score") + ROW,
     ["results.csv:1:", "expected ['Status', 'Score', 'Named Scores']"]),
    (HEADER.replace(",Comment", ",Comment,Extra") + ROW.replace(",\n", ",,x\n"),
     ["results.csv:1:", "unexpected column 'Extra'"]),
    (HEADER + ROW + "d2,What is 3 + 3?,6,6,PASS\n",
     ["results.csv:3: 5 fields, but the header has 9"]),
    (HEADER + ROW.replace("FAIL", "MAYBE"),
     ["results.csv:2: column 'Status': expected PASS, FAIL or ERROR, got 'MAYBE'"]),
    (HEADER + 'd1,"What is\n2 + 2?,4,5,FAIL,0.00,,Wrong answer.,\n',
     ["results.csv:", "malformed CSV"]),
    (HEADER + "\n".join(f'd{n},"q\n{n}",4,5,FAIL,0.00,,r,' for n in range(3)) + "\nd9,q,4\n",
     ["results.csv:8: 3 fields"]),
    (HEADER, ["results.csv: no rows after the header"]),
    ("", ["results.csv: empty file"]),
    (HEADER + ROW.replace("FAIL", "ERROR"), ["results.csv: no PASS or FAIL status"]),
    ('question,[p] Answer: {{question}}\nq1,"[PASS] (1.00)\n\nParis"\nq2,"[MAYBE] x"\n',
     ["results.csv:5: column '[p] Answer: {{question}}': expected an older promptfoo's "
      "'[PASS] (score)'"]),
])
def test_broken_csv_is_one_line_and_the_store_unchanged(
    text: str, needles: list[str], tmp_path: Path
) -> None:
    db = tmp_path / "pf.db"
    _import(CSV / "results.json", db)
    before = fingerprint(db)
    path = tmp_path / "results.csv"
    path.write_text(text, encoding="utf-8")
    outcome = run_inproc("import", str(path), "--from", "promptfoo", "--rubric", "correctness",
                         "--name", "run", "--db", str(db))
    outcome.assert_clean_error(*needles)
    assert fingerprint(db) == before


def test_a_bom_from_a_spreadsheet_is_dropped(tmp_path: Path) -> None:
    """Excel saves CSV as UTF-8 with a BOM; the header still reads as promptfoo's."""
    path = tmp_path / "results.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (CSV / "results.csv").read_bytes())
    plain, with_bom = tmp_path / "plain.db", tmp_path / "bom.db"
    _import(CSV / "results.csv", plain)
    _import(path, with_bom)
    assert _verdicts(plain) == _verdicts(with_bom)
    bad = tmp_path / "latin1.csv"
    bad.write_bytes((CSV / "results.csv").read_bytes().replace(b"Paris", b"Par\xeds"))
    outcome = run_inproc("import", str(bad), "--from", "promptfoo", "--rubric", "correctness",
                         "--db", str(tmp_path / "x.db"))
    outcome.assert_clean_error("latin1.csv:2: not valid UTF-8")


def test_consistency_probe_reads_the_repeats(tmp_path: Path) -> None:
    """A grader that flips on one of four tests: flip rate 1/4, RS (1 + 1 + 1 + 2/3) / 4."""
    data = json.loads((REPEAT / "results.json").read_text())
    third = next(r for r in data["results"]["results"] if r["testIdx"] == 2)  # q1, repeat 2
    third["gradingResult"]["componentResults"][0]["pass"] = False
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    db = tmp_path / "pf.db"
    _import(path, db)
    code, out, err = run("probe", "consistency", "--imported", "--rubric", "correctness",
                         "--dataset", "run", "--db", str(db), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["imported"] is True and result["samples"] == 3 and result["n_items"] == 4
    assert result["flip_rate"]["statistic"] == pytest.approx(0.25)
    assert result["repetition_stability"]["statistic"] == pytest.approx((3 + 2 / 3) / 4)
    assert result["unstable_items"] == ["q1"]
    code, out, _ = run("runs", "--kind", "probe:consistency", "--db", str(db), "--format",
                       "json")
    (listed,) = json.loads(out)
    assert listed["cached"] == 12 and listed["judged"] == 0
    code, out, _ = run("export", "--run", result["run_id"], "--rubric", "correctness",
                       "--db", str(db))
    exported = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(exported) == 12
    assert {(r["item_id"], r["sample_index"]) for r in exported} == {
        (f"q{n}", k) for n in range(1, 5) for k in range(3)}
    code, out, _ = run("report", "--rubric", "correctness", "--db", str(db))
    assert code != 2 and f"consistency probe, run {result['run_id']}" in out  # 3: no labels


def test_consistency_probe_needs_repeats(tmp_path: Path) -> None:
    db = tmp_path / "pf.db"
    _import(CSV / "results.json", db)
    before = fingerprint(db)
    args = ("probe", "consistency", "--imported", "--rubric", "correctness", "--db", str(db))
    run_inproc(*args, "--dataset", "run").assert_clean_error("one verdict per item",
                                                             "promptfoo --repeat N")
    run_inproc(*args, "--dataset", "run", "--samples", "3").assert_clean_error(
        "--samples is for a live probe")
    run_inproc(*args).assert_clean_error("--imported needs --dataset NAME")
    run_inproc(*args, "--dataset", "run", "--judge", "nobody").assert_clean_error(
        "no imported verdicts of judge 'nobody'")
    assert fingerprint(db) == before


#: (value, as promptfoo 0.123.1's escapeCsvFormula writes it), computed by running that
#: function (copied from its dist/src/util-*.js) under Node on these values.
PROMPTFOO_ESCAPED = [
    ("=4", "'=4"), (" =SUM(A1)", "' =SUM(A1)"), ("@x", "'@x"), ("-1.5", "-1.5"),
    ("-abc", "'-abc"), ("+1e5", "+1e5"), ("+", "'+"), ("-", "'-"), ("hello", "hello"),
    ("-1_000", "'-1_000"), ("\u200b=x", "'\u200b=x"), ("\ufeff=x", "'\ufeff=x"),
    ("-0x10", "'-0x10"), ("+Infinity", "'+Infinity"), ("-.5", "-.5"), ("- 3", "'- 3"),
    ("\t@t", "'\t@t"), ("", ""),
]


@pytest.mark.parametrize(("value", "escaped"), PROMPTFOO_ESCAPED)
def test_formula_escaping_is_undone_as_promptfoo_did_it(value: str, escaped: str) -> None:
    """The one value it cannot give back is one that began with ``'=`` (promptfoo leaves
    it as it is, and it reads as an escaped ``=``); docs/import.md says so."""
    from judgekit.io.promptfoo_csv import _unescape

    assert _unescape(escaped) == value
