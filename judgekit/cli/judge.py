"""``judgekit judge``: run a rubric judge over a dataset, with cache and resume.

Without ``--base-url`` (and without ``$JUDGEKIT_BASE_URL``) the bundled local
judge is started for the duration of the command, and only if some call is not
cached yet. The API key is read from the environment variable named by
``--api-key-env`` (or ``--api-key``) and handed only to the HTTP client: it is
never stored, logged or printed.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from judgekit.cli._common import echo, store_for_items
from judgekit.cli._endpoint import EndpointOptions, endpoint_options, load_dataset, open_endpoint
from judgekit.clients import JudgeSpec
from judgekit.errors import InputError, StoreError

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.store import Store
    from judgekit.types import Rubric

_SAMPLES = click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
                        help="Independent samples per item, each stored; the report reads "
                        "sample 0. For a vote, declare [sampling] in the rubric.")


def _check_voting(rubrics: list[Rubric]) -> None:
    """A rubric's ``[sampling]`` decides samples, temperature and seed: an option that says
    otherwise is refused, not silently overridden (the run would not be the one asked for)."""
    voting = next((r for r in rubrics if r.voting is not None), None)
    if voting is None:
        return
    ctx = click.get_current_context()
    given = [f"--{name.replace('_', '-')}" for name in ("samples", "temperature", "seed")
             if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)]
    if given:
        v = voting.voting
        assert v is not None
        raise InputError(
            f"{', '.join(given)}: rubric {voting.name} declares [sampling] samples = "
            f"{v.samples}, temperature = {v.temperature:g} (no seed); drop the option, or "
            "edit the rubric's [sampling] table")


def _saved(store: Store, rubric_hash: str, dataset: str) -> str:
    """What survived a failed write: every judgment committed before it (reruns reuse them)."""
    try:
        done = len(store.judgments(rubric_hash=rubric_hash, dataset=dataset))
    except (StoreError, sqlite3.Error):  # unreadable too: the message must still be printed
        return "judgments committed before the failure are kept; rerun to continue"
    return (f"{done} judgment(s) of this rubric and dataset are saved; rerun the same "
            "command to continue (saved ones are not judged again)")


@click.command("judge")
@endpoint_options(verb="Judge", after_concurrency=[_SAMPLES])
def command(**params: Any) -> None:
    """Judge a dataset with a rubric; finished judgments are reused on reruns.

    A rubric file with several criteria is judged on every criterion: with one
    call per item answering all of them (the default), or one call per criterion
    (`per_call = true` in the file). `-r FILE#CRITERION` judges one criterion with
    its own calls.
    """
    from judgekit.criteria_joint import joint_plan
    from judgekit.io.items import load_items
    from judgekit.judging.joint import has_pending_joint, run_joint
    from judgekit.judging.runner import has_pending_calls, run_judgments
    from judgekit.judging.voting import run_votes, voted
    from judgekit.prompts import check_items_render
    from judgekit.rubrics import load_rubrics

    endpoint = EndpointOptions.take(params)
    plan = joint_plan(params["rubric"])  # every criterion of a file in one call per item
    # a multi-criteria file: one rubric per criterion
    rubrics = plan.rubrics if plan is not None else load_rubrics(params["rubric"])
    _check_voting(rubrics)
    run_args = {"samples": params["samples"], "force": params["force"],
                "retry_failed": params["retry_failed"]}
    read = None
    if params["data"] is not None:  # a file the rubric cannot judge changes nothing: checked first
        read = load_items(params["data"])
        for loaded in rubrics:
            check_items_render(loaded, read)
    with store_for_items(params["db"], params["data"], params["dataset"]) as store:
        name, items = load_dataset(store, params["data"], params["dataset"], params["limit"],
                                   read)

        def samples_of(rubric: Rubric) -> int:
            return params["samples"] if rubric.voting is None else rubric.voting.samples

        def has_work(spec: JudgeSpec) -> bool:
            if plan is not None:
                return has_pending_joint(store, plan, items, spec, dataset=name, **run_args)
            return any(has_pending_calls(store, loaded, *voted(loaded, items, spec), dataset=name,
                                         **{**run_args, "samples": samples_of(loaded)})
                       for loaded in rubrics)

        with open_endpoint(endpoint, has_work=has_work) as spec:
            if plan is not None:
                echo(f"judging {len(items)} item(s) of {name!r} on criteria "
                     f"{', '.join(plan.names)} of {plan.whole.name} "
                     f"[{plan.whole.sha256[:12]}] in one call per item, judge {spec.model}",
                     err=True)
                try:
                    joint = run_joint(store, plan, items, spec, dataset=name,
                                      progress=params["progress"], **run_args)
                except StoreError as exc:
                    raise StoreError(f"{exc}: {_saved(store, rubrics[0].sha256, name)}") from exc
                echo(joint.format())
            for loaded in rubrics if plan is None else []:
                echo(f"judging {len(items)} item(s) of {name!r} with rubric {loaded.name} "
                     f"[{loaded.sha256[:12]}], judge {spec.model}", err=True)
                votes = None
                try:
                    if loaded.voting is not None:
                        summary, votes = run_votes(
                            store, loaded, items, spec, dataset=name,
                            progress=params["progress"], force=params["force"],
                            retry_failed=params["retry_failed"])
                    else:
                        summary = run_judgments(store, loaded, items, spec, dataset=name,
                                                progress=params["progress"], **run_args)
                except StoreError as exc:
                    raise StoreError(f"{exc}: {_saved(store, loaded.sha256, name)}") from exc
                echo(summary.format())
                if votes is not None:
                    echo(votes.format())
        echo(f"  database: {store.path}")

