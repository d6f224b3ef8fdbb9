"""`report` on a whole multi-criteria rubric file: its criteria and, given
``--judge-run``, the run that stands for each criterion.

A run of one call for every criterion is one run row per criterion, each naming its
siblings in its summary (``joint.runs``); a ``--judge-run`` of any of them means the
same call on every criterion, so each criterion's report reads its own sibling. A run
of one call per criterion judged that criterion alone: the other criteria have no
verdicts in it, and a report of them would be empty, so that is an error naming the
way out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from judgekit.errors import InputError


def criteria_of(rubric: str) -> list[str]:
    """The criteria of a multi-criteria rubric file named without one (else none)."""
    from judgekit.criteria import criteria_data, criterion_names, split_reference

    if split_reference(rubric)[1] is not None:
        return []
    path = Path(rubric)
    if not (path.suffix == ".toml" and path.is_file()):
        return []
    try:
        data = criteria_data(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError):
        return []
    return [] if data is None else list(criterion_names(data))


def criterion_runs(db: str, rubric: str, criteria: list[str],
                   judge_run: str) -> dict[str, str]:
    """Each criterion's run standing for ``judge_run`` (see the module docstring)."""
    from judgekit.cli._common import read_store

    with read_store(db) as store:
        run = store.get_run(judge_run)
        if run is None:
            raise InputError(f"--judge-run: no run {judge_run!r} in the store")
        joint = run.summary.get("joint") if isinstance(run.summary, Mapping) else None
        runs = joint.get("runs") if isinstance(joint, Mapping) else None
        if isinstance(runs, Mapping) and set(criteria) <= set(runs):
            return {name: str(runs[name]) for name in criteria}
        judged = _criterion_judged(rubric, criteria, run.rubric_hash)
    if judged is None:
        raise InputError(f"--judge-run: run {judge_run!r} is not a run of {rubric}")
    raise InputError(
        f"--judge-run: run {judge_run!r} judged criterion {judged!r} alone (one call per "
        f"criterion); name it as {rubric}#{judged} (or --criterion {judged}), or leave out "
        "--judge-run for the table across criteria")


def _criterion_judged(rubric: str, criteria: list[str], rubric_hash: str) -> str | None:
    """Which criterion of the file has the rubric ``rubric_hash`` (None: none of them)."""
    from judgekit.criteria import criteria_data, pick_criterion

    path = Path(rubric)
    text = path.read_text(encoding="utf-8")
    data = criteria_data(text, str(path))
    if data is None:
        return None
    for name in criteria:
        if pick_criterion(text, str(path), data, name).sha256 == rubric_hash:
            return name
    return None


__all__ = ["criteria_of", "criterion_runs"]
