"""Options shared by several commands, so every command finds the store and rubric the same way.

Database path resolution: ``--db PATH``, else ``$JUDGEKIT_DB``, else ``./judgekit.db``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: Environment variable naming the store file when ``--db`` is not given.
DB_ENVVAR = "JUDGEKIT_DB"
#: Store file used when neither ``--db`` nor ``$JUDGEKIT_DB`` is set.
DEFAULT_DB = "judgekit.db"


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The store path: the explicit value, else ``$JUDGEKIT_DB``, else ``./judgekit.db``."""
    if db is not None and str(db) != "":
        return Path(db)
    from_env = os.environ.get(DB_ENVVAR, "")
    return Path(from_env) if from_env else Path(DEFAULT_DB)


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
    """Add a required ``--rubric NAME_OR_PATH`` (a file, or a name under ./rubrics/) as ``rubric``."""
    decorator = click.option(
        "--rubric",
        "-r",
        "rubric",
        required=True,
        metavar="NAME_OR_PATH",
        help="Rubric TOML file, or a bare name looked up in ./rubrics/ then the bundled rubrics.",
    )
    return decorator(func)
