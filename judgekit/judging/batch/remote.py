"""A prepared file through an OpenAI-compatible Batch API: upload, create, poll, download.

Uses the real ``openai`` client's ``files`` and ``batches`` resources (so any
server that speaks OpenAI's Batch API works). Every provider batch is recorded
as a job of its prepared batch and file, with its state; a file that is already
submitted is not submitted again (its calls would be paid twice): prepare again
instead, which leaves out what is finished. Submitting is :mod:`.submit`: a
submit is recorded before its create call, so an interrupted one is found at the
provider by its key, never created twice. The API key goes to the client and
nowhere else; error messages are redacted.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.clients.spec import PLACEHOLDER_API_KEY, public_base_url, redact
from judgekit.errors import EndpointError, InputError, JudgekitError
from judgekit.store import Store
from judgekit.store.batches import BatchJob

from .collect import CollectReport, collect_files
from .submit import Submitted, resolve_pending, submit_file

if TYPE_CHECKING:
    import openai

__all__ = ["FINAL_STATES", "batch_client", "collect_job", "refresh_job", "resolve_submits",
           "sha256_of", "submit"]

#: Provider states after which a batch changes no more.
FINAL_STATES = ("completed", "failed", "expired", "cancelled")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    return digest.hexdigest()


@contextmanager
def batch_client(base_url: str, api_key: str | None) -> Iterator[openai.OpenAI]:
    """A Batch API client; provider errors become one redacted :class:`EndpointError` line."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or PLACEHOLDER_API_KEY,
                           max_retries=2, timeout=120.0)
    try:
        yield client
    except openai.APIStatusError as exc:
        detail = redact(str(exc.message), (api_key,))
        raise EndpointError(f"Batch API at {public_base_url(base_url)}: HTTP "
                            f"{exc.status_code}: {detail}") from None
    except openai.APIError as exc:
        detail = redact(str(exc), (api_key,))
        raise EndpointError(f"Batch API at {public_base_url(base_url)}: {detail}") from None
    finally:
        client.close()


def _counts(batch: Any) -> dict[str, int]:
    counts = getattr(batch, "request_counts", None)
    if counts is None:
        return {}
    return {"total": counts.total, "completed": counts.completed, "failed": counts.failed}


def submit(store: Store, path: Path, *, base_url: str | None, api_key: str | None,
           endpoint_name: str | None = None) -> Submitted:
    """Submit a prepared file (at most one provider batch per file; see :mod:`.submit`)."""
    return submit_file(store, path, sha256_of(path), base_url=base_url, api_key=api_key,
                       endpoint_name=endpoint_name)


def resolve_submits(store: Store, *, api_key: str | None) -> list[Submitted]:
    """Every interrupted submit in the store looked up at its provider; the batches found."""
    found: list[Submitted] = []
    pending = store.pending_submits()
    for url in dict.fromkeys(intent.base_url for intent in pending):
        with batch_client(url, api_key) as client:
            found += resolve_pending(store, client,
                                     [i for i in pending if i.base_url == url])
    return found


def _job(store: Store, job_id: str) -> BatchJob:
    job = store.get_job(job_id)
    if job is None:
        raise InputError(f"no submitted batch {job_id!r} in {store.path} (an output file made "
                         "elsewhere is collected with --output FILE)")
    return job


def refresh_job(store: Store, job_id: str, *, api_key: str | None,
                base_url: str | None = None) -> BatchJob:
    """Ask the provider for the batch's state and record it; the updated job."""
    job = _job(store, job_id)
    with batch_client(base_url or job.base_url, api_key) as client:
        found = client.batches.retrieve(job_id)
    store.update_job(job_id, state=found.status, output_file_id=found.output_file_id,
                     error_file_id=found.error_file_id, request_counts=_counts(found))
    updated = store.get_job(job_id)
    assert updated is not None
    return updated


def collect_job(store: Store, job_id: str, *, api_key: str | None, base_url: str | None = None,
                echo: Callable[[str], None] = print) -> CollectReport:
    """Download a finished batch's output and error files and store their lines.

    A batch still running is an error that says so; a failed batch (rejected
    before it ran) has no lines: nothing is stored and its calls are prepared
    again next time. Expired and cancelled batches deliver what they finished.
    """
    job = refresh_job(store, job_id, api_key=api_key, base_url=base_url)
    if job.state not in FINAL_STATES:
        counts = job.request_counts
        done = (f" ({counts.get('completed', 0)} of {counts.get('total', '?')} done)"
                if counts else "")
        raise JudgekitError(f"batch {job_id} is {job.state}{done}: collect it once it is "
                            "completed (see `judgekit batch status`)")
    files = [(kind, fid) for kind, fid in (("output", job.output_file_id),
                                           ("errors", job.error_file_id)) if fid]
    if job.state == "failed" and not files:
        echo(f"batch {job_id} failed before running: nothing to collect; "
             "`judgekit batch prepare` again prepares its calls")
        store.mark_job_collected(job_id)
        return CollectReport()
    with tempfile.TemporaryDirectory(prefix="judgekit-batch-") as tmp:
        paths: list[Path] = []
        with batch_client(base_url or job.base_url, api_key) as client:
            for kind, file_id in files:
                target = Path(tmp) / f"{kind}.jsonl"
                with client.files.with_streaming_response.content(file_id) as response:
                    response.stream_to_file(target)
                paths.append(target)
        echo(f"batch {job_id} is {job.state}: collecting "
             + (", ".join(kind for kind, _ in files) or "no files"))
        report = collect_files(store, paths, job=job, secrets=(api_key,))
    store.mark_job_collected(job_id)
    return report
