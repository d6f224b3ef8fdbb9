"""``batch prepare`` streams: its files are each unit's live request in unit order, whatever
the transactions, and its peak memory stays flat in the number of calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.clients import JudgeSpec
from judgekit.clients.request import chat_request, response_format_for
from judgekit.judging.batch import prepare as prepare_module
from judgekit.judging.batch.lines import request_line
from judgekit.judging.batch.prepare import prepare_batch
from judgekit.judging.units import WorkUnit, unit_key, unit_messages
from judgekit.prompts import verdict_json_schema
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item, SamplingParams


def _items(n: int) -> list[Item]:
    return [Item(id=f"i{k}", input=f"What is {k} + 1? \u00e9 \u202e", response=str(k + 1),
                 reference=str(k % 7)) for k in range(n)]


def test_prepared_files_are_the_units_requests_in_order_across_transactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prepare_module, "RECORD_SIZE", 700)  # several transactions
    rubric = load_rubric("correctness")
    spec = JudgeSpec(base_url="http://127.0.0.1:1/v1", model="m",
                     sampling=SamplingParams(temperature=0.2, seed=3))
    units = [WorkUnit(item) for item in _items(1200)]
    with open_store(tmp_path / "j.db") as store:
        prepared = prepare_batch(store, rubric, iter(units), spec, dataset="d", samples=2,
                                 out=tmp_path / "req.jsonl", max_requests=1000)
        keys = [unit_key(rubric, u, spec, dataset="d", sample=s) for u in units for s in (0, 1)]
        recorded = store.batch_requests(keys, batch_id=prepared.id)
    fmt = response_format_for("json_schema", verdict_json_schema(rubric))
    expected = b"".join(
        request_line(unit_key(rubric, u, spec, dataset="d", sample=s),
                     chat_request(spec, unit_messages(rubric, u), response_format=fmt,
                                  logprobs=spec.logprobs))
        for u in units for s in (0, 1)
    )
    written = b"".join(p.read_bytes() for p in (tmp_path / "req.jsonl",
                                                 tmp_path / "req.2.jsonl",
                                                 tmp_path / "req.3.jsonl"))
    assert written == expected
    assert [p.n_requests for p in prepared.files] == [1000, 1000, 400]
    assert len(recorded) == 2400
    for position, key in enumerate(keys):
        request = recorded[key]
        assert (request.part, request.item_id, request.sample_index) == (
            position // 1000 + 1, units[position // 2].item.id, position % 2)


_PEAK = """
import json, sys
from pathlib import Path
from judgekit.clients import JudgeSpec
from judgekit.judging.batch.prepare import prepare_batch
from judgekit.judging.units import WorkUnit
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item

n, folder = int(sys.argv[1]), Path(sys.argv[2])
units = (WorkUnit(Item(id=f"i{k}", input=f"What is {k} + 1?", response=str(k + 1),
                       reference=str(k + 1))) for k in range(n))
with open_store(folder / "j.db") as store:
    done = prepare_batch(store, load_rubric("correctness"), units,
                         JudgeSpec(base_url="http://127.0.0.1:1/v1", model="m"),
                         dataset="d", out=folder / "req.jsonl")
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
[peak] = [line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
          if line.startswith("VmHWM:")]
print(json.dumps({"n": done.prepared, "peak": int(peak) / 1024}))
"""


def _peak_mib(n: int, folder: Path) -> float:
    folder.mkdir()
    done = subprocess.run([sys.executable, "-c", _PEAK, str(n), str(folder)], cwd=folder,
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout)
    assert result["n"] == n
    return float(result["peak"])


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_prepare_peak_memory_stays_flat_in_the_number_of_calls(tmp_path: Path) -> None:
    """10,000 then 60,000 calls, each in a fresh process: the same peak (SQLite's page cache
    kept at its default, nothing per call held), where a cache filling with the index pages
    of the calls' random keys grew it by 20 MiB."""
    small = _peak_mib(10_000, tmp_path / "small")
    large = _peak_mib(60_000, tmp_path / "large")
    assert large - small < 6.0, (small, large)
