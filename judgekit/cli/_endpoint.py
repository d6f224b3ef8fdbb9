"""The data and endpoint options of every command that calls a judge, and what they resolve to.

``judgekit judge`` and ``judgekit probe ...`` take the same long list of
options (rubric, data, store, endpoint, sampling, limits); declaring them once
keeps their names, defaults and help identical. The helpers turn them into a
:class:`~judgekit.clients.JudgeSpec`: the API key from ``--api-key-env`` or
``--api-key`` (never anywhere else), explicit sampling parameters, and the local
judge when no ``--base-url`` (or ``$JUDGEKIT_BASE_URL``) is given. The local
judge takes seconds to load, so it is started only when a call is actually
needed: a rerun whose calls are all cached never starts it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from judgekit.cli._common import COUNT, SEED, FiniteFloat, db_option, rubric_option
from judgekit.clients import DEFAULT_API_KEY_ENV, JudgeSpec
from judgekit.clients.spec import DEFAULT_MAX_RESPONSE_BYTES, check_replicas, named_endpoint
from judgekit.errors import InputError
from judgekit.io.items import dataset_name_for, load_items
from judgekit.judging.local import LOCAL_MODEL, LocalJudge
from judgekit.types import Item, SamplingParams

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.store import Store

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[Any], Any]

BASE_URL_ENV = "JUDGEKIT_BASE_URL"
MODEL_ENV = "JUDGEKIT_MODEL"
#: Default concurrency: remote endpoints take many requests at once, the local
#: llama.cpp server answers one at a time.
REMOTE_CONCURRENCY = 8
LOCAL_CONCURRENCY = 2


#: ``--reasoning-effort`` values OpenAI's reasoning models take.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
#: Request fields ``--extra-body`` may not replace: they say which call this is.
_FIXED_FIELDS = ("model", "messages")


class ExtraBody(click.ParamType):
    """``--extra-body JSON``: an object of provider-specific request fields (canonical JSON)."""

    name = "JSON"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        import json

        from judgekit.io.jsonline import loads_line
        from judgekit.types import canonical_json

        try:
            found = loads_line(value) if isinstance(value, str) else value
        except json.JSONDecodeError as exc:
            self.fail(f"not JSON ({exc.msg})", param, ctx)
        if not isinstance(found, dict):
            self.fail("must be a JSON object of request fields", param, ctx)
        fixed = [name for name in _FIXED_FIELDS if name in found]
        if fixed:
            self.fail(f"may not set {', '.join(fixed)} (judgekit sends them)", param, ctx)
        return canonical_json(found)


def sampling_options(temperature_help: str | None = None) -> list[Decorator]:
    """``--temperature``, ``--max-tokens``, ``--top-p``, ``--seed``, ``--max-completion-tokens``,
    ``--reasoning-effort``, ``--extra-body``: part of a judge's identity.

    Shared by every command that names a judge's calls (``judge``, ``probe``,
    ``batch prepare``), so equal flags give equal cache keys.
    """
    return [
        click.option("--temperature", type=FiniteFloat(min=0), default=0.0, show_default=True,
                     help=temperature_help),
        click.option("--max-tokens", type=click.IntRange(min=1), default=512, show_default=True,
                     help="Answer length limit; sent as max_completion_tokens to models that "
                          "take only that (found by the capability probe)."),
        click.option("--top-p", type=FiniteFloat(min=0, max=1, min_open=True), default=1.0,
                     show_default=True),
        click.option("--seed", type=SEED, default=0, show_default=True),
        click.option("--max-completion-tokens", type=click.IntRange(min=1), default=None,
                     metavar="N",
                     help="Send this limit as max_completion_tokens instead of --max-tokens "
                          "(reasoning models count their reasoning in it)."),
        click.option("--reasoning-effort", type=click.Choice(REASONING_EFFORTS), default=None,
                     metavar="LEVEL",
                     help=f"Reasoning effort of a reasoning model "
                          f"({', '.join(REASONING_EFFORTS)}); sent only where the endpoint "
                          "accepts it (part of the cache key either way)."),
        click.option("--extra-body", type=ExtraBody(), default=None,
                     help="JSON object of provider-specific request fields merged into every "
                          "request (part of the cache key)."),
    ]


LOGPROBS_OPTION: Decorator = click.option(
    "--logprobs/--no-logprobs", default=True, show_default=True,
    help="Ask for token logprobs, when the endpoint offers them, to store each "
         "verdict's confidence (used by `annotate --strategy uncertain`) and, on ordinal "
         "scales, its expected score (G-Eval); with several criteria in one call, each "
         "criterion's at its own verdict. On llama.cpp they can double the time per call.",
)


def endpoint_options(
    *,
    verb: str = "Judge",
    url_example: bool = True,
    temperature_help: str | None = None,
    after_concurrency: Sequence[Decorator] = (),
) -> Callable[[F], F]:
    """Add the data, store and endpoint options, in the order ``judgekit judge`` shows them.

    ``verb`` starts the ``--limit`` help ("Judge only the first N items");
    ``after_concurrency`` inserts command-specific options after
    ``--concurrency`` (``judge`` puts ``--samples`` there).
    """
    url_help = ("OpenAI-compatible endpoint, e.g. https://api.openai.com/v1. "
                if url_example else "OpenAI-compatible endpoint. ")
    options: list[Decorator] = [
        rubric_option,
        click.option("--data", type=click.Path(dir_okay=False, path_type=Path),
                     help="JSONL or CSV file of items (imported under its file name as dataset)."),
        click.option("--dataset", help="Dataset name: a stored dataset, or the name for --data."),
        db_option,
        click.option("--model", envvar=MODEL_ENV, show_envvar=True,
                     help=f"Judge model (default with the local judge: {LOCAL_MODEL})."),
        click.option("--base-url", envvar=BASE_URL_ENV, show_envvar=True, multiple=True,
                     help=url_help + "Without it the local judge is started. Give it more than "
                          "once (with --endpoint-name) for replicas of one judge: calls are "
                          "spread over them and a failing one's calls retried on another."),
        click.option("--endpoint-name", default=None, metavar="NAME",
                     help="Name the endpoint: runs with the same NAME are one judge and share "
                          "one cache, whatever the URL (replicas, a server restarted on another "
                          "port). Without it the judge is the URL without credentials; "
                          "required with several --base-url."),
        click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True,
                     metavar="NAME", help="Environment variable holding the API key."),
        click.option("--api-key", default=None, metavar="KEY",
                     help="API key (prefer --api-key-env: command lines end up in shell "
                          "history)."),
        click.option("--concurrency", type=click.IntRange(min=1), default=None,
                     help=f"Requests in flight [default: {REMOTE_CONCURRENCY}; "
                          f"{LOCAL_CONCURRENCY} for the local judge]."),
        *after_concurrency,
        click.option("--rpm", type=FiniteFloat(min=0, min_open=True), default=None,
                     help="At most this many request starts per minute (per --base-url)."),
        click.option("--tpm", type=FiniteFloat(min=0, min_open=True), default=None,
                     help="At most this many tokens per minute (per --base-url), estimated "
                          "before each call from the prompt's length plus --max-tokens and "
                          "corrected by the usage the server reports. Rate-limit headers "
                          "(x-ratelimit-*) are followed with or without it."),
        click.option("--limit", type=COUNT, default=None,
                     help=f"{verb} only the first N items."),
        click.option("--force", is_flag=True, help="Re-judge everything, cached or not."),
        click.option("--retry-failed", is_flag=True,
                     help="Re-judge answered failures (parse_error, refusal, truncated)."),
        *sampling_options(temperature_help),
        click.option("--max-retries", type=click.IntRange(min=0), default=4, show_default=True,
                     help="Retries per call for rate limits, timeouts and server errors."),
        click.option("--timeout", type=FiniteFloat(min=0, min_open=True), default=60.0,
                     show_default=True,
                     help="Seconds per attempt, from sending the request to the last byte of "
                          "the answer (a total deadline, not per read); past it the attempt "
                          "is a timeout and is retried."),
        click.option("--max-response-bytes", type=click.IntRange(min=1024),
                     default=DEFAULT_MAX_RESPONSE_BYTES, show_default=True, metavar="BYTES",
                     help="Largest answer body read; a bigger one is recorded as api_error "
                          "and reading stops there."),
        LOGPROBS_OPTION,
        click.option("--progress/--no-progress", default=None,
                     help="Progress bar [default: only on a terminal]."),
    ]

    def decorate(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def resolve_api_key(api_key: str | None, api_key_env: str) -> str | None:
    """``--api-key`` if given, else the named environment variable (None if unset)."""
    if api_key:
        return api_key
    return os.environ.get(api_key_env) or None


@dataclass(frozen=True)
class EndpointOptions:
    """The endpoint and sampling options' values (defaults = the options' defaults)."""

    model: str | None = None
    #: ``--base-url``: one URL, or several (replicas of one judge)
    base_url: str | Sequence[str] | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    api_key: str | None = field(default=None, repr=False)
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    top_p: float = 1.0
    seed: int = 0
    max_completion_tokens: int | None = None
    reasoning_effort: str | None = None
    #: ``--extra-body``, as canonical JSON
    extra_body: str | None = None
    max_retries: int = 4
    timeout: float = 60.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    #: ``--logprobs/--no-logprobs``; the demo turns them off to stay near a minute locally.
    logprobs: bool = True
    #: ``--endpoint-name``: the judge's endpoint identity instead of its URL.
    endpoint_name: str | None = None

    def __post_init__(self) -> None:
        # before any store is opened: bad input leaves the store as it was
        check_replicas(self.base_urls, named=self.endpoint_name is not None)

    @classmethod
    def take(cls, params: dict[str, Any]) -> EndpointOptions:
        """Build from a command's keyword arguments, removing the ones used here."""
        return cls(**{f.name: params.pop(f.name) for f in fields(cls) if f.name in params})

    @property
    def base_urls(self) -> tuple[str, ...]:
        """The ``--base-url`` values given, each once (empty: the local judge)."""
        if isinstance(self.base_url, str):
            return (self.base_url,) if self.base_url else ()
        return tuple(dict.fromkeys(url for url in self.base_url or () if url))

    @property
    def sampling(self) -> SamplingParams:
        return SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens,
                              top_p=self.top_p, seed=self.seed,
                              max_completion_tokens=self.max_completion_tokens,
                              reasoning_effort=self.reasoning_effort,
                              extra_body=self.extra_body)

    def spec(self, base_url: str, model: str, *, local: bool,
             identity: str | None = None, replica_urls: Sequence[str] = ()) -> JudgeSpec:
        """The judge spec for an endpoint (and its replicas); the local judge needs no key.

        One key (``--api-key`` or ``--api-key-env``) serves every replica.
        """
        return JudgeSpec(
            base_url=base_url, model=model, replica_urls=tuple(replica_urls), tpm=self.tpm,
            api_key=None if local else resolve_api_key(self.api_key, self.api_key_env),
            sampling=self.sampling,
            concurrency=self.concurrency or (LOCAL_CONCURRENCY if local else REMOTE_CONCURRENCY),
            rpm=self.rpm, max_retries=self.max_retries, timeout=self.timeout, identity=identity,
            logprobs=self.logprobs, max_response_bytes=self.max_response_bytes,
        )


def _stderr(message: str) -> None:
    click.echo(message, err=True)


@contextmanager
def open_endpoint(
    options: EndpointOptions,
    *,
    has_work: Callable[[JudgeSpec], bool] | None = None,
    echo: Callable[[str], None] = _stderr,
) -> Iterator[JudgeSpec]:
    """The judge spec for the options, with the local judge running while in use if needed.

    Several base URLs are replicas of one judge and need ``--endpoint-name``
    (checked by :class:`~judgekit.clients.JudgeSpec`): without a name there is
    no one endpoint to key and store them by. Without a base URL the local
    judge is used. Its spec is keyed by the model
    file rather than its (free, changing) port, so reruns hit the cache; and
    when ``has_work(spec)`` says every call is cached, it is not started at all.
    """
    urls = options.base_urls
    if urls:
        if not options.model:
            raise InputError(f"--model is required with --base-url (or set ${MODEL_ENV})")
        identity = None if options.endpoint_name is None else named_endpoint(
            options.endpoint_name)
        yield options.spec(urls[0], options.model, local=False, identity=identity,
                           replica_urls=urls[1:])
        return
    if options.endpoint_name is not None:
        raise InputError("--endpoint-name names a --base-url endpoint; the local judge is "
                         "already keyed by its model file")
    local = LocalJudge()
    spec = options.spec(local.base_url, options.model or LOCAL_MODEL, local=True,
                        identity=local.identity)
    if has_work is not None and not has_work(spec):
        echo("no --base-url: every call is cached, the local judge is not started")
        yield spec
        return
    echo("no --base-url: starting the local judge (llama.cpp + SmolLM2-135M)...")
    with local:
        echo(f"local judge ready at {local.base_url}")
        yield spec


def load_dataset(
    store: Store, data: Path | None, dataset: str | None, limit: int | None = None,
    loaded: list[Item] | None = None,
) -> tuple[str, list[Item]]:
    """Items from ``--data FILE`` (stored under its dataset name) or a stored ``--dataset``.

    ``limit`` keeps the first N (``--limit``); ``loaded`` are the file's items when the
    caller already read (and checked) them before opening the store.
    """
    if data is not None:
        items = loaded if loaded is not None else load_items(data)
        name = dataset or dataset_name_for(data)
        store.import_items(name, items, replace=True)
    elif not dataset:
        raise InputError("give --data FILE or --dataset NAME")
    elif store.count_items(dataset) == 0:
        known = ", ".join(store.datasets()) or "none"
        raise InputError(f"no dataset {dataset!r} in the store (known: {known}); "
                         "import it with: judgekit import FILE")
    else:
        name, items = dataset, list(store.iter_items(dataset))
    if limit is not None:
        items = list(islice(items, limit))
    return name, items
