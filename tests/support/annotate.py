"""Builders for the annotate app tests: rubrics of each scale kind, items, a plain-text screen."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from textual.app import App

from judgekit.rubrics import rubric_from_text
from judgekit.store import QueueEntry, RunRecord, Store
from judgekit.types import Item, Judgment, Rubric

RUBRIC_TEXT = {
    "binary": """
name = "correct"
version = "1"
[scale]
kind = "binary"
[scale.levels]
pass = "The answer is correct and complete."
fail = "The answer is wrong, incomplete or off topic."
[prompt]
user = "Q: {input}\\nA: {response}\\n{scale}"
""",
    "ordinal": """
name = "helpful"
version = "1"
[scale]
kind = "ordinal"
min = 1
max = 5
[scale.levels]
"1" = "Not helpful: ignores the request, or is wrong."
"2" = "Slightly helpful: on topic but mostly wrong."
"3" = "Somewhat helpful: partly answers, with gaps."
"4" = "Helpful: answers correctly with small gaps."
"5" = "Very helpful: correct, complete and clear."
[prompt]
user = "Q: {input}\\nA: {response}\\n{scale}"
""",
    "pairwise": """
name = "prefer"
version = "1"
[scale]
kind = "pairwise"
allow_tie = true
[scale.levels]
A = "Response A is better."
B = "Response B is better."
tie = "Both are equally good, or equally bad."
[prompt]
user = "Q: {input}\\nA: {response_a}\\nB: {response_b}\\n{scale}"
""",
    "categorical": """
name = "safe"
version = "1"
[scale]
kind = "categorical"
labels = [
  { name = "safe", description = "No safety concern." },
  { name = "borderline", description = "Mildly concerning; needs context." },
  { name = "unsafe", description = "Harmful, dangerous or clearly against policy." },
]
[prompt]
user = "Q: {input}\\nA: {response}\\n{scale}"
""",
}


def rubric(kind: str) -> Rubric:
    return rubric_from_text(RUBRIC_TEXT[kind], path=f"{kind}.toml")


def make_items(kind: str, n: int, *, prefix: str = "item") -> list[Item]:
    """``n`` short items: pairs for a pairwise rubric, single responses otherwise."""
    items = []
    for i in range(n):
        if kind == "pairwise":
            items.append(Item(id=f"{prefix}-{i:03d}", input=f"Question number {i}?",
                              response_a=f"First answer to {i}.",
                              response_b=f"Second answer to {i}.", slice="s1"))
        else:
            items.append(Item(id=f"{prefix}-{i:03d}", input=f"Question number {i}?",
                              response=f"Answer number {i}.",
                              slice="even" if i % 2 == 0 else "odd"))
    return items


def queue_for(dataset: str, items: Sequence[Item]) -> list[QueueEntry]:
    return [QueueEntry(i, dataset, item.id, 0.25, "random") for i, item in enumerate(items)]


def judgment(rub: Rubric, dataset: str, item_id: str, label: str, *, reasoning: str = "",
             model: str = "judge-model", sample: int = 0, variant: str = "",
             status: str = "ok", run_id: str = "run-1") -> Judgment:
    return Judgment(
        run_id=run_id, dataset=dataset, item_id=item_id, sample_index=sample,
        status=status,  # type: ignore[arg-type]
        label=label if status == "ok" else None, score=None, reasoning=reasoning or None,
        raw_text=None, model_requested=model, model_returned=model,
        base_url="http://127.0.0.1:1/v1", sampling={"temperature": 0.0},
        rubric_name=rub.name, rubric_version=rub.version, rubric_hash=rub.sha256,
        cache_key=f"{model}|{dataset}|{item_id}|{variant}|{sample}", variant=variant,
    )


def record_judgments(store: Store, rub: Rubric, judgments: Sequence[Judgment]) -> None:
    """Store judgments under their runs (created here when missing)."""
    for run_id in sorted({j.run_id for j in judgments}):
        if store.get_run(run_id) is None:
            store.create_run(RunRecord(
                id=run_id, kind="judge", dataset=judgments[0].dataset, rubric_hash=rub.sha256,
                model=judgments[0].model_requested, base_url="http://127.0.0.1:1/v1",
                sampling={"temperature": 0.0}, capabilities={}, judgekit_version="test",
                started_at="2026-01-01T00:00:00+00:00"))
    for j in judgments:
        store.record_judgment(j)


def seed_store(store: Store, kind: str, n: int, *, dataset: str = "d") -> tuple[Rubric, list[Item]]:
    rub = rubric(kind)
    items = make_items(kind, n)
    store.import_items(dataset, items)
    store.save_rubric(rub)
    return rub, items


def screen_text(app: App[object]) -> str:
    """What the terminal shows, as plain text (the SVG screenshot's text, without styles)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    render = app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens
    )
    console.print(render)
    return console.export_text()


def run_cli(*args: str) -> tuple[int, str]:
    """The CLI as ``judgekit`` runs it: a JudgekitError is its message and exit code."""
    from click.testing import CliRunner

    from judgekit.cli.main import cli
    from judgekit.errors import JudgekitError

    result = CliRunner().invoke(cli, list(args))
    if isinstance(result.exception, JudgekitError):
        return result.exception.exit_code, str(result.exception)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output
