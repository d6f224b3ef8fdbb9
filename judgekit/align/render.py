"""Text for ``judgekit align`` and ``align status`` (the report's Alignment section is
:mod:`judgekit.report.alignment`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.align.run import AlignResult
from judgekit.report.alignment import DEV_CAVEAT
from judgekit.report.model import Stat
from judgekit.store.splits import PARTS, SplitRecord, SplitUse


def _stat(stat: Stat) -> str:
    if not stat.defined:
        return f"undefined ({stat.reason or 'no items'})"
    if not (math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high)):
        return f"{stat.statistic:.2f} (no interval)"
    return f"{stat.statistic:.2f} [{stat.ci_low:.2f}, {stat.ci_high:.2f}]"


def format_result(result: AlignResult) -> str:
    rubric, split = result.rubric, result.split
    counts = split.counts()
    lines = [
        f"Alignment of rubric {rubric.name} v{rubric.version} [{rubric.sha256[:12]}]",
        f"split (seed {split.record.seed}): " + ", ".join(f"{counts[p]} {p}" for p in PARTS),
        "",
        f"Dev ({DEV_CAVEAT}):",
    ]
    for rank, (candidate, score) in enumerate(result.dev, start=1):
        failed = sum(score.failures.values())
        lines.append(
            f"  {rank}. {candidate.name:<14} kappa {_stat(score.primary):<22} agreement "
            f"{_stat(score.agreement):<22} n={score.n}" + (f" failed={failed}" if failed else ""))
        if candidate.changes:
            lines.append(f"     {candidate.changes}")
    test = result.test
    lines += [
        "",
        f"Test (held out; baseline and {result.picked.name} judged on {test.n} items):",
        f"  {test.sentence()}",
        f"  agreement difference {_signed(test.agreement_difference)} ({test.agreement_test}"
        + (f", p={test.pvalue:.3g}" if math.isfinite(test.pvalue) else "") + ")",
    ]
    if test.clusters is not None:
        lines.append(f"  intervals resample {test.clusters} clusters of items")
    skipped = [p for p in result.proposals if p.status != "ok"]
    if result.proposals:
        lines.append(f"  optimizer proposals: {len(result.proposals) - len(skipped)} used, "
                     f"{len(skipped)} skipped")
        for proposal in result.proposals:
            text = " ".join((proposal.text or proposal.error or "").split())
            cut = text if len(text) <= 160 else text[:160] + "..."
            lines.append(f"    #{proposal.index} {proposal.status}: {cut}")
    lines.append(f"  test used {result.test_uses_before + 1} time(s) for this rubric, "
                 "including this one")
    lines += [f"  note: {note}" for note in result.notes]
    lines.append(f"  judge calls made now: {result.calls_made}")
    return "\n".join(lines)


def _signed(stat: Stat) -> str:
    if not stat.defined:
        return "undefined"
    return f"{stat.statistic:+.2f} [{stat.ci_low:+.2f}, {stat.ci_high:+.2f}]"


def format_status(record: SplitRecord, counts: Mapping[str, int],
                  uses: Sequence[SplitUse]) -> str:
    tests = [u for u in uses if u.part == "test"]
    lines = [f"split drawn {record.created_at[:19]} with seed {record.seed}: "
             + ", ".join(f"{counts.get(p, 0)} {p} ({record.fractions[p]:g})" for p in PARTS),
             f"test split used {len(tests)} time(s)"]
    for use in tests:
        names = ", ".join(str(c.get("name")) for c in use.candidates)
        sentence = (use.result.get("test") or {}).get("sentence", "")
        lines.append(f"  {use.created_at[:19]} by {use.who}: {names}: {sentence}")
    if len(tests) > 1:
        lines.append("  the test split has been looked at more than once: label fresh items "
                     "for a clean held-out figure")
    return "\n".join(lines)


def status_dict(record: SplitRecord, counts: Mapping[str, int],
                uses: Sequence[SplitUse]) -> dict[str, Any]:
    return {
        "seed": record.seed, "fractions": dict(record.fractions),
        "created_at": record.created_at, "counts": dict(counts),
        "test_uses": [{"who": u.who, "created_at": u.created_at, "candidates": u.candidates,
                       "test": u.result.get("test")} for u in uses if u.part == "test"],
        "dev_uses": sum(u.part == "dev" for u in uses),
    }
