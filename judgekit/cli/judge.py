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

from judgekit.cli._common import echo, store_for_items
from judgekit.cli._endpoint import EndpointOptions, endpoint_options, load_dataset, open_endpoint
from judgekit.clients import JudgeSpec
from judgekit.errors import StoreError

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.store import Store

_SAMPLES = click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
                        help="Independent samples per item (for self-consistency).")


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
    """Judge a dataset with a rubric; finished judgments are reused on reruns."""
    from judgekit.io.items import load_items
    from judgekit.judging.runner import has_pending_calls, run_judgments
    from judgekit.prompts import check_items_render
    from judgekit.rubrics import load_rubrics

    endpoint = EndpointOptions.take(params)
    rubrics = load_rubrics(params["rubric"])  # a multi-criteria file: one per criterion
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

        def has_work(spec: JudgeSpec) -> bool:
            return any(has_pending_calls(store, loaded, items, spec, dataset=name, **run_args)
                       for loaded in rubrics)

        with open_endpoint(endpoint, has_work=has_work) as spec:
            for loaded in rubrics:
                echo(f"judging {len(items)} item(s) of {name!r} with rubric {loaded.name} "
                     f"[{loaded.sha256[:12]}], judge {spec.model}", err=True)
                try:
                    summary = run_judgments(store, loaded, items, spec, dataset=name,
                                            progress=params["progress"], **run_args)
                except StoreError as exc:
                    raise StoreError(f"{exc}: {_saved(store, loaded.sha256, name)}") from exc
                echo(summary.format())
        echo(f"  database: {store.path}")

