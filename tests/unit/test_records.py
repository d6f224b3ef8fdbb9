"""The shared record reader: JSONL split on newlines only, CSV/TSV/parquet alike, extras in meta."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.compare.agree import read_ratings
from judgekit.errors import InputError
from judgekit.io.items import load_items
from judgekit.io.records import iter_records

#: Characters str.splitlines() treats as line breaks but JSON allows raw inside a string.
LINE_LIKE = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("char", LINE_LIKE)
def test_jsonl_string_with_unicode_line_separator_is_one_record(tmp_path: Path, char: str) -> None:
    path = tmp_path / "d.jsonl"
    rows = [{"id": "a", "input": f"one{char}two", "response": "r"},
            {"id": "b", "input": "q", "response": f"x{char}"}]
    # ensure_ascii=False writes the character raw, as most tools do.
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    first, second = load_items(path)
    assert first.input == f"one{char}two"
    assert second.response == f"x{char}"


def test_crlf_line_ends_and_error_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"id": "a", "input": "q\xe2\x80\xa8", "response": "r"}\r\n\r\n{bad\r\n')
    with pytest.raises(InputError, match=r"d\.jsonl:3: invalid JSON"):
        load_items(path)


def test_jsonl_and_csv_both_keep_extra_fields_in_meta(tmp_path: Path) -> None:
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(json.dumps({"id": "1", "input": "q", "response": "r", "gold": "pass",
                                 "meta": {"source": "x"}}) + "\n")
    csv = tmp_path / "d.csv"
    csv.write_text('id,input,response,gold,meta\n1,q,r,pass,"{""source"": ""x""}"\n')
    tsv = tmp_path / "d.tsv"
    tsv.write_text('id\tinput\tresponse\tgold\tmeta\n1\tq\tr\tpass\t{"source": "x"}\n')
    items = [load_items(p)[0] for p in (jsonl, csv, tsv)]
    assert items[0] == items[1] == items[2]
    assert items[0].meta == {"source": "x", "gold": "pass"}


def test_tsv_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("id\tinput\tresponse\n1\tq\tr\n2\tq\n")
    with pytest.raises(InputError, match=r"d\.tsv:3: 2 fields, but the header has 3"):
        load_items(path)


def test_reject_mode_names_unknown_field_and_collects_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"a": 1, "zz": 2}\n[1]\n{"a": 2}\n')
    problems: list[tuple[int | None, str]] = []
    rows = list(iter_records(path, ("a",), on_error=lambda n, m: problems.append((n, m))))
    assert [n for n, _ in rows] == [1, 4]
    assert problems == [(2, "unknown field 'zz' (allowed: a)"),
                        (3, "expected a JSON object, got a list")]


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputError, match=r"d\.jsonl:1: invalid JSON"):
        load_items(path)


def test_parquet_items_and_ratings(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"id": ["1", "2"], "input": ["q", "q2"], "response": ["r", None],
                      "response_len": [1, 2]})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    with pytest.raises(InputError, match=r"d\.parquet:2: missing field 'response'"):
        load_items(path)
    pq.write_table(table.slice(0, 1), path)
    (item,) = load_items(path)
    assert (item.id, item.response, item.meta) == ("1", "r", {"response_len": 1})
    ratings = tmp_path / "r.parquet"
    pq.write_table(pa.table({"item_id": ["i", "i"], "rater": ["a", "b"], "label": [1, 2]}),
                   ratings)
    assert [r.label for r in read_ratings(ratings, "ordinal")] == [1.0, 2.0]


def test_agree_reads_tsv_by_suffix(tmp_path: Path) -> None:
    path = tmp_path / "r.tsv"
    path.write_text("item_id\trater\tlabel\tcomment\n1\ta\tx\tfine\n1\tb\ty\t\n")
    assert [(r.rater, r.label, r.where) for r in read_ratings(path)] == [
        ("a", "x", "r.tsv:2"), ("b", "y", "r.tsv:3")]
