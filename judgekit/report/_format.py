"""Number formatting shared by the text, Markdown and HTML renderers.

One place decides how a figure, its interval and its n are written, so the
formats cannot drift apart and no renderer can print a number without its n.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

from judgekit.report.model import (
    Bias,
    Health,
    ProbeEntry,
    Provenance,
    Report,
    Stat,
    VerdictResult,
)

#: Human-readable names of statistic keys, in the order the report lists them.
STAT_LABELS: dict[str, str] = {
    "cohen_kappa": "Cohen's kappa",
    "weighted_kappa": "Quadratic-weighted kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "percent_agreement": "Percent agreement",
    "gwet_ac1": "Gwet's AC1",
    "pabak": "PABAK (2p_o - 1)",
    "prevalence_human": "Prevalence (human 'pass')",
    "prevalence_judge": "Prevalence (judge 'pass')",
    "tpr": "Judge TPR vs human",
    "tnr": "Judge TNR vs human",
    "spearman": "Spearman rho",
    "kendall_tau": "Kendall tau-b",
    "exact_agreement": "Exact agreement",
    "within_one_agreement": "Within-1 agreement",
    "mean_bias": "Mean signed bias (judge - human)",
    "agreement_with_ties": "Agreement (ties included)",
    "agreement_without_ties": "Agreement (ties excluded)",
    "decisive_kappa": "Cohen's kappa (decisive pairs: both chose a side)",
    "judge_minus_human_agreement": "Judge-human minus human-human agreement",
    "fleiss_kappa": "Fleiss' kappa (nominal: every level its own category)",
    "mean_pairwise_weighted_kappa": "Annotator pairs' mean quadratic-weighted kappa",
    "judge_mean_weighted_kappa": "Judge vs each annotator: mean quadratic-weighted kappa",
    "mean_pairwise_cohen_kappa": "Annotator pairs' mean Cohen's kappa",
    "judge_mean_cohen_kappa": "Judge vs each annotator: mean Cohen's kappa",
    # probe statistics (docs/probes.md); the JSON keeps the stored keys
    "position_consistency": "Position consistency",
    "conflict_rate": "Conflict rate (1 - consistency)",
    "first_slot_rate": "First-slot rate",
    "second_slot_rate": "Second-slot rate",
    "position_fairness": "Position fairness (PF: -1 always first, +1 always last)",
    "bpde": "Position entropy (BPDE)",
    "first_slot_test": "First-slot preference among inconsistent pairs (exact binomial test)",
    "level_order_shift": "Level-order shift (reversed - as written)",
    "length_correlation": "Length correlation (Spearman)",
    "length_kendall": "Length correlation (Kendall tau-b)",
    "human_length_correlation": "Human length correlation (Spearman)",
    "length_slope": "Score change per doubling of length (fixed effects by prompt)",
    "length_slope_human_adjusted": (
        "Score change per doubling of length beyond the human score (fixed effects by prompt)"
    ),
    "padding_shift": "Padding shift (padded - original)",
    "padding_flip_rate": "Padding flip rate",
    "prefer_longer_rate": "P(prefers longer)",
    "human_prefer_longer_rate": "Human P(prefers longer)",
    "repetition_stability": "Repetition stability",
    "flip_rate": "Flip rate across repeats",
    "repeat_fleiss_kappa": "Fleiss' kappa across repeats",
    "repeat_alpha": "Krippendorff's alpha across repeats",
    "injection_net": ("Injection net move toward the target, toward - away (worst template and "
                      "position; simultaneous CI)"),
    "injection_flip_rate": "Injection moves toward the target (worst template and position; "
                           "counts noise too)",
    "injection_shift": "Injection shift toward the target (all templates and positions)",
    "injection_net_pooled": "Injection net move toward the target (all templates and positions)",
    "injection_sign_test": "Items moved toward vs away from the injected target (exact binomial)",
    "identical_decisive_rate": "Decisive verdicts on identical pairs",
    "expected_calibration_error": "Expected calibration error (debiased)",
    "plug_in_calibration_error": "Plug-in calibration error (biased upward at small n)",
    "identical_first_slot_share": "First slot among decisive verdicts on identical pairs",
    "identical_slot_imbalance": "Slot imbalance on identical pairs |2P(A)-1|",
    "judge_own_win_rate": "Judge's win rate for its own family",
    "human_own_win_rate": "People's win rate for the judge's family",
    "own_rated_above_human": "Own family rated above people",
    "other_rated_above_human": "Other families rated above people",
    "other_rated_above_human_same_levels": "Other families rated above people, at own's levels",
    "self_preference_unstratified": "Self-preference before stratifying by human level",
    "self_preference": "Self-preference (judge - people)",
}
#: Per-cell figures of the injection probe (``injection_flip_rate[fake_json@end]``).
CELL_LABELS: dict[str, str] = {
    "injection_net": "Injection net move",
    "injection_vs_placebo": "Injection net move relative to the placebo",
    "injection_flip_rate": "Injection flip rate",
    "injection_shift": "Injection shift",
}


def label_of(key: str) -> str:
    """The display name of a statistic key (a key without one: its words, capitalised)."""
    if key in STAT_LABELS:
        return STAT_LABELS[key]
    base, _, cell = key.partition("[")
    if base in CELL_LABELS and cell.endswith("]"):
        template, _, position = cell[:-1].partition("@")
        return f"{CELL_LABELS[base]}: {template} at the {position}"
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else key


def num(value: float | None, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals; never ``-0.000`` (a value that rounds to zero)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value:.{digits}f}"
    if text.startswith("-") and not text.strip("-0."):
        return text[1:]
    return text


def interval(stat: Stat, digits: int = 3) -> str:
    if not (math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high)):
        return "[n/a]"
    return f"[{num(stat.ci_low, digits)}, {num(stat.ci_high, digits)}]"


def stat_text(stat: Stat, digits: int = 3) -> str:
    """``0.712 [0.650, 0.770] n=412`` (plus ``(note)``) or ``n/a (reason) n=3``."""
    if not stat.defined:
        reason = f" ({stat.reason})" if stat.reason else ""
        return f"n/a{reason} n={stat.n}"
    note = f" ({stat.note})" if stat.note else ""
    value = f"{num(stat.statistic, digits)} {interval(stat, digits)} n={stat.n}"
    return f"{value}{p_suffix(stat)}{note}"


def p_suffix(stat: Stat) -> str:
    """`` p=0.012`` for a figure that carries a p-value, else empty; a p-value by cluster
    says so (`` p=0.210 (clustered by prompt, 12 clusters)``)."""
    cell = p_cell(stat)
    return "" if not cell else f" p={cell}"


def p_cell(stat: Stat) -> str:
    """The p-value as a table cell shows it (empty when there is none): by cluster when
    items share one, named so, else the one that treats items as independent."""
    if stat.cluster_p is not None:
        return f"{pvalue_text(stat.cluster_p.pvalue)} ({stat.cluster_p.label()})"
    return "" if stat.pvalue is None else pvalue_text(stat.pvalue)


def has_pvalues(stats: Mapping[str, Stat]) -> bool:
    """Whether any figure of a table carries a p-value (the table then gets a p column)."""
    return any(stat.shown_pvalue is not None for stat in stats.values())


def pct(count: int, total: int) -> str:
    return "n/a" if total == 0 else f"{100.0 * count / total:.1f}%"


def pvalue_text(p: float) -> str:
    if not math.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def sampling_text(sampling: Mapping[str, object], empty: str = "") -> str:
    """One run's sampling parameters as ``k=v, ...`` in key order (``empty`` when none)."""
    def shown(key: str, value: object) -> object:  # a vote (rubric [sampling]) in words
        if key == "vote" and isinstance(value, Mapping):
            return f"verdict is the {value.get('aggregate')} of {value.get('samples')} samples"
        return value

    return ", ".join(f"{k}={shown(k, v)}" for k, v in sorted(sampling.items())) or empty


def provenance_pairs(
    p: Provenance,
    judge_labels: tuple[str, str] = ("Judge model (requested)", "Judge model (returned)"),
    empty_sampling: str = "",
    hash_chars: int | None = None,
) -> list[tuple[str, str]]:
    """The provenance rows as (field, value), shared by the text and HTML renderers.

    ``judge_labels`` names the requested and returned model rows; ``empty_sampling``
    stands for a run without sampling parameters; ``hash_chars`` shortens the rubric's
    sha256 (the terminal's 80 columns; the JSON report keeps it whole).
    """
    digest = p.rubric_sha256 if hash_chars is None else p.rubric_sha256[:hash_chars]
    sampling = "; ".join(sampling_text(s, empty_sampling) for s in p.sampling)
    return [
        ("Rubric", f"{p.rubric_name} v{p.rubric_version} (sha256 {digest})"),
        ("Dataset", ", ".join(p.datasets) or "-"),
        (judge_labels[0], ", ".join(p.judge_models_requested) or "-"),
        (judge_labels[1], ", ".join(p.judge_models_returned) or "-"),
        ("Endpoint", ", ".join(p.endpoints) or "-"),
        ("Sampling", sampling or "-"),
        ("Runs", (", ".join(p.run_ids) or "-") + (" (imported)" if p.imported else "")),
        (
            "judgekit",
            f"{p.report_judgekit_version} (report); judged with "
            f"{', '.join(p.judgekit_versions) or '-'}",
        ),
        ("Judged", f"{p.first_judgment_at or '-'} .. {p.last_judgment_at or '-'}"),
        ("Generated", p.generated_at),
        ("Counts", counts_text(p)),
        *(("Note", note) for note in p.notes),
    ]


def counts_text(p: Provenance) -> str:
    """Judgments and labels, with the labels the reference left out (every format)."""
    text = (
        f"{p.n_judgments} judgments; {p.n_labels} labels from {p.n_annotators} "
        f"annotator(s) on {p.n_labeled_items} item(s)"
    )
    counts = p.label_counts
    extra = []
    if counts.get("unblinded_labels"):
        how = "pooled in: --include-unblinded" if p.unblinded_included else "left out"
        extra.append(f"{counts['unblinded_labels']} given with the judge shown ({how})")
    if counts.get("adjudicated_items"):
        extra.append(f"{counts['adjudicated_items']} item(s) adjudicated")
    if counts.get("no_majority_items"):
        extra.append(f"{counts['no_majority_items']} item(s) with no majority (left out)")
    if counts.get("flagged_items"):
        extra.append(f"{counts['flagged_items']} item(s) flagged")
    return text + (f"; {'; '.join(extra)}" if extra else "")


def no_rates_text(health: Health) -> str | None:
    """With no judgments, the one line that replaces the table of n/a rates, saying why
    (None when there are judgments: every rate is then defined)."""
    if health.total:
        return None
    reasons = {row.rate.reason for row in health.rows if row.rate.reason}
    return f"No status rates: {'; '.join(sorted(reasons)) or 'no judgments'}."


def failed_text(health: Health) -> str:
    """The health line on failed judgments of labeled items (Markdown and HTML)."""
    return (
        f"Failed judgments are excluded from agreement; {health.failed_labeled_items} "
        "labeled item(s) had one."
    )


#: What the judge-vs-human section says when no item could be compared.
NO_PAIRS_TEXT = "No item has both an ok judgment and a human label."


def rule_text(report: Report, ge: str = ">=") -> str:
    """The verdict rule in one line, e.g. ``Rule: lower 95% bound of Cohen's kappa >= 0.6``."""
    verdict = report.verdict
    return (
        f"Rule: lower {report.confidence_level:.0%} bound of {label_of(verdict.primary)} "
        f"{ge} {verdict.threshold:g}"
    )


def stale_text(health: Health) -> str | None:
    """The health line about judgments of an older version of their item (None when none)."""
    n = health.stale_labeled_items
    if not n:
        return None
    return (
        f"{n} judgment(s) are of an older version of their item (changed after it was judged) "
        "and are excluded from agreement; re-run judge."
    )


def labels_needed_text(verdict: VerdictResult, pm: str = "+/-") -> str | None:
    """How many more labels the verdict asks for, and what they are for (INSUFFICIENT DATA only).

    The verdict sizes the sample for one of two goals: when the estimate clears the
    threshold but the lower bound does not, for the lower bound to clear it (if the
    estimate held); otherwise for an interval of the target half-width.
    """
    if verdict.labels_needed is None:
        return None
    stat = verdict.statistic
    if stat.defined and stat.statistic >= verdict.threshold and not (
        stat.ci_low >= verdict.threshold
    ):
        return (
            f"About {verdict.labels_needed} more labeled item(s) would lift the lower bound of "
            f"the interval over {verdict.threshold:g}, if the estimate held."
        )
    return (
        f"About {verdict.labels_needed} more labeled item(s) are needed for a "
        f"{pm}{verdict.target_half_width:g} interval."
    )


#: The position probe of a pointwise rubric has no pairs: it lists the scale's levels as
#: written and reversed, so its figures are named for what was varied.
POINTWISE_POSITION_LABELS: dict[str, str] = {
    "position_consistency": "Level-order consistency (same verdict, levels reversed)",
    "conflict_rate": "Level-order conflict rate (verdict changed, levels reversed)",
    "first_slot_rate": "Moved toward the level listed first",
    "second_slot_rate": "Moved toward the level listed last",
    "first_slot_test": "Toward the level listed first among changed verdicts (exact binomial)",
    "bpde": "Verdict entropy over both level orders (BPDE)",
}
#: Figures about two response slots, left out where the probe had none (pointwise rubrics).
POINTWISE_HIDDEN = frozenset({"position_fairness"})


def pointwise_position(bias: Bias) -> bool:
    """Whether the stored position probe reversed a pointwise rubric's levels."""
    return any(e.probe == "position" and e.details.get("mode") == "pointwise"
               for e in bias.probes)


def bias_labels(bias: Bias, stats: Mapping[str, Stat]) -> list[tuple[str, Stat]]:
    """A bias table's figures as (display name, figure), named for what each probe varied.

    A pointwise rubric's position probe reverses the scale's levels, so its rows say
    so, and its position-fairness row (a pairs figure) is left out.
    """
    pointwise = pointwise_position(bias)
    out = []
    for key, stat in stats.items():
        if pointwise and key in POINTWISE_HIDDEN:
            continue
        name = POINTWISE_POSITION_LABELS.get(key) if pointwise else None
        out.append((name or label_of(key), stat))
    return out


def probe_extras(bias: Bias) -> Iterator[tuple[ProbeEntry, dict[str, Stat]]]:
    """Each stored probe with the statistics not already shown in the headline table."""
    for entry in bias.probes:
        others = {k: v for k, v in entry.stats.items() if k not in bias.headline}
        if others:
            yield entry, others


def probe_source(entry: ProbeEntry) -> str:
    """Where a probe entry's figures come from: its stored run, or the paired items."""
    return f"run {entry.run_id}" if entry.run_id else "computed from the paired items"


#: Names of the probes the report computes itself, for the "not computed" lines.
PAIRED_PROBE_NAMES = {
    "position": "Position probe",
    "scale_use": "Scale use",
    "confidence_calibration": "Confidence calibration",
    "self_preference": "Self-preference",
    "length_from_verdicts": "Length bias from the stored verdicts",
}


def absent_lines(bias: Bias) -> list[str]:
    """One line per probe the report could not compute, with the reason."""
    return [f"{PAIRED_PROBE_NAMES.get(name, name)} not computed: {reason}."
            for name, reason in bias.absent.items()]


def probe_note(entry: ProbeEntry) -> str | None:
    """A probe's sentence for the reader, when it has one (e.g. scale ends never used)."""
    note = entry.details.get("note")
    return str(note) if note else None


def ceiling_guide(report: Report) -> str | None:
    """Which human-human figure to read, when the ceiling shows more than one.

    On an ordinal scale Krippendorff's alpha is computed at the ordinal level (a
    near miss is near agreement) while Fleiss' kappa treats the levels as unordered,
    so the two can differ widely on the same labels.
    """
    ceiling = report.ceiling
    if ceiling is None or "krippendorff_alpha" not in ceiling.stats:
        return None
    kind = report.agreement.scale_kind if report.agreement is not None else None
    if kind == "ordinal":
        return ("Read Krippendorff's alpha: it is computed on the ordinal scale, so a "
                "near miss counts as near agreement; Fleiss' kappa treats the levels as "
                "unordered, so every off-by-one label counts as a full disagreement.")
    return ("Read Krippendorff's alpha (it allows items with different numbers of "
            "annotators); Fleiss' kappa is the same idea for a fixed number per item, and "
            "percent agreement is the share of agreeing annotator pairs, not corrected "
            "for chance.")
