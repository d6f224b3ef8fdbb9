"""A report's options, checked one way for ``report``, ``estimate``, ``plan`` and the API.

Each of them names a judge run, a dataset and the report's settings; a run (or,
for ``estimate``, a dataset) that is not in the store must be an error naming
it, not an empty report that reads as INSUFFICIENT DATA. The CLI reaches this
through :func:`judgekit.cli._common.report_inputs` (which also opens the store
and resolves the rubric); the API calls :func:`report_options` itself and
answers :class:`NotInStore` with 404. Importing this module imports neither
click nor numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgekit.errors import InputError

if TYPE_CHECKING:
    from judgekit.report import ReportOptions
    from judgekit.store import Store


class NotInStore(InputError):
    """A run or dataset the report names is not in the store."""


def report_options(
    store: Store, *, where: str, check_dataset: bool = False, **fields: Any
) -> ReportOptions:
    """:class:`~judgekit.report.ReportOptions` of ``fields`` once the names in them exist.

    ``where`` names the store in the message (its path on the command line,
    "the store" over HTTP); ``check_dataset`` also requires ``fields["dataset"]``
    to be a stored dataset.
    """
    from judgekit.report import ReportOptions

    judge_run = fields.get("judge_run")
    if judge_run is not None and store.get_run(judge_run) is None:
        raise NotInStore(f"no run {judge_run!r} in {where}")
    dataset = fields.get("dataset")
    if check_dataset and dataset is not None and dataset not in store.datasets():
        raise NotInStore(f"no dataset {dataset!r} in {where}")
    return ReportOptions(**fields)


__all__ = ["NotInStore", "report_options"]
