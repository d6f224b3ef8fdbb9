"""``to_frame`` of an empty selection has the documented columns and zero rows.

A notebook's code (``df["status"].value_counts()``) must not fail with a
``KeyError`` because nothing is judged yet: the columns of an empty frame are
exactly those of a full one, in pandas and polars.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import judgekit
from judgekit.types import Item, Label
from tests.support.openai_server import OpenAIServer


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_empty_frames_have_the_columns_of_full_ones(tmp_path: Path, backend: str) -> None:
    pytest.importorskip(backend)
    rubric = judgekit.load_rubric("correctness")
    with judgekit.open_store(tmp_path / "j.db") as store:
        items = [Item(id=f"i{i}", input=f"q{i}", response="a", reference="a") for i in range(3)]
        store.import_items("d", items)
        empty = {what: judgekit.to_frame(store, rubric, what=what, backend=backend)
                 for what in ("judgments", "labels", "joined")}
        with OpenAIServer() as server:
            spec = judgekit.JudgeSpec(base_url=server.base_url, model="m")
            judgekit.run_judgments(store, rubric, items, spec, dataset="d", progress=False)
        store.save_rubric(rubric)
        store.add_label(Label(dataset="d", item_id="i0", rubric_hash=rubric.sha256,
                              annotator="ana", label="pass"))
        for what, frame in empty.items():
            full = judgekit.to_frame(store, rubric, what=what, backend=backend)
            assert len(frame) == 0 and len(full) > 0
            assert list(frame.columns) == list(full.columns), what
    assert list(empty["joined"].columns)[:3] == ["dataset", "item_id", "judge"]
