"""``judgekit runs``: list the runs in a store, so their ids can be passed to
``report --judge-run``, ``export --run`` and ``compare``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from judgekit.cli._common import (
    db_option,
    echo,
    echo_json,
    read_store,
    resolve_rubric,
    text_or_json_option,
)
from judgekit.errors import InputError

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.store import RunRecord
    from judgekit.store.runs import RunOutcomeCounts


def _is_rubric_file(value: str) -> bool:
    """Whether ``--rubric`` names a TOML file rather than a stored name or sha256."""
    from pathlib import Path

    return value.endswith(".toml") or Path(value).is_file()


def _rubric_names(rubrics: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """sha256 -> (name, version) of every stored rubric."""
    return {r["sha256"]: (str(r["name"]), str(r["version"])) for r in rubrics}


def _as_dict(run: RunRecord, rubric: str, held: RunOutcomeCounts) -> dict[str, Any]:
    """The run as listed: its outcomes counted from the rows, its summary for the rest.

    A run killed before it wrote its summary (``kill -9``, a killed ``batch collect``)
    is counted right. A run recorded before runs stood for the outcomes they took from
    the cache holds no such rows: its summary's counts are kept.
    """
    summary = dict(run.summary)
    legacy = not held.n_stood_for and bool(summary.get("cached"))
    counts = summary.get("counts", {}) if legacy else held.status_counts()
    cached = summary.get("cached") if legacy else held.n_stood_for
    held_n = held.n_made + (cached or 0)
    total = summary.get("total")
    if total is not None or held_n:  # a killed collect's summary holds fewer than its rows
        total = max(int(total or 0), held_n)
    return {
        "id": run.id,
        "kind": run.kind,
        "dataset": run.dataset,
        "rubric": rubric,
        "rubric_sha256": run.rubric_hash,
        "model": run.model,
        "endpoint": run.base_url,
        "sampling": dict(run.sampling),
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "total": total,
        "cached": cached,
        "judged": held.n_made,
        "counts": counts,
        # the runs that made the calls this run stands for: run id -> status -> count
        "answered_by": {writer: dict(c) for writer, c in held.stood_for.items()},
        "abandoned": summary.get("abandoned"),
        "error": summary.get("error"),
        "provenance": summary.get("provenance"),
        # several URLs of one judge: each one's requests, failures and pacing waits
        "replicas": summary.get("replicas"),
    }


def _line(row: dict[str, Any]) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(row["counts"].items())) or "no judgments"
    state = "unfinished" if row["finished_at"] is None else ""
    if row["error"]:
        state = f"stopped: {row['error']}"
    temperature = row["sampling"].get("temperature")
    head = (
        f"{row['id']}  {row['kind']:<18} {row['dataset']:<14} {row['rubric']:<18} "
        f"{row['model']} (T={temperature})"
    )
    tail = f"    {row['started_at']}  {counts}"
    if row["total"] is not None:
        left = f", {row['abandoned']} not made" if row["abandoned"] else ""
        tail += f"  [{row['judged']} judged, {row['cached']} cached{left} of {row['total']}]"
    earlier = [f"{sum(c.values())} judged earlier by run {writer}"
               for writer, c in row["answered_by"].items()]
    source = ""
    if row["provenance"]:
        given = row["provenance"]
        source = "    from " + ", ".join(f"{k} {given[k]}" for k in ("tool", "tool_version",
                                                                    "grader_model") if given.get(k))
    vote = row["sampling"].get("vote")
    if isinstance(vote, dict):  # a rubric's [sampling]: K calls per item, one vote
        source += (f"    verdict per item: the {vote.get('aggregate')} of {vote.get('samples')} "
                   "samples per item (the counts hold every sample and each item's vote)")
    lines = [head, tail, *(f"    {line}" for line in earlier), source,
             f"    {state}" if state else ""]
    return "\n".join(x for x in lines if x)


@click.command("runs")
@db_option
@click.option("--rubric", "-r", default=None, metavar="NAME_OR_PATH",
              help="Only runs of this rubric: its name or sha256 in the store, or its TOML "
              "file (runs of that exact version).")
@click.option("--kind", default=None,
              help="Only this kind: judge, import, probe:position, probe:length, "
                   "probe:consistency.")
@text_or_json_option
def command(db: str, rubric: str | None, kind: str | None, fmt: str) -> None:
    """List the runs in the store, oldest first, with their judge, rubric and outcome counts.

    A run is one `judge`, `probe`, `batch collect` or `judgments import` invocation;
    pass its id to `report --judge-run`, `export --run` or `compare`. Counts come
    from the stored rows: the outcomes a run made, and those it stands for because
    another run had made the calls ("80 judged earlier by run X").
    """
    with read_store(db) as store:
        path = store.path
        names = _rubric_names(store.list_rubrics())
        wanted: set[str] | None = None
        if rubric is not None:
            wanted = {h for h, (name, _) in names.items() if rubric in (h, name)}
            if not wanted and _is_rubric_file(rubric):  # a path, as every other command takes
                wanted = {resolve_rubric(store, rubric).sha256}
            if not wanted:
                raise InputError(f"--rubric: no rubric {rubric!r} in {path}")
        runs = [r for r in store.list_runs(kind=kind)
                if wanted is None or r.rubric_hash in wanted]
        rows = [
            _as_dict(run, "{} v{}".format(*names[run.rubric_hash])
                     if run.rubric_hash in names else run.rubric_hash[:12],
                     store.run_outcome_counts(run.id))
            for run in runs
        ]
    if fmt == "json":
        echo_json(rows, indent=2, ensure_ascii=False)
        return
    if not rows:
        echo(f"no runs in {path}")
        return
    for row in rows:
        echo(_line(row))
    echo(f"{len(rows)} run(s) in {path}")
