"""Judging every criterion of a rubric file with one call per item (``per_call`` absent or false).

The call (:mod:`judgekit.criteria_joint`) asks for one JSON object with a
verdict per criterion; :mod:`judgekit.judging.joint_answer` reads it into one
result per criterion, and each is stored as an ordinary judgment of that
criterion's derived rubric (``NAME.CRITERION``), by one run per criterion, so
``report``, ``estimate``, ``compare``, ``export`` and ``runs`` see a criterion's
verdicts exactly as they see one call's.

What tells a joint verdict apart:

- **Provenance.** Its sampling (on the judgment and the run) carries
  ``joint_rubric``: the sha256 of the whole file, whose text the store keeps
  (table ``rubrics``): the prompt sent is the file's, and is rebuilt from it. A
  judge of one call per criterion is therefore another judge to the report
  (which asks to choose one when both exist), never silently mixed. Each run's
  summary names the file and every criterion's run (``joint``).
- **Cache key.** Each criterion's key is the ordinary key of its rubric and item
  with that sampling and the joint parser's version
  (:data:`~judgekit.parsing_joint.JOINT_PARSER_VERSION`): a joint verdict is
  never served to a run of one call per criterion, nor the other way round, and
  editing any criterion of the file re-judges the whole file's calls.
- **Accounting.** One call answers every criterion: its requests and tokens are
  counted once, on the first criterion's run and judgment row; the other
  criteria's runs count their outcomes with 0 requests and 0 tokens.

Claims, resume and concurrency are the runner's (:mod:`judgekit.judging.runner`,
whose run class this one extends): the keys of every criterion of an item are
claimed together (a call is made only when all are held), the outcomes of one
call are stored in one transaction (a kill never keeps half an answer), and an
item another run is judging is waited for, then stood for, criterion by criterion.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any

from judgekit.clients.request import response_format_for
from judgekit.clients.spec import JudgeSpec, endpoint_hint
from judgekit.criteria_joint import JointPlan
from judgekit.errors import EndpointError
from judgekit.judging.cache import cache_key, needs_call
from judgekit.judging.claims import POLL_S, owner_alive
from judgekit.judging.interrupt import blocking_form
from judgekit.judging.lookup import CHUNK_SIZE, new_run_id
from judgekit.judging.outcomes import CallRef, judgment_of
from judgekit.judging.progress import Progress, RunSummary
from judgekit.judging.runner import _Run, execute
from judgekit.parsing_joint import JOINT_PARSER_VERSION
from judgekit.store import Store
from judgekit.types import Item, Judgment

if TYPE_CHECKING:
    import httpx2

    from judgekit.clients.openai_client import CallResult

__all__ = ["JOINT_KEY", "JointSummary", "arun_joint", "has_pending_joint", "joint_keys",
           "run_joint"]

#: The sampling field naming the whole file (sha256) a joint verdict's call was made from.
JOINT_KEY = "joint_rubric"

_Seen = tuple[int | None, Judgment | None]


def joint_keys(plan: JointPlan, item: Item, spec: JudgeSpec, *, dataset: str, sample: int = 0,
               item_hash: str | None = None) -> list[str]:
    """The cache key of each criterion's verdict (file order) of one item's joint call."""
    sampling = {**spec.sampling.as_dict(), JOINT_KEY: plan.whole.sha256}
    content = item.content_hash if item_hash is None else item_hash
    return [cache_key(model=spec.model, base_url=spec.public_base_url, rubric_hash=rubric.sha256,
                      item_hash=content, sampling=sampling, sample_index=sample,
                      parser_version=JOINT_PARSER_VERSION, dataset=dataset, item_id=item.id)
            for rubric in plan.rubrics]


@dataclass
class _Group:
    """One joint call: an item and sample, each criterion's key and latest stored outcome."""

    item: Item
    item_hash: str
    sample: int
    keys: list[str]
    seen: list[_Seen]

    def needed(self, *, force: bool, retry_failed: bool) -> bool:
        return any(needs_call(judgment, force=force, retry_failed=retry_failed)
                   for _, judgment in self.seen)


@dataclass(frozen=True)
class _JointTask:
    group: _Group
    messages: list[dict[str, str]]
    supersedes: list[int | None]


def _groups(store: Store, plan: JointPlan, items: Iterator[Item], spec: JudgeSpec,
            dataset: str, samples: int) -> Iterator[_Group]:
    """Every call (item, sample) with its keys and their latest outcomes, one query per chunk."""
    while chunk := list(islice(items, CHUNK_SIZE)):
        groups = []
        for item in chunk:
            content = item.content_hash
            for sample in range(samples):
                keys = joint_keys(plan, item, spec, dataset=dataset, sample=sample,
                                  item_hash=content)
                groups.append(_Group(item, content, sample, keys, []))
        found = store.latest_judgments_by_key(k for g in groups for k in g.keys)
        for group in groups:
            group.seen = [found.get(key, (None, None)) for key in group.keys]
            yield group


def has_pending_joint(store: Store, plan: JointPlan, items: Iterable[Item], spec: JudgeSpec, *,
                      dataset: str, samples: int = 1, force: bool = False,
                      retry_failed: bool = False) -> bool:
    """Whether :func:`run_joint` would make any call now (reads the store only)."""
    return any(group.needed(force=force, retry_failed=retry_failed)
               for group in _groups(store, plan, iter(items), spec, dataset, samples))


class _JointRun(_Run):
    """A run whose calls answer every criterion: one run row and summary per criterion."""

    def __init__(self, store: Store, plan: JointPlan, spec: JudgeSpec, dataset: str, kind: str,
                 progress: Progress, http_client: httpx2.AsyncClient | None) -> None:
        self.plan = plan  # before the base sets ``sampling``, which names the file
        super().__init__(store, plan.rubrics[0], spec, dataset, kind, progress, http_client)
        self.summaries = [self.summary] + [
            RunSummary(run_id=new_run_id(), dataset=dataset, rubric_name=rubric.name,
                       rubric_hash=rubric.sha256, model=spec.model, base_url=spec.public_base_url)
            for rubric in plan.rubrics[1:]]
        self.joint_links: dict[str, list[int]] = {s.run_id: [] for s in self.summaries}
        self.waiting: list[_Group] = []

    @property
    def sampling(self) -> dict[str, Any]:
        """The sampling provenance of every row: what the requests carry, and the file."""
        return self._sampling

    @sampling.setter
    def sampling(self, value: dict[str, Any]) -> None:
        self._sampling = {**value, JOINT_KEY: self.plan.whole.sha256}

    async def start(self) -> None:
        if self.started:
            return
        # imports the openai client, like the base start: a run with every call cached never does
        from judgekit.judging.joint_answer import read_joint

        self.read = partial(read_joint, scales=self.plan.scales)
        await super().start()
        assert self.capabilities is not None
        self.response_format = response_format_for(self.capabilities.response_format_mode,
                                                   self.plan.schema())
        first = self.store.get_run(self.summary.run_id)
        assert first is not None
        for summary in self.summaries[1:]:
            self.store.set_run_capabilities(summary.run_id, dict(first.capabilities),
                                            sampling=self.sampling)

    def create_row(self, capabilities: dict[str, Any] | None = None) -> None:
        """Record every criterion's run (once), as the first criterion's is recorded."""
        if self.row_created:
            return
        super().create_row(capabilities)
        first = self.store.get_run(self.summary.run_id)
        assert first is not None
        for rubric, summary in zip(self.plan.rubrics[1:], self.summaries[1:], strict=True):
            self.store.create_run(replace(first, id=summary.run_id, rubric_hash=rubric.sha256))

    def flush_links(self) -> None:
        if any(self.joint_links.values()):
            self.create_row()
            for run_id, ids in self.joint_links.items():
                if ids:
                    self.store.stand_for(run_id, ids)
            self.joint_links = {run_id: [] for run_id in self.joint_links}

    def cached_group(self, group: _Group, *, other_run: bool = False) -> None:
        """Count an item's outcomes another run made, criterion by criterion, and stand for them."""
        for summary, (row_id, judgment) in zip(self.summaries, group.seen, strict=True):
            assert row_id is not None and judgment is not None
            summary.add_cached(judgment.status, other_run=other_run, made_by=judgment.run_id)
            if judgment.run_id != summary.run_id:
                self.joint_links[summary.run_id].append(row_id)
        self.progress.advance(cached=True)
        if sum(map(len, self.joint_links.values())) >= CHUNK_SIZE:
            self.flush_links()

    def claim(self, groups: list[_Group]) -> list[tuple[_Group, list[int | None]]]:
        """Claim every key of each group; a group not wholly claimed waits (keys released)."""
        if not groups:
            return []
        owner = self.claims.owner
        result = self.store.claim_calls(
            {key: row_id for g in groups for key, (row_id, _) in zip(g.keys, g.seen, strict=True)},
            owner, ttl_s=self.claims.ttl_s, owner_alive=owner_alive)
        self.claims.holders.update(result.busy.values())
        claimed = []
        for group in groups:
            if all(key in result.claimed for key in group.keys):
                claimed.append((group, [result.claimed[key] for key in group.keys]))
                continue
            for key in group.keys:
                if key in result.claimed:
                    self.store.release_claim(key, owner)
            self.waiting.append(group)
        return claimed

    def settle(self) -> tuple[list[tuple[_Group, list[int | None]]], list[_Group]]:
        """Look at the waiting groups again: (groups claimed now, groups another run answered)."""
        groups, self.waiting = self.waiting, []
        latest = self.store.latest_judgments_by_key(k for g in groups for k in g.keys)
        again: list[_Group] = []
        answered: list[_Group] = []
        for group in groups:
            now: list[_Seen] = [latest.get(key, (None, None)) for key in group.keys]
            if [row for row, _ in now] != [row for row, _ in group.seen] and all(
                    judgment is not None and not needs_call(judgment) for _, judgment in now):
                answered.append(replace(group, seen=now))
                continue
            group.seen = now
            again.append(group)
        return self.claim(again), answered

    async def produce(self, units: Iterator[Any], samples: int, force: bool, retry_failed: bool,
                      queue: asyncio.Queue[Any], workers: int) -> None:
        """Look keys up chunk by chunk, claim the calls still needed and queue them."""
        pending: list[_Group] = []
        for group in _groups(self.store, self.plan, units, self.spec, self.dataset, samples):
            for summary in self.summaries:
                summary.total += 1
            if not group.needed(force=force, retry_failed=retry_failed):
                self.cached_group(group)
                continue
            pending.append(group)
            if len(pending) >= workers:
                await self.enqueue_groups(self.claim(pending), queue)
                pending = []
        await self.enqueue_groups(self.claim(pending), queue)
        if self.waiting:
            self.progress.note(
                f"{len(self.waiting)} item(s) are being judged by another run on this store "
                f"({', '.join(sorted(self.claims.holders))}): waiting for its answers")
        while self.waiting:
            await asyncio.sleep(POLL_S)
            claimed, answered = self.settle()
            for group in answered:
                self.cached_group(group, other_run=True)
            await self.enqueue_groups(claimed, queue)
        self.flush_links()
        for _ in range(workers):
            await queue.put(None)

    async def enqueue_groups(self, claimed: list[tuple[_Group, list[int | None]]],
                             queue: asyncio.Queue[Any]) -> None:
        for group, supersedes in claimed:
            messages = self.plan.messages(group.item)
            await self.start()
            await queue.put(_JointTask(group, messages, supersedes))

    def record(self, task: Any, result: CallResult) -> None:
        """Store every criterion's outcome of one call together; a fatal failure stops the run."""
        from judgekit.judging.joint_answer import for_criterion

        group: _Group = task.group
        outcomes = []
        for index, ((name, rubric), summary) in enumerate(
                zip(self.plan.criteria, self.summaries, strict=True)):
            call = CallRef(group.item.id, "", group.sample, group.keys[index], group.item_hash)
            judgment = judgment_of(for_criterion(result, name, tokens=index == 0), call,
                                   rubric=rubric, run_id=summary.run_id, dataset=self.dataset,
                                   model=self.spec.model, endpoint=self.spec.public_base_url,
                                   sampling=self.sampling)
            outcomes.append((judgment, task.supersedes[index]))
        stored = self.store.record_claimed_many(outcomes, self.claims.owner)
        for index, (summary, kept) in enumerate(zip(self.summaries, stored, strict=True)):
            judgment = outcomes[index][0]
            if not kept:  # another run stored this outcome first: this run stands for it
                found = self.store.latest_judgments_by_key([judgment.cache_key]).get(
                    judgment.cache_key)
                if found is not None and found[1].run_id != summary.run_id:
                    self.joint_links[summary.run_id].append(found[0])
            first = index == 0
            summary.add_judged(judgment.status, attempts=result.attempts if first else 0,
                               prompt_tokens=result.prompt_tokens if first else None,
                               completion_tokens=result.completion_tokens if first else None,
                               stored=kept)
        self.progress.advance(failed=any(j.status != "ok" for j, _ in outcomes))
        if result.failure is not None and result.failure.fatal:
            raise EndpointError(
                f"judge endpoint {self.spec.public_base_url} refused the request: "
                f"{result.failure.message}{endpoint_hint(self.spec, result.failure.http_status)}")

    def finish(self, elapsed_s: float) -> None:
        """Record how the run ended on every criterion's run, naming the file and the runs."""
        first = self.summary
        for summary in self.summaries:
            summary.elapsed_s, summary.planned = elapsed_s, first.planned
            summary.interrupted, summary.error = first.interrupted, first.error
        if not (not self.row_created and (first.error or first.interrupted)) or any(
                self.joint_links.values()):
            self.create_row()
        self.flush_links()
        if self.client is not None:
            first.replicas = self.client.replica_stats()
        if self.row_created:
            joint = {"rubric": self.plan.whole.sha256, "name": self.plan.whole.name,
                     "runs": {name: s.run_id for name, s in zip(
                         self.plan.names, self.summaries, strict=True)},
                     "calls_counted_on": first.run_id}
            for summary in self.summaries:
                self.store.finish_run(summary.run_id, {**summary.as_dict(), "joint": joint})


@dataclass(frozen=True)
class JointSummary:
    """What a joint run did: the calls (first criterion's run) and each criterion's outcomes."""

    plan: JointPlan
    runs: tuple[RunSummary, ...]

    def format(self) -> str:
        lines = self.runs[0].format().splitlines()
        lines[0] = (lines[0].replace(" judgments (", " items (", 1)
                    + f"; one call per item answers all {len(self.runs)} criteria")
        lines[1:2] = [f"  criterion {name}: run {summary.run_id}: {summary.status_line()}"
                      for name, summary in zip(self.plan.names, self.runs, strict=True)]
        return "\n".join(lines)


async def arun_joint(
    store: Store, plan: JointPlan, items: Iterable[Item], spec: JudgeSpec, *, dataset: str,
    samples: int = 1, force: bool = False, retry_failed: bool = False,
    progress: bool | None = None, total: int | None = None, kind: str = "judge",
    http_client: httpx2.AsyncClient | None = None,
) -> JointSummary:
    """Judge ``items`` on every criterion of ``plan`` with one call per item (and sample).

    Arguments as :func:`judgekit.judging.runner.arun_judgments` (no variants: a
    joint call presents the item as it is). Stores the whole file and every
    criterion's rubric; returns each criterion's run summary.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if total is None and isinstance(items, Sequence):
        total = len(items) * samples
    store.save_rubric(plan.whole)
    for rubric in plan.rubrics:
        store.save_rubric(rubric)
    bar = Progress(total, enabled=progress)
    try:
        run = _JointRun(store, plan, spec, dataset, kind, bar, http_client)
    except BaseException:
        bar.close()
        raise
    for summary in run.summaries:
        summary.planned = total
    await execute(run, iter(items), samples, force, retry_failed)
    return JointSummary(plan, tuple(run.summaries))


run_joint = blocking_form(
    arun_joint,
    "Judge ``items`` on every criterion of ``plan``, one call per item; returns the summaries."
    "\n\nBlocking form of :func:`arun_joint` (same arguments, documented there).",
)
