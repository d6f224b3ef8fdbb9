"""``judgekit annotate --rubric FILE`` on a whole multi-criteria file: one queue, one screen.

The queue is drawn as for one rubric (the same strategies, sample and seed; strata and
disagreements come from the first criterion's verdicts, the only ones a draw can rank
items by without mixing scales) and stored with the criteria it stands for
(``params["criteria"]``: each criterion's name and rubric sha256), under a name built
from the file's name and one hash of every criterion's version, so the same command
resumes it and a changed criterion draws a new queue. Every criterion's label is an
ordinary row under its derived rubric: reports, imports, exports and adjudication read
them as they read single-criterion labels.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgekit.cli._common import echo
from judgekit.errors import InputError

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.tui.criteria_session import Criterion


@dataclass(frozen=True)
class CriteriaFile:
    """A multi-criteria rubric file as a whole: its name, shared text and criteria."""

    name: str
    description: str
    guidelines: str
    criteria: tuple[Criterion, ...]

    @property
    def sha256(self) -> str:
        """One hash of every criterion's name and rubric version, in file order."""
        text = "\n".join(f"{c.name}\0{c.rubric.sha256}" for c in self.criteria)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def listed(self) -> list[list[str]]:
        """What the queue stores: [[criterion, sha256], ...]."""
        return [[c.name, c.rubric.sha256] for c in self.criteria]


def criteria_file(reference: str) -> CriteriaFile | None:
    """The whole file when ``reference`` names a multi-criteria file (no ``#CRITERION``)."""
    from judgekit.criteria import criteria_data, criterion_names, load_criteria, split_reference
    from judgekit.rubrics import resolve_rubric_path
    from judgekit.tui.criteria_session import Criterion

    if split_reference(reference)[1] is not None:
        return None  # one criterion: the single-criterion app
    path = resolve_rubric_path(reference)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # load_rubric reports it with its reason
    data = criteria_data(text, str(path))
    if data is None:
        return None
    rubrics = load_criteria(text, str(path), data)
    try:
        shared = tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # pragma: no cover - criteria_data parsed it
        shared = {}
    return CriteriaFile(
        name=str(data.get("name") or path.stem),
        description=str(shared.get("description") or ""),
        guidelines=str(shared.get("guidelines") or ""),
        criteria=tuple(Criterion(name, rubric)
                       for name, rubric in zip(criterion_names(data), rubrics, strict=True)),
    )


def run_criteria(
    store: Store,
    found: CriteriaFile,
    *,
    annotator: str,
    dataset: str | None,
    strategy: str,
    sample: int,
    seed: int,
    queue_name: str | None,
) -> None:
    """Draw (or resume) the file's queue and open every criterion on one screen."""
    from judgekit.cli.annotate import AppCrashed, earlier_versions, prepare_queue
    from judgekit.sampling import default_queue_name
    from judgekit.tui.criteria_app import make_criteria_app, title_rubric

    first = found.criteria[0].rubric
    if len({c.rubric.scale.kind == "pairwise" for c in found.criteria}) > 1:
        raise InputError(f"{found.name}: the criteria mix pairwise and single-response scales; "
                         "annotate them one criterion at a time (--rubric FILE#CRITERION)")
    name = queue_name or default_queue_name(found.name, found.sha256, dataset, strategy,
                                            seed, sample)
    existing = store.get_queue(name)
    if existing is not None and existing[0]["params"].get("criteria") != found.listed:
        raise InputError(
            f"queue {name!r} was drawn for other criteria or another version of them; "
            "choose another --queue name"
        )
    prepared = prepare_queue(
        store, first, dataset=dataset, strategy=strategy, sample=sample, seed=seed, name=name,
        extra_params={"criteria": found.listed, "criteria_file": found.name},
    )
    for criterion in found.criteria[1:]:
        store.save_rubric(criterion.rubric)
    notices = list(prepared.notices)
    if prepared.created and strategy != "random":
        notices.append(f"the {strategy} draw ranks items by the verdicts of the first "
                       f"criterion ({found.criteria[0].name})")
    for criterion in found.criteria:
        notices += earlier_versions(store, criterion.rubric, annotator)
    for notice in notices:
        echo(f"note: {notice}", err=True)
    store.note_queue_opened(prepared.name, annotator)
    verb = "drew" if prepared.created else "resuming"
    names = ", ".join(c.name for c in found.criteria)
    echo(f"{verb} queue {prepared.name} ({prepared.size} items; criteria {names})", err=True)
    title = title_rubric(found.name, found.criteria, found.description, found.guidelines)
    app = make_criteria_app(store, title, found.criteria, prepared.entries,
                            annotator=annotator, notices=notices)
    app.run()
    if app.return_code:
        raise AppCrashed(f"the annotate app stopped with an error (exit {app.return_code}); "
                         f"labels given before it are saved in {store.path}")
    echo(app.criteria.exit_line(prepared.name, str(store.path)))


__all__ = ["CriteriaFile", "criteria_file", "run_criteria"]
