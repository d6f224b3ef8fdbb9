"""The ``--out`` file: refused when it names the store (or a folder, /proc, /sys), written whole.

Every command that writes a file for ``--out`` goes through :func:`write_out` (a text
at once) or :func:`open_out` (a stream of text, an export row by row): a regular file
is replaced by renaming a finished temporary file over it, so a failure never leaves
half a file; a symlink is written through; a device or pipe is written directly, a
terminal through :func:`judgekit.textsafe.terminal_safe`. ``judgekit.cli._common``
re-exports all three names.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, cast

#: Longest ``--out`` accepted before the OS would refuse it anyway (PATH_MAX, NAME_MAX).
MAX_PATH = 4096
MAX_NAME = 255
#: Kernel pseudo-filesystems: writing there changes the system, never saves a file.
PSEUDO_ROOTS = ("/proc", "/sys")


def _store_files(store: Path) -> list[str]:
    """The real paths of the store and its WAL and shared-memory files."""
    real = os.path.realpath(store)
    return [real, f"{real}-wal", f"{real}-shm", f"{real}-journal"]


def check_out_path(out: str | os.PathLike[str], *, store: Path | None = None) -> Path:
    """The file ``--out`` names, or an :class:`InputError` saying why it cannot be written.

    Refused: an empty or over-long path, a folder, a path under /proc or /sys, and
    any name for the store or its ``-wal``/``-shm`` files (a symlink or hard link
    to the store included): writing a report there would destroy the store.
    """
    from judgekit.errors import InputError

    text = os.fspath(out)
    if not text.strip():
        raise InputError("--out: the path is empty")
    if len(text) > MAX_PATH or any(len(part) > MAX_NAME for part in Path(text).parts):
        raise InputError(f"--out: the path is too long ({len(text)} characters)")
    path = Path(text).expanduser()
    real = os.path.realpath(path)
    for root in PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            raise InputError(f"--out {text}: refusing to write under {root} (not a file)")
    if path.is_dir():
        raise InputError(f"--out {text} is a folder; give a file name")
    if store is not None:
        same = real in _store_files(store)
        if not same and path.exists() and store.exists():
            same = os.path.samefile(path, store)
        if same:
            raise InputError(f"--out {text} is the store {store} (or its -wal/-shm file); "
                             "choose another file")
    return path


def write_out(out: str | os.PathLike[str], text: str, *, store: Path | None = None) -> Path:
    """Write ``text`` to the ``--out`` file; an error is one line and leaves the old file.

    A regular file (or a new one) is written to a temporary file beside it and
    renamed over it, so a failure never leaves half a report. A symlink is
    written through (its target is replaced, the link stays). A device or pipe
    (``/dev/null``, ``/dev/stdout``, a FIFO) is written directly, never renamed
    over. Returns the path written.
    """
    with open_out(out, store=store) as handle:
        handle.write(text)
    return Path(os.fspath(out)).expanduser()


@contextmanager
def open_out(out: str | os.PathLike[str], *, store: Path | None = None) -> Iterator[TextIO]:
    """:func:`write_out` as a file to write a stream of text to (an export row by row).

    The text reaches ``out`` only when the block ends without an error: until
    then it goes to a temporary file beside it, removed if anything fails, so
    an export that stops midway leaves the old file (or none), never a
    truncated one. A write error is one line (:class:`InputError`).
    """
    from judgekit.errors import InputError

    path = check_out_path(out, store=store)
    target = Path(os.path.realpath(path))
    try:
        if target.exists() and not target.is_file():
            with open(target, "w", encoding="utf-8", newline="") as handle:
                # --out /dev/tty: a terminal sees control codes escaped, as on stdout
                yield cast(TextIO, _TerminalText(handle)) if handle.isatty() else handle
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        with _replacing(target) as handle:
            yield handle
    except OSError as exc:
        raise InputError(f"cannot write --out {os.fspath(out)}: {exc.strerror or exc}") from exc


class _TerminalText(io.TextIOBase):
    """A terminal opened as an ``--out`` device, written through :func:`terminal_safe`.

    Exports write whole lines (or rows) per call, so escaping each piece is the
    escape of the whole.
    """

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle

    def write(self, text: str) -> int:
        from judgekit.textsafe import terminal_safe

        self._handle.write(terminal_safe(text))
        return len(text)

    def flush(self) -> None:
        self._handle.flush()


@contextmanager
def _replacing(target: Path) -> Iterator[TextIO]:
    """A temporary file in the same folder, renamed onto ``target`` once the block is done."""
    import tempfile

    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
