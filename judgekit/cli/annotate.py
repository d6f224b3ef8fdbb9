"""``judgekit annotate``: pick items for humans and open the labeling app.

The queue is drawn once and stored under a name derived from everything that
defines it (rubric hash, dataset, strategy, seed, sample size), so running the
same command again, in another session or on another day, resumes the same
queue at the first item this annotator has neither labeled nor skipped (skipped
items come back after the rest, as within a session).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from judgekit.cli._common import SEED, db_option, echo, read_store, rubric_option
from judgekit.errors import InputError, JudgekitError
from judgekit.types import Judgment, Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.sampling import Candidate
    from judgekit.store import QueueEntry, Store
    from judgekit.tui.session import LabelingSession

#: The queue strategies (``judgekit.sampling.STRATEGIES``, named here for a fast ``--help``).
STRATEGIES = ("random", "stratified", "disagreement", "uncertain")

DEFAULT_SAMPLE = 200


class AppCrashed(JudgekitError):
    """The labeling app ended on an unhandled error; the command must not exit 0."""

    exit_code = 1


@dataclass(frozen=True)
class PreparedQueue:
    """The queue a session works on, and whether this call drew it."""

    name: str
    entries: tuple[QueueEntry, ...]
    created: bool
    notices: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return len(self.entries)


def earlier_versions(store: Store, rubric: Rubric, annotator: str) -> list[str]:
    """Notices about labels this annotator gave under other versions of the rubric.

    Editing a rubric's text (a level description, the guidelines) makes a new
    version with its own labels and queues, so an annotator who sees 0/24 must
    be told that their earlier work exists, and where.
    """
    notices = []
    for row in store.list_rubrics():
        if row["name"] != rubric.name or row["sha256"] == rubric.sha256:
            continue
        mine = store.label_counts(row["sha256"]).get(annotator, 0)
        if mine:
            notices.append(
                f"{mine} label(s) of yours exist for an earlier version of rubric "
                f"{rubric.name!r} (v{row['version']}, sha256 {row['sha256'][:12]}); this "
                "version's queue starts empty (reports use the version they are given)"
            )
    return notices


def prepare_queue(
    store: Store,
    rubric: Rubric,
    *,
    dataset: str | None,
    strategy: str,
    sample: int,
    seed: int,
    name: str | None = None,
    extra_params: dict[str, object] | None = None,
) -> PreparedQueue:
    """Load the named (or default-named) queue, drawing and saving it on first use.

    ``extra_params`` are stored with a queue drawn here (a multi-criteria file's criteria).
    """
    from judgekit.sampling import Candidate, default_queue_name, plan_queue
    from judgekit.store.exports import candidate_rows

    queue_name = name or default_queue_name(
        rubric.name, rubric.sha256, dataset, strategy, seed, sample
    )
    existing = store.get_queue(queue_name)
    if existing is not None:
        meta, entries = existing
        if meta["rubric_hash"] != rubric.sha256:
            raise InputError(
                f"queue {queue_name!r} belongs to another rubric version; "
                "choose another --queue name"
            )
        notices = tuple(meta["params"].get("notices") or ())
        return PreparedQueue(queue_name, tuple(entries), created=False, notices=notices)
    from judgekit.report_inputs import require_dataset

    require_dataset(store, dataset)
    known = store.datasets()
    datasets = [dataset] if dataset is not None else known
    candidates: list[Candidate] = []
    judgments: list[Judgment] = []
    pairwise = rubric.scale.kind == "pairwise"
    misfits = 0
    for name_ in datasets:
        for item_id, slice_, is_pairwise, group in candidate_rows(store, name_):
            if is_pairwise == pairwise:
                candidates.append(Candidate(name_, item_id, slice_, f"{name_}\0{group}"))
            else:
                misfits += 1
        if strategy != "random":
            judgments.extend(store.judgments(rubric_hash=rubric.sha256, dataset=name_))
    shape = "pairs (response_a and response_b)" if pairwise else "single responses"
    where = f"dataset {dataset!r}" if dataset is not None else store.path
    if not candidates and misfits:
        raise InputError(
            f"rubric {rubric.name!r} has a {rubric.scale.kind} scale, which labels {shape}, "
            f"but none of the {misfits} item(s) in {where} is one"
        )
    if not candidates:
        raise InputError(f"no items to label in {store.path} (import items first)")
    plan = plan_queue(candidates, judgments, strategy=strategy, sample=sample, seed=seed)
    notices = plan.notices
    if misfits:
        notices += (f"{misfits} item(s) left out: a {rubric.scale.kind} scale labels {shape}",)
    store.save_rubric(rubric)
    store.save_queue(
        queue_name, rubric.sha256, strategy, seed, plan.entries,
        params={
            "dataset": dataset,
            "sample": sample,
            "population": plan.population,
            "strata": {k: list(v) for k, v in plan.strata.items()},
            "notices": list(notices),
            **(extra_params or {}),
        },
    )
    return PreparedQueue(queue_name, plan.entries, created=True, notices=notices)


def run_adjudication(store: Store, rubric: Rubric, annotator: str, dataset: str | None) -> None:
    """Open the app on the items to review, storing each label given as an adjudication."""
    from judgekit.review import adjudication_queue, opinion_text, review_items
    from judgekit.tui.app import make_app

    items = review_items(store, rubric, dataset=dataset)
    if not items:
        raise InputError(
            f"nothing to adjudicate for rubric {rubric.name!r}: no item has disagreeing "
            "annotators or a flag"
        )
    pending = sum(1 for item in items if item.adjudicated is None)
    echo(f"adjudicating {len(items)} item(s) ({pending} not yet adjudicated)", err=True)
    app = make_app(store, rubric, adjudication_queue(items), annotator=annotator,
                   opinions={item.key: opinion_text(item.opinions) for item in items})
    app.run()
    if app.return_code:  # Textual printed the traceback; labels given so far are saved
        raise AppCrashed(f"the annotate app stopped with an error (exit {app.return_code}); "
                         f"adjudications given before it are saved in {store.path}")
    echo(exit_line(app.session, "adjudication", str(store.path)))


def exit_line(session: LabelingSession, queue: str, path: str) -> str:
    """What was done, counting a changed label as a change, not as a new one."""
    progress = session.progress()
    new, changed = len(session.new_labels), len(session.changed_labels)
    done = f"{new} new" + (f", {changed} changed" if changed else "")
    keys = [(e.dataset, e.item_id) for e in session.entries]
    rows = [session.latest[k] for k in keys if k in session.latest]
    counts = [(sum(session.is_skipped(k) for k in keys), "skipped"),
              (sum(bool(r.flagged) for r in rows), "flagged"),
              (sum(bool(r.note) for r in rows), "with a note")]
    marks = "".join(f", {n} {what}" for n, what in counts if n)
    return (
        f"{session.annotator}: {progress.labeled}/{progress.total} labeled in queue {queue}"
        f"{marks} ({done} this session); saved in {path}"
    )


@click.command("annotate")
@rubric_option
@db_option
@click.option("--annotator", required=True,
              help="Your name; each annotator sees only their own labels.")
@click.option("--dataset", default=None, help="Label items of this dataset only (default: all).")
@click.option("--sample", type=click.IntRange(min=1), default=DEFAULT_SAMPLE, show_default=True,
              help="Queue size (all items if the dataset is smaller).")
@click.option("--strategy", type=click.Choice(STRATEGIES), default="random", show_default=True,
              help="How items are picked; every queue keeps a uniform random stratum.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Random seed; the same seed draws the same queue.")
@click.option("--show-judge", is_flag=True,
              help="Show the judge's verdict and reasoning (labels record they were not blind).")
@click.option("--queue", "queue_name", default=None,
              help="Queue name (default: derived from rubric, dataset, strategy, seed and sample).")
@click.option("--adjudicate", is_flag=True,
              help="Adjudicate instead: walk through the items annotators disagree on or "
              "flagged (judgekit labels disagreements), see each annotator's label and note, "
              "and give the label that becomes the item's reference in reports.")
def command(
    rubric: str,
    db: str,
    annotator: str,
    dataset: str | None,
    sample: int,
    strategy: str,
    seed: int,
    show_judge: bool,
    queue_name: str | None,
    adjudicate: bool,
) -> None:
    """Label items in the terminal, blind to the judge, one key per label.

    Keys: the scale's keys (p/f, 1-5, a/b/t, 1..n) label and advance; s skip,
    u or backspace back, ! flag, n note, ] and [ next/previous section,
    PgDn/PgUp/space/Home/End scroll, ? guidelines and help, q quit. Every label,
    note and flag is saved the moment it is given; run the same command again
    to resume.

    A multi-criteria rubric file (its [criteria.NAME] tables) shows every
    criterion of an item on one screen: a level key labels the focused
    criterion (stored under its rubric NAME.CRITERION) and moves the focus to
    the next one still to do; the next item comes once every criterion has a
    level. Up/down move the focus, s skips the criterion, S the item, u goes
    back a criterion, shift+up/down scroll a row. FILE#CRITERION labels one
    criterion alone (needed for --show-judge and --adjudicate). See
    docs/annotate.md.
    """
    from judgekit.cli._annotate_criteria import criteria_file, run_criteria
    from judgekit.rubrics import load_rubric
    from judgekit.tui.app import make_app  # Textual loads only when the app opens

    if not annotator.strip():
        raise InputError("--annotator must not be empty")
    whole = criteria_file(rubric)
    if whole is not None:
        if adjudicate or show_judge:
            first = whole.criteria[0].name
            raise InputError(f"{'--adjudicate' if adjudicate else '--show-judge'} works on "
                             f"one criterion at a time: name it as {rubric}#{first}")
        with read_store(db) as store:
            run_criteria(store, whole, annotator=annotator.strip(), dataset=dataset,
                         strategy=strategy, sample=sample, seed=seed, queue_name=queue_name)
        return
    loaded = load_rubric(rubric)
    if adjudicate and show_judge:
        raise InputError("--adjudicate never shows the judge: drop --show-judge")
    store = read_store(db)
    try:
        if adjudicate:
            run_adjudication(store, loaded, annotator.strip(), dataset)
            return
        prepared = prepare_queue(
            store, loaded, dataset=dataset, strategy=strategy, sample=sample, seed=seed,
            name=queue_name,
        )
        notices = [*prepared.notices, *earlier_versions(store, loaded, annotator.strip())]
        for notice in notices:
            echo(f"note: {notice}", err=True)
        store.note_queue_opened(prepared.name, annotator.strip())  # `judgekit queues` lists her
        verb = "drew" if prepared.created else "resuming"
        echo(f"{verb} queue {prepared.name} ({prepared.size} items)", err=True)
        # the entries prepare_queue read or drew (already checked against the rubric)
        app = make_app(store, loaded, prepared.entries, annotator=annotator.strip(),
                       show_judge=show_judge, notices=notices)
        app.run()
        if app.return_code:  # Textual printed the traceback; labels given so far are saved
            raise AppCrashed(f"the annotate app stopped with an error (exit {app.return_code}); "
                             f"labels given before it are saved in {store.path}")
        echo(exit_line(app.session, prepared.name, str(store.path)))
    finally:
        store.close()
