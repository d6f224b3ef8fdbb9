"""``judgekit plan --estimate ppi``: labels needed for a PPI++ estimate of a given half-width.

The PPI++ variance with n labels is sigma^2 / n * (1 - rho^2 N / (N + n)), so the
plan needs the variance of the human outcome (sigma^2), the judge-human
correlation (rho) and the number of judged items (N). They come from the store
(the estimate's own labeled pairs and judged items) or from the command line;
the answer is set beside labels only (rho = 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from judgekit.errors import InputError


def moments_from_store(
    db: str, rubric: str, dataset: str | None, judge_run: str | None, model: str | None
) -> dict[str, Any]:
    """sigma^2, rho, n and N of the headline target, from the estimate's inputs."""
    from judgekit.cli._common import report_inputs
    from judgekit.cli._progress import progress_bar
    from judgekit.cli.report import REPORT_STEPS
    from judgekit.report import build_report

    with report_inputs(db, rubric, dataset=dataset, judge_run=judge_run, model=model,
                       n_resamples=50) as (store, rub, options), progress_bar(
                           "plan", REPORT_STEPS - 1):  # build_report's phases
        section = build_report(store, rub, options).estimate
    if section is None or not section.target_specs or section.inputs is None:
        raise InputError(
            f"no estimate target for rubric {rub.name!r}"
            + (f": {section.reason}" if section and section.reason else "")
        )
    target, inputs = section.target_specs[0], section.inputs
    if len(inputs.labeled) < 3:
        raise InputError(
            f"{len(inputs.labeled)} labeled item(s) with a verdict: need 3 or more to measure the "
            "judge; give --correlation and --expected instead"
        )
    y = np.array([target.values[x] for x in inputs.human])
    f = np.array([target.values[x] for x in inputs.judge_labeled])
    rho = float(np.corrcoef(y, f)[0, 1]) if y.std() > 0 and f.std() > 0 else 0.0
    return {
        "target": target.key,
        "variance": float(y.var(ddof=1)),
        "correlation": rho if math.isfinite(rho) else 0.0,
        "current": len(inputs.labeled),
        "judged": len(inputs.judged),
        "source": "store",
    }


def plan_estimate(
    half_width: float,
    *,
    variance: float,
    correlation: float,
    judged: float,
    confidence_level: float,
    current: int,
) -> dict[str, Any]:
    """Labels needed by PPI++ and by labels only (what ``--format json`` prints)."""
    from judgekit import stats

    try:
        ppi = stats.ppi_sample_size(
            half_width=half_width,
            variance=variance,
            correlation=correlation,
            n_unlabeled=judged,
            confidence_level=confidence_level,
        )
        labels_only = stats.ppi_sample_size(
            half_width=half_width, variance=variance, confidence_level=confidence_level
        )
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    return {
        "estimate": "ppi",
        "half_width": half_width,
        "confidence_level": confidence_level,
        "variance": variance,
        "correlation": correlation,
        "judged": None if math.isinf(judged) else int(judged),
        "labels_needed": ppi,
        "labels_only_needed": labels_only,
        "current": current,
        "more_needed": max(0, ppi - current),
        "formula": "Var = sigma^2 / n * (1 - rho^2 N / (N + n)); labels only: rho = 0",
    }


def plan_text(result: dict[str, Any]) -> str:
    """Two or three lines for the terminal."""
    judged = "unlimited" if result["judged"] is None else str(result["judged"])
    lines = [
        f"{result['labels_needed']} labels for a {result['confidence_level']:.0%} PPI++ interval "
        f"of +/-{result['half_width']:g} (labels only: {result['labels_only_needed']}); "
        f"judge-human correlation {result['correlation']:.3f}, outcome variance "
        f"{result['variance']:.4f}, {judged} judged items.",
    ]
    if result["current"]:
        lines.append(f"You have {result['current']}; {result['more_needed']} more needed.")
    return "\n".join(lines)


__all__ = ["moments_from_store", "plan_estimate", "plan_text"]
