"""ZIP archives read member by member under a decompression cap (Inspect's ``.eval`` logs).

A small archive can declare or hold gigabytes: a 49 KB zip bomb once took 3.2 GB of
memory. :class:`CappedZip` first checks the archive's listing (how many members, the
uncompressed sizes they declare) against :func:`~judgekit.io.caps.max_uncompressed_bytes`,
then reads each member as a stream, counting the bytes actually produced across the
whole archive, and stops with one line as soon as the cap is passed; a declared size
that lies is caught by the count. Members are read one at a time, so memory holds one
member's text, never the archive's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from judgekit.errors import InputError
from judgekit.io.caps import max_uncompressed_bytes, refuse_expansion

#: Most members an archive may list (Inspect writes a few per sample).
MAX_MEMBERS = 1_000_000
_CHUNK = 1 << 20


def zipfile_module() -> Any:
    """``zipfile`` with zstd members: the standard one from Python 3.14, else backports.zstd."""
    if sys.version_info >= (3, 14):
        import zipfile

        return zipfile
    try:
        from backports.zstd import zipfile  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise InputError("reading Inspect .eval logs needs zstd support: "
                         "pip install 'judgekit[inspect]'") from None
    return zipfile


class CappedZip:
    """An open archive whose members are read under one shared decompression budget."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path, self.kind = path, kind
        self.zipfile = zipfile_module()
        try:
            size = path.stat().st_size
            self.archive = self.zipfile.ZipFile(path)
        except (self.zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise InputError(f"{path}: not a readable {kind} ({exc})") from None
        self.limit = max_uncompressed_bytes(size)
        self.used = 0
        infos = self.archive.infolist()
        if len(infos) > MAX_MEMBERS:
            self.close()
            raise InputError(f"{path}: lists {len(infos):,} members (at most {MAX_MEMBERS:,})")
        declared = sum(max(info.file_size, 0) for info in infos)
        if declared > self.limit:
            self.close()
            refuse_expansion(str(path), declared, self.limit, declared=True)
        self.names = [info.filename for info in infos]

    def read(self, name: str) -> bytes:
        """One member's bytes, counted against the archive's budget."""
        parts: list[bytes] = []
        try:
            with self.archive.open(name) as member:
                while chunk := member.read(min(_CHUNK, self.limit - self.used + 1)):
                    self.used += len(chunk)
                    if self.used > self.limit:
                        refuse_expansion(f"{self.path}: {name}", self.used, self.limit,
                                         declared=False)
                    parts.append(chunk)
        except KeyError:
            raise InputError(f"{self.path}: not an {self.kind} (no {name})") from None
        except InputError:
            raise
        except Exception as exc:  # zipfile/zstd raise many types for a damaged member
            raise InputError(f"{self.path}: {name}: cannot decompress ({exc})") from None
        return b"".join(parts)

    def close(self) -> None:
        self.archive.close()

    def __enter__(self) -> CappedZip:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
