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
    python benchmarks/bench_tool_imports.py --quick    # 20 MB bombs, 1,000 samples, 2 pairs

Each case and the baseline run in turn, ``--repeats`` pairs (a fresh store each time). Prints
one table row per case: exit code, median wall seconds, peak RSS (MB), RSS over the baseline,
the file's size, and the ratios case / baseline of peak RSS and of wall time (median and spread
over the pairs). Results are recorded in docs/import.md and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import header, on_path, ratio_line, ratio_text, table

REPO = on_path()
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
    parser.add_argument("--quick", action="store_true", help="20 MB bombs, 1,000 samples, 2 pairs")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of case and baseline")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    megabytes, samples = (20, 1000) if args.quick else (200, 30_000)
    repeats = 2 if args.quick else args.repeats
    if args.make is not None:
        make(args.make, megabytes, samples)
        return
    header("judgekit import --from inspect on hostile and large logs, against a refused "
           "missing file (the baseline)")
    python = [sys.executable, "-m", "judgekit"]
    rows, lines = [], []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        subprocess.run([sys.executable, __file__, "--make", str(folder),
                        *(["--quick"] if args.quick else [])], check=True)
        absent = [*python, "import", str(folder / "absent.eval"), "--from", "inspect",
                  "--rubric", "correctness", "--db", str(folder / "absent.db")]
        cases = [(f"{name}, {megabytes} MB", folder / f"{method}{'-lie' if lie else ''}.eval")
                 for name, method, lie in CASES]
        cases.append((f"large log, {samples:,} samples", folder / "large.eval"))
        bases: list[Measure] = []
        for name, path in cases:
            found: list[Measure] = []
            based: list[Measure] = []
            for k in range(repeats):
                db = folder / f"{path.stem}-{k}.db"
                case = [*python, "import", str(path), "--from", "inspect", "--rubric",
                        "correctness", "--name", "run", "--db", str(db)]
                if k % 2:
                    found.append(measure(case))
                    based.append(measure(absent))
                else:
                    based.append(measure(absent))
                    found.append(measure(case))
            bases += based
            memory = [f.rss_mb / b.rss_mb for f, b in zip(found, based, strict=True)]
            wall = [f.wall / b.wall for f, b in zip(found, based, strict=True)]
            rss = statistics.median(f.rss_mb for f in found)
            rows.append((name, found[-1].code, f"{statistics.median(f.wall for f in found):.2f}",
                         f"{rss:.0f}", f"{rss - statistics.median(b.rss_mb for b in based):.0f}",
                         f"{path.stat().st_size:,}", ratio_text(memory), ratio_text(wall)))
            lines.append(ratio_line(f"peak RSS {name} / missing file", memory))
            lines.append(ratio_line(f"wall time {name} / missing file", wall))
    rows.insert(0, ("baseline: a missing file refused", bases[-1].code,
                    f"{statistics.median(b.wall for b in bases):.2f}",
                    f"{statistics.median(b.rss_mb for b in bases):.0f}", "0", "0", "", ""))
    print(table(("case", "exit", "wall s", "peak MB", "over base", "file", "RSS ratio",
                 "wall ratio"), rows))
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
