"""Async batch judging: bounded concurrency, rate limit, cache/resume, progress.

:func:`run_judgments` judges work units (an item in a presentation variant,
times ``samples``) against one endpoint. It streams: units are read in chunks,
each chunk's cache keys are looked up in one query before any request is made
for it, and only calls whose latest stored outcome asks for it (see
:func:`judgekit.judging.cache.needs_call`) are queued for a fixed pool of workers. Each
finished judgment is committed on its own, so a killed process loses nothing
finished and a rerun only requests the rest. Memory stays flat in the dataset
size: nothing per unit is kept after it is recorded.

Each call is claimed in the store just before it is queued
(:mod:`judgekit.judging.claims`), so a second run on the same store waits for
calls the first is making instead of paying for them again; the capability
probe of a new endpoint is claimed the same way. A call answered by another run
(earlier, or meanwhile) is the run's all the same: the run *stands for* that
outcome (``Store.stand_for``), so reports, exports and ``runs`` see it under
this run whichever run made the call. The first Ctrl-C
stops sending and lets the calls in flight finish and be stored
(:mod:`judgekit.judging.interrupt`).

Probes reuse it by passing :class:`WorkUnit` objects: e.g. a pair item with its
responses exchanged, ``variant="swapped"`` and ``swap_labels=True`` so the
verdict is mapped back to the original orientation (A<->B) before it is stored.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgekit import __version__
from judgekit.clients.request import sent_sampling, stored_support
from judgekit.clients.spec import JudgeSpec, endpoint_hint
from judgekit.errors import EndpointError
from judgekit.judging.cache import needs_call
from judgekit.judging.claims import POLL_S, Call, Claims, capability_claim
from judgekit.judging.interrupt import CallStopped, Stopper, blocking_form, supervise
from judgekit.judging.lookup import CHUNK_SIZE, lookup, new_run_id, units_of
from judgekit.judging.outcomes import CallRef, judgment_of, utc_now
from judgekit.judging.progress import Progress, RunSummary
from judgekit.judging.units import (
    BUILTIN_VARIANTS,
    WorkUnit,
    swapped_pair,
    unit_for,
    unit_key,
    unit_messages,
)
from judgekit.redaction import redact
from judgekit.rubrics import verdict_json_schema
from judgekit.store import RunRecord, Store
from judgekit.types import Item, Judgment, Rubric

if TYPE_CHECKING:
    import httpx2

    from judgekit.clients.capabilities import Capabilities
    from judgekit.clients.openai_client import CallResult, JudgeClient

__all__ = [
    "BUILTIN_VARIANTS", "CHUNK_SIZE", "RunSummary", "WorkUnit", "arun_judgments",
    "has_pending_calls", "new_run_id", "run_judgments", "swapped_pair", "unit_for", "unit_key",
]

def has_pending_calls(
    store: Store, rubric: Rubric, items: Iterable[Item | WorkUnit], spec: JudgeSpec, *,
    dataset: str, variants: Sequence[str] = ("",), samples: int = 1, force: bool = False,
    retry_failed: bool = False,
) -> bool:
    """Whether :func:`run_judgments` with these arguments would make any call now.

    Lets a caller skip starting an endpoint (the local judge takes seconds to
    load) when every call is cached. Reads the store only, and stops at the
    first call still needed.
    """
    def key_for(unit: WorkUnit, sample: int) -> str:
        return unit_key(rubric, unit, spec, dataset=dataset, sample=sample)

    return any(
        needs_call(call.seen, force=force, retry_failed=retry_failed)
        for call in lookup(store, units_of(items, variants), samples, key_for)
    )


@dataclass(frozen=True)
class _Task:
    unit: WorkUnit
    sample: int
    key: str
    messages: list[dict[str, str]]
    #: the finished outcome this call's outcome replaces (from its claim)
    supersedes: int | None


class _Run:
    """State of one run while it executes (kept off the public API)."""

    def __init__(
        self, store: Store, rubric: Rubric, spec: JudgeSpec, dataset: str, kind: str,
        progress: Progress, http_client: httpx2.AsyncClient | None,
    ) -> None:
        self.store, self.rubric, self.spec = store, rubric, spec
        self.dataset, self.kind, self.progress = dataset, kind, progress
        self.http_client = http_client
        self.client: JudgeClient | None = None
        self.summary = RunSummary(
            run_id=new_run_id(), dataset=dataset, rubric_name=rubric.name,
            rubric_hash=rubric.sha256, model=spec.model, base_url=spec.public_base_url,
        )
        self.capabilities: Capabilities | None = None
        self.response_format: dict[str, Any] | None = None
        self.logprobs = False
        #: sampling provenance of the run and its rows: what the requests carry
        self.sampling: dict[str, Any] = spec.sampling.as_dict()
        self.started = False
        #: whether the run's row exists (created at its first outcome, or at the end)
        self.row_created = False
        #: ids of outcomes other runs made that this run stands for, not yet recorded
        self.links: list[int] = []
        self.claims = Claims(store)
        self.stopper = Stopper(stream=progress.stream, say=progress.note)
        #: workers with a call in hand (a stop request waits for them)
        self.calling: set[asyncio.Task[None]] = set()
        #: run before every attempt and after its pacing wait: none once stopping
        self.before_attempt: Callable[[], Awaitable[None]] = self.stopper.gate(None)
        #: how an answer is read (None: one verdict; a joint run reads one per criterion)
        self.read: Callable[..., CallResult] | None = None

    async def start(self) -> None:
        """Probe (or recall) capabilities and record them on the run row; once, lazily.

        A run with nothing to judge never touches the endpoint. The probe of an
        endpoint+model not yet in the store is claimed like a call: two runs
        starting together against a new endpoint pay for it once.
        """
        if self.started:
            return
        # Imported here, not at the top: the openai client is judgekit's slowest
        # import, and a run whose calls are all cached never needs it.
        from judgekit.clients.capabilities import PROBE_VERSION, capabilities_for
        from judgekit.clients.openai_client import JudgeClient
        from judgekit.clients.request import response_format_for

        # pacing (rpm, tpm, rate-limit headers) is the client's, per replica
        client = self.client = JudgeClient(self.spec, http_client=self.http_client)
        url, model = self.spec.public_base_url, self.spec.model

        def known() -> bool:
            found = self.store.get_capabilities(url, model)
            return found is not None and int(found.get("version", 0)) == PROBE_VERSION

        self.capabilities = await self.claims.once(
            capability_claim(url, model), known, lambda: capabilities_for(self.store, client))
        mode = self.capabilities.response_format_mode
        self.response_format = response_format_for(mode, verdict_json_schema(self.rubric))
        self.summary.response_format = mode
        # verdict confidences need logprobs; ask only endpoints known to return them
        self.logprobs = self.capabilities.logprobs and self.spec.logprobs
        caps = {**self.capabilities.as_dict(), "response_format": mode,
                "logprobs_used": self.logprobs}
        # what the requests carry, now that the endpoint said what it accepts
        self.sampling = sent_sampling(self.spec.sampling, self.capabilities.params)
        if self.row_created:
            self.store.set_run_capabilities(self.summary.run_id, caps, sampling=self.sampling)
        else:
            self.create_row(caps)
        self.started = True

    def create_row(self, capabilities: dict[str, Any] | None = None) -> None:
        """Record the run (once): before its first outcome is stored or linked.

        Before any probe (every call cached) the sampling provenance is what the
        endpoint's stored capabilities say its requests would carry.
        """
        if self.row_created:
            return
        if self.capabilities is None:
            self.sampling = sent_sampling(self.spec.sampling, stored_support(
                self.store.get_capabilities(self.spec.public_base_url, self.spec.model)))
        self.store.create_run(RunRecord(
            id=self.summary.run_id, kind=self.kind, dataset=self.dataset,
            rubric_hash=self.rubric.sha256, model=self.spec.model,
            base_url=self.spec.public_base_url, sampling=self.sampling,
            capabilities=capabilities or {}, judgekit_version=__version__, started_at=utc_now(),
        ))
        self.row_created = True

    def flush_links(self) -> None:
        """Record the outcomes of other runs this run took so far (one transaction)."""
        if self.links:
            self.create_row()
            self.store.stand_for(self.summary.run_id, self.links)
            self.links = []

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()

    def finish(self, elapsed_s: float) -> None:
        """Record how the run ended: its row (all cached: recorded, endpoint untouched),
        the outcomes it stands for, and its summary with each URL's figures."""
        self.summary.elapsed_s = elapsed_s
        failed_early = not self.row_created and (self.summary.error or self.summary.interrupted)
        if not failed_early or self.links:
            self.create_row()
        self.flush_links()
        if self.client is not None:  # per URL: attempts, failures, pacing waits
            self.summary.replicas = self.client.replica_stats()
        if self.row_created:
            self.store.finish_run(self.summary.run_id, self.summary.as_dict())

    def key_for(self, unit: WorkUnit, sample: int) -> str:
        return unit_key(self.rubric, unit, self.spec, dataset=self.dataset, sample=sample)

    def judgment(self, task: _Task, result: CallResult) -> Judgment:
        unit = task.unit
        call = CallRef(unit.item.id, unit.variant, task.sample, task.key,
                       unit.source_hash or unit.item.content_hash, unit.swap_labels)
        return judgment_of(result, call, rubric=self.rubric, run_id=self.summary.run_id,
                           dataset=self.dataset, model=self.spec.model,
                           endpoint=self.spec.public_base_url, sampling=self.sampling)

    async def produce(
        self, units: Iterator[WorkUnit], samples: int, force: bool, retry_failed: bool,
        queue: asyncio.Queue[_Task | None], workers: int,
    ) -> None:
        """Look keys up chunk by chunk, claim the calls still needed and queue them.

        Calls another run is making are deferred, then waited for at the end.
        """
        batch: list[Call] = []
        for call in lookup(self.store, units, samples, self.key_for):
            self.summary.total += 1
            if call.seen is not None and not needs_call(
                call.seen, force=force, retry_failed=retry_failed
            ):
                assert call.seen_id is not None  # an outcome was found: it has a row
                self.cached(call.seen_id, call.seen)
                continue
            batch.append(call)
            if len(batch) >= workers:
                await self.enqueue(self.claims.claim(batch), queue)
                batch = []
        await self.enqueue(self.claims.claim(batch), queue)
        if self.claims.deferred:
            self.progress.note(self.claims.waiting_note())
        while self.claims.deferred:
            await asyncio.sleep(POLL_S)
            claimed, answered = self.claims.settle()
            for row_id, judgment in answered:
                self.cached(row_id, judgment, other_run=True)
            await self.enqueue(claimed, queue)
        self.flush_links()
        for _ in range(workers):
            await queue.put(None)

    def cached(self, row_id: int, judgment: Judgment, *, other_run: bool = False) -> None:
        """Count an outcome another run made and stand for it (recorded in chunks)."""
        self.summary.add_cached(judgment.status, other_run=other_run, made_by=judgment.run_id)
        if judgment.run_id != self.summary.run_id:
            self.links.append(row_id)
            if len(self.links) >= CHUNK_SIZE:
                self.flush_links()
        self.progress.advance(cached=True)

    async def enqueue(
        self, claimed: list[tuple[Call, int | None]], queue: asyncio.Queue[_Task | None]
    ) -> None:
        for call, supersedes in claimed:
            messages = unit_messages(self.rubric, call.unit)
            await self.start()
            await queue.put(_Task(call.unit, call.sample, call.key, messages, supersedes))

    async def work(self, queue: asyncio.Queue[_Task | None]) -> None:
        """Judge queued calls until the end marker or a stop; commit each outcome at once."""
        me = asyncio.current_task()
        assert me is not None
        while not self.stopper.requested.is_set():
            task = await queue.get()
            if task is None:
                return
            assert self.client is not None  # calls are queued only after start()
            self.calling.add(me)
            try:
                result = await self.client.judge(
                    task.messages, self.rubric.scale,
                    response_format=self.response_format, before_attempt=self.before_attempt,
                    logprobs=self.logprobs, sleep=self.stopper.sleep, read=self.read,
                )
            except CallStopped:
                return
            finally:
                self.calling.discard(me)
            self.record(task, result)

    def record(self, task: _Task, result: CallResult) -> None:
        """Store one outcome under its claim and count it; a fatal failure stops the run."""
        judgment = self.judgment(task, result)
        stored = self.claims.record(judgment, task.supersedes)
        if not stored:  # another run stored this call's outcome first: it stands for it
            found = self.store.latest_judgments_by_key([task.key]).get(task.key)
            if found is not None and found[1].run_id != self.summary.run_id:
                self.links.append(found[0])
        self.summary.add_judged(
            result.status, attempts=result.attempts, prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens, stored=stored)
        self.progress.advance(failed=result.status != "ok")
        if result.failure is not None and result.failure.fatal:
            raise EndpointError(
                f"judge endpoint {self.spec.public_base_url} refused the request: "
                f"{result.failure.message}"
                f"{endpoint_hint(self.spec, result.failure.http_status)}"
            )


async def arun_judgments(
    store: Store,
    rubric: Rubric,
    items: Iterable[Item | WorkUnit],
    spec: JudgeSpec,
    *,
    dataset: str,
    variants: Sequence[str] = ("",),
    samples: int = 1,
    force: bool = False,
    retry_failed: bool = False,
    progress: bool | None = None,
    total: int | None = None,
    kind: str = "judge",
    http_client: httpx2.AsyncClient | None = None,
) -> RunSummary:
    """Judge ``items`` with ``rubric`` against ``spec``'s endpoint; returns the run summary.

    :func:`run_judgments` is the blocking form, with the same arguments.

    - ``items``: :class:`~judgekit.types.Item` objects (each judged in every
      variant of ``variants``, built with :func:`unit_for`) and/or ready
      :class:`WorkUnit` objects (judged as given). Any iterable; streamed.
    - ``dataset``: the dataset name stored on every judgment.
    - ``samples``: independent samples per unit (sample index is in the cache key).
    - ``force``: re-judge everything; ``retry_failed``: re-judge answered
      failures (parse_error, refusal, truncated). Transient failures are always
      retried.
    - ``progress``: None shows a bar only on a terminal or in a notebook; ``total`` sizes it for
      iterators; ``kind`` is the run kind recorded (``"probe:position"``...).
    - ``http_client``: an ``httpx2.AsyncClient`` for the ``openai`` client (tests
      pass one with a mock transport).

    Raises :class:`~judgekit.errors.EndpointError` when the endpoint is unusable
    (unreachable, bad key, unknown model); judgments finished before are kept.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if total is None and isinstance(items, Sequence):
        total = len(items) * samples * (1 if _all_units(items) else len(variants))
    store.save_rubric(rubric)
    bar = Progress(total, enabled=progress)
    try:
        run = _Run(store, rubric, spec, dataset, kind, bar, http_client)
    except BaseException:
        bar.close()  # a live bar stops drawing (and gives the cursor back)
        raise
    run.summary.planned = total
    await execute(run, units_of(items, variants), samples, force, retry_failed)
    return run.summary


async def execute(run: _Run, units: Iterator[Any], samples: int, force: bool,
                  retry_failed: bool) -> None:
    """Run ``run``'s workers and producer to the end (or a stop) and record how it ended.

    Shared with :mod:`judgekit.judging.joint`, whose run makes one call per item
    for every criterion of a file (``units`` are whatever its producer takes).
    """
    started, spec = time.perf_counter(), run.spec
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=spec.concurrency * 2)
    with run.stopper.on_sigint():
        tasks = [asyncio.create_task(run.work(queue)) for _ in range(spec.concurrency)]
        tasks.append(asyncio.create_task(run.produce(
            units, samples, force, retry_failed, queue, spec.concurrency)))
        renewals = asyncio.create_task(run.claims.keep_alive())
        try:
            await supervise(tasks, run.stopper, run.calling.__contains__)
        except BaseException as exc:
            run.summary.interrupted = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
            run.summary.error = None if run.summary.interrupted else redact(str(exc), spec.secrets)
            raise
        finally:
            renewals.cancel()
            await asyncio.gather(renewals, return_exceptions=True)
            run.progress.close()
            run.claims.release()
            run.finish(time.perf_counter() - started)
            await run.close()
            if run.summary.interrupted and run.stopper.by_signal:
                run.progress.note(run.summary.format())


def _all_units(items: Sequence[Item | WorkUnit]) -> bool:
    return all(isinstance(entry, WorkUnit) for entry in items)


run_judgments = blocking_form(
    arun_judgments,
    "Judge ``items`` with ``rubric`` against ``spec``'s endpoint; returns the run summary.\n\n"
    "Blocking form of :func:`arun_judgments` (same arguments, documented there).",
)
