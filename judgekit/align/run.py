"""The ``align`` loop: candidates judged on dev, the best confirmed once on test.

1. The split (drawn once, :mod:`judgekit.align.splits`); newly labeled items join it.
2. The baseline judged on train, where examples and the optimizer's cases come from.
3. Every candidate judged on dev and ranked by the primary statistic. These figures are
   *selected*: the best of several noisy estimates is biased upward (the winner's curse,
   ``benchmarks/bench_align.py``), so they are shown as optimistic, never as the result.
4. The best candidate (or ``pick``) and the baseline judged on test, once: the paired
   difference there is the one number to quote. Every look at test is recorded, and a
   repeated look is said so, with the advice to label fresh items.

Calls go through the runner (cached, resumable); ``max_calls`` bounds the calls made,
checked against the exact count before each step.
"""

from __future__ import annotations

import getpass
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.align.candidates import (
    Candidate,
    check_no_leak,
    examples_candidate,
    examples_for,
    file_candidate,
    pick_examples,
    samples_candidate,
)
from judgekit.align.evaluate import (
    PairedResult,
    PartScore,
    Verdicts,
    judge_part,
    paired_difference,
    pending_calls,
    score_part,
)
from judgekit.align.jury import jury_candidate
from judgekit.align.optimizer import MAX_CASES, Optimizer, Proposal, optimizer_messages, propose
from judgekit.align.splits import Split, load_split
from judgekit.clients.spec import JudgeSpec
from judgekit.errors import InputError
from judgekit.prompts import render_messages
from judgekit.report.pairing import ItemKey
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.store import Store
from judgekit.types import Item, Rubric

BASELINE = "baseline"


@dataclass(frozen=True)
class AlignOptions:
    """What ``judgekit align`` was asked to try, and its limits."""

    candidate_files: Sequence[Path] = ()
    examples: int = 4
    samples: int = 0
    sample_temperature: float = 0.7
    revisions: int = 0
    optimizer: Optimizer | None = None
    #: stored runs of the baseline rubric combined as a jury candidate
    jury_runs: Sequence[str] = ()
    max_calls: int | None = None
    pick: str | None = None
    dataset: str | None = None
    fractions: Mapping[str, float] | None = None
    split_seed: int | None = None
    interval: IntervalSpec = field(default_factory=IntervalSpec)
    progress: bool | None = None


class BudgetExceeded(InputError):
    """The next step would make more calls than ``--max-calls`` leaves."""


@dataclass
class Budget:
    limit: int | None
    made: int = 0

    def check(self, pending: int, what: str) -> None:
        if self.limit is not None and self.made + pending > self.limit:
            raise BudgetExceeded(
                f"--max-calls {self.limit}: {what} needs {pending} more call(s) after "
                f"{self.made} made; rerun with a larger --max-calls to continue (judgments "
                "made so far are kept and not paid for again)")


@dataclass
class AlignResult:
    """Everything ``align`` found, for the text and JSON outputs and the store's record."""

    rubric: Rubric
    split: Split
    dev: list[tuple[Candidate, PartScore]]
    picked: Candidate
    test: PairedResult
    test_uses_before: int
    calls_made: int
    proposals: list[Proposal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        skipped = [p for p in self.proposals if p.status != "ok"]
        return {
            "rubric": {"name": self.rubric.name, "version": self.rubric.version,
                       "sha256": self.rubric.sha256},
            "split": {"seed": self.split.record.seed,
                      "fractions": dict(self.split.record.fractions),
                      "counts": self.split.counts(), "added": self.split.added},
            "dev": [{**c.to_dict(), **s.to_dict(), "selected": True} for c, s in self.dev],
            "dev_note": "selected on dev: the best of several estimates is optimistic",
            "picked": self.picked.to_dict(),
            "test": self.test.to_dict(),
            "test_uses_before": self.test_uses_before,
            "calls_made": self.calls_made,
            "proposals": [p.to_dict() for p in self.proposals],
            "proposals_skipped": len(skipped),
            "notes": list(self.notes),
        }


def _items(store: Store, keys: Sequence[ItemKey]) -> dict[ItemKey, Item]:
    out: dict[ItemKey, Item] = {}
    for name in sorted({k[0] for k in keys}):
        found = store.items_by_ids(name, [k[1] for k in keys if k[0] == name])
        out.update({(name, i): item for i, item in found.items()})
    return out


def _notes(store: Store, rubric: Rubric, reference: Mapping[ItemKey, str]) -> dict[ItemKey, str]:
    notes: dict[ItemKey, str] = {}
    for label in store.latest_labels(rubric.sha256):
        key = (label.dataset, label.item_id)
        if label.note and label.label == reference.get(key):
            notes.setdefault(key, label.note.strip())
    return notes


def estimate_line(store: Store, baseline: Rubric, candidates: Sequence[Candidate],
                  split: Split, items: Mapping[ItemKey, Item], spec: JudgeSpec,
                  options: AlignOptions) -> str:
    """What the run may cost, before any call: calls now needed, upper bounds, prompt tokens."""
    base = Candidate(BASELINE, BASELINE, baseline)
    dev, test, train = (split.parts[p] for p in ("dev", "test", "train"))
    known = sum(pending_calls(store, c, dev, items, spec) for c in (base, *candidates))
    if options.examples or options.revisions:
        known += pending_calls(store, base, train, items, spec)
    later = len(dev) * ((1 if options.examples else 0) + options.revisions)
    biggest = max([c.samples for c in candidates] + [options.samples or 1, 1])
    test_calls = pending_calls(store, base, test, items, spec) + len(test) * biggest
    sample = [items[k] for k in dev[:20]]
    chars = sum(len(m["content"]) for it in sample for m in render_messages(baseline, it))
    per_call = chars / max(len(sample), 1) / 4 + spec.sampling.max_tokens
    total = known + later + test_calls
    return (f"align: up to {total} judge call(s): {known} for the baseline and given candidates "
            f"on train/dev, up to {later} for generated candidates on dev, up to {test_calls} "
            f"on test; about {per_call * total:,.0f} tokens at most (prompt ~4 characters a "
            f"token plus --max-tokens {spec.sampling.max_tokens} per call)"
            + (f"; plus {options.revisions} optimizer call(s)" if options.revisions else ""))


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without one)
        return "unknown"


def expected_names(files: Sequence[Candidate], options: AlignOptions) -> list[str]:
    """The names the candidates will have, known before any is made (for ``--pick``)."""
    names = [c.name for c in files]
    if options.samples > 1:
        names.append(f"samples-{options.samples}")
    if options.examples:
        names.append(f"examples-{options.examples}")
    names += [f"revision-{i}" for i in range(1, options.revisions + 1)]
    if options.jury_runs:
        names.append(f"jury-{len(set(options.jury_runs))}")
    return names


def check_options(files: Sequence[Candidate], options: AlignOptions) -> None:
    """Refuse what would fail only after paid calls: no candidate, repeated names, --pick."""
    names = expected_names(files, options)
    if options.samples == 1:
        raise InputError("--samples: a sampling variant needs 2 or more samples per item")
    if not names:
        raise InputError("no candidate to try: give --candidate FILE, --examples K, "
                         "--samples K, --revisions N or --jury-run ID")
    if len(set(names)) != len(names):
        raise InputError(f"candidate names repeat ({', '.join(names)}): rename a --candidate "
                         "file")
    if options.pick is not None and options.pick not in names:
        raise InputError(f"--pick {options.pick}: no such candidate (have: {', '.join(names)})")


def run_align(store: Store, baseline: Rubric, spec: JudgeSpec, options: AlignOptions,
              say: Callable[[str], None] = lambda _: None) -> AlignResult:
    """The loop of the module docstring; ``say`` prints progress lines."""
    files = [file_candidate(path, baseline) for path in options.candidate_files]
    check_options(files, options)
    split = load_split(store, baseline, dataset=options.dataset, fractions=options.fractions,
                       seed=options.split_seed)
    loop = _Loop(store, baseline, spec, options, split)
    check_no_leak(files, loop.held_out)
    counts = split.counts()
    say(f"split: {counts['train']} train, {counts['dev']} dev, {counts['test']} test labeled "
        f"item(s) (seed {split.record.seed})" + (f"; {split.added} newly labeled added"
                                                 if split.added else ""))
    for note in split.notes:
        say(f"note: {note}")
    candidates: list[Candidate] = list(files)
    if options.samples > 1:
        candidates.append(samples_candidate(baseline, options.samples, options.sample_temperature))
    say(estimate_line(store, baseline, candidates, split, loop.items, spec, options))
    if loop.jury is not None:
        candidates.append(loop.jury.candidate)
        say(f"jury: {loop.jury.candidate.changes} (stored verdicts: no call is made for it)")
    candidates += loop.generate(say)
    check_no_leak(candidates, loop.held_out)
    names = [c.name for c in candidates]
    if not candidates:
        raise InputError("no candidate was made (no train item for examples, every optimizer "
                         "proposal skipped): nothing to compare with the baseline")
    if options.pick is not None and options.pick not in names:
        raise InputError(f"--pick {options.pick}: that candidate was not made (have: "
                         f"{', '.join(names)})")
    dev_scores = loop.rank_on_dev(candidates)
    ranked = [c for c, _ in dev_scores if c.name != BASELINE]
    chosen = next(c for c in ranked if c.name == options.pick) if options.pick else ranked[0]
    return loop.confirm_on_test(dev_scores, chosen)


class _Loop:
    """One ``align`` run's state: the split's items, the budget, the jury, who is running it."""

    def __init__(self, store: Store, baseline: Rubric, spec: JudgeSpec, options: AlignOptions,
                 split: Split) -> None:
        self.store, self.baseline, self.spec, self.options, self.split = (
            store, baseline, spec, options, split)
        self.held_out = {k: p for p in ("dev", "test") for k in split.parts[p]}
        self.items = _items(store, [k for part in split.parts.values() for k in part])
        self.budget = Budget(options.max_calls)
        self.base = Candidate(BASELINE, BASELINE, baseline)
        self.jury = (jury_candidate(store, baseline, options.jury_runs)
                     if options.jury_runs else None)
        self.proposals: list[Proposal] = []
        self.who = _who()

    def judged(self, candidate: Candidate, part: str) -> tuple[Verdicts, Counter[str]]:
        """A candidate's verdicts on a part: stored (jury) or judged now, within the budget."""
        keys = self.split.parts[part]
        if self.jury is not None and candidate is self.jury.candidate:
            return self.jury.verdicts_on(keys)
        self.budget.check(pending_calls(self.store, candidate, keys, self.items, self.spec),
                          f"judging {candidate.name} on {part}")
        verdicts, failures, made = judge_part(self.store, candidate, keys, self.items,
                                              self.spec, progress=self.options.progress)
        self.budget.made += made
        return verdicts, failures

    def generate(self, say: Callable[[str], None]) -> list[Candidate]:
        """The candidates made from train: few-shot examples, optimizer revisions."""
        options, reference = self.options, self.split.reference
        if not (options.examples or options.revisions):
            return []
        train = self.split.parts["train"]
        verdicts, _ = self.judged(self.base, "train")
        made: list[Candidate] = []
        if options.examples:
            picked = pick_examples(train, reference, verdicts, self.baseline.scale.labels,
                                   options.examples, self.split.record.seed)
            examples = examples_for(picked, self.items, reference,
                                    self.store.latest_labels(self.baseline.sha256))
            if examples:
                made.append(examples_candidate(self.baseline, examples, options.examples))
        if options.revisions and options.optimizer is not None:
            wrong = [k for k in train if verdicts.get(k) not in (None, reference[k])]
            messages = optimizer_messages(self.baseline, wrong[:MAX_CASES], self.items,
                                          reference, verdicts,
                                          _notes(self.store, self.baseline, reference))
            revised, self.proposals = propose(self.store, options.optimizer, self.baseline,
                                              options.revisions, messages)
            made += revised
            skipped = [p for p in self.proposals if p.status != "ok"]
            say(f"optimizer: {len(revised)} revision(s) proposed, {len(skipped)} skipped"
                + "".join(f"; #{p.index} {p.status}" for p in skipped))
        return made

    def rank_on_dev(self, candidates: Sequence[Candidate]) -> list[tuple[Candidate, PartScore]]:
        """Baseline and candidates scored on dev, best first (undefined last); recorded."""
        scores: list[tuple[Candidate, PartScore]] = []
        dev = self.split.parts["dev"]
        for candidate in (self.base, *candidates):
            verdicts, failures = self.judged(candidate, "dev")
            scores.append((candidate, score_part(verdicts, failures, self.split.reference, dev,
                                                 self.items, self.baseline.scale,
                                                 self.options.interval)))
        scores.sort(key=lambda cs: -cs[1].primary.statistic
                    if cs[1].primary.defined else float("inf"))
        self.store.record_split_use(
            self.split.record.id, "dev", self.who, [c.to_dict() for c, _ in scores],
            {"dev": [{"name": c.name, **s.to_dict()} for c, s in scores]})
        return scores

    def confirm_on_test(self, dev_scores: list[tuple[Candidate, PartScore]],
                        chosen: Candidate) -> AlignResult:
        """Baseline and ``chosen`` judged on test once; the paired difference, recorded."""
        record = self.split.record
        uses_before = len(self.store.split_uses(record.id, "test"))
        base_test, _ = self.judged(self.base, "test")
        pick_test, _ = self.judged(chosen, "test")
        result = paired_difference(base_test, pick_test, self.split.reference,
                                   self.split.parts["test"], self.items, self.baseline.scale,
                                   self.options.interval)
        notes = []
        if uses_before:
            notes.append(f"the test split has been used {uses_before} time(s) before for this "
                         "rubric: each look makes its figure less of a held-out one; label "
                         "fresh items for a clean test (new labels join the split by its rule)")
        aligned = AlignResult(self.baseline, self.split, dev_scores, chosen, result, uses_before,
                              self.budget.made, self.proposals, notes)
        self.store.record_split_use(record.id, "test", self.who,
                                    [self.base.to_dict(), chosen.to_dict()], aligned.to_dict())
        return aligned
