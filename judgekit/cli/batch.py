"""``judgekit batch prepare|submit|status|collect``: judging at scale through Batch API files.

``prepare`` writes the calls ``judgekit judge`` (or ``judgekit probe ...``)
would make as Batch API input files; ``submit`` uploads one to an
OpenAI-compatible Batch API; ``status`` follows the provider's batches;
``collect`` stores the answers, from the provider or from an output file made
elsewhere (``vllm run-batch``). Afterwards ``judge`` and ``probe`` with the
same arguments find every call in the cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from judgekit.cli._common import (
    check_out_path,
    check_out_suffix,
    db_option,
    echo,
    read_store,
    rubric_option,
    store_for_items,
)
from judgekit.cli._endpoint import (
    BASE_URL_ENV,
    LOGPROBS_OPTION,
    MODEL_ENV,
    EndpointOptions,
    load_dataset,
    resolve_api_key,
    sampling_options,
)
from judgekit.cli._progress import progress_bar
from judgekit.clients import DEFAULT_API_KEY_ENV, JudgeSpec
from judgekit.clients.spec import named_endpoint
from judgekit.errors import EndpointError, InputError
from judgekit.judging.batch.lines import MAX_FILE_BYTES, MAX_FILE_REQUESTS
from judgekit.judging.injection_templates import POSITIONS, TEMPLATES
from judgekit.judging.units import WorkUnit, unit_for
from judgekit.progress import phase
from judgekit.types import Item, Rubric

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.store import Store

_PROBES = ("position", "length", "consistency", "injection", "identical")


@click.group("batch")
def command() -> None:
    """Judge through Batch API files: OpenAI's Batch API or `vllm run-batch`."""


def _check_probe(params: dict[str, Any], rubric: Rubric) -> list[Item] | None:
    """The probe's own options and a ``--data`` file's items, checked before the store is
    opened (or created): bad input changes nothing. Returns the file's items, if read."""
    probe = params["probe"]
    if probe != "injection" and params["target"] is not None:
        raise InputError("--target goes with --probe injection")
    if probe is None:
        return None
    if probe == "length":
        from judgekit.cli.probe import _parse_levels
        from judgekit.judging.probe_variants import check_levels

        params["levels"] = check_levels(_parse_levels(params["levels"]))
    elif probe == "consistency":
        count = params["samples"] if params["samples"] is not None else 5
        if count < 2:
            raise InputError(f"--samples must be at least 2 to measure consistency, got {count}")
    elif probe == "injection":
        from judgekit.cli.probe_text import _names
        from judgekit.judging.injection_templates import (
            check_positions,
            check_templates,
            injection_target,
        )

        params["templates"] = check_templates(_names(params["templates"]))
        params["positions"] = check_positions(_names(params["positions"]))
        injection_target(rubric, params["target"])
    elif probe == "identical":
        from judgekit.judging.probe_identical import check_pairwise

        check_pairwise(rubric)
    if params["data"] is None:
        return None
    from judgekit.io.items import load_items
    from judgekit.judging.probes import check_items

    loaded = load_items(params["data"])
    check_items(loaded, rubric)
    return loaded


class _Plan(NamedTuple):
    """What one prepare writes: the calls, samples per unit, the run kind, the dataset, and a
    note for the user (the pairs ``probe injection`` needs a second round for)."""

    units: Iterable[WorkUnit]
    samples: int
    kind: str
    dataset: str = ""
    note: str = ""


def _units(store: Store, spec: JudgeSpec, rubric: Rubric, items: list[Item], dataset: str,
           params: dict[str, Any]) -> _Plan:
    """The units, samples per unit and run kind of ``judge`` or of one probe: the units the
    live command would judge now."""
    from judgekit.judging import probe_variants as pv
    from judgekit.judging.probes import check_items

    probe, samples = params["probe"], params["samples"]
    if probe is None:
        return _Plan([unit_for(item) for item in items], samples or 1, "judge", dataset)
    check_items(items, rubric)  # a stored --dataset, or the first --limit of the file
    if probe == "position":
        return _Plan(pv.position_units(items, rubric), 1, "probe:position", dataset)
    if probe == "length":
        units = pv.length_units(items, params["levels"], pv.DEFAULT_FILLER)
        return _Plan(units, 1, "probe:length", dataset)
    if probe == "injection":
        from judgekit.judging.probe_injection import injection_units

        units = injection_units(store, rubric, items, spec, dataset=dataset,
                                templates=params["templates"], positions=params["positions"],
                                target=params["target"])
        return _Plan(units, 1, "probe:injection", dataset)
    if probe == "identical":
        from judgekit.judging.probe_identical import identical_units

        return _Plan(identical_units(items), 1, "probe:identical", dataset)
    return _Plan([WorkUnit(item) for item in items], samples or 5, "probe:consistency", dataset)


def _planned(store: Store, spec: JudgeSpec, rubric: Rubric, params: dict[str, Any],
             loaded: list[Item] | None) -> _Plan:
    """Units, samples, run kind and dataset name of the prepare asked for.

    A stored dataset judged plainly is streamed from the store (flat memory at
    any size); a file, or a probe's variants, are built in memory as `judge`
    and `probe` build them.
    """
    dataset, limit = params["dataset"], params["limit"]
    if params["data"] is None and params["probe"] is None and dataset and \
            store.count_items(dataset) > 0:
        stream = islice(store.iter_items(dataset), limit)
        return _Plan((unit_for(item) for item in stream), params["samples"] or 1, "judge",
                     dataset)
    name, items = load_dataset(store, params["data"], dataset, limit, loaded)
    return _units(store, spec, rubric, items, name, params)


def _prepare_options(func: Any) -> Any:
    options = [
        rubric_option,
        click.option("--data", type=click.Path(dir_okay=False, path_type=Path),
                     help="JSONL or CSV file of items (imported under its file name as dataset)."),
        click.option("--dataset", help="Dataset name: a stored dataset, or the name for --data."),
        db_option,
        click.option("--model", envvar=MODEL_ENV, show_envvar=True, required=True,
                     help="Judge model, as `judgekit judge --model` names it."),
        click.option("--base-url", envvar=BASE_URL_ENV, show_envvar=True,
                     help="The endpoint `judgekit judge --base-url` would call (part of the "
                          "cache key), e.g. https://api.openai.com/v1."),
        click.option("--endpoint-name", default=None, metavar="NAME",
                     help="The judge's endpoint name, as `judgekit judge --endpoint-name` gives "
                          "it (then the cache key names it, not the URL; --base-url may be "
                          "left out for an offline run)."),
        click.option("--probe", type=click.Choice(_PROBES), default=None,
                     help="Prepare the calls of `judgekit probe NAME` instead of `judge`."),
        click.option("--samples", type=click.IntRange(min=1), default=None,
                     help="Samples per item [default: 1; 5 with --probe consistency]."),
        click.option("--levels", default="25,50,100", show_default=True,
                     help="Padding levels in percent (with --probe length)."),
        click.option("--templates", default=",".join(TEMPLATES), show_default=True,
                     help="Injected texts, comma-separated (with --probe injection)."),
        click.option("--positions", default=",".join(POSITIONS), show_default=True,
                     help="Where the text goes in the response (with --probe injection)."),
        click.option("--target", default=None, metavar="LABEL",
                     help="The verdict the injected text asks for (with --probe injection; "
                          "as `judgekit probe injection --target`)."),
        click.option("--limit", type=click.IntRange(min=1), default=None,
                     help="Prepare only the first N items."),
        click.option("--force", is_flag=True, help="Prepare every call, cached or not."),
        click.option("--retry-failed", is_flag=True,
                     help="Prepare answered failures again (parse_error, refusal, truncated)."),
        *sampling_options(),
        LOGPROBS_OPTION,
        click.option("--response-format", type=click.Choice(["json_schema", "json_object",
                                                             "none"]), default=None,
                     help="Structured output mode [default: the endpoint's probed mode if the "
                          "store has it, else json_schema]."),
        click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="First output file [default: batch-<id>.jsonl]; further parts are "
                          "named <stem>.2.jsonl, <stem>.3.jsonl..."),
        click.option("--max-requests", type=click.IntRange(min=1, max=MAX_FILE_REQUESTS),
                     default=MAX_FILE_REQUESTS, show_default=True,
                     help="Requests per file at most (the Batch API refuses a file with more "
                          "than 50,000)."),
        click.option("--max-bytes", type=click.IntRange(min=1, max=MAX_FILE_BYTES),
                     default=MAX_FILE_BYTES, show_default=True,
                     help="Bytes per file at most (the Batch API refuses a file over 200 MB)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@command.command("prepare")
@_prepare_options
def prepare(**params: Any) -> None:
    """Write the calls `judge` (or `probe NAME`) would make now as Batch API input files.

    One line per call not cached: custom_id is the call's cache key and body the
    exact request `judgekit judge` would send. The batch is recorded in the store;
    collect its answers with `judgekit batch collect`.
    """
    from judgekit.criteria_joint import refuse_one_call
    from judgekit.judging.batch.prepare import new_batch_id, prepare_batch, request_shape
    from judgekit.rubrics import load_rubric

    if params["out"] is not None:
        check_out_suffix(params["out"], "jsonl", also=("json",))
    endpoint = EndpointOptions.take(params)
    refuse_one_call(params["rubric"], "batch prepare")
    rubric = load_rubric(params["rubric"])
    loaded = _check_probe(params, rubric)
    spec = _spec(endpoint)
    batch_id = new_batch_id()
    out = params["out"] or Path(f"batch-{batch_id}.jsonl")
    with store_for_items(params["db"], params["data"], params["dataset"]) as store:
        check_out_path(out, store=store.path)  # a batch file must never replace the store
        with progress_bar("batch prepare"):
            phase("reading items")
            plan = _planned(store, spec, rubric, params, loaded)
            shape = request_shape(store, spec, params["response_format"])
            prepared = prepare_batch(
                store, rubric, plan.units, spec, dataset=plan.dataset, out=out, kind=plan.kind,
                samples=plan.samples, shape=shape, force=params["force"],
                retry_failed=params["retry_failed"],
                max_requests=params["max_requests"], max_bytes=params["max_bytes"],
                batch_id=batch_id,
            )
    echo(prepared.format())
    if plan.note:
        echo(plan.note)
    if prepared.id is not None:
        for line in shape.describe():
            echo(f"  {line}")
        for index, part in enumerate(prepared.files):
            echo(f"  {'next: ' if index == 0 else '      '}judgekit batch submit {part.path}")


def _spec(endpoint: EndpointOptions) -> JudgeSpec:
    """The judge spec ``judgekit judge`` would build from the same flags (same cache keys)."""
    urls = endpoint.base_urls
    if not urls and endpoint.endpoint_name is None:
        raise InputError("give --base-url URL or --endpoint-name NAME: the endpoint is part of "
                         "the judge's identity and of every cache key")
    identity = None if endpoint.endpoint_name is None else named_endpoint(endpoint.endpoint_name)
    return endpoint.spec(urls[0] if urls else identity or "", endpoint.model or "", local=False,
                         identity=identity)


@command.command("collect")
@click.argument("batch_id", required=False, metavar="[ID]")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="An output file made elsewhere (e.g. by `vllm run-batch`) instead of ID.")
@click.option("--errors", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Its error file, if the engine wrote one.")
@db_option
@click.option("--base-url", default=None,
              help="Batch API to download from [default: where ID was submitted].")
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True, metavar="NAME",
              help="Environment variable holding the API key.")
def collect(batch_id: str | None, output: Path | None, errors: Path | None, db: str,
            base_url: str | None, api_key_env: str) -> None:
    """Store a batch's answers: a submitted batch ID, or --output FILE [--errors FILE].

    Each line is parsed like a live answer and stored once: lines for unknown
    custom ids, duplicated lines and calls already finished are reported, not
    stored. Running it twice stores nothing new.
    """
    from judgekit.judging.batch.collect import collect_files

    if (batch_id is None) == (output is None):
        raise InputError("give a submitted batch ID or --output FILE (not both)")
    if errors is not None and output is None:
        raise InputError("--errors goes with --output FILE")
    with read_store(db) as store:
        if output is not None:
            paths = [output] + ([errors] if errors is not None else [])
            with progress_bar("batch collect", 2):
                report = collect_files(store, paths)
        else:
            from judgekit.judging.batch.remote import collect_job

            assert batch_id is not None
            report = collect_job(store, batch_id, base_url=base_url,
                                 api_key=resolve_api_key(None, api_key_env), echo=_stderr)
    echo(report.format())


def _stderr(message: str) -> None:
    echo(message, err=True)


@command.command("submit")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@db_option
@click.option("--base-url", default=None,
              help="OpenAI-compatible Batch API [default: the endpoint FILE was prepared for].")
@click.option("--endpoint-name", default=None,
              help="The --endpoint-name FILE was prepared under (its cache keys name the "
                   "judge by it); --base-url then says where to send it.")
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True, metavar="NAME",
              help="Environment variable holding the API key.")
def submit(file: Path, db: str, base_url: str | None, endpoint_name: str | None,
           api_key_env: str) -> None:
    """Upload a prepared FILE and create its batch (24 h window); records the batch id.

    The submit is recorded before the batch is created, with a key in the batch's
    metadata: after an interrupted submit, running it again (or `batch status`)
    finds that batch at the provider instead of creating a second one.
    """
    from judgekit.judging.batch.remote import submit

    with read_store(db) as store:
        done = submit(store, file, base_url=base_url, endpoint_name=endpoint_name,
                      api_key=resolve_api_key(None, api_key_env))
    job = done.job
    if done.recovered:
        echo(f"found batch {job.id} ({job.state}) at {job.base_url}, created for {file} by an "
             "interrupted submit: recorded it, nothing new created")
    else:
        echo(f"submitted {file} as batch {job.id} ({job.state}) at {job.base_url}")
    echo(f"  follow it with: judgekit batch status {job.id}")


def _job_line(job: Any) -> str:
    counts = job.request_counts
    done = (f"  {counts.get('completed', 0)} completed, {counts.get('failed', 0)} failed "
            f"of {counts.get('total', 0)}") if counts else ""
    collected = "  collected" if job.collected_at else ""
    return f"  {job.id}  part {job.part}  {job.state}{done}{collected}"


@command.command("status")
@click.argument("batch_id", required=False, metavar="[ID]")
@db_option
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True, metavar="NAME",
              help="Environment variable holding the API key.")
def status(batch_id: str | None, db: str, api_key_env: str) -> None:
    """The state of submitted batch ID (asked of the provider), or of every batch in the store.

    Without ID the stored states are listed; pass an ID to refresh it. Either way a
    submit that was interrupted before recording its batch is looked up at the
    provider first (by the key in the batch's metadata) and recorded if found.
    """
    from judgekit.judging.batch.remote import refresh_job, resolve_submits

    with read_store(db) as store:
        if store.pending_submits():
            try:
                found_jobs = resolve_submits(store, api_key=resolve_api_key(None, api_key_env))
            except EndpointError as exc:
                if batch_id is not None:
                    raise
                echo(f"warning: could not look up an interrupted submit's batch ({exc}); "
                     "`judgekit batch submit FILE` looks again before creating one", err=True)
                found_jobs = []
            for found in found_jobs:
                echo(f"found batch {found.job.id} ({found.job.state}), created by an "
                     "interrupted submit: recorded it")
        if batch_id is not None:
            job = refresh_job(store, batch_id, api_key=resolve_api_key(None, api_key_env))
            echo(_job_line(job).strip())
            return
        batches = store.list_batches()
        if not batches:
            echo(f"no prepared batches in {store.path}")
        for batch in batches:
            echo(f"{batch.id}  {batch.kind:<18} {batch.dataset}  {batch.model} at "
                       f"{batch.base_url}  {batch.n_requests} request(s)")
            jobs = store.list_jobs(batch_id=batch.id)
            for job in jobs:
                echo(_job_line(job))
            if not jobs:
                echo("  not submitted")
