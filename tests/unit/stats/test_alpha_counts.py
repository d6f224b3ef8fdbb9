"""Krippendorff's alpha from a units x values count table: the same alpha as from raters x units.

Alpha is defined on the coincidence matrix, which is built from each unit's value counts; the
counts entry point lets a crowd cost its labels rather than raters x units cells. Checked
against the ``krippendorff`` package's own raters x units path (its ``reliability_data``) on
random data with missing values, and against Krippendorff's (2011) published example.
"""

from __future__ import annotations

import math
import random

import krippendorff
import numpy as np
import pytest

from judgekit.report.ceiling import human_ceiling
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.stats import krippendorff_alpha
from tests.support.annotate import rubric

LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units.
EXAMPLE = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def counts_of(data: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Units x values: how many raters gave each value of ``domain`` to each unit."""
    return np.stack([(data == v).sum(axis=0) for v in domain], axis=1).astype(float)


@pytest.mark.parametrize("level", LEVELS)
def test_the_published_example(level: str) -> None:
    domain = np.arange(1, 6, dtype=float)
    alpha = krippendorff_alpha(value_counts=counts_of(EXAMPLE, domain), level=level,
                               value_domain=domain.tolist())
    assert round(alpha.statistic, 3) == PUBLISHED[level]
    assert alpha.n == 11  # the last unit has one value: not pairable


@pytest.mark.parametrize("seed", range(12))
def test_random_data_with_missing_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters, units, k = int(rng.integers(2, 40)), int(rng.integers(3, 60)), int(rng.integers(2, 6))
    domain = np.sort(rng.choice(np.arange(0, 20), size=k, replace=False)).astype(float)
    data = domain[rng.integers(0, k, size=(raters, units))]
    data[rng.random((raters, units)) < rng.uniform(0.1, 0.8)] = np.nan
    data[:2, 0] = domain[:2]  # at least one pairable unit with two different values
    counts = counts_of(data, domain)
    for level in LEVELS:
        by_counts = krippendorff_alpha(value_counts=counts, level=level,
                                       value_domain=domain.tolist())
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level,
                                      value_domain=domain)
        assert by_counts.statistic == pytest.approx(expected, rel=1e-9, abs=1e-12), level
        by_data = krippendorff_alpha(data, level=level, value_domain=domain.tolist())
        assert by_counts.statistic == pytest.approx(by_data.statistic, rel=1e-12, abs=1e-15)
        assert (by_counts.n, by_counts.n_pairable_values) == (by_data.n, by_data.n_pairable_values)
        assert by_counts.confidence_interval(n_resamples=200) == pytest.approx(
            by_data.confidence_interval(n_resamples=200))


def test_undefined_and_bad_tables() -> None:
    one = krippendorff_alpha(value_counts=[[2, 0], [3, 0]])
    assert math.isnan(one.statistic) and "every pairable value is 0" in (one.reason or "")
    none = krippendorff_alpha(value_counts=[[1, 0], [0, 1]])
    assert math.isnan(none.statistic) and "nothing is pairable" in (none.reason or "")
    for bad, message in (([[1.5, 1]], "whole numbers"), ([[-1, 2]], "whole numbers"),
                         ([1, 2], "units x values")):
        with pytest.raises(ValueError, match=message):
            krippendorff_alpha(value_counts=bad)
    with pytest.raises(ValueError, match="3 values for 2 columns"):
        krippendorff_alpha(value_counts=[[1, 1]], value_domain=["a", "b", "c"])
    with pytest.raises(ValueError, match="not both"):
        krippendorff_alpha([[1, 2]], value_counts=[[1, 1]])
    with pytest.raises(ValueError, match="increasing"):
        krippendorff_alpha(value_counts=[[1, 1]], level="interval", value_domain=[2, 1])


@pytest.mark.parametrize("kind", ["binary", "ordinal"])
def test_the_ceiling_reads_the_counts_as_the_table_gave(kind: str) -> None:
    """The report's ceiling (counts per item) equals alpha on the annotators x items table."""
    scale = rubric(kind).scale
    rng = random.Random(4)
    labels = list(scale.labels)
    references = {("d", f"i{i}"): {f"a{rng.randrange(30)}": rng.choice(labels)
                                   for _ in range(rng.randint(1, 6))} for i in range(80)}
    ceiling = human_ceiling(references, scale, IntervalSpec(n_resamples=100))
    assert ceiling is not None
    multi = sorted(k for k, by in references.items() if len(by) >= 2)
    names = sorted({a for k in multi for a in references[k]})
    if kind == "ordinal":
        value = {lab.label: float(lab.value if lab.value is not None else i)
                 for i, lab in enumerate(scale.levels)}
        table = [[value[references[k][a]] if a in references[k] else None for k in multi]
                 for a in names]
    else:
        table = [[references[k].get(a) for k in multi] for a in names]
    expected = krippendorff_alpha(table, level="ordinal" if kind == "ordinal" else "nominal")
    alpha = ceiling.stats["krippendorff_alpha"]
    assert alpha.statistic == expected.statistic
    assert (alpha.ci_low, alpha.ci_high) == expected.confidence_interval(n_resamples=100)
