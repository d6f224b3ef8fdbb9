"""Async batch judging: bounded concurrency, rate limit, cache/resume, progress.

:func:`run_judgments` judges work units (an item in a presentation variant,
times ``samples``) against one endpoint. It streams: units are read in chunks,
each chunk's cache keys are looked up in one query before any request is made
for it, and only calls whose latest stored outcome asks for it (see
:func:`judgekit.cache.needs_call`) are queued for a fixed pool of workers. Each
finished judgment is committed on its own, so a killed process loses nothing
finished and a rerun only requests the rest. Memory stays flat in the dataset
size: nothing per unit is kept after it is recorded.

Probes reuse it by passing :class:`WorkUnit` objects: e.g. a pair item with its
responses exchanged, ``variant="swapped"`` and ``swap_labels=True`` so the
verdict is mapped back to the original orientation (A<->B) before it is stored.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, TextIO

import httpx2

from judgekit import __version__
from judgekit.cache import cache_key, needs_call
from judgekit.clients.capabilities import Capabilities, capabilities_for
from judgekit.clients.openai_client import CallResult, JudgeClient, JudgeSpec, response_format_for
from judgekit.clients.retry import RateLimiter
from judgekit.errors import EndpointError, InputError
from judgekit.parsing import PARSER_VERSION
from judgekit.rubrics import render_messages, verdict_json_schema
from judgekit.store import RunRecord, Store
from judgekit.types import STATUSES, Item, Judgment, Rubric, Scale

#: Units whose cache keys are looked up per query.
CHUNK_SIZE = 1000
#: Variants :func:`unit_for` can build from a plain item.
BUILTIN_VARIANTS = ("", "swapped", "reversed_levels")
_SWAP = {"A": "B", "B": "A"}


@dataclass(frozen=True)
class WorkUnit:
    """One item as presented to the judge.

    ``item`` is what the judge sees (for a swapped pair: responses already
    exchanged) and keeps the original ``id``. ``swap_labels`` maps a pairwise
    verdict back (A<->B) before storing; the raw text is kept as answered.
    ``source_hash`` is the content hash of the original item, stored on the
    judgment so it can be matched to the dataset (defaults to ``item``'s own).
    """

    item: Item
    variant: str = ""
    reverse_levels: bool = False
    swap_labels: bool = False
    source_hash: str | None = None


def swapped_pair(item: Item) -> Item:
    """``item`` with ``response_a`` and ``response_b`` exchanged (pairwise items only)."""
    if not item.is_pairwise:
        raise InputError(f"item {item.id!r} is not a pair; only pairs can be swapped")
    return replace(item, response_a=item.response_b, response_b=item.response_a)


def unit_for(item: Item, variant: str = "") -> WorkUnit:
    """The work unit for a built-in variant: ``""``, ``"swapped"`` or ``"reversed_levels"``."""
    if variant == "":
        return WorkUnit(item)
    if variant == "swapped":
        return WorkUnit(swapped_pair(item), "swapped", swap_labels=True,
                        source_hash=item.content_hash)
    if variant == "reversed_levels":
        return WorkUnit(item, "reversed_levels", reverse_levels=True)
    raise InputError(
        f"unknown variant {variant!r}: build a WorkUnit for it, or use one of "
        f"{', '.join(repr(v) for v in BUILTIN_VARIANTS)}"
    )


@dataclass
class RunSummary:
    """What a run did. ``counts`` holds the final status of every unit (cached or new)."""

    run_id: str
    dataset: str
    rubric_name: str
    rubric_hash: str
    model: str
    base_url: str
    total: int = 0
    cached: int = 0
    judged: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    new_counts: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    response_format: str | None = None
    interrupted: bool = False
    error: str | None = None

    @property
    def judgments_per_s(self) -> float:
        return self.judged / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "cached": self.cached,
            "judged": self.judged,
            "counts": {s: self.counts[s] for s in STATUSES if self.counts[s]},
            "new_counts": {s: self.new_counts[s] for s in STATUSES if self.new_counts[s]},
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "elapsed_s": round(self.elapsed_s, 3),
            "judgments_per_s": round(self.judgments_per_s, 2),
            "response_format": self.response_format,
            "interrupted": self.interrupted,
            "error": self.error,
        }

    def format(self) -> str:
        """A few human-readable lines for the end of a command."""
        statuses = ", ".join(f"{s} {self.counts[s]}" for s in STATUSES if self.counts[s]) or "none"
        lines = [
            f"run {self.run_id}: {self.total} judgments ({self.cached} cached, "
            f"{self.judged} judged now, {self.requests} requests)",
            f"  status: {statuses}",
            f"  tokens: {self.prompt_tokens} prompt + {self.completion_tokens} completion",
            f"  elapsed {self.elapsed_s:.1f} s, {self.judgments_per_s:.1f} judgments/s",
        ]
        if self.response_format is not None:
            lines.append(f"  judge: {self.model} at {self.base_url} "
                         f"(structured output: {self.response_format})")
        if self.interrupted:
            lines.append("  interrupted: rerun the same command to finish")
        if self.error:
            lines.append(f"  stopped: {self.error}")
        return "\n".join(lines)


class Progress:
    """A one-line progress bar with rate and ETA on a terminal; silent otherwise.

    ``enabled=None`` means "only if stderr is a TTY", so logs and CI stay clean.
    """

    def __init__(self, total: int | None, *, enabled: bool | None = None,
                 stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.done, self.cached, self.failed = total, 0, 0, 0
        self._start = time.perf_counter()
        self._last = 0.0

    def advance(self, *, cached: bool = False, failed: bool = False) -> None:
        self.done += 1
        self.cached += cached
        self.failed += failed
        if self.enabled and time.perf_counter() - self._last >= 0.1:
            self._draw()

    def _draw(self) -> None:
        self._last = now = time.perf_counter()
        judged = self.done - self.cached
        rate = judged / (now - self._start) if now > self._start else 0.0
        extra = f"  cached {self.cached}  failed {self.failed}"
        if self.total:
            share = min(1.0, self.done / self.total)
            bar = "#" * int(share * 24)
            left = self.total - self.done
            eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate else "?"
            line = (f"judging {self.done}/{self.total} [{bar:<24}] {share:6.1%} "
                    f"{rate:6.1f}/s ETA {eta}{extra}")
        else:
            line = f"judging {self.done} {rate:6.1f}/s{extra}"
        self.stream.write("\r" + line)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()


def score_for(scale: Scale, label: str | None) -> float | None:
    """Numeric score of a label: ordinal level value, binary pass=1/fail=0, else None."""
    if label is None:
        return None
    if scale.kind == "binary":
        return 1.0 if label == "pass" else 0.0
    return scale.value_of(label)


def unit_key(rubric: Rubric, unit: WorkUnit, spec: JudgeSpec, *, dataset: str,
             sample: int = 0) -> str:
    """The cache key of one call: find its stored outcome with ``Store.cached_judgments``.

    Probes use it to read back the latest judgment of each unit they ran,
    whichever run produced it (a cached unit keeps its original row).
    """
    return cache_key(
        model=spec.model, base_url=spec.public_base_url, rubric_hash=rubric.sha256,
        item_hash=unit.item.content_hash, sampling=spec.sampling.as_dict(),
        sample_index=sample, parser_version=PARSER_VERSION, dataset=dataset,
        item_id=unit.item.id, variant=unit.variant, reverse_levels=unit.reverse_levels,
    )


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def new_run_id() -> str:
    """Sortable and unique: UTC timestamp plus random suffix."""
    return f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def _units(items: Iterable[Item | WorkUnit], variants: Sequence[str]) -> Iterator[WorkUnit]:
    for entry in items:
        if isinstance(entry, WorkUnit):
            yield entry
        else:
            for variant in variants:
                yield unit_for(entry, variant)


@dataclass(frozen=True)
class _Task:
    unit: WorkUnit
    sample: int
    key: str
    messages: list[dict[str, str]]


class _Run:
    """State of one run while it executes (kept off the public API)."""

    def __init__(
        self, store: Store, rubric: Rubric, spec: JudgeSpec, dataset: str, kind: str,
        client: JudgeClient, progress: Progress,
    ) -> None:
        self.store, self.rubric, self.spec = store, rubric, spec
        self.dataset, self.kind, self.client, self.progress = dataset, kind, client, progress
        self.summary = RunSummary(
            run_id=new_run_id(), dataset=dataset, rubric_name=rubric.name,
            rubric_hash=rubric.sha256, model=spec.model, base_url=spec.public_base_url,
        )
        self.capabilities: Capabilities | None = None
        self.response_format: dict[str, Any] | None = None
        self.started = False
        self.limiter = RateLimiter(spec.rpm) if spec.rpm else None

    async def start(self, *, probe: bool) -> None:
        """Probe (or recall) capabilities and create the run row; once, lazily.

        A run with nothing to judge never touches the endpoint.
        """
        if self.started:
            return
        caps: dict[str, Any] = {}
        if probe:
            self.capabilities = await capabilities_for(self.store, self.client)
            mode = self.capabilities.response_format_mode
            self.response_format = response_format_for(mode, verdict_json_schema(self.rubric))
            self.summary.response_format = mode
            caps = {**self.capabilities.as_dict(), "response_format": mode}
        self.store.create_run(RunRecord(
            id=self.summary.run_id, kind=self.kind, dataset=self.dataset,
            rubric_hash=self.rubric.sha256, model=self.spec.model,
            base_url=self.spec.public_base_url, sampling=self.spec.sampling.as_dict(),
            capabilities=caps, judgekit_version=__version__, started_at=_now(),
        ))
        self.started = True

    def key_for(self, unit: WorkUnit, sample: int) -> str:
        return unit_key(self.rubric, unit, self.spec, dataset=self.dataset, sample=sample)

    def judgment(self, task: _Task, result: CallResult) -> Judgment:
        unit = task.unit
        verdict = result.verdict
        label = verdict.label if verdict is not None else None
        if label is not None and unit.swap_labels:
            label = _SWAP.get(label, label)
        if verdict is not None:
            error = verdict.detail if verdict.status != "ok" else None
        else:
            error = result.failure.message if result.failure else None
        return Judgment(
            run_id=self.summary.run_id, dataset=self.dataset, item_id=unit.item.id,
            sample_index=task.sample, status=result.status,  # type: ignore[arg-type]
            label=label, score=score_for(self.rubric.scale, label),
            reasoning=verdict.reasoning if verdict is not None else None,
            raw_text=result.raw_text, model_requested=self.spec.model,
            model_returned=result.model_returned, base_url=self.spec.public_base_url,
            sampling=self.spec.sampling.as_dict(), rubric_name=self.rubric.name,
            rubric_version=self.rubric.version, rubric_hash=self.rubric.sha256,
            cache_key=task.key, variant=unit.variant, prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens, latency_ms=result.latency_ms,
            finish_reason=result.finish_reason, error=error,
            judgekit_version=__version__, created_at=_now(),
            item_hash=unit.source_hash or unit.item.content_hash,
        )

    async def produce(
        self, units: Iterator[WorkUnit], samples: int, force: bool, retry_failed: bool,
        queue: asyncio.Queue[_Task | None], workers: int,
    ) -> None:
        """Look keys up chunk by chunk and queue the calls still needed."""
        summary = self.summary
        while chunk := list(islice(units, CHUNK_SIZE)):
            keyed = [(u, s, self.key_for(u, s)) for u in chunk for s in range(samples)]
            cached = self.store.cached_judgments(k for _, _, k in keyed)
            for unit, sample, key in keyed:
                summary.total += 1
                previous = cached.get(key)
                if previous is not None and not needs_call(
                    previous, force=force, retry_failed=retry_failed
                ):
                    summary.cached += 1
                    summary.counts[previous.status] += 1
                    self.progress.advance(cached=True)
                    continue
                messages = render_messages(self.rubric, unit.item,
                                           reverse_levels=unit.reverse_levels)
                await self.start(probe=True)
                await queue.put(_Task(unit, sample, key, messages))
        for _ in range(workers):
            await queue.put(None)

    async def work(self, queue: asyncio.Queue[_Task | None]) -> None:
        """Judge queued calls until the end marker; commit each outcome at once."""
        summary = self.summary
        before = self.limiter.acquire if self.limiter is not None else None
        while (task := await queue.get()) is not None:
            result = await self.client.judge(
                task.messages, self.rubric.scale,
                response_format=self.response_format, before_attempt=before,
            )
            self.store.record_judgment(self.judgment(task, result))
            status = result.status
            summary.judged += 1
            summary.requests += result.attempts
            summary.counts[status] += 1
            summary.new_counts[status] += 1
            summary.prompt_tokens += result.prompt_tokens or 0
            summary.completion_tokens += result.completion_tokens or 0
            self.progress.advance(failed=status != "ok")
            if result.failure is not None and result.failure.fatal:
                raise EndpointError(
                    f"judge endpoint {self.spec.public_base_url} refused the request: "
                    f"{result.failure.message}"
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
    """Async form of :func:`run_judgments` (same arguments)."""
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if total is None and isinstance(items, Sequence):
        total = len(items) * samples * (1 if _all_units(items) else len(variants))
    store.save_rubric(rubric)
    started = time.perf_counter()
    bar = Progress(total, enabled=progress)
    async with JudgeClient(spec, http_client=http_client) as client:
        run = _Run(store, rubric, spec, dataset, kind, client, bar)
        queue: asyncio.Queue[_Task | None] = asyncio.Queue(maxsize=spec.concurrency * 2)
        tasks = [asyncio.create_task(run.work(queue)) for _ in range(spec.concurrency)]
        tasks.append(asyncio.create_task(run.produce(
            _units(items, variants), samples, force, retry_failed, queue, spec.concurrency)))
        try:
            await _wait_all(tasks)
        except BaseException as exc:
            run.summary.interrupted = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
            run.summary.error = None if run.summary.interrupted else str(exc)
            raise
        finally:
            bar.close()
            run.summary.elapsed_s = time.perf_counter() - started
            failed_early = not run.started and (run.summary.error or run.summary.interrupted)
            if not run.started and not failed_early:
                await run.start(probe=False)  # all cached: recorded, endpoint untouched
            if run.started:
                store.finish_run(run.summary.run_id, run.summary.as_dict())
    return run.summary


def _all_units(items: Sequence[Item | WorkUnit]) -> bool:
    return all(isinstance(entry, WorkUnit) for entry in items)


async def _wait_all(tasks: list[asyncio.Task[None]]) -> None:
    """Wait for every task; on the first error (or cancellation) cancel the rest and raise."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def run_judgments(
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
) -> RunSummary:
    """Judge ``items`` with ``rubric`` against ``spec``'s endpoint; returns the run summary.

    - ``items``: :class:`~judgekit.types.Item` objects (each judged in every
      variant of ``variants``, built with :func:`unit_for`) and/or ready
      :class:`WorkUnit` objects (judged as given). Any iterable; streamed.
    - ``dataset``: the dataset name stored on every judgment.
    - ``samples``: independent samples per unit (sample index is in the cache key).
    - ``force``: re-judge everything; ``retry_failed``: re-judge answered
      failures (parse_error, refusal, truncated). Transient failures are always
      retried.
    - ``progress``: None shows a bar only on a terminal; ``total`` sizes it for
      iterators; ``kind`` is the run kind recorded (``"probe:position"``...).

    Raises :class:`~judgekit.errors.EndpointError` when the endpoint is unusable
    (unreachable, bad key, unknown model); judgments finished before are kept.
    """
    return asyncio.run(arun_judgments(
        store, rubric, items, spec, dataset=dataset, variants=variants, samples=samples,
        force=force, retry_failed=retry_failed, progress=progress, total=total, kind=kind,
    ))
