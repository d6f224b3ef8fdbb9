"""``judgekit align``: improve a failing judge from the humans' labels, proven on held-out ones.

Candidates (rubric versions the user wrote, few-shot examples from the train split, a
sampling variant, instruction revisions from an optimizer model) are judged on dev and
ranked; the best (or ``--pick``) and the baseline are judged once on test, and the
paired difference there is the result. ``judgekit align status`` shows the split and
every look at its test part. docs/align.md explains why only the test figure counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from judgekit.cli._common import (
    RESAMPLES,
    SEED,
    FiniteFloat,
    check_out_path,
    echo,
    echo_json,
    read_store,
    resolve_rubric,
    write_out,
)
from judgekit.cli._endpoint import EndpointOptions, endpoint_options, open_endpoint
from judgekit.cli.split import fraction_options, fractions_of
from judgekit.errors import InputError

_ALIGN_OPTIONS = [
    click.option("--candidate", "candidates", multiple=True,
                 type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                 help="A rubric version to try (same scale); repeatable."),
    click.option("--examples", "n_examples", type=click.IntRange(min=0), default=4,
                 show_default=True,
                 help="Try K few-shot examples from the train split (0: none)."),
    click.option("--samples", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Try a sampling variant: K samples per item, majority (mean) verdict."),
    click.option("--sample-temperature", type=FiniteFloat(min=0), default=0.7,
                 show_default=True, help="Temperature of the sampling variant."),
    click.option("--revisions", type=click.IntRange(min=0, max=20), default=0,
                 show_default=True,
                 help="Try N instruction revisions proposed by the optimizer model."),
    click.option("--optimizer-base-url", default=None, metavar="URL",
                 help="Optimizer endpoint (OpenAI-compatible) [default: the judge's]."),
    click.option("--optimizer-model", default=None,
                 help="Optimizer model [default: the judge's model]."),
    click.option("--jury-run", "jury_runs", multiple=True, metavar="RUN_ID",
                 help="Try a jury: these stored runs of the rubric (two or more, e.g. other "
                      "models' judge runs) combined by majority, mean on ordinal scales."),
    click.option("--max-calls", type=click.IntRange(min=0), default=None,
                 help="Make at most N judge calls (cached ones are free); past it align stops "
                      "and a rerun continues."),
    click.option("--pick", default=None, metavar="NAME",
                 help="Confirm this candidate on test instead of the best on dev."),
    click.option("--split-seed", type=SEED, default=None,
                 help="Seed of a new split [default: as stored, else 0]."),
    click.option("--out", default=None, metavar="PATH",
                 help="Where the winning rubric is written [default: NAME.aligned.toml]."),
    click.option("--resamples", type=RESAMPLES, default=1000, show_default=True,
                 help="Bootstrap resamples of every interval."),
    click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                 show_default=True, help="Output format."),
]


def _options(func: Any) -> Any:
    for option in reversed(_ALIGN_OPTIONS):
        func = option(func)
    return fraction_options(func)


@click.command("align")
@click.argument("action", required=False, type=click.Choice(["status"]))
@endpoint_options(verb="Judge")
@_options
def command(action: str | None, **params: Any) -> None:
    """Improve a judge from the humans' labels; the held-out test difference is the result.

    `judgekit align status -r R` shows the rubric's split and every use of its test part.
    """
    if action == "status":
        _status(params)
        return
    from judgekit.align.candidates import file_candidate
    from judgekit.align.optimizer import Optimizer
    from judgekit.align.render import format_result
    from judgekit.align.run import AlignOptions, check_options, run_align
    from judgekit.cli._endpoint import resolve_api_key
    from judgekit.clients.spec import public_base_url
    from judgekit.report.stat_intervals import IntervalSpec

    if not params["revisions"] and (params["optimizer_base_url"] or params["optimizer_model"]):
        raise InputError("--optimizer-base-url/--optimizer-model need --revisions N")
    fractions = fractions_of(params)
    endpoint = EndpointOptions.take(params)
    with read_store(params["db"]) as store:
        baseline = resolve_rubric(store, params["rubric"])
        out = params["out"] or f"{baseline.name}.aligned.toml"
        check_out_path(out, store=store.path)
        files = [file_candidate(path, baseline) for path in params["candidates"]]
        check_options(files, AlignOptions(  # bad input refused before any call
            examples=params["n_examples"], samples=params["samples"],
            revisions=params["revisions"], pick=params["pick"], jury_runs=params["jury_runs"]))
        with open_endpoint(endpoint) as spec:
            optimizer = None
            if params["revisions"]:
                url = params["optimizer_base_url"] or spec.base_url
                optimizer = Optimizer(
                    url, params["optimizer_model"] or spec.model,
                    api_key=resolve_api_key(endpoint.api_key, endpoint.api_key_env),
                    endpoint=public_base_url(url) if params["optimizer_base_url"]
                    else spec.public_base_url)
            options = AlignOptions(
                candidate_files=params["candidates"], examples=params["n_examples"],
                samples=params["samples"], sample_temperature=params["sample_temperature"],
                revisions=params["revisions"], optimizer=optimizer, jury_runs=params["jury_runs"],
                max_calls=params["max_calls"], pick=params["pick"], dataset=params["dataset"],
                fractions=fractions, split_seed=params["split_seed"],
                interval=IntervalSpec(n_resamples=params["resamples"]),
                progress=params["progress"])
            result = run_align(store, baseline, spec, options,
                               say=lambda line: echo(line, err=True))
        written = None
        if result.test.improvement_shown and result.picked.kind != "jury":
            # a sampling variant's rubric carries [sampling]: judge votes as align measured
            written = write_out(out, result.picked.rubric.source_text, store=store.path)
    if params["fmt"] == "json":
        echo_json({**result.to_dict(), "written": None if written is None else str(written)},
                  indent=2)
        return
    echo(format_result(result))
    if written is not None:
        echo(f"winning rubric written to {written}: adopt it with "
             f"judgekit judge --rubric {written}")
    elif result.picked.kind == "jury" and result.test.improvement_shown:
        echo(f"no rubric written: the jury is its members' runs ({result.picked.changes}); "
             "judge with each and combine their verdicts")
    else:
        echo("no rubric written: no improvement shown on the held-out labels; keep the baseline")


def _status(params: dict[str, Any]) -> None:
    from judgekit.align.render import format_status, status_dict

    with read_store(params["db"]) as store:
        rubric = resolve_rubric(store, params["rubric"])
        record = store.get_split(rubric.sha256, params["dataset"] or "")
        if record is None:
            raise InputError(f"no split for rubric {rubric.name} v{rubric.version}: "
                             "make one with judgekit split or judgekit align")
        counts: dict[str, int] = {}
        for row in store.split_items(record.id):
            counts[row.part] = counts.get(row.part, 0) + 1
        uses = store.split_uses(record.id)
    if params["fmt"] == "json":
        echo_json(status_dict(record, counts, uses), indent=2)
    else:
        echo(format_status(record, counts, uses))


#: The judge options that make no sense here: align judges the labeled items of the store
#: (no --data, --limit), and reuses every cached call (no --force, --retry-failed).
command.params = [p for p in command.params
                  if p.name not in {"data", "limit", "force", "retry_failed"}]
for _param in command.params:
    if _param.name == "dataset" and isinstance(_param, click.Option):
        _param.help = "Only this dataset's labeled items [default: every dataset with labels]."
