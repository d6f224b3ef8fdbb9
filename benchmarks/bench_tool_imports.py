"""Memory of ``judgekit import --from inspect`` on hostile and large Inspect logs.

Each case runs ``python -m judgekit import FILE --from inspect --rubric correctness`` as
its own process, timed from outside with ``os.wait4`` (wall, peak RSS of that one
process), against the baseline of the same command on a missing file (the interpreter, the
CLI's imports and the rubric, refused before any reading):

- **zip bomb (deflate)**: one ``header.json`` member of N MB of zeros, deflated (a few
  hundred KB); refused from the listing's declared size, before any decompression;
- **zip bomb (lying size)**: the same member with its declared size rewritten to 1 KB, so
  only the streamed count stops it;
- **zstd bomb**: the same as a zstd member, as Inspect writes them;
- **large log**: the test fixture's ``capitals.eval`` with its sample cloned into S
  samples (distinct ids and answers), imported in full: the samples are read one at a
  time, so memory grows with the items kept, not with the log's JSON.

    python benchmarks/bench_tool_imports.py            # 200 MB bombs, 30,000 samples
    python benchmarks/bench_tool_imports.py --quick    # 50 MB bombs, 3,000 samples

Prints one table row per case: exit code, wall seconds, peak RSS (MB), RSS over the
baseline, and the file's size. Results are recorded in docs/import.md.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "inspect" / "capitals.eval"


@dataclass(frozen=True)
class Measure:
    wall: float
    rss_mb: float
    code: int


def measure(argv: list[str]) -> Measure:
    """Wall time and peak RSS of one process."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUDGEKIT_PROGRESS": "0"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    return Measure(time.perf_counter() - start, usage.ru_maxrss / 1024,
                   os.waitstatus_to_exitcode(status))


def zipfile_zstd():  # type: ignore[no-untyped-def]
    if sys.version_info >= (3, 14):
        import zipfile
    else:
        from backports.zstd import zipfile  # type: ignore[import-not-found]
    return zipfile


def bomb(path: Path, megabytes: int, method: str) -> None:
    zipfile = zipfile_zstd()
    compression = zipfile.ZIP_ZSTANDARD if method == "zstd" else zipfile.ZIP_DEFLATED
    header = b'{"eval": {"scorers": [], "pad": "' + b"0" * (megabytes * 1_000_000) + b'"}}'
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        archive.writestr("header.json", header)


def lie_about_size(path: Path) -> None:
    """Rewrite the declared uncompressed size of every member to 1,000 bytes."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (found := data.find(signature, start)) != -1:
            data[found + offset: found + offset + 4] = struct.pack("<I", 1000)
            start = found + 4
    path.write_bytes(bytes(data))


def large_log(path: Path, samples: int) -> None:
    zipfile = zipfile_zstd()
    with zipfile.ZipFile(FIXTURE) as source:
        header = source.read("header.json")
        sample = json.loads(source.read("samples/q1_epoch_1.json"))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_ZSTANDARD) as archive:
        archive.writestr("header.json", header)
        for number in range(samples):
            sample["id"] = f"s{number}"
            sample["output"]["choices"][0]["message"]["content"] = f"Paris {number}"
            archive.writestr(f"samples/s{number}_epoch_1.json", json.dumps(sample))


CASES = (("zip bomb (deflate)", "deflate", False), ("zip bomb (lying size)", "deflate", True),
         ("zstd bomb", "zstd", False))


def make(folder: Path, megabytes: int, samples: int) -> None:
    """Write the inputs (in a process of its own: a parent that held them would pass its
    memory to every child it forks, and that child's peak RSS would count it)."""
    for _, method, lie in CASES:
        path = folder / f"{method}{'-lie' if lie else ''}.eval"
        bomb(path, megabytes, method)
        if lie:
            lie_about_size(path)
    large_log(folder / "large.eval", samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 MB bombs, 3,000 samples")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    megabytes, samples = (50, 3000) if args.quick else (200, 30_000)
    if args.make is not None:
        make(args.make, megabytes, samples)
        return
    python = [sys.executable, "-m", "judgekit"]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        subprocess.run([sys.executable, __file__, "--make", str(folder),
                        *(["--quick"] if args.quick else [])], check=True)
        base = measure([*python, "import", str(folder / "absent.eval"), "--from", "inspect",
                        "--rubric", "correctness", "--db", str(folder / "absent.db")])
        rows.append(("baseline: a missing file refused", base, 0))
        cases = [(f"{name}, {megabytes} MB", folder / f"{method}{'-lie' if lie else ''}.eval")
                 for name, method, lie in CASES]
        cases.append((f"large log, {samples:,} samples", folder / "large.eval"))
        for name, path in cases:
            db = folder / f"{path.stem}.db"
            found = measure([*python, "import", str(path), "--from", "inspect", "--rubric",
                             "correctness", "--name", "run", "--db", str(db)])
            rows.append((name, found, path.stat().st_size))
    print(f"{'case':34} {'exit':>4} {'wall s':>7} {'peak MB':>8} {'over base':>9} {'file':>10}")
    for name, found, size in rows:
        print(f"{name:34} {found.code:>4} {found.wall:>7.2f} {found.rss_mb:>8.0f} "
              f"{found.rss_mb - base.rss_mb:>9.0f} {size:>10,}")


if __name__ == "__main__":
    main()
