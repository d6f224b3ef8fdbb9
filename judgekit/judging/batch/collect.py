"""``batch collect``: Batch API output and error lines stored as judgments.

Every line goes through the live path's answer parser and failure categories
(:func:`~judgekit.judging.batch.lines.line_result`) and the live runner's row
builder (:func:`~judgekit.judging.outcomes.judgment_of`), and is stored with
``Store.record_judgments``, the storage function of live judging. The rows
belong to a run ``batch:<id>`` (the provider's batch id, or the prepared
batch's id for a file collected with ``--output``) of the prepared batch's
kind, so reports, probes and reruns treat them like live judgments.

At most one outcome per call and collection:

- a custom id no prepared batch knows is reported, not stored;
- a call whose latest judgment is finished (``ok`` or an answered failure,
  from a live run or another batch) is reported and left alone: the batch's run
  stands for that outcome (``Store.stand_for``), as a live run does for a call
  the cache answered;
- a line for a call this run already stored (a duplicated line, or the same
  file collected again) is reported and skipped: collecting twice stores
  nothing new.

Every file is read through once before anything is stored, so a malformed
line stops the command with ``file:line`` and the store unchanged. Lines are
then handled in chunks of :data:`CHUNK_SIZE`: memory stays flat in the file size.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from judgekit import __version__
from judgekit.errors import StoreError
from judgekit.judging.outcomes import CallRef, judgment_of, utc_now
from judgekit.progress import advance, phase
from judgekit.rubrics import rubric_from_text
from judgekit.store import RunRecord, Store
from judgekit.store.batches import BatchJob, BatchRecord, BatchRequest
from judgekit.types import STATUSES, TRANSIENT_STATUSES, Judgment, Rubric

from .lines import OutputLine, line_result, read_output_lines

__all__ = ["CHUNK_SIZE", "CollectReport", "collect_files", "run_id_for"]

CHUNK_SIZE = 1000
#: Custom ids listed in a report, at most.
MAX_LISTED = 5


def run_id_for(batch_or_job_id: str) -> str:
    """The id of the run that holds a batch's judgments: its provenance ``batch:<id>``."""
    return f"batch:{batch_or_job_id}"


@dataclass
class CollectReport:
    """What one ``collect`` read and stored, and every line it did not store and why."""

    lines: int = 0
    stored: Counter[str] = field(default_factory=Counter)
    unknown: int = 0
    unknown_ids: list[str] = field(default_factory=list)
    duplicates: int = 0
    already_collected: int = 0
    already_finished: int = 0
    runs: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def n_stored(self) -> int:
        return sum(self.stored.values())

    def format(self) -> str:
        status = ", ".join(f"{s} {self.stored[s]}" for s in STATUSES if self.stored[s]) or "none"
        lines = [
            f"{self.lines} line(s) read: {self.n_stored} stored ({status})",
            f"  tokens: {self.prompt_tokens} prompt + {self.completion_tokens} completion",
        ]
        if self.runs:
            lines.append(f"  run(s): {', '.join(self.runs)}")
        if self.already_collected:
            lines.append(f"  {self.already_collected} already collected from this batch "
                         "(skipped)")
        if self.duplicates:
            lines.append(f"  {self.duplicates} duplicated line(s) for one call (skipped)")
        if self.already_finished:
            lines.append(f"  {self.already_finished} call(s) already finished elsewhere "
                         "(a live run or another batch; skipped)")
        if self.unknown:
            shown = ", ".join(self.unknown_ids)
            lines.append(f"  {self.unknown} line(s) with a custom_id no prepared batch in "
                         f"this store knows (skipped): {shown}")
        return "\n".join(lines)


@dataclass
class _Target:
    """One prepared batch being collected into its run."""

    batch: BatchRecord
    rubric: Rubric
    run_id: str
    job_id: str | None
    counts: Counter[str] = field(default_factory=Counter)
    started: bool = False


class _Collector:
    def __init__(self, store: Store, job: BatchJob | None,
                 secrets: Sequence[str | None] = ()) -> None:
        self.store, self.job, self.secrets = store, job, tuple(s for s in secrets if s)
        self.report = CollectReport()
        self.watermark = store.last_judgment_id()
        self.targets: dict[str, _Target] = {}

    def target(self, batch_id: str) -> _Target:
        found = self.targets.get(batch_id)
        if found is not None:
            return found
        batch = self.store.get_batch(batch_id)
        text = None if batch is None else self.store.get_rubric_text(batch.rubric_hash)
        if batch is None or text is None:
            raise StoreError(f"prepared batch {batch_id!r} is incomplete in {self.store.path}")
        rubric = rubric_from_text(text, path=f"<store:{batch.rubric_hash[:12]}>")
        job_id = self.job.id if self.job is not None else None
        found = _Target(batch, rubric, run_id_for(job_id or batch_id), job_id)
        self.targets[batch_id] = found
        return found

    def start(self, target: _Target) -> None:
        """The run that holds the batch's judgments: created on first use, reused after."""
        if target.started:
            return
        if self.store.get_run(target.run_id) is None:
            batch = target.batch
            self.store.create_run(RunRecord(
                id=target.run_id, kind=batch.kind, dataset=batch.dataset,
                rubric_hash=batch.rubric_hash, model=batch.model, base_url=batch.base_url,
                sampling=batch.sampling,
                capabilities={**batch.request, "logprobs_used": batch.request.get("logprobs"),
                              "batch": batch.id, "job": target.job_id},
                judgekit_version=__version__, started_at=utc_now(),
            ))
        target.started = True
        self.report.runs.append(target.run_id)

    def chunk(self, lines: Sequence[OutputLine]) -> None:
        report = self.report
        report.lines += len(lines)
        ids = [line.custom_id for line in lines]
        known = self.store.batch_requests(
            ids, batch_id=self.job.batch_id if self.job is not None else None)
        previous = self.store.latest_statuses(known)
        seen: set[str] = set()
        made: list[tuple[_Target, Judgment]] = []
        stood: dict[str, tuple[_Target, list[int]]] = {}
        for line in lines:
            request = known.get(line.custom_id)
            if request is None:
                report.unknown += 1
                if len(report.unknown_ids) < MAX_LISTED:
                    report.unknown_ids.append(line.custom_id)
                continue
            target = self.target(request.batch_id)
            if line.custom_id in seen:
                report.duplicates += 1
                continue
            prior = previous.get(line.custom_id)
            if prior is not None and prior[1] == target.run_id:
                if prior[0] > self.watermark:
                    report.duplicates += 1
                else:
                    report.already_collected += 1
                continue
            if prior is not None and prior[2] not in TRANSIENT_STATUSES:
                report.already_finished += 1
                stood.setdefault(target.run_id, (target, []))[1].append(prior[0])
                continue
            seen.add(line.custom_id)
            made.append((target, self.judgment(target, request, line)))
        for target, _ in made:
            self.start(target)
        self.store.record_judgments([judgment for _, judgment in made])
        for target, outcomes in stood.values():
            self.start(target)
            self.store.stand_for(target.run_id, outcomes)
        for target, judgment in made:
            report.stored[judgment.status] += 1
            target.counts[judgment.status] += 1
            report.prompt_tokens += judgment.prompt_tokens or 0
            report.completion_tokens += judgment.completion_tokens or 0

    def judgment(self, target: _Target, request: BatchRequest, line: OutputLine) -> Judgment:
        batch = target.batch
        structured = batch.request.get("response_format", "none") != "none"
        # an answer that echoes the API key must not store it: masked as on the live path
        result = line_result(line, target.rubric.scale, structured=structured,
                             secrets=self.secrets)
        call = CallRef(request.item_id, request.variant, request.sample_index, request.custom_id,
                       request.item_hash, request.swap_labels)
        return judgment_of(result, call, rubric=target.rubric, run_id=target.run_id,
                           dataset=batch.dataset, model=batch.model,
                           endpoint=batch.base_url, sampling=batch.sampling)

    def finish(self) -> None:
        """Add this collection's counts to each run's summary."""
        for target in self.targets.values():
            if not target.started:
                continue
            run = self.store.get_run(target.run_id)
            before: dict[str, Any] = dict(run.summary) if run is not None else {}
            counts = Counter(before.get("counts") or {})
            counts.update(target.counts)
            judged = sum(counts.values())
            self.store.finish_run(target.run_id, {
                "total": judged, "cached": 0, "judged": judged, "requests": 0,
                "counts": {s: counts[s] for s in STATUSES if counts[s]},
                "new_counts": {s: target.counts[s] for s in STATUSES if target.counts[s]},
                "batch": target.batch.id, "job": target.job_id,
                "response_format": target.batch.request.get("response_format"),
            })


def _validated(paths: Sequence[Path]) -> None:
    """Read every line once: a malformed one raises before anything is stored."""
    for path in paths:
        for _ in read_output_lines(path):
            pass


def _all_lines(paths: Sequence[Path]) -> Iterator[OutputLine]:
    for path in paths:
        yield from read_output_lines(path)


def collect_files(store: Store, paths: Sequence[Path], *, job: BatchJob | None = None,
                  secrets: Sequence[str | None] = ()) -> CollectReport:
    """Store the lines of Batch API output/error ``paths``; see the module docstring.

    ``job`` names the provider batch the files came from: only its prepared
    batch's calls are accepted and the run is ``batch:<job id>``. Without it,
    each line is matched to the latest prepared batch that holds its custom id.
    ``secrets`` (the API key) are replaced by ``***`` in every stored text.
    """
    phase("checking files")
    _validated(paths)
    collector = _Collector(store, job, secrets)
    lines = _all_lines(paths)
    phase("storing answers")
    try:
        while chunk := list(islice(lines, CHUNK_SIZE)):
            collector.chunk(chunk)
            advance(len(chunk))
    finally:
        collector.finish()
    return collector.report
