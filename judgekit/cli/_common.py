"""Options shared by several commands, so every command finds the store and rubric the same way.

Database path resolution: ``--db PATH``, else ``$JUDGEKIT_DB``, else ``./judgekit.db``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from judgekit.store import Store
    from judgekit.types import Rubric

F = TypeVar("F", bound=Callable[..., Any])

#: A rubric's sha256, as ``--rubric`` may give it instead of a file or name.
SHA256 = re.compile(r"^[0-9a-f]{64}$")

#: Environment variable naming the store file when ``--db`` is not given.
DB_ENVVAR = "JUDGEKIT_DB"
#: Store file used when neither ``--db`` nor ``$JUDGEKIT_DB`` is set.
DEFAULT_DB = "judgekit.db"


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The store path: the explicit value, else ``$JUDGEKIT_DB``, else ``./judgekit.db``.

    Delegates to the store's own rule so the CLI and library never disagree.
    """
    from judgekit.store.database import resolve_db_path as store_resolve_db_path

    return store_resolve_db_path(None if db is None else Path(db))


def resolve_rubric(store: Store, name_or_path: str) -> Rubric:
    """A rubric file or name, or the sha256 of a rubric saved in the store."""
    from judgekit.errors import InputError
    from judgekit.rubrics import load_rubric, rubric_from_text

    if SHA256.match(name_or_path):
        text = store.get_rubric_text(name_or_path)
        if text is None:
            raise InputError(f"no rubric with sha256 {name_or_path} in the store")
        return rubric_from_text(text, path=f"<store:{name_or_path[:12]}>")
    return load_rubric(name_or_path)


def db_option(func: F) -> F:
    """Add ``--db PATH`` (envvar ``JUDGEKIT_DB``, default ``judgekit.db``) as parameter ``db``."""
    decorator = click.option(
        "--db",
        "db",
        type=click.Path(dir_okay=False),
        envvar=DB_ENVVAR,
        default=DEFAULT_DB,
        show_default=True,
        show_envvar=True,
        help="SQLite store file.",
    )
    return decorator(func)


def rubric_option(func: F) -> F:
    """Add a required ``--rubric NAME_OR_PATH`` (a file, or a name in ./rubrics/) as ``rubric``."""
    decorator = click.option(
        "--rubric",
        "-r",
        "rubric",
        required=True,
        metavar="NAME_OR_PATH",
        help="Rubric TOML file, or a bare name looked up in ./rubrics/ then the bundled rubrics.",
    )
    return decorator(func)


def import_file_options(func: F) -> F:
    """``FILE`` plus ``--rubric``, ``--db`` and ``--dataset``: what every import command takes.

    Labels and judgments name items by id only, so both resolve the dataset the same way.
    """
    func = click.option(
        "--dataset",
        default=None,
        help="Dataset the item ids belong to (default: the one dataset that holds each id).",
    )(func)
    func = rubric_option(db_option(func))
    return click.argument("file", type=click.Path(dir_okay=False, path_type=Path))(func)


def text_or_json_option(func: F) -> F:
    """``--format text|json`` as parameter ``fmt``: the statistics-only commands' output."""
    decorator = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="Output format.",
    )
    return decorator(func)
