"""The JSON API under ``/api/v1/``: the same store, validation and verdicts as the CLI.

POSTed labels and judgments go through the readers the file imports use
(:func:`judgekit.io.records.iter_mappings` then the label or verdict validation),
so a request is all or nothing and an error names the record and the field, as
``file:line`` does for a file: ``labels:3: label 'x' is not on the scale``. Those
errors are 422 with every problem listed; nothing is stored.

An ``annotate`` token sees only its own queues and labels only the items of a queue
assigned to it, under its own name; it can never read a judge's verdict. The
server, not the request, sets what such a label claims about itself: its
``source`` (``annotate``), its ``created_at`` (now) and ``blind`` (always). An
adjudication (``"source": "adjudicate"``) overrides every annotator of the item in
the reports, so only a token that may adjudicate (role ``adjudicate`` or ``admin``)
may post one; an ``adjudicate`` token's labels are always adjudications, under its
own name, stamped by the server.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from judgekit.errors import InputError
from judgekit.serve.auth import require, require_any, store_dependency
from judgekit.serve.caches import ServeCaches
from judgekit.serve.models import (
    ImportOut,
    JudgmentsIn,
    LabelsIn,
    cut_line,
    shown,
    surrogate_problems,
)
from judgekit.serve.progress import queue_rows
from judgekit.serve.report_builds import ReportBuilds
from judgekit.store import Store
from judgekit.store.access import TokenRecord
from judgekit.store.queues import QueueMatch
from judgekit.types import ADJUDICATED_SOURCE, Rubric

router = APIRouter(prefix="/api/v1")


def caches_dependency(request: Request) -> ServeCaches:
    caches: ServeCaches = request.app.state.caches
    return caches


def builds_dependency(request: Request) -> ReportBuilds:
    builds: ReportBuilds = request.app.state.report_builds
    return builds


StoreDep = Annotated[Store, Depends(store_dependency)]
BuildsDep = Annotated[ReportBuilds, Depends(builds_dependency)]
CachesDep = Annotated[ServeCaches, Depends(caches_dependency)]
Reader = Annotated[TokenRecord, Depends(require("read"))]
Writer = Annotated[TokenRecord, Depends(require("write"))]
ReaderOrAnnotator = Annotated[TokenRecord, Depends(require_any("read", "annotate"))]
Labeler = Annotated[TokenRecord, Depends(require_any("write", "annotate", "adjudicate"))]
Dataset = Annotated[str | None, Query(description="Only this dataset's items.")]
JudgeRun = Annotated[str | None, Query(description="Report the judge of this run.")]
Model = Annotated[str | None, Query(description="Report this judge model.")]
MinAgreement = Annotated[float, Query(gt=0.0, lt=1.0, description="As `report --min-agreement`.")]
Resamples = Annotated[int, Query(ge=100, le=100_000, description="Bootstrap resamples.")]
Reference = Annotated[Literal["majority", "median", "mean"] | None, Query(
    description="As `report --reference`: the human reference per item (default: median for "
    "ordinal scales, majority otherwise).")]


def stored_rubric(store: Store, name_or_sha: str, caches: ServeCaches | None = None) -> Rubric:
    """The rubric of that sha256, or the one stored version of that name (else 404/422).

    With ``caches``, a rubric already parsed is not parsed again.
    """
    from judgekit import rubrics

    rows = store.list_rubrics()
    found = [r for r in rows if name_or_sha in (r["sha256"], r["name"])]
    if not found:
        raise HTTPException(404, detail=f"no rubric {shown(name_or_sha)} in the store")
    if len({r["sha256"] for r in found}) > 1:
        versions = ", ".join(f"{r['version']} ({r['sha256'][:12]})" for r in found)
        raise HTTPException(422, detail=f"rubric {shown(name_or_sha)} has several versions in the "
                                        f"store ({versions}); give its sha256")
    sha = found[0]["sha256"]

    def parse() -> Rubric:
        text = store.get_rubric_text(sha)
        assert text is not None
        return rubrics.rubric_from_text(text, path=f"<store:{sha[:12]}>")

    return parse() if caches is None else caches.rubric(sha, parse)


#: The report's command-line flags as this API's query parameters.
_AS_QUERY = (("--model NAME", "the query parameter model=NAME"),
             ("--judge-run RUN_ID", "judge_run=RUN_ID"), ("--judge-run", "judge_run="),
             ("--model", "model="), ("--dataset", "dataset="),
             ("--min-agreement", "min_agreement="))


def _unprocessable(exc: InputError, *, query: bool = False) -> HTTPException:
    """The problem lines, each cut (they may echo a long value); with ``query`` the
    report's flags in them are named as the query parameters of the request."""
    text = str(exc)
    if query:
        for flag, parameter in _AS_QUERY:
            text = text.replace(flag, parameter)
    return HTTPException(422, detail=[cut_line(line) for line in text.split("\n")])


@router.get("/rubrics", summary="Rubrics in the store")
def rubrics(store: StoreDep,
            _: Reader) -> list[dict[str, Any]]:
    return store.list_rubrics()


@router.get("/datasets", summary="Datasets and their item counts")
def datasets(store: StoreDep,
             _: Reader) -> list[dict[str, Any]]:
    return [{"name": name, "items": store.count_items(name)} for name in store.datasets()]


@router.get("/runs", summary="Judge, probe, import and batch runs")
def runs(store: StoreDep, _: Reader, rubric: str | None = None) -> list[dict[str, Any]]:
    """Each run with its summary and ``outcomes`` counted from the rows: ``made`` (status
    counts of the calls it made) and ``answered_by`` (run that made the call -> status
    counts) for the outcomes it stands for because another run had answered them."""
    rubric_hash = stored_rubric(store, rubric).sha256 if rubric else None
    out = []
    for r in store.list_runs(rubric_hash=rubric_hash):
        held = store.run_outcome_counts(r.id)
        out.append(
            {"id": r.id, "kind": r.kind, "dataset": r.dataset, "rubric_hash": r.rubric_hash,
             "model": r.model, "endpoint": r.base_url, "sampling": dict(r.sampling),
             "judgekit_version": r.judgekit_version, "started_at": r.started_at,
             "finished_at": r.finished_at, "summary": dict(r.summary),
             "outcomes": {"made": dict(held.made),
                          "answered_by": {k: dict(v) for k, v in held.stood_for.items()}}})
    return out


@router.get("/queues", summary="Per-annotator progress through each labeling queue")
def queues(store: StoreDep, token: ReaderOrAnnotator,
           rubric: str | None = None) -> list[dict[str, Any]]:
    """``rubric`` (a name or sha256) picks the queues collecting its labels, a queue of a
    whole multi-criteria file through any of its criteria (or the file's name); such a
    queue is counted whole, with each criterion's counts in ``criteria``."""
    match = queue_match(store, rubric) if rubric else None
    mine = None if token.may("read") else token.name
    return queue_rows(store, match, annotator=mine)


def queue_match(store: Store, rubric: str) -> QueueMatch:
    """The queues ``?rubric=`` names: a stored rubric's (404/422 as :func:`stored_rubric`),
    else the whole-file queues drawn for a rubric file of that name."""
    try:
        return QueueMatch.of([stored_rubric(store, rubric).sha256])
    except HTTPException as exc:
        if exc.status_code == 404 and any(h.criteria_file == rubric
                                          for h in store.queue_heads()):
            return QueueMatch.of(files=[rubric])
        raise


def assigned_items(store: Store, rubric_hash: str, annotator: str) -> set[tuple[str, str]]:
    """(dataset, item id) of every queue assigned to ``annotator`` that collects the rubric's
    labels (a whole-file queue collects each of its criteria's)."""
    keys: set[tuple[str, str]] = set()
    for head in store.queue_heads(QueueMatch.of([rubric_hash])):
        found = store.get_queue(head.name)
        if found is not None and found[0]["params"].get("annotator") == annotator:
            keys.update((e.dataset, e.item_id) for e in found[1])
    return keys


def _as_themselves(records: list[dict[str, Any]], token: TokenRecord) -> str:
    """Make the records of an annotate or adjudicate token its own; the source they get.

    The annotator is the token's name (another name is refused), and what a label
    claims about itself is the server's to say: blind, now, and the token's source.
    """
    source = "annotate" if token.may("annotate") else ADJUDICATED_SOURCE
    for number, record in enumerate(records, start=1):
        given = record.get("annotator")
        if given is not None and given != token.name:
            raise HTTPException(422, detail=[f"labels:{number}: field 'annotator' must be "
                                             f"your own name {token.name!r}, got {shown(given)}"])
        record.update(annotator=token.name, blind=True, created_at=None, source=source)
    return source


def _may_adjudicate(records: list[dict[str, Any]], token: TokenRecord) -> None:
    """403 naming the first record that is an adjudication when the token may not adjudicate."""
    if token.may("adjudicate"):
        return
    for number, record in enumerate(records, start=1):
        if record.get("source") == ADJUDICATED_SOURCE:
            raise HTTPException(403, detail=[
                f"labels:{number}: field 'source' {ADJUDICATED_SOURCE!r}: a {token.role!r} "
                "token may not adjudicate (an adjudicate or admin token may)"])


@router.post("/labels", summary="Add human labels (all or nothing)", response_model=ImportOut,
             responses={422: {"description": "A record is invalid; nothing was stored."}})
def post_labels(body: LabelsIn, store: StoreDep, caches: CachesDep,
                token: Labeler) -> ImportOut:
    from judgekit.io.labels import LABEL_FIELDS, labels_from_records
    from judgekit.io.records import ErrorList, iter_mappings

    rubric = stored_rubric(store, body.rubric, caches)
    records = [r.model_dump(exclude_none=True) for r in body.labels]
    _may_adjudicate(records, token)
    own = None if token.may("write") else _as_themselves(records, token)
    errors = ErrorList("labels")
    try:
        shaped = list(iter_mappings(records, LABEL_FIELDS, on_error=errors.add, name="labels"))
        labels = labels_from_records(shaped, errors, rubric, store, dataset=body.dataset,
                                     index=caches.item_index(store, body.dataset))
    except InputError as exc:
        raise _unprocessable(exc) from None
    if own == "annotate":
        allowed = caches.queue_members(
            store, rubric.sha256, token.name,
            lambda: assigned_items(store, rubric.sha256, token.name))
        outside = [i for i, lb in enumerate(labels, 1) if (lb.dataset, lb.item_id) not in allowed]
        if outside:
            raise HTTPException(422, detail=[
                f"labels:{i}: field 'item_id' {labels[i - 1].item_id!r} is not in a queue "
                f"assigned to {token.name}" for i in outside[:20]])
    if own is not None:
        labels = [replace(lb, source=own) for lb in labels]
    store.add_labels(labels)
    return ImportOut(added=len(labels), unchanged=0)


@router.post("/judgments", summary="Add judge verdicts made elsewhere (all or nothing)",
             response_model=ImportOut,
             responses={422: {"description": "A record is invalid; nothing was stored."}})
def post_judgments(body: JudgmentsIn, store: StoreDep,
                   _: Writer) -> ImportOut:
    from judgekit.io.judgments import JUDGMENT_FIELDS, verdicts_from_records
    from judgekit.io.records import ErrorList, iter_mappings
    from judgekit.io.verdict_store import import_verdicts

    rubric = stored_rubric(store, body.rubric)
    problems = surrogate_problems(body.judgments, "judgments")
    if problems:
        raise HTTPException(422, detail=problems[:20])
    errors = ErrorList("judgments")
    try:
        shaped = list(iter_mappings(body.judgments, JUDGMENT_FIELDS, on_error=errors.add,
                                    name="judgments"))
        rows = verdicts_from_records(shaped, errors, rubric, store, dataset=body.dataset,
                                     judge=body.judge)
    except InputError as exc:
        raise _unprocessable(exc) from None
    result = import_verdicts(store, rows, rubric, source="api")
    return ImportOut(added=result.added, unchanged=result.unchanged)


def _report(store: Store, builds: ReportBuilds, rubric: str, dataset: str | None,
            judge_run: str | None, model: str | None, min_agreement: float,
            resamples: int, reference: str | None = None) -> Any:
    """The report the query asks for, built within the server's limits (:mod:`.report_builds`)."""
    from judgekit.report import build_report
    from judgekit.report_inputs import NotInStore, report_options

    rub = stored_rubric(store, rubric)
    try:
        options = report_options(store, where="the store", dataset=dataset, judge_run=judge_run,
                                 model=model, min_agreement=min_agreement,
                                 n_resamples=resamples, reference=reference)
    except NotInStore as exc:
        raise HTTPException(404, detail=str(exc)) from None
    try:
        return builds.run(lambda own: build_report(own, rub, options))
    except InputError as exc:
        raise _unprocessable(exc, query=True) from None


@router.get("/report", summary="The calibration report (the JSON of `report --format json`)")
def report(store: StoreDep, builds: BuildsDep, _: Reader, rubric: str, dataset: Dataset = None,
           judge_run: JudgeRun = None,
           model: Model = None,
           min_agreement: MinAgreement = 0.6,
           resamples: Resamples = 1000, reference: Reference = None) -> Response:
    from judgekit.report import render

    built = _report(store, builds, rubric, dataset, judge_run, model, min_agreement, resamples,
                    reference)
    return Response(render(built, "json"), media_type="application/json")


@router.get("/estimate", summary="The corrected estimate (the `estimate` section of the report)")
def estimate(store: StoreDep, builds: BuildsDep, _: Reader, rubric: str, dataset: Dataset = None,
             judge_run: JudgeRun = None, model: Model = None,
             resamples: Resamples = 1000, reference: Reference = None) -> Response:
    """Judge only, labels only, PPI++ and Rogan-Gladen per target, as `judgekit estimate`."""
    from judgekit.report import render

    built = _report(store, builds, rubric, dataset, judge_run, model, 0.6, resamples,
                    reference)
    section = json.loads(render(built, "json")).get("estimate")
    return Response(json.dumps(section), media_type="application/json")


@router.get("/gate", summary="PASS, FAIL or INSUFFICIENT DATA, as `report`'s exit code")
def gate(store: StoreDep, builds: BuildsDep, _: Reader, rubric: str, dataset: Dataset = None,
         judge_run: JudgeRun = None,
         model: Model = None,
         min_agreement: MinAgreement = 0.6,
         resamples: Resamples = 1000, reference: Reference = None) -> JSONResponse:
    from judgekit.report.verdict_lines import reason_lines

    built = _report(store, builds, rubric, dataset, judge_run, model, min_agreement, resamples,
                    reference)
    verdict = built.verdict
    stat = verdict.statistic
    return JSONResponse({
        "decision": verdict.decision, "exit_code": verdict.exit_code, "reason": verdict.reason,
        "reasons": [line.to_dict() for line in reason_lines(verdict, built.confidence_level)],
        "primary": verdict.primary, "threshold": verdict.threshold,
        "statistic": {"value": _finite(stat.statistic), "ci_low": _finite(stat.ci_low),
                      "ci_high": _finite(stat.ci_high), "n": stat.n, "reason": stat.reason},
    })


def _finite(value: float | None) -> float | None:
    """JSON has no NaN: an undefined figure is null (the report JSON gives its reason)."""
    return None if value is None or value != value else float(value)
