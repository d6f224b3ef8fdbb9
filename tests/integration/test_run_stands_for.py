"""The order of commands never changes a report: a judge run whose calls were answered
earlier (by a probe's plain verdicts, a collected batch) stands for those outcomes.

Each scenario runs the real CLI in-process against the real test server (through the
real ``openai`` client) on a real SQLite file, once in each order, and compares the two
reports' JSON byte for byte once timestamps and run ids are blanked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit.store import open_store
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe
from tests.support.serve import running_service, token

N = 24
#: Run ids as the runner and ``batch collect`` make them.
RUN_ID = re.compile(r'(batch:[A-Za-z0-9_-]+|\d{8}T\d{6}-[0-9a-f]{8})')
TIMESTAMPS = ("generated_at", "first_judgment_at", "last_judgment_at", "created_at",
              "started_at", "finished_at", "probed_at")


def judge(body: dict[str, Any]) -> Reply:
    """A deterministic judge: the verdict follows a hash of the prompt (so probes move it)."""
    if is_probe(body):
        return default_responder(body)
    text = json.dumps(body["messages"], sort_keys=True)
    verdict = "pass" if hashlib.sha256(text.encode()).digest()[0] % 3 else "fail"
    return Reply(json.dumps({"reasoning": "checked", "verdict": verdict}))


class Case:
    """One store: items, the judge options, and the commands a scenario runs on it."""

    def __init__(self, root: Path, server: OpenAIServer) -> None:
        root.mkdir()
        self.root, self.server = root, server
        self.db = str(root / "j.db")
        self.data = root / "facts.jsonl"
        self.data.write_text("".join(
            json.dumps({"id": f"i{i}", "input": f"What is {i}+1?", "response": str(i + 1 + i % 4),
                        "reference": str(i + 1)}) + "\n" for i in range(N)), encoding="utf-8")
        self.args = ["-r", "correctness", "--data", str(self.data), "--db", self.db,
                     "--base-url", server.base_url, "--model", "m", "--no-progress"]

    def cli(self, *args: str) -> str:
        code, out, err = run_cli(*args)
        assert code == 0, (args, out, err)
        return out + err

    def judge(self, *extra: str) -> str:
        return self.cli("judge", *self.args, *extra)

    def probe(self, name: str) -> str:
        return self.cli("probe", name, *self.args)

    def batch_probe(self) -> str:
        """``batch prepare --probe position``, answered by the server, then ``batch collect``."""
        prepared = self.root / "req.jsonl"
        self.cli("batch", "prepare", *[a for a in self.args if a != "--no-progress"],
                 "--probe", "position", "--out", str(prepared))
        output = self.root / "out.jsonl"
        with output.open("w", encoding="utf-8") as handle:
            for n, text in enumerate(prepared.read_text(encoding="utf-8").splitlines()):
                line = json.loads(text)
                status, _, raw = self.server._completion(line["body"])
                handle.write(json.dumps({"id": f"r{n}", "custom_id": line["custom_id"],
                                         "response": {"status_code": status,
                                                      "body": json.loads(raw)},
                                         "error": None}) + "\n")
        return self.cli("batch", "collect", "--output", str(output), "--db", self.db)

    def labels(self) -> None:
        path = self.root / "labels.jsonl"
        truth = ["fail" if i % 3 == 0 else "pass" for i in range(N)]
        noisy = [("pass" if t == "fail" else "fail") if i % 5 == 0 else t
                 for i, t in enumerate(truth)]
        path.write_text("".join(
            json.dumps({"item_id": f"i{i}", "annotator": name, "label": labels[i]}) + "\n"
            for i in range(N) for name, labels in (("ann", truth), ("bob", truth),
                                                   ("cy", noisy))), encoding="utf-8")
        self.cli("labels", "import", str(path), "-r", "correctness", "--db", self.db)

    def report(self, *extra: str) -> dict[str, Any]:
        code, out, err = run_cli("report", "-r", "correctness", "--db", self.db, "--format",
                                 "json", "--resamples", "200", *extra)
        assert code in (0, 1, 3), err
        return json.loads(out)


def normalized(report: dict[str, Any]) -> str:
    """The report's JSON with timestamps and run ids blanked (they differ by design)."""

    def blank(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: "<time>" if k in TIMESTAMPS else blank(v) for k, v in value.items()}
        if isinstance(value, list):
            return [blank(v) for v in value]
        if isinstance(value, str):
            return RUN_ID.sub("<run>", value)
        return value

    return json.dumps(blank(report), indent=1, sort_keys=True)


Steps = Callable[[Case], None]


def _stands_for_all(case: Case) -> None:
    """``runs`` counts the judge run's outcomes from the rows: all made earlier elsewhere."""
    listed = json.loads(case.cli("runs", "--db", case.db, "--format", "json"))
    [run] = [r for r in listed if r["kind"] == "judge"]
    assert (run["judged"], run["cached"], run["counts"]) == (0, N, {"ok": N})
    assert sum(sum(c.values()) for c in run["answered_by"].values()) == N
    assert f"{N} judged earlier by run" in case.cli("runs", "--db", case.db)


def _probe_first(name: str) -> tuple[Steps, Steps]:
    def first(case: Case) -> None:
        case.probe(name)
        out = case.judge()
        assert f"{N} judgments ({N} cached, 0 judged now" in out, out
        assert f"{N} judged earlier by run" in out, out
        _stands_for_all(case)

    def second(case: Case) -> None:
        case.judge()
        case.probe(name)

    return first, second


def _forced_after_probe() -> tuple[Steps, Steps]:
    """``judge --force`` after the probe pays for every call again: its own rows, same figures."""

    def first(case: Case) -> None:
        case.probe("injection")
        assert f"{N} judgments (0 cached, {N} judged now" in case.judge("--force")

    def second(case: Case) -> None:
        case.judge()
        case.probe("injection")

    return first, second


def _batch_first() -> tuple[Steps, Steps]:
    def first(case: Case) -> None:
        case.batch_probe()
        assert f"{N} judgments ({N} cached, 0 judged now" in case.judge()
        _stands_for_all(case)

    def second(case: Case) -> None:
        case.judge()
        case.batch_probe()

    return first, second


SCENARIOS = {"probe injection": lambda: _probe_first("injection"),
             "probe position": lambda: _probe_first("position"),
             "batch collect": _batch_first, "judge --force": _forced_after_probe}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_order_of_commands_never_changes_the_report(
    scenario: str, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = judge
    first, second = SCENARIOS[scenario]()
    reports = []
    for name, steps in (("earlier", first), ("later", second)):
        case = Case(tmp_path / name, openai_server)
        steps(case)
        case.labels()
        report = case.report()
        assert report["provenance"]["n_judgments"] == N, report["provenance"]
        assert report["agreement"]["n_items"] == N
        with open_store(case.db) as store:
            [judge_run] = [r.id for r in store.list_runs(kind="judge")]
        # the judge run names the same judgments, and they are its own in every reader
        assert normalized(case.report("--judge-run", judge_run)) == normalized(report)
        assert report["provenance"]["run_ids"] == [judge_run]
        exported = case.cli("export", "-r", "correctness", "--db", case.db, "--run", judge_run)
        assert sum(line.startswith("{") for line in exported.splitlines()) == N
        estimate = json.loads(case.cli("estimate", "-r", "correctness", "--db", case.db,
                                       "--format", "json", "--judge-run", judge_run))
        assert estimate["n_judged"] == N and estimate["n_labeled"] == N
        reports.append(normalized(report))
    assert reports[0] == reports[1]


def test_a_collected_batch_stands_for_calls_a_live_run_answered_first(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = judge
    case = Case(tmp_path / "store", openai_server)
    prepared = case.root / "req.jsonl"
    case.cli("batch", "prepare", *[a for a in case.args if a != "--no-progress"],
             "--out", str(prepared))
    case.judge("--limit", "2")  # two calls are answered live before the batch comes back
    output = case.root / "out.jsonl"
    with output.open("w", encoding="utf-8") as handle:
        for n, text in enumerate(prepared.read_text(encoding="utf-8").splitlines()):
            line = json.loads(text)
            status, _, raw = openai_server._completion(line["body"])
            handle.write(json.dumps({"id": f"r{n}", "custom_id": line["custom_id"],
                                     "response": {"status_code": status, "body": json.loads(raw)},
                                     "error": None}) + "\n")
    assert "2 call(s) already finished" in case.cli("batch", "collect", "--output", str(output),
                                                    "--db", case.db)
    listed = json.loads(case.cli("runs", "--db", case.db, "--format", "json"))
    [live] = [r for r in listed if r["kind"] == "judge" and not r["id"].startswith("batch:")]
    [batch] = [r for r in listed if r["id"].startswith("batch:")]
    assert (batch["judged"], batch["cached"], batch["counts"]) == (N - 2, 2, {"ok": N})
    assert batch["answered_by"] == {live["id"]: {"ok": 2}}
    exported = case.cli("export", "-r", "correctness", "--db", case.db, "--run", batch["id"])
    assert sum(line.startswith("{") for line in exported.splitlines()) == N


def test_the_api_sees_a_judge_run_that_a_probe_answered(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = judge
    case = Case(tmp_path / "store", openai_server)
    case.probe("injection")
    case.judge()
    case.labels()
    with open_store(case.db) as store:
        [judge_run] = [r.id for r in store.list_runs(kind="judge")]
        [probe_run] = [r.id for r in store.list_runs(kind="probe:injection")]
        reader = token(store, "reader", "read")
    with running_service(Path(case.db), case.root) as service:
        report = service.get(f"/api/v1/report?rubric=correctness&judge_run={judge_run}"
                             "&resamples=200", reader).json()
        runs = {r["id"]: r for r in service.get("/api/v1/runs", reader).json()}
    assert report["provenance"]["n_judgments"] == N and report["agreement"]["n_items"] == N
    assert report["provenance"]["run_ids"] == [judge_run]
    assert runs[judge_run]["outcomes"] == {"made": {}, "answered_by": {probe_run: {"ok": N}}}


def test_compare_reads_a_judge_run_that_a_probe_answered(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = judge
    case = Case(tmp_path / "store", openai_server)
    case.probe("injection")  # model m: every plain call is made here
    case.judge()
    case.cli("judge", *[a if a != "m" else "m2" for a in case.args])  # model m2: its own calls
    case.labels()
    with open_store(case.db) as store:
        by_model = {r.model: r.id for r in store.list_runs(kind="judge")}
    out = json.loads(case.cli("compare", "judges", "-r", "correctness", "--db", case.db,
                              "--run-a", by_model["m"], "--run-b", by_model["m2"],
                              "--format", "json", "--resamples", "50"))
    assert out["n_items"] == N, out
