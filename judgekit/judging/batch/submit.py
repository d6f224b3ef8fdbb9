"""``batch submit``: create a provider batch for a prepared file at most once.

Creating a batch costs its whole run, so a file must never make two. A submit
that is interrupted between asking the provider to create the batch and
recording it (Ctrl-C, ``kill -9``, a store busy past its timeout, a dropped
connection after the provider acted) used to leave no trace, and the next
submit created a second batch. Now every submit goes in steps, each recorded
before the next begins:

1. **intent**: a row in ``batch_submits`` with the file's sha256 and a fresh
   idempotency key, committed before anything is sent (state ``uploading``);
2. **upload** of the file (its file id recorded; state ``creating`` just
   before the create call);
3. **create**, with the key in the batch's ``metadata`` (``judgekit_submit``)
   and the ``openai`` client's own retries off for this one call (a retried
   create after a timeout is a second batch);
4. **record** the job, and mark the intent ``created``, in one transaction.

The next ``submit`` of the file, or ``batch status``, first lists the
provider's batches and looks for a pending intent's key; a batch found is
recorded as the job and nothing new is created. An intent that never reached
the create call (interrupted while uploading) is dropped and the file is
submitted afresh; one that sent a create the provider does not show yet, less
than :data:`CREATE_GRACE_S` ago, is refused for now (its batch may still
appear), after that it is taken as never created.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.clients.spec import named_endpoint, public_base_url, redact
from judgekit.errors import EndpointError, InputError
from judgekit.judging.outcomes import utc_now
from judgekit.store import Store
from judgekit.store.batches import BatchJob, SubmitIntent

from .lines import CHAT_COMPLETIONS_URL

if TYPE_CHECKING:
    import openai

__all__ = ["CREATE_GRACE_S", "SUBMIT_KEY", "Submitted", "resolve_pending", "submit_file"]

#: The ``metadata`` field of a provider batch that holds the submit's idempotency key.
SUBMIT_KEY = "judgekit_submit"
#: How long a create that was sent but is not listed may still appear at the provider.
CREATE_GRACE_S = 120.0
#: Batches created this long before the intent are not searched (provider clock skew).
_LIST_SLACK_S = 3600
#: States of an earlier job of the same file that still allow submitting it again.
_RESUBMITTABLE = ("failed",)
#: Intent states whose batch may exist at the provider without a job in the store.
PENDING = ("uploading", "creating")


@dataclass(frozen=True)
class Submitted:
    """A submit's job; ``recovered``: found at the provider, made by an interrupted submit."""

    job: BatchJob
    recovered: bool = False


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def job_of(batch: Any, intent: SubmitIntent) -> BatchJob:
    """The stored job of provider batch ``batch`` made by ``intent``."""
    counts = getattr(batch, "request_counts", None)
    now = utc_now()
    return BatchJob(
        id=batch.id, batch_id=intent.batch_id, part=intent.part, base_url=intent.base_url,
        input_file_id=batch.input_file_id, state=batch.status, submitted_at=now,
        updated_at=now, output_file_id=batch.output_file_id,
        error_file_id=batch.error_file_id,
        request_counts={} if counts is None else {
            "total": counts.total, "completed": counts.completed, "failed": counts.failed},
    )


def _listed(client: openai.OpenAI, since: float) -> Iterator[Any]:
    """The provider's batches, newest first, back to ``since`` (epoch seconds)."""
    for batch in client.batches.list(limit=100):
        created = getattr(batch, "created_at", None)
        if isinstance(created, int | float) and created < since:
            return
        yield batch


def resolve_pending(store: Store, client: openai.OpenAI, intents: list[SubmitIntent],
                    *, now: float | None = None) -> list[Submitted]:
    """Look ``intents`` up at the provider by key; record each batch found as its job.

    Intents interrupted before their create call end as ``not_created``; a create
    older than :data:`CREATE_GRACE_S` that the provider does not list ends the
    same way. A younger one stays pending. Returns the jobs found.
    """
    if not intents:
        return []
    now = time.time() if now is None else now
    wanted = {intent.key: intent for intent in intents}
    since = min(_epoch(intent.created_at) for intent in intents) - _LIST_SLACK_S
    found: list[Submitted] = []
    for batch in _listed(client, since):
        metadata = getattr(batch, "metadata", None) or {}
        intent = wanted.pop(str(metadata.get(SUBMIT_KEY, "")), None)
        if intent is not None:
            job = job_of(batch, intent)
            store.record_submitted_job(intent.key, job)
            found.append(Submitted(job, recovered=True))
        if not wanted:
            break
    for intent in wanted.values():
        if intent.state == "uploading" or now - _epoch(intent.updated_at) > CREATE_GRACE_S:
            store.set_submit_state(intent.key, "not_created")
    return found


def submit_file(store: Store, path: Path, sha256: str, *, base_url: str | None,
                api_key: str | None, endpoint_name: str | None = None) -> Submitted:
    """Upload a prepared file and create its batch, at most once; the recorded job.

    ``base_url`` defaults to the endpoint the batch was prepared for. The judge
    is keyed by that endpoint, so a file prepared under ``--endpoint-name`` is
    submitted with the same ``endpoint_name`` and the URL to send it to.
    """
    from .remote import batch_client

    prepared = store.batch_file_by_sha256(sha256)
    if prepared is None:
        raise InputError(f"{path}: not a file `judgekit batch prepare` wrote into {store.path} "
                         "(or it was changed since)")
    batch = store.get_batch(prepared.batch_id)
    assert batch is not None  # files are recorded with their batch
    url = base_url or batch.base_url
    identity = named_endpoint(endpoint_name) if endpoint_name else public_base_url(url)
    if identity != batch.base_url:
        raise InputError(f"{path} was prepared for endpoint {batch.base_url}, not {identity}: "
                         "its cache keys name that judge (pass --base-url for it)")
    if not url.startswith(("http://", "https://")):
        raise InputError(f"--base-url: the Batch API URL for {batch.base_url} is needed")
    with batch_client(url, api_key) as client:
        pending = store.pending_submits(batch_id=batch.id, part=prepared.part)
        recovered = resolve_pending(store, client, pending)
        if recovered:
            return recovered[0]
        for job in store.list_jobs(batch_id=batch.id):
            if job.part == prepared.part and job.state not in _RESUBMITTABLE:
                raise InputError(f"{path} is already submitted as batch {job.id} ({job.state}); "
                                 "run `judgekit batch prepare` again for the calls still missing")
        waiting = store.pending_submits(batch_id=batch.id, part=prepared.part)
        if waiting:
            raise EndpointError(
                f"{path}: an earlier submit sent its create at {waiting[0].updated_at} and the "
                f"provider does not list that batch yet; run `judgekit batch submit` again in "
                f"{CREATE_GRACE_S:.0f} s (it looks the batch up first, so nothing is created "
                "twice)")
        return _create(store, client, path, SubmitIntent(
            key=uuid.uuid4().hex, batch_id=batch.id, part=prepared.part, sha256=sha256,
            base_url=public_base_url(url), state="uploading", created_at=utc_now(),
            updated_at=utc_now()), api_key)


def _create(store: Store, client: openai.OpenAI, path: Path, intent: SubmitIntent,
            api_key: str | None) -> Submitted:
    """Steps 1-4 of the module docstring for a file with no batch yet."""
    import openai

    store.record_submit_intent(intent)
    with path.open("rb") as handle:
        uploaded = client.files.create(file=(path.name, handle), purpose="batch")
    store.set_submit_state(intent.key, "creating", input_file_id=uploaded.id)
    try:
        created = client.with_options(max_retries=0).batches.create(
            input_file_id=uploaded.id, endpoint=CHAT_COMPLETIONS_URL,  # type: ignore[arg-type]
            completion_window="24h",
            metadata={"judgekit_batch": intent.batch_id, "part": str(intent.part),
                      SUBMIT_KEY: intent.key},
        )
    except openai.APIStatusError as exc:
        if exc.status_code < 500 and exc.status_code != 408:
            store.set_submit_state(intent.key, "not_created")  # refused: nothing was made
            raise
        raise _maybe_created(path, str(exc.message), api_key) from None
    except openai.APIError as exc:  # timeout, connection dropped: the provider may have acted
        raise _maybe_created(path, str(exc), api_key) from None
    job = job_of(created, intent)
    store.record_submitted_job(intent.key, job)
    return Submitted(job)


def _maybe_created(path: Path, detail: str, api_key: str | None) -> EndpointError:
    return EndpointError(
        f"Batch API: the create call for {path} ended without an answer "
        f"({redact(detail, (api_key,))}); the batch may exist at the provider. "
        f"`judgekit batch submit {path}` or `judgekit batch status` looks it up by its key "
        "before creating another")
