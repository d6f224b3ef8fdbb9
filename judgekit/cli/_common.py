"""Options shared by several commands, so every command finds the store and rubric the same way.

Database path resolution: ``--db PATH``, else ``$JUDGEKIT_DB``, else ``./judgekit.db``.
Commands that only read (or add to an existing store) open it with
:func:`read_store`, which never creates one; a command that judges opens it with
:func:`store_for_items`; every text printed goes through :func:`echo` (controls escaped,
see :mod:`judgekit.textsafe`); every file written for ``--out`` goes through
:func:`write_out` (``_out_file.py``), which refuses the store itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from judgekit.cli._out_file import check_out_path as check_out_path
from judgekit.cli._out_file import open_out as open_out
from judgekit.cli._out_file import write_out as write_out

if TYPE_CHECKING:
    from judgekit.report import ReportOptions
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


def read_store(db: str | os.PathLike[str] | None, *, importing: bool = False) -> Store:
    """Open an existing store for a command that reads it; never creates one.

    A mistyped ``--db`` is an error (``no store at PATH``, exit 2) instead of a
    new empty store that makes ``report`` answer INSUFFICIENT DATA. ``importing``
    defers upgrading an older store to the import's own transaction, so a
    rejected file leaves it as it was (``open_store(defer_migrations=True)``).
    """
    from judgekit.store import open_store

    return open_store(resolve_db_path(db), create=False, defer_migrations=importing)


def store_for_items(
    db: str | os.PathLike[str] | None, data: Path | None, dataset: str | None
) -> Store:
    """The store of a command that judges ``--data FILE`` or a stored ``--dataset``.

    ``--data`` brings items to import, so the store is created if need be, as
    ``judgekit import`` does; a stored dataset needs an existing store, so
    without ``--data`` a missing one is ``no store at PATH`` (exit 2), never a
    new empty store left behind by a failed command.
    """
    if data is None:
        if not dataset:
            from judgekit.errors import InputError

            raise InputError("give --data FILE or --dataset NAME")
        return read_store(db)
    from judgekit.store import open_store

    return open_store(resolve_db_path(db))


#: The format each known ``--out`` suffix names.
OUT_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
                ".html": "html", ".htm": "html", ".md": "md", ".txt": "text"}


def out_format(out: str | os.PathLike[str] | None, fmt: str | None, *,
               formats: tuple[str, ...], default: str) -> str:
    """The format an output is written in: ``--format``, else the ``--out`` suffix, else
    ``default``.

    A suffix naming another of the command's ``formats`` than ``--format`` is an
    error (``labels.csv`` holding JSONL fails every reader later); a suffix the
    command has no format for (``.txt`` for an export) is just a name.
    """
    from judgekit.errors import InputError

    path = None if out is None else os.fspath(out)
    named = None
    if path is not None and path != "-":
        named = OUT_SUFFIXES.get(os.path.splitext(path)[1].lower())
        if named not in formats:
            named = None
    if fmt is None:
        return named or default
    if named is not None and named != fmt:
        raise InputError(f"--out {path} names {named} by its suffix but --format is {fmt}: "
                         "change one of them")
    return fmt


def check_out_suffix(out: str | os.PathLike[str], fmt: str, *, also: tuple[str, ...] = ()
                     ) -> None:
    """Refuse an ``--out`` of a command with one output format whose suffix names another.

    ``labels export-tasks --out tasks.csv`` would write JSON under a CSV name;
    ``also`` are formats the suffix may name too (``.json`` for a JSONL file).
    """
    from judgekit.errors import InputError

    path = os.fspath(out)
    named = OUT_SUFFIXES.get(os.path.splitext(path)[1].lower())
    if named is not None and named != fmt and named not in also:
        raise InputError(f"--out {path}: this command writes {fmt}, but the name says {named} "
                         f"(use a .{fmt} name)")


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` with every control code shown escaped (names come from outside)."""
    from judgekit.textsafe import terminal_safe

    click.echo(terminal_safe(text), err=err, nl=nl)


def echo_json(value: Any, **dumps: Any) -> None:
    """Print ``value`` as JSON whose C1 controls and bidi overrides are ``\\u`` escapes."""
    import json

    from judgekit.textsafe import json_safe

    click.echo(json_safe(json.dumps(value, **dumps)))


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


@contextmanager
def report_inputs(
    db: str | os.PathLike[str] | None, rubric: str, *, out: str | None = None,
    check_dataset: bool = True, **fields: Any,
) -> Iterator[tuple[Store, Rubric, ReportOptions]]:
    """What ``report``, ``estimate`` and ``plan --estimate`` start from: store, rubric, options.

    ``--confidence`` is checked first; then the store opens with
    :func:`read_store` (never created), ``--out`` is checked against it, the
    rubric resolved (:func:`resolve_rubric`) and the options built by
    :func:`judgekit.report_inputs.report_options` (an unknown run, or dataset
    with ``check_dataset``, is an error). The store closes when the block ends.
    """
    from judgekit.errors import InputError
    from judgekit.report_inputs import report_options

    level = fields.get("confidence_level")
    if level is not None and not 0.0 < level < 1.0:
        raise InputError(f"--confidence must be between 0 and 1, got {level}")
    store = read_store(db)
    try:
        if out is not None:
            check_out_path(out, store=store.path)
        rub = resolve_rubric(store, rubric)
        options = report_options(store, where=str(store.path), check_dataset=check_dataset,
                                 **fields)
        yield store, rub, options
    finally:
        store.close()


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


#: ``--reference`` choices (judgekit.report.measures.REFERENCES, named here so ``--help``
#: imports no numpy).
REFERENCE_CHOICES = ("majority", "median", "mean")


def reference_option(func: F) -> F:
    """Add ``--reference majority|median|mean`` as ``reference`` (None: the scale's default)."""
    decorator = click.option(
        "--reference",
        type=click.Choice(REFERENCE_CHOICES),
        default=None,
        help="Human reference per item with several annotators: majority label, lower "
        "median level, or mean of the annotators' values (ordinal; used by correlations, "
        "mean bias, estimates and the scale probes, while kappa and the confusion matrix use "
        "the lower median level). Default: median for ordinal scales, majority otherwise.",
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


#: ``--resamples``: at least one; a million already takes minutes and gigabytes.
RESAMPLES = click.IntRange(min=1, max=1_000_000)
#: ``--seed`` of a bootstrap or a queue draw: what numpy's generators accept.
SEED = click.IntRange(min=0, max=2**63 - 1)


class FiniteFloat(click.FloatRange):
    """A ``click.FloatRange`` that also refuses ``nan`` and ``inf``.

    ``float("nan")`` passes every range comparison, so ``--temperature nan``
    used to reach the request JSON as ``NaN`` (which no JSON parser accepts).
    """

    name = "finite number"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


#: A count of items (``--limit``): positive, and small enough to slice a list with.
COUNT = click.IntRange(min=1, max=2**62)
