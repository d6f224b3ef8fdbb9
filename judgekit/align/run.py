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
    held_out = {k: p for p in ("dev", "test") for k in split.parts[p]}
    check_no_leak(files, held_out)
    keys = [k for part in split.parts.values() for k in part]
    items = _items(store, keys)
    train, dev, test = (split.parts[p] for p in ("train", "dev", "test"))
    reference, scale = split.reference, baseline.scale
    counts = split.counts()
    say(f"split: {counts['train']} train, {counts['dev']} dev, {counts['test']} test labeled "
        f"item(s) (seed {split.record.seed})" + (f"; {split.added} newly labeled added"
                                                 if split.added else ""))
    for note in split.notes:
        say(f"note: {note}")
    candidates: list[Candidate] = list(files)
    if options.samples > 1:
        candidates.append(samples_candidate(baseline, options.samples, options.sample_temperature))
    say(estimate_line(store, baseline, candidates, split, items, spec, options))
    jury = jury_candidate(store, baseline, options.jury_runs) if options.jury_runs else None
    if jury is not None:
        candidates.append(jury.candidate)
        say(f"jury: {jury.candidate.changes} (stored verdicts: no call is made for it)")
    budget = Budget(options.max_calls)
    base = Candidate(BASELINE, BASELINE, baseline)

    def judged(candidate: Candidate, part: Sequence[ItemKey], name: str) -> Any:
        if jury is not None and candidate is jury.candidate:
            return jury.verdicts_on(part)
        budget.check(pending_calls(store, candidate, part, items, spec),
                     f"judging {candidate.name} on {name}")
        verdicts, failures, made = judge_part(store, candidate, part, items, spec,
                                              progress=options.progress)
        budget.made += made
        return verdicts, failures

    proposals: list[Proposal] = []
    if options.examples or options.revisions:
        train_verdicts, _ = judged(base, train, "train")
        if options.examples:
            picked = pick_examples(train, reference, train_verdicts, scale.labels,
                                   options.examples, split.record.seed)
            examples = examples_for(picked, items, reference, store.latest_labels(baseline.sha256))
            if examples:
                candidates.append(examples_candidate(baseline, examples, options.examples))
        if options.revisions and options.optimizer is not None:
            wrong = [k for k in train if train_verdicts.get(k) not in (None, reference[k])]
            messages = optimizer_messages(baseline, wrong[:MAX_CASES], items, reference,
                                          train_verdicts, _notes(store, baseline, reference))
            revised, proposals = propose(store, options.optimizer, baseline, options.revisions,
                                         messages)
            candidates += revised
            skipped = [p for p in proposals if p.status != "ok"]
            say(f"optimizer: {len(revised)} revision(s) proposed, {len(skipped)} skipped"
                + "".join(f"; #{p.index} {p.status}" for p in skipped))
    check_no_leak(candidates, held_out)
    names = [c.name for c in candidates]
    if not candidates:
        raise InputError("no candidate was made (no train item for examples, every optimizer "
                         "proposal skipped): nothing to compare with the baseline")
    if options.pick is not None and options.pick not in names:
        raise InputError(f"--pick {options.pick}: that candidate was not made (have: "
                         f"{', '.join(names)})")
    dev_scores: list[tuple[Candidate, PartScore]] = []
    for candidate in (base, *candidates):
        verdicts, failures = judged(candidate, dev, "dev")
        dev_scores.append((candidate, score_part(verdicts, failures, reference, dev, items,
                                                 scale, options.interval)))
    dev_scores.sort(key=lambda cs: -cs[1].primary.statistic
                    if cs[1].primary.defined else float("inf"))
    ranked = [c for c, _ in dev_scores if c.name != BASELINE]
    chosen = next(c for c in ranked if c.name == options.pick) if options.pick else ranked[0]
    who = _who()
    store.record_split_use(split.record.id, "dev", who,
                           [c.to_dict() for c, _ in dev_scores],
                           {"dev": [{"name": c.name, **s.to_dict()} for c, s in dev_scores]})
    uses_before = len(store.split_uses(split.record.id, "test"))
    base_test, _ = judged(base, test, "test")
    pick_test, _ = judged(chosen, test, "test")
    result = paired_difference(base_test, pick_test, reference, test, items, scale,
                               options.interval)
    notes = []
    if uses_before:
        notes.append(f"the test split has been used {uses_before} time(s) before for this "
                     "rubric: each look makes its figure less of a held-out one; label fresh "
                     "items for a clean test (new labels join the split by its rule)")
    aligned = AlignResult(baseline, split, dev_scores, chosen, result, uses_before, budget.made,
                          proposals, notes)
    store.record_split_use(split.record.id, "test", who, [base.to_dict(), chosen.to_dict()],
                           aligned.to_dict())
    return aligned
