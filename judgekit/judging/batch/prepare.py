"""``batch prepare``: the calls a run would make, written as Batch API input files.

A call is written when the live runner would make it now (nothing stored, a
transient failure, or ``--force`` / ``--retry-failed``), unless it already sits
in a submitted batch that may still answer it (so it is never paid twice). Its
``custom_id`` is the call's cache key (:func:`~judgekit.judging.units.unit_key`)
and its ``body`` is :func:`~judgekit.clients.request.chat_request` of the
unit's messages: byte for byte the request ``judgekit judge`` would send. The
batch's calls are recorded a chunk at a time and the batch counts as prepared
once its files are recorded, last; on any error the files written and the rows
are removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from pathlib import Path
from typing import Any

from judgekit.clients.request import (
    ParamSupport,
    chat_request,
    response_format_for,
    sent_sampling,
)
from judgekit.clients.spec import JudgeSpec, ResponseFormatMode
from judgekit.errors import InputError
from judgekit.judging.cache import needs_call
from judgekit.judging.outcomes import utc_now
from judgekit.judging.units import WorkUnit, unit_key, unit_messages
from judgekit.progress import advance, phase
from judgekit.prompts import verdict_json_schema
from judgekit.store import Store
from judgekit.store.batches import BatchFile, BatchRecord, BatchRequest
from judgekit.types import Rubric

from .lines import MAX_FILE_BYTES, MAX_FILE_REQUESTS, PartWriter, WrittenPart, request_line

__all__ = ["PreparedBatch", "RequestShape", "new_batch_id", "prepare_batch", "request_shape"]

#: Units whose cache keys are looked up per query.
CHUNK_SIZE = 1000
#: Calls recorded per transaction (each commit costs a WAL sync and sometimes a checkpoint).
RECORD_SIZE = 10_000


def new_batch_id() -> str:
    """A local batch id: sortable by time, unique (the same form as run ids)."""
    from judgekit.judging.runner import new_run_id

    return new_run_id()


@dataclass(frozen=True)
class RequestShape:
    """How the judge's requests are shaped: structured-output mode, logprobs, parameters.

    The live runner decides them from the endpoint's probed capabilities; a
    batch takes the probed ones when the store has them (:func:`request_shape`),
    else sends every parameter as the flags give it (``--max-completion-tokens``
    for a model that takes only that limit).
    """

    mode: ResponseFormatMode
    logprobs: bool
    support: ParamSupport | None = None

    def describe(self) -> list[str]:
        """What prepare tells the user about the requests' shape, one line each."""
        lines = [f"response_format {self.mode}, logprobs {'on' if self.logprobs else 'off'}"]
        if self.support is None:
            lines.append("no probed capabilities for this model in the store: every sampling "
                         "parameter is sent as given (for a model that refuses some, such as "
                         "OpenAI's reasoning models, one `judgekit judge --limit 1` probes it "
                         "first)")
        elif self.support.unsupported or self.support.token_param != "max_tokens":
            left_out = ", ".join(sorted(self.support.unsupported)) or "nothing"
            lines.append(f"as the endpoint accepts: limit sent as {self.support.token_param}, "
                         f"not sent: {left_out}")
        return lines

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"response_format": self.mode, "logprobs": self.logprobs}
        if self.support is not None:
            found |= self.support.as_dict()
        return found


def request_shape(store: Store, spec: JudgeSpec, mode: ResponseFormatMode | None) -> RequestShape:
    """The live runner's choice for this endpoint when its capabilities are stored.

    ``mode`` (``--response-format``) overrides the stored mode; without either,
    ``json_schema`` (what the Batch API and vLLM accept). Logprobs are asked
    when ``spec.logprobs`` is on and the endpoint is not known to refuse them.
    """
    stored = store.get_capabilities(spec.public_base_url, spec.model)
    if stored is None:
        return RequestShape(mode or "json_schema", spec.logprobs)
    # imported only here: it loads the openai client, which a prepare does not otherwise need
    from judgekit.clients.capabilities import PROBE_VERSION, Capabilities

    if int(stored.get("version", 0)) == PROBE_VERSION:
        caps = Capabilities.from_dict(stored)
        return RequestShape(mode or caps.response_format_mode, caps.logprobs and spec.logprobs,
                            caps.params)
    return RequestShape(mode or "json_schema", spec.logprobs)


@dataclass
class PreparedBatch:
    """What ``prepare`` wrote: the batch id and files, and why other calls were left out."""

    id: str | None
    files: list[WrittenPart] = field(default_factory=list)
    total: int = 0
    prepared: int = 0
    cached: int = 0
    in_flight: int = 0

    def format(self) -> str:
        head = (f"{self.total} call(s): {self.prepared} prepared, {self.cached} cached, "
                f"{self.in_flight} already in a submitted batch")
        if self.id is None:
            return head + "\n  nothing to prepare: no file written"
        lines = [f"batch {self.id}: {head}"]
        lines += [f"  {p.path}  {p.n_requests} request(s), {p.bytes} bytes" for p in self.files]
        return "\n".join(lines)


def _in_key_order(requests: list[BatchRequest]) -> list[BatchRequest]:
    """One transaction's calls sorted by custom id (the cache key, a sha256).

    The keys are random, so inserted in file order each row lands on an arbitrary page
    of the custom-id indexes, and SQLite's page cache would have to hold the whole
    index (growing with the calls) to avoid reading pages back. In key order each
    commit walks the indexes once, front to back, within the default cache: memory
    stays flat at any number of calls, at the same speed. Only the order of the rows
    in the table changes, which nothing reads within a batch; the files keep the units'
    order.
    """
    return sorted(requests, key=attrgetter("custom_id"))


class _NothingToPrepare(Exception):
    """Raised inside the batch's transaction to roll it back when no call is needed."""


def prepare_batch(
    store: Store, rubric: Rubric, units: Iterable[WorkUnit], spec: JudgeSpec, *,
    dataset: str, out: Path, kind: str = "judge", samples: int = 1,
    shape: RequestShape | None = None, force: bool = False, retry_failed: bool = False,
    max_requests: int = MAX_FILE_REQUESTS, max_bytes: int = MAX_FILE_BYTES,
    batch_id: str | None = None,
) -> PreparedBatch:
    """Write the calls still needed to ``out`` (split into ``out.2.jsonl``... at the limits).

    ``kind`` is the run kind the collected judgments are recorded under
    (``judge`` or ``probe:<name>``); ``batch_id`` defaults to a new one. Streams
    the units in chunks and records the calls a chunk per transaction, within SQLite's
    default page cache: memory stays flat in their number.
    """
    if rubric.voting is not None:  # its votes are taken by judge (judging/voting.py)
        raise InputError(f"rubric {rubric.name} declares [sampling] (the vote of "
                         f"{rubric.voting.samples} samples per item): judge it with "
                         "`judgekit judge`; a batch file holds one call per item")
    shape = shape or request_shape(store, spec, None)
    fmt = response_format_for(shape.mode, verdict_json_schema(rubric))
    store.save_rubric(rubric)
    record = BatchRecord(
        id=batch_id or new_batch_id(), kind=kind, dataset=dataset, rubric_hash=rubric.sha256,
        model=spec.model, base_url=spec.public_base_url,
        sampling=sent_sampling(spec.sampling, shape.support),
        request=shape.as_dict(), created_at=utc_now(),
    )
    result = PreparedBatch(record.id)
    writer = PartWriter(out, max_requests=max_requests, max_bytes=max_bytes)
    stream = iter(units)
    try:
        with store.preparing_batch(record) as batch:
            phase("writing requests")
            requests: list[BatchRequest] = []
            while chunk := list(islice(stream, CHUNK_SIZE)):
                hashes = [u.item.content_hash for u in chunk]  # once per unit: it is costly
                keyed = [(u, s, h, unit_key(rubric, u, spec, dataset=dataset, sample=s,
                                            item_hash=h))
                         for u, h in zip(chunk, hashes, strict=True) for s in range(samples)]
                keys = [key for _, _, _, key in keyed]
                cached = store.cached_judgments(keys)
                active = store.active_batch_calls(keys)
                for unit, sample, item_hash, key in keyed:
                    result.total += 1
                    if not needs_call(cached.get(key), force=force, retry_failed=retry_failed):
                        result.cached += 1
                        continue
                    if key in active:
                        result.in_flight += 1
                        continue
                    body = chat_request(spec, unit_messages(rubric, unit), response_format=fmt,
                                        logprobs=shape.logprobs, support=shape.support)
                    part = writer.write(request_line(key, body))
                    requests.append(BatchRequest(
                        record.id, key, part, unit.item.id, unit.variant, sample,
                        unit.source_hash or item_hash, unit.swap_labels,
                    ))
                if len(requests) >= RECORD_SIZE:
                    batch.add_requests(_in_key_order(requests))
                    requests = []
                advance(len(keyed))
            batch.add_requests(_in_key_order(requests))
            result.prepared = batch.n_requests
            if result.prepared == 0:
                raise _NothingToPrepare
            for written in writer.close():
                batch.add_file(BatchFile(record.id, written.part, str(written.path.absolute()),
                                         written.sha256, written.n_requests, written.bytes))
    except _NothingToPrepare:
        writer.discard()
        result.id = None
        return result
    except BaseException:
        writer.discard()
        raise
    result.files = writer.parts
    return result

