"""``probe consistency --imported``: self-consistency from repeated imported verdicts.

Kept apart from :mod:`judgekit.cli.probe` (the live probes) so that module stays one
job; the command's options are those of ``probe consistency`` and are checked here
before the store is opened.
"""

from __future__ import annotations

from typing import Any

from judgekit.cli._common import echo, echo_json, read_store
from judgekit.cli._progress import progress_bar
from judgekit.cli.probe import format_statistic
from judgekit.errors import InputError


def imported_consistency(opts: dict[str, Any], judge: str | None, samples_given: bool) -> None:
    """Read an imported judge's repeated verdicts, store and print the consistency probe."""
    from judgekit.judging.probe_imported import imported_consistency_probe
    from judgekit.rubrics import load_rubric

    if opts["base_url"] or opts["data"] is not None:
        raise InputError("--imported reads stored verdicts: give --dataset NAME, not "
                         "--data or --base-url")
    if samples_given:
        raise InputError("--samples is for a live probe: with --imported the samples are "
                         "those the verdicts were imported with")
    if not opts["dataset"]:
        raise InputError("--imported needs --dataset NAME (the dataset the verdicts are on)")
    rubric = load_rubric(opts["rubric"])
    with read_store(opts["db"]) as store, progress_bar("probe consistency", 4):
        outcome = imported_consistency_probe(store, rubric, opts["dataset"], judge)
    r = outcome.result
    if opts["as_json"]:
        echo_json(r, indent=2, sort_keys=True)
        return
    echo("\n".join([
        f"consistency probe (imported verdicts): rubric {r['rubric']['name']} "
        f"v{r['rubric']['version']} [{r['rubric']['sha256'][:12]}] on {r['dataset']!r} "
        f"({r['n_items']} items with repeated verdicts), judge {r['model']}",
        f"  run {r['run_id']}; up to {r['samples']} samples per item",
        format_statistic("repetition stability", r["repetition_stability"]),
        format_statistic("flip rate", r["flip_rate"]),
        format_statistic("Fleiss' kappa (repeats)", r["repeat_fleiss_kappa"]),
        format_statistic("Krippendorff's alpha", r["repeat_alpha"]),
    ]))
