"""Dataset reading: JSONL and CSV, every malformed case naming file:line, and the demo data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judgekit.errors import InputError
from judgekit.io.items import dataset_name_for, load_items
from judgekit.rubrics import REPO_RUBRICS_DIR, load_rubric, render_messages
from judgekit.types import Item

OK = {"id": "a", "input": "q", "response": "r"}
DEMO = Path(__file__).resolve().parents[2] / "judgekit" / "data" / "demo"


def jsonl(tmp_path: Path, *rows: object, name: str = "data.jsonl") -> Path:
    path = tmp_path / name
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(InputError) as info:
        load_items(path)
    return str(info.value)


# -- JSONL -----------------------------------------------------------------------


def test_jsonl_all_fields(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {"id": 7, "input": "q", "response": "r", "reference": "ref", "slice": "s",
         "cluster": 3, "meta": {"gold": "pass", "n": [1]}},
        "",
        {"id": "b", "input": "q2", "response": ""},
    )
    items = load_items(path)
    assert items[0] == Item(
        id="7", input="q", response="r", reference="ref", slice="s", cluster="3",
        meta={"gold": "pass", "n": [1]},
    )
    assert items[1] == Item(id="b", input="q2", response="")
    assert dataset_name_for(path) == "data"


def test_pairwise_jsonl(tmp_path: Path) -> None:
    row = {"id": "p", "input": "q", "response_a": "x", "response_b": "y"}
    items = load_items(jsonl(tmp_path, row))
    assert items[0].is_pairwise
    assert (items[0].response_a, items[0].response_b, items[0].response) == ("x", "y", None)


def test_bom_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(OK).encode())
    assert load_items(path)[0].id == "a"



@pytest.mark.parametrize(
    ("second_line", "expected"),
    [
        ('{"id": "b", "input": "q", ', r":2: invalid JSON: "),
        ('["b", "q"]', ":2: expected a JSON object, got a list"),
        ({"id": "b", "response": "r"}, ":2: missing field 'input'"),
        ({"input": "q", "response": "r"}, ":2: missing field 'id'"),
        ({"id": "b", "input": "q"}, ":2: missing field 'response' (or 'response_a' and"),
        ({"id": "b", "input": 5, "response": "r"},
         ":2: field 'input' must be a string, got a number"),
        ({"id": True, "input": "q", "response": "r"},
         ":2: field 'id' must be a string, got a boolean"),
        ({"id": 1.5, "input": "q", "response": "r"},
         ":2: field 'id' must be a string, got a number"),
        ({"id": " ", "input": "q", "response": "r"}, ":2: field 'id' must not be empty"),
        ({"id": "b", "input": "q", "response": None}, ":2: missing field 'response'"),
        ({"id": "b", "input": "q", "response": "r", "reference": 4},
         ":2: field 'reference' must be a string, got a number"),
        ({"id": "b", "input": "q", "response": "r", "meta": "gold"},
         ":2: field 'meta' must be an object, got a string"),
        ({"id": "b", "input": "q", "respnse": "x"},
         "('respnse' was kept under 'meta': did you mean 'response'?)"),
        ({"id": "b", "input": "q", "response": "r", "gold": 1, "meta": {"gold": 2}},
         ":2: field 'gold' repeats meta key 'gold'"),
        ({"id": "b", "input": "q", "response": "r", "gold": 1, "meta": [1]},
         ":2: field 'meta' must be an object, got a list"),
        ({"id": "a", "input": "q", "response": "r"}, ":2: duplicate id 'a' (first on line 1)"),
        ({"id": "b", "input": "q", "response_a": "x", "response_b": "y"},
         ":2: pairwise item in a pointwise dataset (line 1 is pointwise)"),
        ({"id": "b", "input": "q", "response_a": "x"}, ":2: missing field 'response_b'"),
        ({"id": "b", "input": "q", "response": "r", "response_a": "x", "response_b": "y"},
         ":2: has both 'response' and 'response_a'/'response_b'"),
    ],
)
def test_malformed_jsonl_names_file_line_and_problem(
    tmp_path: Path, second_line: object, expected: str
) -> None:
    path = jsonl(tmp_path, OK, second_line)
    message = error_of(path)
    assert message.startswith(f"{path}:2: "), message
    assert expected in message


def test_int_and_string_ids_collide(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": 1, "input": "q", "response": "r"}, "",
                 {"id": "1", "input": "q", "response": "r"})
    assert error_of(path).endswith(":3: duplicate id '1' (first on line 1)")


def test_pointwise_after_pairwise(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "p", "input": "q", "response_a": "x", "response_b": "y"}, OK)
    assert "pointwise item in a pairwise dataset (line 1 is pairwise)" in error_of(path)


def test_non_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(json.dumps(OK).encode() + b'\n{"id": "b", "input": "caf\xe9"}\n')
    assert error_of(path) == f"{path}:2: not valid UTF-8 (byte 0xe9 at column 26)"


@pytest.mark.parametrize(("content", "why"), [
    ("", "the file is empty"),
    # Blank lines are not an empty file: say what the file holds.
    ("\n\n  \n", "the file (5 bytes) holds no records: only blank lines, or a header alone"),
])
def test_empty_file(tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(content)
    assert error_of(path) == f"{path}: no items ({why})"


def test_missing_file_and_unknown_suffix(tmp_path: Path) -> None:
    assert error_of(tmp_path / "nope.jsonl").endswith("nope.jsonl: no such file")
    other = tmp_path / "data.txt"
    other.write_text("x")
    assert "unsupported file type '.txt'" in error_of(other)


# -- CSV -------------------------------------------------------------------------


def csv_file(tmp_path: Path, text: str, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_extra_columns_go_to_meta(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        'id,input,response,reference,slice,gold,meta\n'
        '1,"What is 2+2?","4",4,math,pass,"{""source"": ""x""}"\n'
        '2,"Multi\nline",five,,,fail,\n',
    )
    first, second = load_items(path)
    assert first == Item(id="1", input="What is 2+2?", response="4", reference="4",
                         slice="math", meta={"source": "x", "gold": "pass"})
    assert second.input == "Multi\nline"
    assert (second.reference, second.slice) == (None, None)
    assert second.meta == {"gold": "fail"}


def test_csv_pairwise(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "id,input,response_a,response_b\np1,q,x,y\n")
    assert load_items(path)[0].is_pairwise


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id,input,response\n1,q,r\n2,q\n", ":3: 2 fields, but the header has 3"),
        ("id,input,response\n1,q,r\n2,q,r,extra\n", ":3: 4 fields, but the header has 3"),
        ("id,input,response\n1,q,r\n1,q2,r2\n", ":3: duplicate id '1' (first on line 2)"),
        ('id,input,response\n1,"q,r\n', "malformed CSV"),
        ("id,input\n1,q\n", ":2: missing field 'response'"),
        ("id,input,response,input\n1,q,r,s\n", ":1: column 'input' appears twice"),
        ("id,input,response,response_a\n1,q,r,s\n", ":1: the header has both 'response'"),
        ("id,input,response,meta\n1,q,r,[1]\n", ":2: field 'meta' must be a JSON object"),
        ("id,input,response,meta\n1,q,r,{bad\n", ":2: field 'meta' is not valid JSON"),
        ('id,input,response,gold,meta\n1,q,r,x,"{""gold"": 1}"\n', ":2: column 'gold' repeats"),
        ("id,input,response\n,q,r\n", ":2: field 'id' must not be empty"),
        ("id,input,response\n", "no items"),
    ],
)
def test_malformed_csv(tmp_path: Path, text: str, expected: str) -> None:
    path = csv_file(tmp_path, text)
    message = error_of(path)
    assert message.startswith(f"{path}:") or message.startswith(f"{path}: "), message
    assert expected in message


def test_csv_line_numbers_count_physical_lines(tmp_path: Path) -> None:
    path = csv_file(tmp_path, 'id,input,response\n1,"two\nlines",r\n2,q,r\n1,q,r\n')
    assert error_of(path).endswith(":5: duplicate id '1' (first on line 2)")


def test_csv_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"id,input,response\n1,q,r\n2,\xff,r\n")
    assert error_of(path) == f"{path}:3: not valid UTF-8 (byte 0xff at column 3)"


# -- demo data -------------------------------------------------------------------


def test_demo_facts_validate_against_correctness_rubric() -> None:
    items = load_items(DEMO / "facts.jsonl")
    assert len(items) >= 20
    rubric = load_rubric(REPO_RUBRICS_DIR / "correctness.toml")
    golds = [item.meta["gold"] for item in items]
    assert set(golds) == {"pass", "fail"}
    assert all(rubric.scale.is_valid(gold) for gold in golds)
    assert {item.slice for item in items} == {"arithmetic", "geography", "science"}
    for item in items:
        assert item.reference and not item.is_pairwise
        render_messages(rubric, item)
        render_messages(load_rubric(REPO_RUBRICS_DIR / "helpfulness.toml"), item)
        render_messages(load_rubric(REPO_RUBRICS_DIR / "safety.toml"), item)


def test_demo_pairs_validate_against_preference_rubric() -> None:
    items = load_items(DEMO / "pairs.jsonl")
    assert len(items) >= 10
    rubric = load_rubric(REPO_RUBRICS_DIR / "preference.toml")
    golds = [item.meta["gold"] for item in items]
    assert set(golds) == {"A", "B"}, "the correct answer must appear in both positions"
    assert all(rubric.scale.is_valid(gold) for gold in golds)
    for item in items:
        assert item.is_pairwise
        render_messages(rubric, item)


def test_demo_gold_labels_match_the_reference() -> None:
    """The gold label is right by construction: exactly the correct responses give the reference."""
    for item in load_items(DEMO / "facts.jsonl"):
        correct = _gives(item.response or "", item.reference or "")
        assert correct == (item.meta["gold"] == "pass"), item.id
    for item in load_items(DEMO / "pairs.jsonl"):
        a_ok = _gives(item.response_a or "", item.reference or "")
        b_ok = _gives(item.response_b or "", item.reference or "")
        assert a_ok != b_ok, item.id
        assert ("A" if a_ok else "B") == item.meta["gold"], item.id


_NUMBER_WORDS = {"six": "6", "eight": "8", "nine": "9"}


def _gives(response: str, reference: str) -> bool:
    """Numeric reference: the response's last number equals it; otherwise its key word occurs."""
    first = reference.split()[0]
    if re.fullmatch(r"\d+", first):
        text = response.lower()
        for word, digits in _NUMBER_WORDS.items():
            text = re.sub(rf"\b{word}\b", digits, text)
        numbers = re.findall(r"\d+(?:\.\d+)?", text)
        return bool(numbers) and numbers[-1] == first
    words = [w for w in reference.lower().split() if w not in {"the", "ocean"}]
    return words[0] in response.lower()
