"""judgekit.stats: the numbers a calibration decision rests on.

Pure functions on arrays (numpy, scipy, krippendorff; no I/O). Results follow
scipy's conventions: a frozen object with ``.statistic``, ``.n`` (units
actually used), ``.pvalue`` where a test exists, and
``.confidence_interval(confidence_level=0.95, ...) -> (low, high)``. An
undefined statistic is NaN with a ``.reason``; invalid input raises
``ValueError`` naming the problem. Formulas and sources: docs/statistics.md.
"""

from __future__ import annotations

from judgekit.stats._result_correlation import CorrelationResult
from judgekit.stats._result_kappa import GwetResult, KappaResult
from judgekit.stats._result_multirater import AlphaResult, FleissKappaResult
from judgekit.stats._result_outcomes import (
    BinomialTestResult,
    GroupAccuracy,
    GroupedAccuracyResult,
    McNemarResult,
    PairedBootstrapResult,
    ProportionResult,
)
from judgekit.stats.aggregate import grouped_accuracy, pass_at_k, pass_hat_k
from judgekit.stats.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
)
from judgekit.stats.bias import (
    LengthEffectResult,
    PaddingEffectResult,
    PositionBiasResult,
    PreferLongerResult,
    RepetitionResult,
    length_effect,
    level_order_bias,
    padding_effect,
    position_bias,
    prefer_longer_rate,
    repetition_stability,
)
from judgekit.stats.correlation import kendall_tau, spearman
from judgekit.stats.intervals import bootstrap_ci, paired_bootstrap, wilson_interval
from judgekit.stats.planning import kappa_sample_size, proportion_sample_size
from judgekit.stats.ppi import EstimateResult, classical_mean, ppi_mean, ppi_sample_size
from judgekit.stats.ppi_designs import (
    DifferenceResult,
    StratifiedResult,
    ppi_mean_difference,
    ppi_mean_stratified,
)
from judgekit.stats.rogan_gladen import RoganGladenResult, rogan_gladen
from judgekit.stats.significance import (
    ClusterDifferenceTest,
    benjamini_hochberg,
    binomial_test,
    cluster_difference_test,
    mcnemar,
)

__all__ = [
    "AlphaResult",
    "BinomialTestResult",
    "ClusterDifferenceTest",
    "CorrelationResult",
    "DifferenceResult",
    "EstimateResult",
    "FleissKappaResult",
    "GroupAccuracy",
    "GroupedAccuracyResult",
    "GwetResult",
    "KappaResult",
    "LengthEffectResult",
    "McNemarResult",
    "PaddingEffectResult",
    "PairedBootstrapResult",
    "PositionBiasResult",
    "PreferLongerResult",
    "ProportionResult",
    "RepetitionResult",
    "RoganGladenResult",
    "StratifiedResult",
    "benjamini_hochberg",
    "binomial_test",
    "bootstrap_ci",
    "classical_mean",
    "cluster_difference_test",
    "cohen_kappa",
    "fleiss_kappa",
    "grouped_accuracy",
    "gwet_ac1",
    "kappa_sample_size",
    "kendall_tau",
    "krippendorff_alpha",
    "length_effect",
    "level_order_bias",
    "mcnemar",
    "padding_effect",
    "paired_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "percent_agreement",
    "position_bias",
    "ppi_mean",
    "ppi_mean_difference",
    "ppi_mean_stratified",
    "ppi_sample_size",
    "prefer_longer_rate",
    "proportion_sample_size",
    "repetition_stability",
    "rogan_gladen",
    "spearman",
    "wilson_interval",
]
