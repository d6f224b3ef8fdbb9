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


def require_dataset(store: Store, dataset: str | None, *, where: str | None = None) -> None:
    """Refuse a named dataset the store does not hold, listing the ones it does.

    A mistyped ``--dataset`` must not read as a dataset with no data (an empty
    selection, INSUFFICIENT DATA, an empty export): every command that takes
    one checks it here. ``where`` names the store (default: its path).
    """
    if dataset is None or store.holds_dataset(dataset):
        return
    from judgekit.textsafe import one_line

    known = store.datasets()
    names = ", ".join(repr(one_line(name)) for name in known[:20])
    more = f", ... ({len(known)} in all)" if len(known) > 20 else ""
    raise NotInStore(f"no dataset {one_line(dataset)!r} in {where or store.path} "
                     f"(datasets: {names + more if known else 'none; import items first'})")


def report_options(
    store: Store, *, where: str, check_dataset: bool = True, **fields: Any
) -> ReportOptions:
    """:class:`~judgekit.report.ReportOptions` of ``fields`` once the names in them exist.

    ``where`` names the store in the message (its path on the command line,
    "the store" over HTTP); a named ``fields["dataset"]`` must be a stored
    dataset (``check_dataset``, kept for callers that passed it).
    """
    from judgekit.report import ReportOptions

    judge_run = fields.get("judge_run")
    if judge_run is not None and store.get_run(judge_run) is None:
        raise NotInStore(f"no run {judge_run!r} in {where}")
    if check_dataset:
        require_dataset(store, fields.get("dataset"), where=where)
    return ReportOptions(**fields)


__all__ = ["NotInStore", "report_options", "require_dataset"]
