"""Paired comparisons on the same items.

Two kinds of question:

- *judges*: two judges (two runs, or two rubric versions) against the same human
  labels. Each one's agreement, and the paired difference in how often each
  matches the human (McNemar's exact test on binary scales, a paired bootstrap
  otherwise) plus the difference in the primary statistic with a paired bootstrap.
- *candidates*: one judge scoring two candidate models' outputs on the same
  items (dataset A and dataset B share item ids). The paired score difference
  with its interval, micro and macro over slices, and abstentions (failed
  judgments) counted separately, never scored.

Clustering follows the report (docs/reports.md): items' ``cluster`` by default,
else their prompt when two compared items share one, or ``cluster_by``
(``cluster``, ``prompt``, ``slice``, ``meta.NAME``; ``item`` turns it off).
When some cluster holds two or more compared items, every interval resamples
whole clusters, McNemar's exact test (which assumes independent items) gives way
to a cluster bootstrap of the agreement difference, and the macro-by-slice
difference of candidates resamples each slice on its own. Otherwise nothing
changes: item-level intervals and McNemar's test, as without clusters.

Which judgments stand for a judge follows the report's rule (docs/reports.md,
:meth:`judgekit.store.Store.judge_selection`): a run id stands for its judge's
judgments, cached ones included, and by default only judge and import runs count.
"""

from judgekit.compare.candidates import CandidateComparison, candidate_judge, compare_candidates
from judgekit.compare.clustering import NO_CLUSTERS, Clustering, clustered_spec
from judgekit.compare.judge_verdicts import judge_of
from judgekit.compare.judges import JudgeComparison, JudgeSide, compare_judges

__all__ = [
    "NO_CLUSTERS",
    "CandidateComparison",
    "Clustering",
    "JudgeComparison",
    "JudgeSide",
    "candidate_judge",
    "clustered_spec",
    "compare_candidates",
    "compare_judges",
    "judge_of",
]
