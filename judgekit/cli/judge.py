"""``judgekit judge``: run a rubric judge over a dataset, with cache and resume.

Without ``--base-url`` (and without ``$JUDGEKIT_BASE_URL``) the bundled local
judge is started for the duration of the command. The API key is read from the
environment variable named by ``--api-key-env`` (or ``--api-key``) and handed
only to the HTTP client: it is never stored, logged or printed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

import click

from judgekit.cli._common import db_option, rubric_option
from judgekit.clients import DEFAULT_API_KEY_ENV, JudgeSpec
from judgekit.datasets import dataset_name_for, load_items
from judgekit.errors import InputError
from judgekit.local import LOCAL_MODEL, LocalJudge
from judgekit.rubrics import load_rubric
from judgekit.runner import run_judgments
from judgekit.store import Store, open_store
from judgekit.types import Item, SamplingParams

BASE_URL_ENV = "JUDGEKIT_BASE_URL"
MODEL_ENV = "JUDGEKIT_MODEL"
#: Default concurrency: remote endpoints take many requests at once, the local
#: llama.cpp server answers one at a time.
REMOTE_CONCURRENCY = 8
LOCAL_CONCURRENCY = 2


@contextmanager
def judge_endpoint(
    base_url: str | None, model: str | None, *, echo: bool = True
) -> Iterator[tuple[str, str, bool]]:
    """(base_url, model, is_local): the given endpoint, or the local judge while in use."""
    if base_url:
        if not model:
            raise InputError(f"--model is required with --base-url (or set ${MODEL_ENV})")
        yield base_url, model, False
        return
    if echo:
        click.echo("no --base-url: starting the local judge (llama.cpp + SmolLM2-135M)...",
                   err=True)
    with LocalJudge() as local:
        if echo:
            click.echo(f"local judge ready at {local.base_url}", err=True)
        yield local.base_url, model or LOCAL_MODEL, True


def resolve_api_key(api_key: str | None, api_key_env: str) -> str | None:
    """``--api-key`` if given, else the named environment variable (None if unset)."""
    if api_key:
        return api_key
    return os.environ.get(api_key_env) or None


def load_dataset(store: Store, data: Path | None, dataset: str | None) -> tuple[str, list[Item]]:
    """Items from ``--data FILE`` (stored under its dataset name) or a stored ``--dataset``."""
    if data is not None:
        items = load_items(data)
        name = dataset or dataset_name_for(data)
        store.import_items(name, items, replace=True)
        return name, items
    if not dataset:
        raise InputError("give --data FILE or --dataset NAME")
    if store.count_items(dataset) == 0:
        known = ", ".join(store.datasets()) or "none"
        raise InputError(f"no dataset {dataset!r} in the store (known: {known}); "
                         "import it with: judgekit import FILE")
    return dataset, list(store.iter_items(dataset))


@click.command("judge")
@rubric_option
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL or CSV file of items (imported under its file name as dataset).")
@click.option("--dataset", help="Dataset name: a stored dataset, or the name for --data.")
@db_option
@click.option("--model", envvar=MODEL_ENV, show_envvar=True,
              help=f"Judge model (default with the local judge: {LOCAL_MODEL}).")
@click.option("--base-url", envvar=BASE_URL_ENV, show_envvar=True,
              help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1. "
                   "Without it the local judge is started.")
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True, metavar="NAME",
              help="Environment variable holding the API key.")
@click.option("--api-key", default=None, metavar="KEY",
              help="API key (prefer --api-key-env: command lines end up in shell history).")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help=f"Requests in flight [default: {REMOTE_CONCURRENCY}; "
                   f"{LOCAL_CONCURRENCY} for the local judge].")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Independent samples per item (for self-consistency).")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None,
              help="At most this many requests per minute.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Judge only the first N items.")
@click.option("--force", is_flag=True, help="Re-judge everything, cached or not.")
@click.option("--retry-failed", is_flag=True,
              help="Re-judge answered failures (parse_error, refusal, truncated).")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=512, show_default=True)
@click.option("--top-p", type=float, default=1.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-retries", type=click.IntRange(min=0), default=4, show_default=True,
              help="Retries per call for rate limits, timeouts and server errors.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0,
              show_default=True, help="Seconds per request.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar [default: only on a terminal].")
def command(
    rubric: str, data: Path | None, dataset: str | None, db: str, model: str | None,
    base_url: str | None, api_key_env: str, api_key: str | None, concurrency: int | None,
    samples: int, rpm: float | None, limit: int | None, force: bool, retry_failed: bool,
    temperature: float, max_tokens: int, top_p: float, seed: int, max_retries: int,
    timeout: float, progress: bool | None,
) -> None:
    """Judge a dataset with a rubric; finished judgments are reused on reruns."""
    loaded = load_rubric(rubric)
    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, top_p=top_p,
                              seed=seed)
    with open_store(db) as store:
        name, items = load_dataset(store, data, dataset)
        if limit is not None:
            items = list(islice(items, limit))
        with judge_endpoint(base_url, model) as (url, judge_model, local):
            spec = JudgeSpec(
                base_url=url, model=judge_model,
                api_key=None if local else resolve_api_key(api_key, api_key_env),
                sampling=sampling,
                concurrency=concurrency or (LOCAL_CONCURRENCY if local else REMOTE_CONCURRENCY),
                rpm=rpm, max_retries=max_retries, timeout=timeout,
            )
            click.echo(f"judging {len(items)} item(s) of {name!r} with rubric {loaded.name} "
                       f"[{loaded.sha256[:12]}], judge {judge_model}", err=True)
            summary = run_judgments(store, loaded, items, spec, dataset=name, samples=samples,
                                    force=force, retry_failed=retry_failed, progress=progress)
        click.echo(summary.format())
        click.echo(f"  database: {store.path}")
