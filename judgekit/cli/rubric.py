"""``judgekit rubric``: list, check and preview rubrics before paying for a run.

``check`` validates files (a CI step for a rubric repository); ``show`` prints the
exact messages a judge will receive for one item, and the verdict schema.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from judgekit.cli._common import echo, echo_json
from judgekit.errors import InputError, JudgekitError
from judgekit.io.items import load_items
from judgekit.types import Item, Rubric

#: Shown by ``show`` when no ``--data`` is given: every placeholder visibly filled.
EXAMPLE_ITEM = Item(
    id="example",
    input="<the input>",
    response="<the response>",
    response_a="<response A>",
    response_b="<response B>",
    reference="<the reference answer>",
)


@click.group("rubric")
def command() -> None:
    """List, check and preview rubrics."""


def _describe(rubric: Rubric) -> str:
    levels = ", ".join(f"{level.key}={level.label}" for level in rubric.scale.levels)
    return (f"{rubric.name} v{rubric.version} ({rubric.scale.kind}: {levels}) "
            f"sha256 {rubric.sha256[:12]}")


@command.command("list")
def list_command() -> None:
    """Rubrics found by bare name: ./rubrics/ first, then the shipped examples."""
    from judgekit.rubrics import BUNDLED_RUBRICS_DIR, REPO_RUBRICS_DIR, load_rubric

    seen: set[str] = set()
    for folder in (Path("rubrics"), REPO_RUBRICS_DIR, BUNDLED_RUBRICS_DIR):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            if path.stem in seen:
                continue
            seen.add(path.stem)
            try:
                echo(f"{path.stem:<16} {_describe(load_rubric(path))}  [{path}]")
            except JudgekitError as exc:
                echo(f"{path.stem:<16} INVALID: {exc}")
    if not seen:
        click.echo("no rubrics found")


@command.command("check")
@click.argument("rubrics", nargs=-1, required=True, metavar="NAME_OR_PATH...")
def check_command(rubrics: tuple[str, ...]) -> None:
    """Validate rubric files; exits 1 if any is invalid (each error names its field)."""
    from judgekit.rubrics import load_rubric

    bad = 0
    for name in rubrics:
        try:
            echo(f"ok       {_describe(load_rubric(name))}")
        except JudgekitError as exc:
            bad += 1
            echo(f"invalid  {exc}")
    if bad:
        raise click.exceptions.Exit(1)


@command.command("show")
@click.argument("rubric", metavar="NAME_OR_PATH")
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Render the prompt for an item of this JSONL/CSV file.")
@click.option("--item", "item_id", default=None,
              help="Which item of --data (default: the first).")
@click.option("--reverse-levels", is_flag=True,
              help="List the scale levels in reverse order (the position probe's variant).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")
def show_command(rubric: str, data: Path | None, item_id: str | None, reverse_levels: bool,
                 fmt: str) -> None:
    """Print the messages the judge receives for one item, and the verdict JSON schema.

    A criteria file judged in one call per item shows that call: every criterion, and
    the schema of the object with a verdict per criterion.
    """
    from judgekit.criteria_joint import joint_plan
    from judgekit.rubrics import load_rubric, render_messages, verdict_json_schema

    plan = joint_plan(rubric)
    if plan is not None and reverse_levels:
        raise InputError("--reverse-levels: not for a file judging every criterion in one call")
    loaded = plan.whole if plan is not None else load_rubric(rubric)
    # the example fills the placeholders of the rubric's kind: one response, or a pair
    item = EXAMPLE_ITEM if loaded.scale.kind == "pairwise" else replace(
        EXAMPLE_ITEM, response_a=None, response_b=None)
    if data is not None:
        items = load_items(data)
        if item_id is None:
            item = items[0]
        else:
            found = [candidate for candidate in items if candidate.id == item_id]
            if not found:
                raise InputError(f"--item: no item {item_id!r} in {data}")
            item = found[0]
    if plan is not None:
        messages, schema = plan.messages(item), plan.schema()
    else:
        messages = render_messages(loaded, item, reverse_levels=reverse_levels)
        schema = verdict_json_schema(loaded)
    if fmt == "json":
        echo_json({"rubric": loaded.name, "version": loaded.version,
                   "sha256": loaded.sha256, "item": item.id,
                   "messages": messages, "verdict_schema": schema},
                  indent=2, ensure_ascii=False)
        return
    # the item's text is printed as the judge gets it, but with controls shown escaped
    if plan is not None:
        echo(f"{loaded.name} v{loaded.version} (criteria {', '.join(plan.names)}, one call per "
             f"item) sha256 {loaded.sha256[:12]}")
    else:
        echo(_describe(loaded))
    echo(f"item: {item.id}")
    for message in messages:
        echo(f"\n--- {message['role']} ---\n{message['content']}")
    echo("\n--- verdict schema ---")
    echo_json(schema, indent=2)
