"""``judgekit split``: split a rubric's labeled items into train, dev and test, once.

Drawn once and stored with its seed (``judgekit align`` draws one with the defaults if
there is none); running it again adds newly labeled items to the split without moving
any item (docs/align.md).
"""

from __future__ import annotations

from typing import Any

import click

from judgekit.cli._common import (
    SEED,
    FiniteFloat,
    db_option,
    echo,
    echo_json,
    read_store,
    resolve_rubric,
    rubric_option,
    text_or_json_option,
)

_FRACTION = FiniteFloat(min=0, max=1, min_open=True, max_open=True)


def fraction_options(func: Any) -> Any:
    """``--train/--dev/--test`` (default: as stored, else 0.3/0.35/0.35)."""
    for part, default in (("test", 0.35), ("dev", 0.35), ("train", 0.3)):
        func = click.option(f"--{part}", type=_FRACTION, default=None,
                            help=f"Share of labeled items in {part} [default: as stored, "
                                 f"else {default}].")(func)
    return func


def fractions_of(params: dict[str, Any]) -> dict[str, float] | None:
    """The three fractions, or None when none was given; one given needs all three."""
    given = {p: params.pop(p) for p in ("train", "dev", "test")}
    if all(v is None for v in given.values()):
        return None
    if any(v is None for v in given.values()):
        from judgekit.align.splits import DEFAULT_FRACTIONS

        return {p: DEFAULT_FRACTIONS[p] if v is None else v for p, v in given.items()}
    return {p: float(v) for p, v in given.items()}


@click.command("split")
@rubric_option
@click.option("--dataset", default=None, help="Only this dataset's labeled items [default: all].")
@fraction_options
@click.option("--seed", type=SEED, default=None,
              help="Seed of the draw [default: as stored, else 0].")
@db_option
@text_or_json_option
def command(**params: Any) -> None:
    """Split labeled items into train, dev and test, once (grouped by prompt and cluster)."""
    from judgekit.align.splits import load_split
    from judgekit.store.splits import PARTS

    fractions = fractions_of(params)
    with read_store(params["db"]) as store:
        rubric = resolve_rubric(store, params["rubric"])
        split = load_split(store, rubric, dataset=params["dataset"], fractions=fractions,
                           seed=params["seed"])
        counts = split.counts()
        by_label = split.label_counts(rubric.scale.labels)
        uses = len(store.split_uses(split.record.id, "test"))
    if params["fmt"] == "json":
        echo_json({"seed": split.record.seed, "fractions": dict(split.record.fractions),
                   "created_at": split.record.created_at, "counts": counts,
                   "labels": by_label, "added": split.added, "test_uses": uses,
                   "notes": list(split.notes)}, indent=2)
        return
    echo(f"split of rubric {rubric.name} v{rubric.version} (seed {split.record.seed}, drawn "
         f"{split.record.created_at[:19]}):")
    for part in PARTS:
        labels = ", ".join(f"{label} {n}" for label, n in by_label[part].items())
        echo(f"  {part:<5} {counts[part]:>5} labeled item(s)  ({labels})")
    if split.added:
        echo(f"  {split.added} newly labeled item(s) joined the split")
    for note in split.notes:
        echo(f"  note: {note}")
    echo(f"  test split used {uses} time(s)")
