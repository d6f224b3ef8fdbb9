"""judgekit at the scale of a real calibration set, each command against a bare baseline.

The shape is PandaLM x100: 99,900 pairwise items, 199,800 verdicts from two judges
and 299,700 labels from three annotators (synthetic, made here with a fixed seed),
plus a store of 1,000,000 judgments for the report. Every step runs as its own
process, timed from outside with ``os.wait4`` (wall, user+system CPU, peak RSS of
that one process), and is set against a baseline run in the same command:

- imports: a bare ``sqlite3`` ``executemany`` of the same rows (the file parsed with
  ``json.loads``) in one transaction, into a copy of the same store (the same tables
  and indexes, so both maintain the same indexes); the ratio is judgekit's rows/s
  over the baseline's (target >= 0.3); ``--only imports`` runs just these rows;
- ``report`` (JSON, 1,000 resamples): bare ``sqlite3`` reads of the same rows, the
  majority label with numpy and Cohen's kappa with a 1,000-resample bootstrap;
  ``compare judges``: the same for two judges plus the bootstrap of their difference;
  ``agree``: the csv module, pairwise kappas and Fleiss' kappa with 1,000-resample
  bootstraps in numpy (target: time ratio <= 3);
- ``--help``: ``python -c "import click"`` (target <= 2, median of several runs).

Peak RSS of every judgekit step is held to 300 MB.

    python benchmarks/bench_scale.py              # the full scale (several minutes)
    python benchmarks/bench_scale.py --scale 0.1  # a tenth, for quick iteration
    python benchmarks/bench_scale.py --only report compare   # some step groups
    python benchmarks/bench_scale.py --quick      # 999 items, 2 pairs, 4 groups (below)

Each step and its baseline run in turn, ``--repeats`` pairs (default 3; the imports, which
change the store, once; ``--help`` against ``import click`` 5 pairs); the ratio is the median
of the pairs' CPU-time ratios, printed with its spread. ``--quick`` runs 999 items, 2 pairs,
and (without ``--only``) the groups ``help``, ``imports``, ``report`` and ``agree``:
at that size a process's fixed start-up dominates, so its ratios say that every step runs,
not how judgekit scales.

- ``probe position --imported`` (judge A's verdicts in both orders, the BA ones imported
  into a copy of the store once): bare ``sqlite3`` reads of both orders, numpy consistency
  and slot shares, 2,000-resample bootstraps of position fairness and BPDE;
  ``batch prepare`` (every item, nothing cached): the same prompts rendered with
  ``str.format``, one ``json.dumps`` and write per line (target: time ratio <= 3);

``--only`` takes one or more groups (``help``, ``imports``, ``report``, ``compare``,
``agree``, ``million``, ``exports``, ``probes``); each runs with its own baselines
(``exports``: see ``scale_exports.py``). The store is built once
(by judgekit's imports, timed only when ``imports`` is chosen); with ``--keep DIR``
a store already built there at the same size is reused, so a second run of
``--keep DIR --only compare`` measures just the comparisons.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import scale_exports
from _common import header, on_path, ratio_line, ratio_text, spread

REPO = on_path()
RUBRIC = "preference"
LABELS = ("A", "B", "tie")
JUDGES = ("judge-a", "judge-b")
ANNOTATORS = ("ann1", "ann2", "ann3")
DATASET = "panda"
#: ``compare candidates``: two datasets of the same question ids, one binary judge.
CANDIDATES = ("cand-a", "cand-b")
CANDIDATE_RUBRIC = "correctness"
RSS_LIMIT_MB = 300.0
HELP_RUNS = 5
#: Step groups of ``--only``, in the order they run.
GROUPS = (
    "help",
    "imports",
    "report",
    "compare",
    "agree",
    "million",
    "exports",
    "probes",
)
#: Groups that need the store built by the three imports.
STORE_GROUPS = frozenset({
    "imports",
    "report",
    "compare",
    "million",
    "exports",
    "probes",
})


# -- synthetic data ---------------------------------------------------------------------


def generate(folder: Path, n_items: int, seed: int = 0) -> dict[str, Path]:
    """Items, two judges' verdicts, three annotators' labels and a ratings file."""
    rng = random.Random(seed)
    words = ("the", "a", "model", "answer", "question", "response", "user", "helpful", "clear")

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    paths = {name: folder / f"{name}.jsonl" for name in ("items", "judgments", "labels")}
    paths["ratings"] = folder / "ratings.csv"
    with (
        paths["items"].open("w") as items,
        paths["judgments"].open("w") as verdicts,
        paths["labels"].open("w") as labels,
        paths["ratings"].open("w", newline="") as ratings_file,
    ):
        ratings = csv.writer(ratings_file)
        ratings.writerow(["item_id", "rater", "label"])
        for i in range(n_items):
            item_id = f"p{i}"
            items.write(json.dumps({
                "id": item_id, "input": text(30), "response_a": text(60),
                "response_b": text(60),
            }) + "\n")
            truth = rng.choice(LABELS)
            for judge, accuracy in zip(JUDGES, (0.75, 0.65), strict=True):
                if rng.random() < 0.01:
                    line = {"item_id": item_id, "judge": judge, "status": "parse_error"}
                else:
                    said = truth if rng.random() < accuracy else rng.choice(LABELS)
                    line = {"item_id": item_id, "judge": judge, "label": said}
                verdicts.write(json.dumps(line) + "\n")
            for annotator in ANNOTATORS:
                said = truth if rng.random() < 0.8 else rng.choice(LABELS)
                labels.write(json.dumps(
                    {"item_id": item_id, "annotator": annotator, "label": said}) + "\n")
                ratings.writerow([item_id, annotator, said])
    return paths


def generate_swapped(folder: Path, judgments: Path, seed: int = 2) -> Path:
    """Each judge's BA verdict of every item (as presented): mostly its AB verdict mapped
    to the swapped slots, some flips, a few failures, as a position probe would see them."""
    rng = random.Random(seed)
    flip = {"A": "B", "B": "A", "tie": "tie"}
    path = folder / "swapped.jsonl"
    with judgments.open() as source, path.open("w") as out:
        for text in source:
            line = json.loads(text)
            swapped = {"item_id": line["item_id"], "judge": line["judge"], "order": "BA"}
            if rng.random() < 0.01:
                swapped["status"] = "timeout"
            elif line.get("label") is not None and rng.random() < 0.8:
                swapped["label"] = flip[line["label"]]  # the same verdict, slots swapped
            else:
                swapped["label"] = rng.choice(LABELS)
            out.write(json.dumps(swapped) + "\n")
    return path


def generate_candidates(folder: Path, n_items: int, seed: int = 1) -> dict[str, Path]:
    """Two candidates' answers to the same questions and one judge's pass/fail of each."""
    rng = random.Random(seed)
    paths = {name: folder / f"candidates-{name}.jsonl" for name in ("a", "b", "judgments")}
    with (
        paths["a"].open("w") as items_a,
        paths["b"].open("w") as items_b,
        paths["judgments"].open("w") as verdicts,
    ):
        for i in range(n_items):
            item_id = f"q{i}"
            sides = ((items_a, CANDIDATES[0], 0.7), (items_b, CANDIDATES[1], 0.6))
            for out, dataset, rate in sides:
                out.write(json.dumps({"id": item_id, "input": f"question {i}",
                                      "response": f"answer {rng.random():.6f}",
                                      "reference": f"reference {i}"}) + "\n")
                if rng.random() < 0.01:
                    line = {"item_id": item_id, "dataset": dataset, "judge": JUDGES[0],
                            "status": "timeout"}
                else:
                    line = {"item_id": item_id, "dataset": dataset, "judge": JUDGES[0],
                            "label": "pass" if rng.random() < rate else "fail"}
                verdicts.write(json.dumps(line) + "\n")
    return paths


def copy_db(source: Path, target: Path) -> None:
    """A consistent copy of a WAL store (the backup API, not a file copy)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()


def grow_to_million(path: Path, target: int) -> int:
    """Add repeated samples of judge A until the store holds about ``target`` judgments."""
    conn = sqlite3.connect(path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(judgments)") if row[1] != "id"]
    have = conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    per_sample = conn.execute(
        "SELECT COUNT(*) FROM judgments WHERE model_requested = ?", [JUDGES[0]]
    ).fetchone()[0]
    select = ", ".join(
        "sample_index + ?" if c == "sample_index" else "cache_key || ':' || ?"
        if c == "cache_key" else c
        for c in columns
    )
    sample = 1
    with conn:
        while have < target and per_sample:
            conn.execute(
                f"INSERT INTO judgments ({', '.join(columns)}) SELECT {select} FROM judgments "
                "WHERE model_requested = ? AND sample_index = 0",
                [sample, sample, JUDGES[0]],
            )
            have += per_sample
            sample += 1
    total = int(conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
    conn.close()
    return total


# -- measuring one process ----------------------------------------------------------------


@dataclass
class Measure:
    wall: float
    cpu: float
    rss_mb: float
    code: int


def measure(argv: Sequence[str], log: Path) -> Measure:
    """Run ``argv`` once; wall time, CPU time and peak RSS of that process alone."""
    with log.open("ab") as out:
        out.write(f"$ {' '.join(map(str, argv))}\n".encode())
        out.flush()
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=out, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measure(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode)


def median_measure(found: Sequence[Measure]) -> Measure:
    """Median wall and CPU time, largest peak RSS and exit code of several runs."""
    return Measure(
        statistics.median(m.wall for m in found),
        statistics.median(m.cpu for m in found),
        max(m.rss_mb for m in found),
        max(m.code for m in found),
    )


#: Pairs of each step and its baseline (``--repeats``).
REPEATS = [3]


def paired_measure(step: str, ours: Sequence[str], base: Sequence[str], log: Path,
                   repeats: int | None = None, before: Callable[[], None] | None = None) -> Row:
    """The step and its baseline in turn, the order flipping every pair; ``before`` runs
    ahead of each of the step's runs (a fresh copy for a step that writes)."""
    mine: list[Measure] = []
    theirs: list[Measure] = []
    for k in range(repeats or REPEATS[0]):
        for side in ("base", "ours") if k % 2 == 0 else ("ours", "base"):
            if side == "ours":
                if before is not None:
                    before()
                mine.append(measure(ours, log))
            else:
                theirs.append(measure(base, log))
    return Row(step, mine, theirs)


# -- baselines (run as ``bench_scale.py --baseline NAME ...``) -----------------------------


def _lines(path: str) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def baseline_import(kind: str, path: str, db: str) -> None:
    """Parse the file and ``executemany`` its rows into the store's table, one transaction."""
    conn = sqlite3.connect(db)
    rubric = conn.execute("SELECT sha256 FROM rubrics LIMIT 1").fetchone()
    rubric_hash = rubric[0] if rubric else "0" * 64
    now = "2026-01-01T00:00:00+00:00"
    records = _lines(path)
    if kind == "items":
        sql = (
            "INSERT INTO items (dataset, id, input, response, response_a, response_b, reference, "
            "slice, cluster, meta, content_hash, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        )
        rows = [
            (DATASET, r["id"], r["input"], r.get("response"), r.get("response_a"),
             r.get("response_b"), r.get("reference"), r.get("slice"), r.get("cluster"), "{}",
             hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest(), now)
            for r in records
        ]
    elif kind == "judgments":
        sql = (
            "INSERT INTO judgments (run_id, dataset, item_id, item_hash, variant, sample_index, "
            "status, label, score, model_requested, base_url, sampling, rubric_name, "
            "rubric_version, rubric_hash, cache_key, judgekit_version, created_at, imported) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        )
        rows = [
            (f"import-{r['judge']}", DATASET, r["item_id"], "", "", 0, r.get("status", "ok"),
             r.get("label"), None, r["judge"], "imported:", "{}", RUBRIC, "1", rubric_hash,
             hashlib.sha256(f"{r['judge']}|{r['item_id']}".encode()).hexdigest(), "0.1.0",
             now, 1)
            for r in records
        ]
    else:
        sql = (
            "INSERT INTO labels (dataset, item_id, rubric_hash, annotator, label, note, flagged, "
            "blind, seconds, created_at, source) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
        )
        rows = [
            (DATASET, r["item_id"], rubric_hash, r["annotator"], r["label"], None, 0, 1, None,
             now, "import")
            for r in records
        ]
    with conn:
        conn.executemany(sql, rows)
    conn.close()


def _kappa_boot(pairs: Sequence[tuple[object, object]], n_resamples: int, seed: int) -> None:
    """Cohen's kappa of each (a, b) code-array pair, resampled jointly ``n_resamples`` times."""
    import numpy as np

    rng = np.random.default_rng(seed)
    k = len(LABELS)

    def kappa(a: np.ndarray, b: np.ndarray) -> float:
        table = np.bincount(a * k + b, minlength=k * k).reshape(k, k) / len(a)
        expected = table.sum(1) @ table.sum(0)
        return float((np.trace(table) - expected) / (1 - expected))

    n = len(pairs[0][0])  # type: ignore[arg-type]
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        for a, b in pairs:
            kappa(a[idx], b[idx])  # type: ignore[index]


def _majority(conn: sqlite3.Connection) -> tuple[object, object]:
    """Item ids (sorted) and the majority label code per item (-1: no majority)."""
    import numpy as np

    rows = conn.execute(
        "SELECT item_id, label FROM labels WHERE id IN (SELECT MAX(id) FROM labels "
        "GROUP BY dataset, item_id, annotator) AND label IS NOT NULL"
    ).fetchall()
    ids, labels = zip(*rows, strict=True)
    items, item_code = np.unique(np.asarray(ids), return_inverse=True)
    code = {label: i for i, label in enumerate(LABELS)}
    label_code = np.fromiter((code[x] for x in labels), dtype=np.int64, count=len(labels))
    k = len(LABELS)
    counts = np.bincount(item_code * k + label_code, minlength=len(items) * k).reshape(-1, k)
    best = counts.argmax(axis=1)
    top = counts.max(axis=1)
    tied = (counts == top[:, None]).sum(axis=1) > 1
    return items, np.where(tied, -1, best)


def _judge_codes(conn: sqlite3.Connection, judge: str, items: object) -> object:
    """The judge's ok label code per item of ``items`` (-1 when none)."""
    import numpy as np

    rows = conn.execute(
        "SELECT item_id, label FROM judgments WHERE id IN (SELECT MAX(id) FROM judgments "
        "WHERE model_requested = ? AND variant = '' GROUP BY cache_key) "
        "AND sample_index = 0 AND status = 'ok'",
        [judge],
    ).fetchall()
    code = {label: i for i, label in enumerate(LABELS)}
    out = np.full(len(items), -1)  # type: ignore[arg-type]
    if rows:
        ids, labels = zip(*rows, strict=True)
        pos = np.searchsorted(items, np.asarray(ids))  # type: ignore[arg-type]
        out[pos] = [code[x] for x in labels]
    return out


def baseline_report(db: str, judges: Sequence[str]) -> None:
    """Read the rows, majority label, kappa (per judge, jointly) with 1,000 resamples."""
    conn = sqlite3.connect(db)
    items, human = _majority(conn)
    codes = [_judge_codes(conn, judge, items) for judge in judges]
    keep = human >= 0  # type: ignore[operator]
    for c in codes:
        keep &= c >= 0  # type: ignore[operator]
    _kappa_boot([(c[keep], human[keep]) for c in codes], 1000, 0)  # type: ignore[index]


def baseline_candidates(db: str) -> None:
    """Read both candidates' ok scores, pair them by item id, bootstrap the means and difference."""
    import numpy as np

    conn = sqlite3.connect(db)
    scores = []
    for dataset in CANDIDATES:
        rows = conn.execute(
            "SELECT item_id, label FROM judgments WHERE id IN (SELECT MAX(id) FROM judgments "
            "WHERE dataset = ? AND variant = '' GROUP BY cache_key) AND sample_index = 0 "
            "AND status = 'ok'",
            [dataset],
        ).fetchall()
        ids, labels = zip(*rows, strict=True)
        scores.append((np.asarray(ids), np.asarray(labels) == "pass"))
    (ids_a, a), (ids_b, b) = scores
    shared, ia, ib = np.intersect1d(ids_a, ids_b, return_indices=True)
    xa, xb = a[ia].astype(float), b[ib].astype(float)
    rng = np.random.default_rng(0)
    n = len(shared)
    for x in (xa, xb, xa - xb, xa - xb):  # means of A and B, the micro and macro difference
        for _ in range(1000):
            x[rng.integers(0, n, n)].mean()


def baseline_agree(path: str) -> None:
    """csv module + numpy: three pairwise kappas and Fleiss' kappa, 1,000 resamples each."""
    import numpy as np

    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    code = {label: i for i, label in enumerate(LABELS)}
    items, item_code = np.unique(np.asarray([r["item_id"] for r in rows]), return_inverse=True)
    raters, rater_code = np.unique(np.asarray([r["rater"] for r in rows]), return_inverse=True)
    grid = np.full((len(items), len(raters)), -1)
    grid[item_code, rater_code] = [code[r["label"]] for r in rows]
    n_raters = len(raters)
    pairs = [(grid[:, a], grid[:, b]) for a in range(n_raters) for b in range(a + 1, n_raters)]
    _kappa_boot(pairs, 1000, 0)
    k = len(LABELS)
    counts = np.stack([(grid == c).sum(axis=1) for c in range(k)], axis=1)
    rng = np.random.default_rng(1)
    m = counts.sum(axis=1)
    for _ in range(1000):
        c = counts[rng.integers(0, len(items), len(items))]
        p_i = ((c * (c - 1)).sum(1) / (m[0] * (m[0] - 1))).mean()
        p_j = c.sum(0) / c.sum()
        (p_i - (p_j**2).sum()) / (1 - (p_j**2).sum())


def baseline_position(db: str, judge: str) -> None:
    """Both orders' latest sample-0 verdicts of ``judge``, consistency and slot shares with
    numpy, and 2,000-resample bootstraps of position fairness and BPDE (as the probe)."""
    import numpy as np

    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT item_id, variant, status, label FROM judgments WHERE id IN (SELECT MAX(id) "
        "FROM judgments WHERE model_requested = ? AND base_url LIKE 'imported:%' "
        "AND sample_index = 0 GROUP BY cache_key)",
        [judge],
    ).fetchall()
    code = {label: i for i, label in enumerate(LABELS)}
    ids, item_code = np.unique(np.asarray([r[0] for r in rows]), return_inverse=True)
    verdict = np.full((len(ids), 2), -1)
    column = np.asarray([r[1] == "swapped" for r in rows], dtype=np.int64)
    verdict[item_code, column] = [code[r[3]] if r[2] == "ok" else -1 for r in rows]
    valid = (verdict >= 0).all(axis=1)
    a, b = verdict[valid, 0], verdict[valid, 1]
    n = int(valid.sum())
    consistent = a == b
    first = ~consistent & ((a == 0) | (b == 1))  # the judge kept the slot shown first
    codes = np.where(consistent, 0.0, np.where(first, -1.0, 1.0))
    entropy = np.where(consistent, 0.0, np.log(2.0))
    for share in (consistent.mean(), first.mean()):
        z = 1.959963984540054
        centre = (share + z * z / (2 * n)) / (1 + z * z / n)
        centre + z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    for values in (codes, entropy):
        rng = np.random.default_rng(0)
        step = max(1, 2_000_000 // n)
        means = [values[rng.integers(0, n, size=(min(step, 2000 - s), n))].mean(axis=1)
                 for s in range(0, 2000, step)]
        np.percentile(np.concatenate(means), [2.5, 97.5])


def baseline_prepare(db: str, out: str) -> None:
    """The same prompts rendered with str.format, a sha256 id per call, one json.dumps and
    one write per line (the request body judgekit writes, without its cache and records)."""
    conn = sqlite3.connect(db)
    system = ("You compare two answers to the same request and pick the better one. "
              "Correctness matters most; length does not. Give your reasoning first, then "
              "your verdict.")
    user = ("Request: {input}\n\nResponse A: {response_a}\n\nResponse B: {response_b}\n\n"
            "Which response is better?\n- A: Response A is better.\n- B: Response B is "
            "better.\n- tie: Both are equally good, or equally bad.\n\nWrite your answer as "
            'JSON: {{"reasoning": "your reason", "verdict": "A" or "B" or "tie"}}')
    schema = {"type": "object", "properties": {"reasoning": {"type": "string"}, "verdict": {
        "type": "string", "enum": list(LABELS)}}, "required": ["reasoning", "verdict"],
        "additionalProperties": False}
    with open(out, "w", encoding="utf-8") as handle:
        for item_id, text, a, b in conn.execute(
            "SELECT id, input, response_a, response_b FROM items WHERE dataset = ? "
            "ORDER BY rowid", [DATASET],
        ):
            body = {"model": "bench-judge", "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user.format(input=text, response_a=a,
                                                        response_b=b)},
            ], "temperature": 0.0, "max_tokens": 512, "top_p": 1.0, "seed": 0,
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "verdict", "schema": schema, "strict": True}},
                "logprobs": True, "top_logprobs": 5}
            line = {"custom_id": hashlib.sha256(item_id.encode()).hexdigest(),
                    "method": "POST", "url": "/v1/chat/completions", "body": body}
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


# -- the run -------------------------------------------------------------------------------


@dataclass
class Row:
    step: str
    runs: list[Measure]  # judgekit's, one per pair
    base_runs: list[Measure]  # the baseline's, in the same pairs
    rows: int = 0  # > 0: an import, compared by rows/s

    @property
    def ours(self) -> Measure:
        return median_measure(self.runs)

    @property
    def base(self) -> Measure:
        return median_measure(self.base_runs)

    def ratios(self) -> list[float]:
        """CPU-time ratio per pair (rows/s ours over the baseline's for an import)."""
        pairs = zip(self.runs, self.base_runs, strict=True)
        if self.rows:  # rows/s ours / rows/s baseline == baseline time / our time
            return [b.cpu / o.cpu for o, b in pairs]
        return [o.cpu / b.cpu for o, b in pairs]

    def ratio(self) -> float:
        return spread(self.ratios())[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full size")
    parser.add_argument("--million", type=int, default=1_000_000,
                        help="judgments in the large-store check (0: skip it)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the files in this folder")
    parser.add_argument("--only", nargs="+", choices=GROUPS, default=None, metavar="GROUP",
                        help=f"run only these step groups ({', '.join(GROUPS)}); default: all")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of each step and baseline")
    parser.add_argument("--quick", action="store_true",
                        help="999 items, 2 pairs, groups help imports report agree")
    parser.add_argument("--baseline", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.scale, args.million, args.repeats = 0.01, 0, 2
        args.only = args.only or ["help", "imports", "report", "agree"]
    REPEATS[0] = args.repeats
    if args.baseline:
        name, *rest = args.baseline
        if name == "import":
            baseline_import(*rest)
        elif name == "report":
            baseline_report(rest[0], rest[1:])
        elif name == "agree":
            baseline_agree(rest[0])
        elif name == "candidates":
            baseline_candidates(rest[0])
        elif name == "exports":
            scale_exports.baseline(*rest)
        elif name == "position":
            baseline_position(*rest)
        elif name == "prepare":
            baseline_prepare(*rest)
        return
    header("judgekit at scale, each command against a bare baseline (whole processes)")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="judgekit-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        only = frozenset(args.only or GROUPS)
        run(folder, max(10, round(99_900 * args.scale)), args.million, only, args.keep is not None)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def run(folder: Path, n_items: int, million: int, only: frozenset[str], reuse: bool) -> None:
    """Build what the chosen groups need (once) and measure each of their steps."""
    python = sys.executable
    judgekit = str(Path(python).with_name("judgekit"))
    if not Path(judgekit).exists():
        judgekit = shutil.which("judgekit") or "judgekit"
    me = [python, str(Path(__file__).resolve()), "--baseline"]
    log = folder / "bench.log"
    db = folder / "judgekit.db"
    ready = folder / "ready.json"
    built = reuse and "imports" not in only and db.exists() and ready.exists() \
        and json.loads(ready.read_text()).get("n_items") == n_items
    files = {name: folder / f"{name}.jsonl" for name in ("items", "judgments", "labels")}
    files["ratings"] = folder / "ratings.csv"
    if not built:
        ready.unlink(missing_ok=True)
        files = generate(folder, n_items)
    rows: list[Row] = []
    env_db = ["--db", str(db)]
    rub = ["--rubric", RUBRIC]

    if "help" in only:
        click = [python, "-c", "import click"]
        for step in (["--help"], ["report", "--help"], ["judgments", "import", "--help"]):
            rows.append(paired_measure(f"judgekit {' '.join(step)}", [judgekit, *step], click,
                                       log, max(HELP_RUNS, REPEATS[0])))

    if only & STORE_GROUPS and not built:
        build_store(folder, files, n_items, judgekit, me, log, rows, timed="imports" in only)
        ready.write_text(json.dumps({"n_items": n_items}))

    run_ids: dict[str, str] = {}
    if only & STORE_GROUPS:
        conn = sqlite3.connect(db)
        run_ids = dict(conn.execute("SELECT model, id FROM runs WHERE kind = 'import'").fetchall())
        conn.close()

    report = [judgekit, "report", *rub, *env_db, "--model", JUDGES[0], "--format", "json"]
    if "report" in only:
        rows.append(paired_measure("report --format json", report,
                                   [*me, "report", str(db), JUDGES[0]], log))
    if "compare" in only:
        compare = [judgekit, "compare", "judges", *rub, *env_db, "--run-a", run_ids[JUDGES[0]],
                   "--run-b", run_ids[JUDGES[1]], "--format", "json"]
        rows.append(paired_measure("compare judges --format json", compare,
                                   [*me, "report", str(db), *JUDGES], log))
        cand = build_candidates(folder, n_items, judgekit, log, reuse=built)
        compare = [judgekit, "compare", "candidates", "--rubric", CANDIDATE_RUBRIC, "--db",
                   str(cand), "--dataset-a", CANDIDATES[0], "--dataset-b", CANDIDATES[1],
                   "--format", "json"]
        rows.append(paired_measure("compare candidates --format json", compare,
                                   [*me, "candidates", str(cand)], log))
    if "agree" in only:
        agree = [judgekit, "agree", str(files["ratings"]), "--format", "json"]
        rows.append(paired_measure(f"agree ({3 * n_items:,} ratings)", agree,
                                   [*me, "agree", str(files["ratings"])], log))
    if "million" in only and million:
        big = folder / "million.db"
        copy_db(db, big)
        total = grow_to_million(big, million)
        report[report.index(str(db))] = str(big)
        rows.append(paired_measure(f"report, {total:,}-judgment store", report,
                                   [*me, "report", str(big), JUDGES[0]], log))
        big.unlink()
    if "exports" in only:
        rows.extend(export_rows(folder, db, judgekit, me, log))
    if "probes" in only:
        rows += probe_rows(folder, db, files, n_items, judgekit, me, log, reuse=built)
    print_table(rows, n_items)


def export_rows(folder: Path, db: Path, judgekit: str, me: list[str], log: Path) -> list[Row]:
    """The ``exports`` group: each export command against its baseline (``scale_exports``)."""
    rows = []
    tasks_db = folder / "tasks-copy.db"
    for step, argv, kind in scale_exports.commands(judgekit, RUBRIC, db, folder):
        def fresh(kind: str = kind) -> None:
            if kind == "tasks":
                copy_db(db, tasks_db)  # export-tasks saves the queue it draws

        base = [*me, "exports", kind, str(db), str(folder / f"baseline-{kind}.out")]
        rows.append(paired_measure(step, argv, base, log, before=fresh))
    for name in ("export.jsonl", "export.csv", "labels.jsonl", "disagreements.jsonl",
                 "tasks.json", "tasks.xml", "tasks-copy.db", "tasks-copy.db-wal",
                 "tasks-copy.db-shm", *(f"baseline-{kind}.out" for *_, kind in
                                        scale_exports.commands(judgekit, RUBRIC, db, folder))):
        (folder / name).unlink(missing_ok=True)
    return rows


def probe_rows(folder: Path, db: Path, files: dict[str, Path], n_items: int, judgekit: str,
               me: list[str], log: Path, *, reuse: bool) -> list[Row]:
    """``probe position --imported`` (both orders of judge A) and ``batch prepare`` (every
    item, nothing cached), on ``probes.db``: the store plus the BA verdicts (built once)."""
    probes = folder / "probes.db"
    ready = folder / "probes-ready.json"
    if not (reuse and probes.exists() and ready.exists()
            and json.loads(ready.read_text()).get("n_items") == n_items):
        ready.unlink(missing_ok=True)
        copy_db(db, probes)
        swapped = generate_swapped(folder, files["judgments"])
        steps = ["judgments", "import", str(swapped), "--rubric", RUBRIC, "--db", str(probes)]
        if measure([judgekit, *steps], log).code:
            raise SystemExit(f"importing the BA verdicts failed; see {log}")
        ready.write_text(json.dumps({"n_items": n_items}))
    position = [judgekit, "probe", "position", "--imported", "--rubric", RUBRIC, "--dataset",
                DATASET, "--judge", JUDGES[0], "--db", str(probes), "--json"]
    out, base_out = folder / "batch.jsonl", folder / "batch-baseline.jsonl"
    prepare = [judgekit, "batch", "prepare", "--rubric", RUBRIC, "--dataset", DATASET,
               "--db", str(probes), "--model", "bench-judge", "--base-url",
               "http://127.0.0.1:9/v1", "--out", str(out)]
    rows = [
        paired_measure("probe position --imported --json", position,
                       [*me, "position", str(probes), JUDGES[0]], log),
        paired_measure(f"batch prepare ({n_items:,} calls)", prepare,
                       [*me, "prepare", str(probes), str(base_out)], log),
    ]
    for path in (out, base_out, out.with_name("batch.2.jsonl")):
        path.unlink(missing_ok=True)
    return rows


def build_candidates(folder: Path, n_items: int, judgekit: str, log: Path, *,
                     reuse: bool) -> Path:
    """``candidates.db``: two datasets of ``n_items`` answers and one judge's verdicts."""
    db = folder / "candidates.db"
    if reuse and db.exists():
        return db
    building = folder / "candidates-building.db"  # renamed to ``db`` once complete
    building.unlink(missing_ok=True)
    files = generate_candidates(folder, n_items)
    env_db = ["--db", str(building)]
    steps = [
        ["import", str(files["a"]), "--name", CANDIDATES[0], *env_db],
        ["import", str(files["b"]), "--name", CANDIDATES[1], *env_db],
        ["judgments", "import", str(files["judgments"]), "--rubric", CANDIDATE_RUBRIC, *env_db],
    ]
    for argv in steps:
        if measure([judgekit, *argv], log).code:
            raise SystemExit(f"building {db} failed; see {log}")
    copy_db(building, db)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{building}{suffix}").unlink(missing_ok=True)
    return db


def build_store(
    folder: Path,
    files: dict[str, Path],
    n_items: int,
    judgekit: str,
    me: list[str],
    log: Path,
    rows: list[Row],
    *,
    timed: bool,
) -> None:
    """The store at ``folder/judgekit.db`` made by judgekit's three imports.

    With ``timed``, each import is measured and set against its bare baseline
    (a row in ``rows``); otherwise the imports just run.
    """
    db = folder / "judgekit.db"
    db.unlink(missing_ok=True)
    empty = folder / "empty.db"
    empty.unlink(missing_ok=True)
    sys.path.insert(0, str(REPO))
    from judgekit.rubrics import load_rubric
    from judgekit.store import open_store

    with open_store(empty) as store:
        store.save_rubric(load_rubric(RUBRIC))
    copy_db(empty, db)
    env_db = ["--db", str(db)]
    rub = ["--rubric", RUBRIC]

    def import_step(name: str, argv: list[str], kind: str, n: int) -> None:
        before = folder / f"before-{kind}.db"
        if timed:  # the baseline writes into a copy of the store as it was before this import
            copy_db(db, before)
        ours = measure([judgekit, *argv], log)
        if ours.code:
            raise SystemExit(f"{name} failed (exit {ours.code}); see {log}")
        if timed:
            base = measure([*me, "import", kind, str(files[kind]), str(before)], log)
            rows.append(Row(f"{name} ({n:,})", [ours], [base], rows=n))
            before.unlink()

    import_step("import", ["import", str(files["items"]), "--name", DATASET, *env_db],
                "items", n_items)
    import_step("judgments import", ["judgments", "import", str(files["judgments"]), *rub,
                                     *env_db], "judgments", 2 * n_items)
    import_step("labels import", ["labels", "import", str(files["labels"]), *rub, *env_db],
                "labels", 3 * n_items)


def print_table(rows: list[Row], n_items: int) -> None:
    print(f"judgekit at scale: {n_items:,} pair items, {2 * n_items:,} verdicts (2 judges), "
          f"{3 * n_items:,} labels (3 annotators); medians of {REPEATS[0]} pairs "
          f"({max(HELP_RUNS, REPEATS[0])} for --help, 1 for the imports)")
    print("| step | wall s | CPU s | peak RSS MB | baseline CPU s | ratio (spread) | target | ok |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for row in rows:
        if row.rows:
            target, good = ">= 0.3x rows/s", row.ratio() >= 0.3
        elif "--help" in row.step:
            target, good = "<= 2x", row.ratio() <= 2.0
        else:
            target, good = "<= 3x", row.ratio() <= 3.0
        good = good and row.ours.rss_mb <= RSS_LIMIT_MB and row.ours.code in (0, 1, 3)
        rate = f" ({row.rows / row.ours.cpu:,.0f}/s vs {row.rows / row.base.cpu:,.0f}/s)" \
            if row.rows else ""
        print(f"| {row.step}{rate} | {row.ours.wall:.2f} | {row.ours.cpu:.2f} | "
              f"{row.ours.rss_mb:.0f} | {row.base.cpu:.2f} | {ratio_text(row.ratios())} | "
              f"{target}, "
              f"<= {RSS_LIMIT_MB:.0f} MB | {'yes' if good else 'NO'} |")
    print("ratios compare CPU time (user + system; rows/s for imports), steadier than wall "
          "time on a shared machine")
    print("baselines: imports = json.loads + sqlite3 executemany in one transaction; report and "
          "compare = sqlite3 reads, numpy majority, kappa with 1,000 resamples; agree = csv + "
          "numpy kappas/Fleiss with 1,000 resamples; --help = python -c 'import click'; probe "
          "position = sqlite3 + numpy shares and bootstraps; batch prepare = str.format + "
          f"json.dumps per line; {scale_exports.BASELINE_NOTE}")
    print()
    for row in rows:
        what = "rows/s, judgekit / baseline" if row.rows else "CPU time, judgekit / baseline"
        print(ratio_line(f"{row.step} ({what})", row.ratios()))


if __name__ == "__main__":
    main()
