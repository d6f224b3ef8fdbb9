"""``judgekit demo``: the whole flow on the shipped demo data and a fresh database.

The demo items are factual and arithmetic questions whose right answers are
known by construction (``meta.gold``), so the reference labels are objectively
right. The demo is a list of steps over one :class:`DemoContext`; later steps
(a calibration report, HTML output) are added by appending to :data:`DEMO_STEPS`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from judgekit.cli._common import echo, write_out
from judgekit.cli._endpoint import EndpointOptions, open_endpoint
from judgekit.clients import JudgeSpec
from judgekit.errors import InputError
from judgekit.io.items import load_items
from judgekit.types import Item, Label, Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.judging.probes import ProbeOutcome
    from judgekit.judging.runner import RunSummary
    from judgekit.store import Store

#: Where the demo's data files live inside the package.
DEMO_DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "demo"
#: Default output folder (and database inside it).
DEFAULT_OUT = Path("judgekit-demo")
DB_NAME = "judgekit.db"
#: dataset name -> (data file, rubric name). Names match ``judgekit judge --data FILE``.
DEMO_DATASETS: dict[str, tuple[str, str]] = {
    "facts": ("facts.jsonl", "correctness"),
    "pairs": ("pairs.jsonl", "preference"),
}
REFERENCE_ANNOTATOR = "reference"
#: The pairwise dataset the position probe re-judges with A and B swapped.
PROBE_DATASET = "pairs"
#: The ``store_meta`` row that marks a store as the demo's own (safe to replace).
CREATED_BY_KEY = "created_by"
CREATED_BY_DEMO = "demo"


@dataclass
class DemoContext:
    """Everything the demo steps share; each step reads and adds to it."""

    out_dir: Path
    db_path: Path
    base_url: str | None = None
    model: str | None = None
    echo: Callable[[str], None] = echo
    store: Store | None = None
    rubrics: dict[str, Rubric] = field(default_factory=dict)
    items: dict[str, list[Item]] = field(default_factory=dict)
    summaries: dict[str, RunSummary] = field(default_factory=dict)
    labels_added: int = 0
    probes: dict[str, ProbeOutcome] = field(default_factory=dict)
    #: Closed by :func:`run_demo`: stops the local judge if a step started it.
    resources: ExitStack = field(default_factory=ExitStack)
    _spec: JudgeSpec | None = None

    @property
    def db(self) -> Store:
        if self.store is None:
            raise RuntimeError("the demo store is not open yet")
        return self.store

    def judge_spec(self) -> JudgeSpec:
        """The judge every step uses; the local judge starts once, on first use.

        Loading the model takes seconds, so the judging and probe steps share
        one server instead of each starting its own.
        """
        if self._spec is None:
            # no logprobs: on the local judge they double the time of a call, and
            # nothing in the demo uses verdict confidences
            options = EndpointOptions(base_url=self.base_url, model=self.model, logprobs=False)
            self._spec = self.resources.enter_context(open_endpoint(options))
        return self._spec


def made_by_demo(path: Path) -> bool:
    """Whether the store at ``path`` carries the demo's mark (read without changing the file).

    Anything else (another store, an older demo's unmarked store, a file that is
    not a store at all) is not the demo's to delete. The file is read
    ``immutable`` (no -wal/-shm created beside someone's store); only when a
    ``-wal`` exists, where the mark may still sit, is it read through SQLite's log.
    """
    queries = ["mode=ro&immutable=1"] + (["mode=ro"] if Path(f"{path}-wal").exists() else [])
    return any(_marked(path, query) for query in queries)


def _marked(path: Path, query: str) -> bool:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute(
            "SELECT value FROM store_meta WHERE key = ?", [CREATED_BY_KEY]
        ).fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return row is not None and row[0] == CREATED_BY_DEMO


def step_fresh_database(ctx: DemoContext) -> None:
    """Start from an empty store; only a store the demo made itself is ever replaced.

    The demo marks its store (``store_meta.created_by = demo``); a store without
    the mark may hold someone's judgments and labels, so the demo stops instead.
    """
    from judgekit.store import open_store

    if ctx.db_path.exists() or ctx.db_path.is_symlink():
        if not made_by_demo(ctx.db_path):
            raise InputError(
                f"{ctx.db_path} exists and was not made by the demo (it may hold judgments "
                "and labels), so the demo leaves it alone: choose another --out or --db"
            )
        for suffix in ("", "-wal", "-shm"):
            Path(f"{ctx.db_path}{suffix}").unlink(missing_ok=True)
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    ctx.store = open_store(ctx.db_path)
    ctx.store.set_meta(CREATED_BY_KEY, CREATED_BY_DEMO)
    ctx.echo(f"1. fresh database: {ctx.db_path}")


def step_import(ctx: DemoContext) -> None:
    """Import the demo items and remember each dataset's rubric."""
    from judgekit.rubrics import load_rubric

    for name, (filename, rubric_name) in DEMO_DATASETS.items():
        items = load_items(DEMO_DATA_DIR / filename)
        ctx.db.import_items(name, items)
        ctx.items[name] = items
        ctx.rubrics[name] = load_rubric(rubric_name)
    described = ", ".join(
        f"{len(items)} {name} (rubric {ctx.rubrics[name].name})"
        for name, items in ctx.items.items()
    )
    ctx.echo(f"2. imported demo items: {described}")


def step_judge(ctx: DemoContext) -> None:
    """Judge every dataset with its rubric (the local judge unless an endpoint is given)."""
    from judgekit.judging.runner import run_judgments

    ctx.echo("3. judging" + (f" with {ctx.model} at {ctx.base_url}" if ctx.base_url
                             else " with the local judge (about 1 s per item)"))
    spec = ctx.judge_spec()
    for name, items in ctx.items.items():
        summary = run_judgments(ctx.db, ctx.rubrics[name], items, spec, dataset=name)
        ctx.summaries[name] = summary
        ctx.echo(f"   {name}: {summary.status_line()} "
                 f"({summary.elapsed_s:.1f} s, {summary.judgments_per_s:.2f}/s)")


def step_reference_labels(ctx: DemoContext) -> None:
    """Store each item's known-correct answer as a label by annotator "reference"."""
    labels = [
        Label(dataset=name, item_id=item.id, rubric_hash=ctx.rubrics[name].sha256,
              annotator=REFERENCE_ANNOTATOR, label=str(item.meta["gold"]), source="import")
        for name, items in ctx.items.items()
        for item in items
        if "gold" in item.meta
    ]
    ctx.labels_added = ctx.db.add_labels(labels)
    ctx.echo(f"4. imported {ctx.labels_added} reference labels "
             f"(annotator {REFERENCE_ANNOTATOR!r}, right by construction)")


def step_position_probe(ctx: DemoContext) -> None:
    """Judge the pairs again with A and B swapped: does the verdict follow the answer or the slot?

    The as-written verdicts come from the judging step's cache, so only the
    swapped calls are made. The stored result feeds the report's bias section.
    """
    from judgekit.judging.probes import run_position_probe

    items = ctx.items[PROBE_DATASET]
    ctx.echo(f"5. position probe: {len(items)} {PROBE_DATASET} judged again with A and B swapped")
    outcome = run_position_probe(ctx.db, ctx.rubrics[PROBE_DATASET], items, ctx.judge_spec(),
                                 dataset=PROBE_DATASET)
    ctx.probes["position"] = outcome
    stat = outcome.result["position_consistency"]
    value = "n/a" if stat["statistic"] is None else f"{stat['statistic']:.2f}"
    interval = ("" if stat["statistic"] is None
                else f", 95% CI [{stat['ci_low']:.2f}, {stat['ci_high']:.2f}]")
    ctx.echo(f"   position consistency {value}{interval}, n={stat['n']} "
             f"({outcome.summary.judged} swapped calls, {outcome.summary.elapsed_s:.1f} s)")


def step_summary(ctx: DemoContext) -> None:
    """Say what was done and where the database is."""
    ctx.echo("")
    for name, summary in ctx.summaries.items():
        ctx.echo(f"{name}: {summary.total} judgments by {summary.model}: {summary.status_line()}")
    ctx.echo(f"database: {ctx.db_path.resolve()}")


def step_report(ctx: DemoContext) -> None:
    """Print each dataset's calibration report against the reference labels; write the HTML."""
    from judgekit.report import ReportOptions, build_report, render

    for name, rubric in ctx.rubrics.items():
        options = ReportOptions(dataset=name, annotator=REFERENCE_ANNOTATOR)
        report = build_report(ctx.db, rubric, options)
        html_path = write_out(ctx.db_path.parent / f"report-{name}.html",
                              render(report, "html"), store=ctx.db_path)
        ctx.echo("")
        ctx.echo(f"calibration report: {name} (rubric {rubric.name}), judge vs reference labels")
        ctx.echo(render(report, "text").rstrip("\n"))
        ctx.echo(f"HTML report: {html_path.resolve()}")


#: The demo, in order. Append steps (they receive the :class:`DemoContext`).
DEMO_STEPS: list[Callable[[DemoContext], None]] = [
    step_fresh_database,
    step_import,
    step_judge,
    step_reference_labels,
    step_position_probe,
    step_summary,
    step_report,
]


def run_demo(
    out_dir: Path = DEFAULT_OUT,
    db_path: Path | None = None,
    *,
    base_url: str | None = None,
    model: str | None = None,
    echo: Callable[[str], None] = echo,
    steps: list[Callable[[DemoContext], None]] | None = None,
) -> DemoContext:
    """Run the demo steps; returns the context (the store is closed on return)."""
    ctx = DemoContext(out_dir=out_dir, db_path=db_path or out_dir / DB_NAME,
                      base_url=base_url, model=model, echo=echo)
    try:
        with ctx.resources:
            for step in DEMO_STEPS if steps is None else steps:
                step(ctx)
    finally:
        if ctx.store is not None:
            ctx.store.close()
    return ctx


@click.command("demo")
@click.option("--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Database to create [default: OUT/{DB_NAME}]; must not exist yet, "
                   "unless an earlier demo made it.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_OUT, show_default=True, help="Folder for the demo's files.")
@click.option("--base-url", default=None,
              help="Judge with this OpenAI-compatible endpoint instead of the local judge.")
@click.option("--model", default=None, help="Judge model (with --base-url).")
def command(db: Path | None, out: Path, base_url: str | None, model: str | None) -> None:
    """Run the whole flow on shipped demo data with the local judge and a fresh database.

    Running it again replaces the database the demo made before; a database it
    did not make is never deleted (the demo stops with an error instead).
    """
    run_demo(out, db, base_url=base_url, model=model)
