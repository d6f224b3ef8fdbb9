"""Which judgments, probes and figures a report reads, on real SQLite stores.

Each test fills a store through the Store API (as test_report.py does) and checks
one rule of docs/reports.md: probe runs are not the judge, several judges are an
error, a cached rerun's run id stands for its judge, the bias section belongs to
the reported judge, stale judgments are left out, and the verdict reads the right
figure.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from test_report_support import (
    BINARY,
    ORDINAL,
    REPO,
    Row,
    create_run,
    make_judgment,
    open_fresh,
    populate,
    rubric,
)

from judgekit import stats
from judgekit.cli.main import cli
from judgekit.errors import InputError
from judgekit.judging.probe_variants import item_length
from judgekit.report import FORMATS, ReportOptions, build_report, render
from judgekit.stats import bias as bias_stats
from judgekit.store import QueueEntry, Store
from judgekit.types import Item, Rubric

FLIP = {"pass": "fail", "fail": "pass"}
SCHEMA = json.loads((REPO / "docs" / "report.schema.json").read_text())


def judged_rows(n: int, seed: int = 0) -> list[Row]:
    """n balanced binary items the judge gets right, each labeled by one human."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        human = "pass" if i % 2 else "fail"
        rows.append(Row(f"i{i:03d}", human, {"h": human}, response="r" * rng.randint(5, 300)))
    return rows


def add_run(
    store: Store,
    rub: Rubric,
    run_id: str,
    verdicts: Mapping[str, str],
    *,
    kind: str = "judge",
    model: str = "judge-model",
    dataset: str = "ds",
    base_url: str = "http://127.0.0.1:9/v1",
    sampling: Mapping[str, object] | None = None,
    sample_indices: Sequence[int] = (0,),
) -> None:
    """A run of ``kind`` writing plain judgments ``verdicts`` (item id -> label)."""
    sampling = dict(sampling or {"temperature": 0.0, "max_tokens": 64})
    create_run(store, rub, run_id, dataset, model, kind, base_url=base_url, sampling=sampling)
    items = store.items_by_ids(dataset, list(verdicts))
    for item_id, label in verdicts.items():
        for k in sample_indices:
            store.record_judgment(
                make_judgment(
                    rub, run_id, dataset, items[item_id], label, model=model,
                    sample_index=k, base_url=base_url, sampling=sampling,
                )
            )


def invoke(*args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output, result.exception


# -- 1. probe runs are not the judge ------------------------------------------------


def test_probe_runs_are_not_reported_unless_named(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = judged_rows(40)
    populate(store, rub, rows)  # judge run "run-1" at temperature 0, always right
    flipped = {r.item_id: FLIP[r.judge or "pass"] for r in rows}
    # `probe consistency --temperature 0.7`: plain judgments at other sampling, written later
    add_run(store, rub, "consistency", flipped, kind="probe:consistency",
            sampling={"temperature": 0.7, "max_tokens": 64}, sample_indices=(0, 1, 2))
    # a probe at the judge's own sampling writes plain rows too (a new run id)
    add_run(store, rub, "length", flipped, kind="probe:length")

    report = build_report(store, rub, ReportOptions(n_resamples=50))
    assert report.agreement is not None
    assert report.agreement.stats["percent_agreement"].statistic == 1.0
    assert report.provenance.run_ids == ("run-1",)
    assert report.provenance.sampling == ({"max_tokens": 64, "temperature": 0.0},)
    assert report.health.total == 40

    named = build_report(store, rub, ReportOptions(n_resamples=50, judge_run="consistency"))
    assert named.agreement is not None
    assert named.agreement.stats["percent_agreement"].statistic == 0.0
    assert named.provenance.sampling == ({"max_tokens": 64, "temperature": 0.7},)


# -- 2. several judges: an error, never a silent pick --------------------------------


def test_several_judges_are_an_error_that_lists_them(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = judged_rows(40)
    populate(store, rub, rows)
    # a small `--limit 2` run of another model, later than the judge run
    add_run(store, rub, "other-run", {"i000": "pass", "i001": "fail"}, model="other-model",
            base_url="http://10.0.0.2/v1")
    db = str(store.path)
    store.close()

    _, _, exc = invoke("report", "-r", str(BINARY), "--db", db, "--resamples", "50")
    assert isinstance(exc, InputError) and exc.exit_code == 2  # `judgekit` exits 2
    message = str(exc)
    assert "2 judges" in message
    assert "'judge-model' at http://127.0.0.1:9/v1" in message and "run-1" in message
    assert "'other-model' at http://10.0.0.2/v1" in message and "other-run" in message
    assert '"temperature":0.0' in message
    assert "40 judgment(s)" in message and "2 judgment(s)" in message
    assert "--judge-run" in message and "--model" in message

    for choice in (("--model", "judge-model"), ("--judge-run", "run-1")):
        code, output, _ = invoke(
            "report", "-r", str(BINARY), "--db", db, "--resamples", "50", "--format", "json",
            *choice,
        )
        assert code == 0, output
        data = json.loads(output)
        assert data["provenance"]["judge_models_requested"] == ["judge-model"]
        assert data["agreement"]["n_items"] == 40
    code, output, _ = invoke(
        "report", "-r", str(BINARY), "--db", db, "--model", "other-model", "--format", "json"
    )
    assert code == 3 and json.loads(output)["agreement"]["n_items"] == 2
    _, _, exc = invoke("report", "-r", str(BINARY), "--db", db, "--model", "nobody")
    assert isinstance(exc, InputError) and "no judgments by model 'nobody'" in str(exc)


# -- 3. a cached rerun's run id -------------------------------------------------------


def test_a_fully_cached_rerun_stands_for_its_judges_judgments(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, judged_rows(40))
    create_run(store, rub, "rerun")  # same judge, every call answered from the cache
    db = str(store.path)

    report = build_report(store, rub, ReportOptions(n_resamples=50, judge_run="rerun"))
    assert report.health.total == 40 and report.provenance.n_judgments == 40
    assert report.agreement is not None and report.agreement.n_items == 40
    assert any("Run rerun wrote none of these judgments" in n for n in report.provenance.notes)
    store.close()

    code, output, _ = invoke("export", "-r", str(BINARY), "--db", db, "--run", "rerun")
    assert code == 0
    exported = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert len(exported) == 40 and {row["run_id"] for row in exported} == {"run-1"}


def test_judge_run_of_another_rubric_is_an_error(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    populate(store, rubric(BINARY), judged_rows(12))
    other = rubric(ORDINAL)
    store.save_rubric(other)
    with pytest.raises(InputError, match="judged with rubric"):
        build_report(store, other, ReportOptions(judge_run="run-1"))


# -- 4. the bias section belongs to the reported judge --------------------------------


def _position_result(statistic: float) -> dict[str, object]:
    stat = {"statistic": statistic, "ci_low": statistic - 0.05, "ci_high": statistic, "n": 40}
    return {"probe": "position", "position_consistency": stat}


def test_bias_section_shows_only_the_reported_judges_probes(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, judged_rows(40))
    store.import_items("other-ds", [Item(id="x", input="q", response="r")])
    probes = {
        "mine": {},
        "other-model": {"model": "other-model"},
        "other-endpoint": {"base_url": "http://10.0.0.2/v1"},
        "other-dataset": {"dataset": "other-ds"},
    }
    for i, (run_id, change) in enumerate(probes.items()):
        create_run(store, rub, run_id, change.get("dataset", "ds"),
                   change.get("model", "judge-model"), "probe:position",
                   base_url=change.get("base_url", "http://127.0.0.1:9/v1"))
        store.save_probe_result(run_id, "position", rub.sha256, _position_result(0.5 + i / 10))
    report = build_report(store, rub, ReportOptions(n_resamples=50))
    # stored probes only (the probes computed from the paired items have no run)
    assert [entry.run_id for entry in report.bias.probes if entry.run_id] == ["mine"]
    assert report.bias.headline["position_consistency"].statistic == 0.5


# -- 5. stale judgments ------------------------------------------------------------------


def test_judgments_of_an_older_item_version_are_left_out(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = judged_rows(30)
    populate(store, rub, rows)
    changed = [Item(id=r.item_id, input=f"question {r.item_id}", response="new text")
               for r in rows[:3]]
    store.import_items("ds", changed, replace=True)  # `import --replace` after judging
    report = build_report(store, rub, ReportOptions(n_resamples=50))
    assert report.agreement is not None and report.agreement.n_items == 27
    assert report.health.stale_labeled_items == 3
    notes = " ".join(report.provenance.notes)
    assert "3 judgment(s) are of an older version of their item" in notes
    assert "re-run judge" in notes and "have no judgment" not in notes
    assert "older version" in render(report, "text")
    data = json.loads(render(report, "json"))
    assert data["stale_labeled_items"] == 3
    jsonschema.validate(data, SCHEMA)


# -- 6. --out suffix sets the format ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "extra", "start"),
    [
        ("r.html", (), "<!DOCTYPE html>"),
        ("r.HTM", (), "<!DOCTYPE html>"),
        ("r.md", (), "# "),
        ("r.json", (), "{"),
        ("r.txt", (), "judgekit calibration report"),
        ("r", ("--format", "text"), "judgekit calibration report"),
        ("r.html", ("--format", "html"), "<!DOCTYPE html>"),
    ],
)
def test_out_suffix_sets_the_format(
    tmp_path: Path, name: str, extra: tuple[str, ...], start: str
) -> None:
    store = open_fresh(tmp_path)
    populate(store, rubric(BINARY), judged_rows(20))
    db = str(store.path)
    store.close()
    out = tmp_path / name
    code, _, _ = invoke("report", "-r", str(BINARY), "--db", db, "--resamples", "50",
                        "--out", str(out), *extra)
    assert code in (0, 3)
    assert out.read_text().lstrip().startswith(start)


def test_a_format_the_out_suffix_contradicts_is_refused(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    populate(store, rubric(BINARY), judged_rows(20))
    db = str(store.path)
    store.close()
    out = tmp_path / "r.html"
    _, _, exc = invoke("report", "-r", str(BINARY), "--db", db, "--resamples", "50",
                       "--out", str(out), "--format", "text")
    assert isinstance(exc, InputError) and "names html by its suffix" in str(exc)
    assert not out.exists()


# -- 7. no negative zero ------------------------------------------------------------------


def test_no_format_prints_negative_zero(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    rng = random.Random(71)  # this sample gives a weighted kappa bound of -9.2e-16
    rows = []
    for i in range(20):
        h = rng.choice(["2", "3", "4"])
        j = h if rng.random() < 0.5 else rng.choice(["2", "3", "4"])
        rows.append(Row(f"o{i}", j, {"h": h}))
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=200))
    assert report.agreement is not None
    tiny = [
        v
        for s in report.agreement.stats.values()
        for v in (s.statistic, s.ci_low, s.ci_high)
        if v < 0 and f"{v:.3f}" == "-0.000"
    ]
    assert tiny, "the sample no longer produces a value that rounds to -0.000"
    for fmt in FORMATS:
        text = render(report, fmt)
        assert "-0.000" not in text and "-0.00<" not in text, fmt
        assert "-0.0," not in text and "-0.0\n" not in text, fmt


# -- 8. human length correlation from today's labels ----------------------------------------


def test_length_probe_human_correlation_uses_current_labels(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    rng = random.Random(5)
    rows = []
    for i in range(30):
        h = rng.choice(["1", "2", "3", "4", "5"])
        rows.append(Row(f"o{i}", h, {}, response="w" * (20 * int(h) + rng.randint(0, 60))))
    populate(store, rub, rows)  # judged, not labeled yet
    create_run(store, rub, "len-probe", kind="probe:length")
    stale = {"statistic": None, "ci_low": None, "ci_high": None, "n": 0,
             "reason": "fewer than two labelled items"}
    store.save_probe_result("len-probe", "length", rub.sha256, {
        "probe": "length", "n_items": 30,
        "length_correlation": {"statistic": 0.5, "ci_low": 0.2, "ci_high": 0.7, "n": 30},
        "human_length_correlation": stale, "human_points": [],
    })
    # labels arrive after the probe ran
    from judgekit.types import Label

    store.add_labels([Label(dataset="ds", item_id=r.item_id, rubric_hash=rub.sha256,
                            annotator=a, label=r.judge) for r in rows for a in ("a", "b")])
    report = build_report(store, rub, ReportOptions(n_resamples=50))
    entry = report.bias.probes[0]
    human = entry.stats["human_length_correlation"]
    items = store.items_by_ids("ds", [r.item_id for r in rows])
    expected = bias_stats.length_effect(
        [float(r.judge or 0) for r in rows], [item_length(items[r.item_id]) for r in rows]
    ).to_dict()["length_correlation"]
    assert human.n == 30 and human.statistic == pytest.approx(expected["statistic"])
    assert (human.ci_low, human.ci_high) == pytest.approx((expected["ci_low"], expected["ci_high"]))
    assert human.note is not None and "current human labels" in human.note
    assert len(entry.details["human_points"]) == 30
    shown = next(line for line in render(report, "text").splitlines()
                 if "Human length correlation" in line)
    assert "n/a" not in shown


# -- 9. the verdict rules ----------------------------------------------------------------------


def _binary_with_agreement(n: int, agree: int) -> list[Row]:
    """n balanced items, the judge agreeing on the first ``agree`` (spread over both classes)."""
    rows = []
    for i in range(n):
        human = "pass" if i % 2 else "fail"
        rows.append(Row(f"i{i:04d}", human if i < agree else FLIP[human], {"h": human}))
    return rows


def test_estimate_above_threshold_is_never_a_fail(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = _binary_with_agreement(400, 346)  # kappa 0.73, interval about +/-0.07
    populate(store, rub, rows)
    options = ReportOptions(n_resamples=300, min_agreement=0.7, half_width=0.1)
    report = build_report(store, rub, options)
    v = report.verdict
    stat = v.statistic
    assert stat.ci_low < 0.7 <= stat.statistic and stat.half_width <= 0.1
    assert v.decision == "INSUFFICIENT DATA" and v.exit_code == 3
    judge = [r.judge for r in rows]
    human = [r.humans["h"] for r in rows]
    kappa = stats.cohen_kappa(judge, human, labels=["pass", "fail"])
    margin = stat.statistic - 0.7
    # planned with the analysis SE on the observed table, as the interval is
    planned = stats.kappa_sample_size(half_width=margin, table=kappa.confusion)
    scaled = math.ceil(400 * ((stat.statistic - stat.ci_low) / margin) ** 2)
    assert v.labels_needed == max(planned, scaled) - 400
    # every item of this dataset is labeled: the count is given as what it would take
    assert v.labels_available == 0
    assert f"about {v.labels_needed} would be needed" in v.reason
    assert "if the estimate held" in v.reason


def test_estimate_below_threshold_with_a_narrow_interval_fails(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, _binary_with_agreement(400, 334))  # kappa 0.67
    report = build_report(
        store, rub, ReportOptions(n_resamples=300, min_agreement=0.7, half_width=0.1)
    )
    v = report.verdict
    assert v.statistic.statistic < 0.7 <= v.statistic.ci_high
    assert v.decision == "FAIL" and "estimate is below 0.7" in v.reason


def _queue_store(tmp_path: Path, probs: tuple[float, float]) -> tuple[Store, Rubric]:
    """50 "hard" items (judge right on half) and 50 "easy" ones (always right)."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows, entries = [], []
    for i in range(100):
        hard = i < 50
        h = "pass" if i % 2 else "fail"
        rows.append(Row(f"w{i}", (h if i % 4 < 2 else FLIP[h]) if hard else h, {"h": h}))
        prob = probs[0] if hard else probs[1]
        entries.append(QueueEntry(i, "ds", f"w{i}", prob, "hard" if hard else "easy"))
    populate(store, rub, rows)
    store.save_queue("q1", rub.sha256, "disagreement", 0, entries)
    return store, rub


def test_verdict_reads_the_weighted_estimate_of_a_non_uniform_queue(tmp_path: Path) -> None:
    store, rub = _queue_store(tmp_path, (1.0, 0.1))
    options = ReportOptions(n_resamples=300, primary="percent_agreement", min_agreement=0.85)
    report = build_report(store, rub, options)
    assert report.weighted is not None and report.agreement is not None
    unweighted = report.agreement.stats["percent_agreement"]
    weighted = report.weighted.stats["percent_agreement"]
    assert unweighted.statistic == pytest.approx(0.76)
    v = report.verdict
    assert v.weighted and v.statistic == weighted
    assert v.statistic.statistic == pytest.approx(526 / 550)
    assert "population estimate" in v.reason and "'q1'" in v.reason
    assert v.decision == "PASS"
    data = json.loads(render(report, "json"))
    assert data["verdict"]["weighted"] is True
    jsonschema.validate(data, SCHEMA)


def test_verdict_is_unweighted_for_a_uniform_queue(tmp_path: Path) -> None:
    store, rub = _queue_store(tmp_path, (0.5, 0.5))
    options = ReportOptions(
        n_resamples=300, primary="percent_agreement", min_agreement=0.85, queue="q1"
    )
    report = build_report(store, rub, options)
    assert report.weighted is not None and report.agreement is not None
    v = report.verdict
    assert not v.weighted and v.statistic == report.agreement.stats["percent_agreement"]
    assert "population estimate" not in v.reason
