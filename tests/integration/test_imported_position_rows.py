"""The imported position probe reads lean rows: its result must equal one computed from the
full judgment objects, on verdicts with failures, re-imported changes, repeated samples,
pairs missing one order and a second judge."""

from __future__ import annotations

import json
import math
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from judgekit.judging.probe_imported import imported_judges, imported_position_probe
from judgekit.rubrics import load_rubric
from judgekit.stats import bias
from judgekit.store import open_store
from judgekit.store.judges import IMPORTED_ENDPOINT
from judgekit.types import SWAPPED_VARIANT, Item, Judgment, Rubric
from tests.integration.test_judgments_io import PAIRWISE
from tests.support.cli import run_cli as invoke
from tests.support.io_files import rubric_file, write_jsonl

N = 120
LABELS = ("A", "B", "tie")
FAILURES = ("parse_error", "timeout", "refusal")


def _verdict(rng: random.Random, item_id: str, judge: str, order: str) -> dict[str, Any]:
    line: dict[str, Any] = {"item_id": item_id, "judge": judge, "order": order}
    if rng.random() < 0.1:
        line["status"] = rng.choice(FAILURES)
    else:
        line["label"] = rng.choice(LABELS)
    return line


def _files(tmp_path: Path) -> list[Path]:
    """A first import, then a second that changes some verdicts and adds repeated samples."""
    rng = random.Random(7)
    first, second = [], []
    for n in range(N):
        for judge in ("j1", "j2"):
            item_id = f"p{n}"
            if n % 11 != 5:  # some pairs have no AB verdict
                first.append(_verdict(rng, item_id, judge, "AB"))
            if n % 13 != 3:  # some have no BA verdict
                first.append(_verdict(rng, item_id, judge, "BA"))
            if n % 4 == 0:  # a changed verdict wins; another sample is not the probe's
                second.append(_verdict(rng, item_id, judge, rng.choice(("AB", "BA"))))
                second.append({**_verdict(rng, item_id, judge, "BA"), "sample": 1})
    return [write_jsonl(tmp_path / "first.jsonl", first),
            write_jsonl(tmp_path / "second.jsonl", second)]


def _from_judgments(store: Any, rubric: Rubric, dataset: str, judge: str) -> dict[str, Any]:
    """The figures computed from full ``Judgment`` objects, as the probe first did."""
    rows = store.judgments(rubric_hash=rubric.sha256, dataset=dataset,
                           endpoint=IMPORTED_ENDPOINT, model=judge, run_kinds=("import",))
    by: dict[str, dict[str, Judgment]] = defaultdict(dict)
    for row in rows:
        if row.sample_index == 0 and row.variant in ("", SWAPPED_VARIANT):
            by[row.item_id][row.variant] = row
    ids = [i for i in store.item_ids(dataset) if SWAPPED_VARIANT in by.get(i, {})]

    def label(item_id: str, variant: str) -> str | None:
        found = by[item_id].get(variant)
        return found.label if found is not None and found.status == "ok" else None

    original = [label(i, "") for i in ids]
    swapped = [label(i, SWAPPED_VARIANT) for i in ids]
    outcome = bias.position_bias(original, swapped)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for item_id in ids:
        for variant in ("", SWAPPED_VARIANT):
            found = by[item_id].get(variant)
            counts[variant][found.status if found else "missing"] += 1
    out = outcome.to_dict()
    out["n_items"] = len(ids)
    out["status_counts"] = {v: dict(sorted(c.items())) for v, c in sorted(counts.items())}
    out["inconsistent_items"] = [ids[i] for i in outcome.inconsistent_indices()]
    return out


def test_lean_rows_give_the_full_rows_result(tmp_path: Path) -> None:
    rubric_path = rubric_file(tmp_path, PAIRWISE, "pref")
    rubric = load_rubric(rubric_path)
    db = tmp_path / "p.db"
    with open_store(db) as store:
        store.import_items("pairs", [Item(id=f"p{n}", input=f"q{n}", response_a=f"a{n}",
                                          response_b=f"b{n}") for n in range(N)])
    for path in _files(tmp_path):
        code, _, err = invoke("judgments", "import", str(path), "--rubric", str(rubric_path),
                              "--db", str(db), "--orientation", "original")
        assert code == 0, err
    with open_store(db) as store:
        assert imported_judges(store, rubric, "pairs") == ["j1", "j2"]
        for judge in ("j1", "j2"):
            expected = _from_judgments(store, rubric, "pairs", judge)
            result = imported_position_probe(store, rubric, "pairs", judge).result
            assert result["status_counts"][""].get("missing", 0) > 0
            assert set(result["status_counts"][SWAPPED_VARIANT]) > {"ok"}
            for key, value in expected.items():
                assert result[key] == value, key
            stored = store.probe_results(rubric.sha256, "position")[-1]["result"]
            assert json.dumps(stored, sort_keys=True) == json.dumps(result, sort_keys=True)


def test_bpde_equals_the_entropy_of_each_row() -> None:
    rng = random.Random(3)
    values: list[object] = ["A", "B", "tie", None, float("nan"), 1, 2.0]
    rows = [[rng.choice(values) for _ in range(4)] for _ in range(500)]
    got = bias.bpde(rows)
    for row, value in zip(rows, got, strict=True):
        present = [v for v in row if v is not None and v == v]
        if not present:
            assert value != value
            continue
        shares = [c / len(present) for c in Counter(present).values()]
        expected = -sum(p * math.log(p) for p in shares)
        assert abs(value - expected) < 1e-12
