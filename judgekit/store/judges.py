"""Which judge made a judgment, and which judgments a run stands for.

A **judge** is a model (as requested) at an endpoint with sampling parameters:
the parts of the cache key that say who answered. Imported verdicts are keyed
under the endpoint ``imported:`` whatever file they came from, so every import of
one judge's verdicts is one judge here too.

A run's judgments are not only the rows it wrote: a rerun answered from the cache
writes nothing, yet it stands for every judgment of its judge (model, endpoint,
sampling) on its rubric and dataset. :meth:`JudgesMixin.run_selection` turns a run
id into that selection; the report and ``judgekit export`` both use it.

Rows written by probe runs (kind ``probe:*``) count only when a probe run is
named: by default the judgments of a judge are those written by runs of kind
``judge`` or ``import``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from judgekit.errors import InputError
from judgekit.store import rows as R
from judgekit.store._base import StoreBase

#: Run kinds whose judgments a report calibrates by default (probe runs are left out).
JUDGE_RUN_KINDS: tuple[str, ...] = ("judge", "import")
#: The endpoint every imported judgment is keyed under (see ``judgekit.io.judgments``).
IMPORTED_ENDPOINT = "imported:"
#: SQL for a row's judge endpoint: ``base_url``, or ``imported:`` for any imported file.
ENDPOINT_SQL = (
    f"(CASE WHEN substr(base_url, 1, {len(IMPORTED_ENDPOINT)}) = '{IMPORTED_ENDPOINT}' "
    f"THEN '{IMPORTED_ENDPOINT}' ELSE base_url END)"
)


#: The judgments runs stand for although other runs made the calls (``run_outcomes``):
#: a run's rows are those it wrote and those it stands for (see :class:`JudgmentSelection`).
STOOD_FOR_SQL = "SELECT judgment_id FROM run_outcomes"


def judge_endpoint(base_url: str) -> str:
    """The endpoint that identifies a judge: the base URL, or ``imported:`` for imports."""
    return IMPORTED_ENDPOINT if base_url.startswith(IMPORTED_ENDPOINT) else base_url


def is_probe_kind(kind: str) -> bool:
    return kind.startswith("probe:")


@dataclass(frozen=True)
class JudgmentSelection:
    """Filters on judgment rows; None means "any". Used by every judgment query.

    ``endpoint`` matches :func:`judge_endpoint` of the row's base URL; ``sampling``
    matches the row's sampling mapping exactly; ``run_kinds`` keeps rows of runs of
    those kinds. A run's rows are those it wrote *and* those it stands for: the
    outcomes another run made that it took from the cache (``run_outcomes``), so
    ``run_id`` and ``run_kinds`` match both. The order commands ran in therefore
    never changes what a selection holds: a judge run whose calls a probe answered
    first selects the same outcomes as one that made them itself.
    """

    rubric_hash: str | None = None
    run_id: str | None = None
    dataset: str | None = None
    variant: str | None = None
    model: str | None = None
    endpoint: str | None = None
    sampling: Mapping[str, Any] | None = None
    run_kinds: tuple[str, ...] | None = None

    def filters(self) -> dict[str, Any]:
        """The selection as keyword arguments of the Store's judgment queries."""
        return {
            "rubric_hash": self.rubric_hash,
            "run_id": self.run_id,
            "dataset": self.dataset,
            "variant": self.variant,
            "model": self.model,
            "endpoint": self.endpoint,
            "sampling": self.sampling,
            "run_kinds": self.run_kinds,
        }

    def where(self) -> tuple[str, list[Any]]:
        """``WHERE ...`` over the ``judgments`` table (empty when nothing is filtered)."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.run_id is not None:
            clauses.append(f"(run_id = ? OR id IN ({STOOD_FOR_SQL} WHERE run_id = ?))")
            params.extend([self.run_id, self.run_id])
        for column, value in (
            ("rubric_hash", self.rubric_hash),
            ("dataset", self.dataset),
            ("variant", self.variant),
            ("model_requested", self.model),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.endpoint is not None:
            clauses.append(f"{ENDPOINT_SQL} = ?")
            params.append(self.endpoint)
        if self.sampling is not None:
            clauses.append("sampling = ?")
            params.append(R.dump_json(self.sampling))
        if self.run_kinds is not None:
            runs = f"SELECT id FROM runs WHERE kind IN ({', '.join('?' * len(self.run_kinds))})"
            clauses.append(f"(run_id IN ({runs}) OR id IN ({STOOD_FOR_SQL} WHERE run_id IN "
                           f"({runs})))")
            params.extend([*self.run_kinds, *self.run_kinds])
        return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


class JudgmentFilters(TypedDict, total=False):
    """The keyword filters of the Store's judgment queries (read as a :class:`JudgmentSelection`).

    Declared once so every query accepts the same names with the same types.
    """

    rubric_hash: str | None
    run_id: str | None
    dataset: str | None
    variant: str | None
    model: str | None
    endpoint: str | None
    sampling: Mapping[str, Any] | None
    run_kinds: Sequence[str] | None


def selection_of(filters: JudgmentFilters) -> JudgmentSelection:
    """The selection a query's keyword filters name (absent means "any")."""
    run_kinds = filters.get("run_kinds")
    return JudgmentSelection(
        filters.get("rubric_hash"),
        filters.get("run_id"),
        filters.get("dataset"),
        filters.get("variant"),
        filters.get("model"),
        filters.get("endpoint"),
        filters.get("sampling"),
        None if run_kinds is None else tuple(run_kinds),
    )


@dataclass(frozen=True)
class Judge:
    """One judge with judgments in the store: who it is and where its judgments came from."""

    model: str
    endpoint: str
    sampling: Mapping[str, Any]
    run_ids: tuple[str, ...] = ()
    n_judgments: int = 0  # items with a judgment (one per item)
    datasets: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """``model 'm' at http://host/v1, sampling {...}: 40 judgments (runs a, b)``."""
        sampling = R.dump_json(self.sampling)
        runs = ", ".join(self.run_ids) or "none"
        return (
            f"model {self.model!r} at {self.endpoint}, sampling {sampling}: "
            f"{self.n_judgments} judgment(s) (run(s) {runs})"
        )


class JudgesMixin(StoreBase):
    """Judge identities and run-to-judgments selection (mixed into the Store)."""

    def judges(
        self,
        *,
        rubric_hash: str,
        dataset: str | None = None,
        variant: str | None = "",
        model: str | None = None,
        run_kinds: Sequence[str] | None = JUDGE_RUN_KINDS,
    ) -> list[Judge]:
        """Judges with judgments matching the filters, most recently active last.

        ``run_ids`` lists the runs of those kinds that wrote those judgments or stand
        for them, and the runs of the same judge (rubric, dataset, kind) that wrote
        none because the cache answered; a probe run that made calls a judge run
        stands for is its provenance, not one of the judge's runs.
        """
        kinds = None if run_kinds is None else tuple(run_kinds)
        where, params = JudgmentSelection(
            rubric_hash=rubric_hash, dataset=dataset, variant=variant, model=model,
            run_kinds=kinds,
        ).where()
        rows = self._tuples(
            f"SELECT model_requested, {ENDPOINT_SQL} AS endpoint, sampling, "
            "COUNT(DISTINCT dataset || char(0) || item_id) "
            f"FROM judgments {where} GROUP BY model_requested, endpoint, sampling "
            "ORDER BY MAX(id)",
            params,
        )
        if not rows:
            return []
        writers: dict[tuple[str, str, str], tuple[set[str], set[str]]] = {}
        for model_name, endpoint, sampling, run, ds in self._tuples(
            f"SELECT DISTINCT model_requested, {ENDPOINT_SQL}, sampling, run_id, dataset "
            f"FROM judgments {where}",
            params,
        ):
            runs, names = writers.setdefault((model_name, endpoint, sampling), (set(), set()))
            runs.add(run)
            names.add(ds)
        order: dict[str, int] = {}
        kind_of: dict[str, str] = {}
        extra: dict[tuple[str, str, str], list[str]] = {}
        for position, run in enumerate(self._rows(
            "SELECT id, kind, dataset, model, base_url, sampling FROM runs "
            "WHERE rubric_hash = ? ORDER BY started_at, rowid", [rubric_hash],
        )):
            order[run["id"]] = position
            kind_of[run["id"]] = run["kind"]
            if kinds is not None and run["kind"] not in kinds:
                continue
            if dataset is not None and run["dataset"] != dataset:
                continue
            key = (run["model"], judge_endpoint(run["base_url"]), run["sampling"])
            extra.setdefault(key, []).append(run["id"])
        out = []
        for model_name, endpoint, sampling, n in rows:
            key = (model_name, endpoint, sampling)
            ids, datasets = writers.get(key, (set(), set()))
            ids = {r for r in ids if kinds is None or kind_of.get(r) in kinds}
            ids |= set(extra.get(key, []))
            out.append(Judge(
                model=model_name,
                endpoint=endpoint,
                sampling=R.load_json(sampling),
                run_ids=tuple(sorted(ids, key=lambda r: (order.get(r, len(order)), r))),
                n_judgments=int(n),
                datasets=tuple(sorted(datasets)),
            ))
        return out

    def run_selection(
        self,
        run_id: str,
        *,
        rubric_hash: str | None = None,
        dataset: str | None = None,
        variant: str | None = None,
    ) -> JudgmentSelection:
        """The judgments run ``run_id`` stands for, cached ones included.

        Those are the judgments of the run's judge (model, endpoint, sampling) on its
        rubric and dataset. For a judge or import run only rows written by judge or
        import runs count; naming a probe run takes the rows of any run. A probe over
        imported verdicts (``probe position|consistency --imported``) stands for exactly
        the verdicts it read (``run_outcomes``), so its selection is those rows only. Raises
        :class:`InputError` for an unknown run, or when ``rubric_hash`` / ``dataset``
        contradict the run's own.
        """
        row = self._one(
            "SELECT kind, dataset, rubric_hash, model, base_url, sampling FROM runs WHERE id = ?",
            [run_id],
        )
        if row is None:
            raise InputError(f"no run {run_id!r} in {self.path}")
        if rubric_hash is not None and row["rubric_hash"] != rubric_hash:
            raise InputError(
                f"run {run_id!r} judged with rubric {row['rubric_hash'][:12]}, not "
                f"{rubric_hash[:12]}: pass --rubric {row['rubric_hash']} to select it"
            )
        if dataset is not None and row["dataset"] != dataset:
            raise InputError(
                f"run {run_id!r} judged dataset {row['dataset']!r}, not {dataset!r}"
            )
        kind = str(row["kind"])
        # the judge as its own rows record it; a run that wrote none (all cached) by its record
        written = self._one(
            "SELECT model_requested AS model, base_url, sampling FROM judgments "
            "WHERE run_id = ? LIMIT 1",
            [run_id],
        )
        judge = row if written is None else written
        # a probe of imported verdicts: the rows it used, not every verdict of its judge
        # (older probes of imports linked none and keep the judge's rows)
        used_only = (is_probe_kind(kind) and judge_endpoint(row["base_url"]) == IMPORTED_ENDPOINT
                     and self._one("SELECT 1 FROM run_outcomes WHERE run_id = ? LIMIT 1",
                                   [run_id]) is not None)
        return JudgmentSelection(
            run_id=run_id if used_only else None,
            rubric_hash=row["rubric_hash"],
            dataset=row["dataset"],
            variant=variant,
            model=judge["model"],
            endpoint=judge_endpoint(judge["base_url"]),
            sampling=R.load_json(judge["sampling"]),
            run_kinds=None if is_probe_kind(kind) else JUDGE_RUN_KINDS,
        )

    def run_judge_selection(
        self, run_id: str, *, rubric_hash: str | None = None, variant: str | None = None
    ) -> JudgmentSelection:
        """The judge run ``run_id`` used, on any dataset (:meth:`run_selection` minus the dataset).

        For comparisons that apply one judge to several datasets (``judgekit compare
        candidates``): narrow it with ``dataclasses.replace(selection, dataset=...)``.
        """
        return replace(
            self.run_selection(run_id, rubric_hash=rubric_hash, variant=variant), dataset=None
        )

    def judge_selection(
        self,
        *,
        rubric_hash: str,
        rubric_name: str | None = None,
        dataset: str | None = None,
        run_id: str | None = None,
        model: str | None = None,
        variant: str | None = "",
        run_option: str = "--judge-run",
        model_option: str | None = "--model",
    ) -> JudgmentSelection:
        """The judgments of exactly one judge: what a report (or a comparison) reads.

        ``run_id`` names the judge through one of its runs (:meth:`run_selection`; its
        cached judgments count too). Otherwise the judge must be the only one (after
        ``model``) with judgments written by judge or import runs; several judges are an
        :class:`InputError` that lists them and names ``run_option`` / ``model_option``
        (the flags of the calling command) to choose one. With no judge at all the
        selection matches nothing but the rubric's (and dataset's) plain judge rows.
        """
        if run_id is not None:
            selection = self.run_selection(
                run_id, rubric_hash=rubric_hash, dataset=dataset, variant=variant
            )
            if model is not None and model != selection.model:
                raise InputError(f"run {run_id!r} used model {selection.model!r}, not {model!r}")
            return selection
        found = self.judges(rubric_hash=rubric_hash, dataset=dataset, variant=variant, model=model)
        where = (f"rubric {rubric_name!r}" if rubric_name else f"rubric {rubric_hash[:12]}") + (
            f", dataset {dataset!r}" if dataset else ""
        )
        if not found and model is not None:
            known = self.judges(rubric_hash=rubric_hash, dataset=dataset, variant=variant)
            listing = f":\n{describe_judges(known)}" if known else ""
            raise InputError(
                f"no judgments by model {model!r} for {where}; judges present{listing or ': none'}"
            )
        if len(found) > 1:
            options = [f"{run_option} RUN_ID"]
            if model is None and model_option is not None:
                options.insert(0, f"{model_option} NAME")
            raise InputError(
                f"judgments of {len(found)} judges exist for {where}"
                + (f" and model {model!r}" if model is not None else "")
                + f"; choose one with {' or '.join(options)}:\n{describe_judges(found)}"
            )
        if not found:
            return JudgmentSelection(
                rubric_hash=rubric_hash, dataset=dataset, variant=variant, run_kinds=JUDGE_RUN_KINDS
            )
        judge = found[0]
        return JudgmentSelection(
            rubric_hash=rubric_hash,
            dataset=dataset,
            variant=variant,
            model=judge.model,
            endpoint=judge.endpoint,
            sampling=judge.sampling,
            run_kinds=JUDGE_RUN_KINDS,
        )


def describe_judges(judges: Sequence[Judge]) -> str:
    """One ``  - model 'm' at URL, sampling {...}: n judgment(s) (run(s) ...)`` line per judge."""
    return "\n".join(f"  - {judge.describe()}" for judge in judges)


__all__ = [
    "ENDPOINT_SQL",
    "IMPORTED_ENDPOINT",
    "JUDGE_RUN_KINDS",
    "Judge",
    "JudgesMixin",
    "JudgmentSelection",
    "describe_judges",
    "is_probe_kind",
    "judge_endpoint",
]
