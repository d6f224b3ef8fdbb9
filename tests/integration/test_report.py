"""The calibration report against real SQLite stores filled through the Store API."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_support import (
    BINARY,
    CATEGORICAL,
    ORDINAL,
    PAIRWISE,
    Row,
    create_run,
    open_fresh,
    populate,
    rubric,
)

from judgekit import stats
from judgekit.cli.main import cli
from judgekit.errors import InputError
from judgekit.report import ReportOptions, build_report, render
from judgekit.store import QueueEntry

FLIP = {"pass": "fail", "fail": "pass"}


def binary_rows(
    n: int, agree: float, seed: int = 0, bad_slice_agree: float | None = None
) -> list[Row]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        human = rng.choice(["pass", "fail"])
        sl = ["math", "code", "prose", "chat"][i % 4]
        p = bad_slice_agree if bad_slice_agree is not None and sl == "prose" else agree
        judge = human if rng.random() < p else FLIP[human]
        rows.append(Row(f"i{i:04d}", judge, {"h1": human}, slice=sl))
    return rows


def test_binary_figures_equal_stats_on_same_arrays(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = binary_rows(200, 0.85, seed=1)
    for r in rows[:7]:
        r.judge, r.status = None, "refusal"
    rows[7].judge, rows[7].status = None, "timeout"
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=200))
    ok = [r for r in rows if r.judge is not None]
    judge = [r.judge for r in ok]
    human = [r.humans["h1"] for r in ok]
    ag = report.agreement
    assert ag is not None and ag.n_items == len(ok) == 192
    kappa = stats.cohen_kappa(judge, human, labels=["pass", "fail"])
    assert ag.stats["cohen_kappa"].statistic == pytest.approx(kappa.statistic, abs=1e-12)
    assert ag.stats["cohen_kappa"].n == kappa.n
    low, high = kappa.confidence_interval(n_resamples=200, random_state=0)
    assert (ag.stats["cohen_kappa"].ci_low, ag.stats["cohen_kappa"].ci_high) == pytest.approx(
        (low, high)
    )
    assert ag.stats["percent_agreement"].statistic == pytest.approx(
        stats.percent_agreement(judge, human).statistic
    )
    ac1 = stats.gwet_ac1(judge, human, labels=["pass", "fail"])
    assert ag.stats["gwet_ac1"].statistic == pytest.approx(ac1.statistic)
    # AC1's default interval (Wilson with Gwet's SE), not a bootstrap
    assert (ag.stats["gwet_ac1"].ci_low, ag.stats["gwet_ac1"].ci_high) == pytest.approx(
        ac1.confidence_interval()
    )
    assert ag.stats["gwet_ac1"].method == "wilson"
    pos = [j == h for j, h in zip(judge, human, strict=True) if h == "pass"]
    assert ag.stats["tpr"].statistic == pytest.approx(sum(pos) / len(pos))
    assert ag.stats["tpr"].n == len(pos)
    # confusion matrix: rows judge, columns human
    m = dict(zip(ag.confusion.labels, ag.confusion.matrix, strict=True))
    assert m["pass"][1] == sum(
        1 for j, h in zip(judge, human, strict=True) if j == "pass" and h == "fail"
    )
    assert sum(map(sum, ag.confusion.matrix)) == 192
    # failures: counted in health, excluded from agreement, shown as disagreements separately
    assert report.health.count("refusal") == 7 and report.health.count("timeout") == 1
    assert report.health.total == 200 and report.health.failed_labeled_items == 8
    sens = report.failure_sensitivity
    assert sens is not None and sens.n_failed == 8
    agree_ok = sum(j == h for j, h in zip(judge, human, strict=True))
    assert sens.stats["percent_agreement"].statistic == pytest.approx(agree_ok / 200)
    assert sens.stats["percent_agreement"].n == 200
    for stat in ag.stats.values():  # every figure carries n and an interval
        assert stat.n > 0 and stat.ci_low <= stat.statistic <= stat.ci_high


def test_ordinal_figures_equal_stats(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    rng = random.Random(3)
    rows = []
    for i in range(150):
        h = rng.randint(1, 5)
        j = min(5, max(1, h + rng.choice([-1, 0, 0, 0, 1, 1])))
        rows.append(Row(f"o{i}", str(j), {"h": str(h)}, response="x" * rng.randint(5, 400)))
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=200))
    ag = report.agreement
    assert ag is not None and ag.primary == "weighted_kappa"
    jv = [float(r.judge) for r in rows]  # type: ignore[arg-type]
    hv = [float(r.humans["h"]) for r in rows]
    labels = list(rub.scale.labels)
    assert ag.stats["weighted_kappa"].statistic == pytest.approx(
        stats.cohen_kappa(
            [r.judge for r in rows],
            [r.humans["h"] for r in rows],
            weights="quadratic",
            labels=labels,
        ).statistic
    )
    assert ag.stats["spearman"].statistic == pytest.approx(stats.spearman(jv, hv).statistic)
    assert ag.stats["kendall_tau"].statistic == pytest.approx(stats.kendall_tau(jv, hv).statistic)
    for name, fn in (("spearman", stats.spearman), ("kendall_tau", stats.kendall_tau)):
        figure = ag.stats[name]
        assert figure.method == "jackknife"  # the default, named as what it is
        assert (figure.ci_low, figure.ci_high) == pytest.approx(fn(jv, hv).confidence_interval())
    assert ag.stats["krippendorff_alpha"].statistic == pytest.approx(
        stats.krippendorff_alpha([jv, hv], level="ordinal").statistic
    )
    assert ag.stats["mean_bias"].statistic == pytest.approx(sum(jv) / 150 - sum(hv) / 150)
    assert ag.stats["within_one_agreement"].statistic == pytest.approx(
        sum(abs(a - b) <= 1 for a, b in zip(jv, hv, strict=True)) / 150
    )
    assert len(report.scatter) == 150 and report.scatter_total == 150


def test_pairwise_agreement_with_and_without_ties(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(PAIRWISE)
    pairs = (
        [("A", "A")] * 30
        + [("B", "B")] * 25
        + [("tie", "A")] * 10
        + [("A", "tie")] * 5
        + [("tie", "tie")] * 5
        + [("A", "B")] * 5
    )
    rows = [Row(f"p{i}", j, {"h": h}) for i, (j, h) in enumerate(pairs)]
    populate(store, rub, rows)
    ag = build_report(store, rub, ReportOptions(n_resamples=100)).agreement
    assert ag is not None
    assert ag.stats["agreement_with_ties"].statistic == pytest.approx(60 / 80)
    assert ag.stats["agreement_without_ties"].statistic == pytest.approx(55 / 60)
    assert ag.stats["agreement_without_ties"].n == 60


def test_bh_flags_only_the_planted_bad_slice(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, binary_rows(400, 0.92, seed=5, bad_slice_agree=0.55))
    report = build_report(store, rub, ReportOptions(n_resamples=200))
    slices = report.slices
    assert slices is not None and slices.n_comparisons == 4
    flagged = {r.name for r in slices.rows if r.flagged}
    assert flagged == {"prose"}
    prose = next(r for r in slices.rows if r.name == "prose")
    assert prose.adjusted_pvalue < 0.05 and prose.n == 100
    text = (
        CliRunner()
        .invoke(cli, ["report", "-r", str(BINARY), "--db", str(store.path), "--resamples", "100"])
        .output
    )
    assert "4 comparisons" in text and "WORSE" in text


def test_no_slice_flagged_when_slices_agree_alike(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, binary_rows(400, 0.9, seed=11))
    slices = build_report(store, rub, ReportOptions(n_resamples=100)).slices
    assert slices is not None and not any(r.flagged for r in slices.rows)


@pytest.mark.parametrize(
    ("agree", "n", "threshold", "code", "decision"),
    [
        (0.97, 400, 0.6, 0, "PASS"),
        (0.62, 400, 0.6, 1, "FAIL"),
        (0.85, 24, 0.6, 3, "INSUFFICIENT DATA"),
    ],
)
def test_verdict_exit_codes(
    tmp_path: Path, agree: float, n: int, threshold: float, code: int, decision: str
) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, binary_rows(n, agree, seed=2))
    db = str(store.path)
    store.close()
    result = CliRunner().invoke(
        cli,
        [
            "report",
            "-r",
            str(BINARY),
            "--db",
            db,
            "--format",
            "json",
            "--min-agreement",
            str(threshold),
            "--resamples",
            "200",
        ],
    )
    assert result.exit_code == code, result.output
    verdict = json.loads(result.output)["verdict"]
    assert verdict["decision"] == decision and verdict["exit_code"] == code
    assert verdict["reason"].endswith(".")
    if decision == "INSUFFICIENT DATA":
        assert verdict["labels_needed"] >= 1
    else:
        assert verdict["labels_needed"] is None


def test_insufficient_data_says_how_many_more_labels(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, binary_rows(12, 1.0, seed=4))
    report = build_report(store, rub, ReportOptions(n_resamples=100, half_width=0.1))
    v = report.verdict
    assert v.decision == "INSUFFICIENT DATA" and v.exit_code == 3
    assert v.labels_needed is not None and v.labels_needed > 0


def test_no_labels_is_insufficient_not_a_crash(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, [Row(f"x{i}", "pass", {}) for i in range(5)])
    report = build_report(store, rub)
    assert report.agreement is None and report.verdict.decision == "INSUFFICIENT DATA"
    assert report.verdict.labels_needed == stats.kappa_sample_size(
        half_width=0.1, expected_kappa=0.7, p_expected=0.5
    )


def test_cluster_bootstrap_is_used_and_widens_intervals(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(9)
    rows = []
    for c in range(40):  # 40 prompts x 8 near-duplicate items: agreement is shared within a cluster
        good = rng.random() < 0.7
        for k in range(8):
            h = rng.choice(["pass", "fail"])
            rows.append(
                Row(
                    f"c{c}-{k}",
                    h if good or rng.random() < 0.3 else FLIP[h],
                    {"h": h},
                    cluster=f"prompt{c}",
                )
            )
    populate(store, rub, rows)
    clustered = build_report(store, rub, ReportOptions(n_resamples=400))
    flat = build_report(store, rub, ReportOptions(n_resamples=400, cluster_by="item"))
    assert clustered.agreement is not None and clustered.agreement.cluster_by == "cluster"
    assert clustered.agreement.n_clusters == 40
    assert flat.agreement is not None and flat.agreement.n_clusters == 320
    wide = clustered.agreement.primary_stat.half_width
    narrow = flat.agreement.primary_stat.half_width
    assert wide > 1.3 * narrow
    assert clustered.agreement.primary_stat.statistic == flat.agreement.primary_stat.statistic


def test_human_ceiling_and_majority_reference(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(6)
    rows = []
    for i in range(60):
        truth = rng.choice(["pass", "fail"])
        humans = {
            a: truth if rng.random() < 0.85 else FLIP[truth] for a in ("ann1", "ann2", "ann3")
        }
        rows.append(Row(f"m{i}", truth, humans))
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    ceiling = report.ceiling
    assert ceiling is not None and ceiling.n_items == 60 and ceiling.n_annotators == 3
    data = [[r.humans[a] for r in rows] for a in ("ann1", "ann2", "ann3")]
    assert ceiling.stats["krippendorff_alpha"].statistic == pytest.approx(
        stats.krippendorff_alpha(data).statistic
    )
    assert ceiling.stats["fleiss_kappa"].statistic == pytest.approx(
        stats.fleiss_kappa([list(r.humans.values()) for r in rows]).statistic
    )
    # with one named annotator the reference is that annotator's labels
    one = build_report(store, rub, ReportOptions(n_resamples=100, annotator="ann2"))
    assert one.agreement is not None
    expected = stats.percent_agreement([r.judge for r in rows], [r.humans["ann2"] for r in rows])
    assert one.agreement.stats["percent_agreement"].statistic == pytest.approx(expected.statistic)


def test_pooled_reference_is_disclosed_and_the_signed_bias_uses_the_median(
    tmp_path: Path,
) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    # two annotators split between adjacent levels on half the items: the on-scale
    # reference is the lower level, but the signed bias must use the midpoint
    rows = []
    for i in range(40):
        humans = {"a": "3", "b": "4"} if i % 2 else {"a": "2", "b": "2"}
        rows.append(Row(f"o{i}", "4" if i % 2 else "2", humans))
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    ag = report.agreement
    assert ag is not None
    # judge - median: 4 - 3.5 on 20 items, 2 - 2 on 20 -> 0.25 (lower median gave 0.5)
    assert ag.stats["mean_bias"].statistic == pytest.approx(0.25)
    assert ag.stats["mean_bias"].ci_low <= 0.25 <= ag.stats["mean_bias"].ci_high
    notes = " ".join(report.provenance.notes)
    assert "not directly comparable with the human-human ceiling" in notes
    # a nominal tie is dropped, and the note says what that does to the figures
    store2 = open_fresh(tmp_path / "b")
    rub2 = rubric(BINARY)
    rows2 = [Row(f"t{i}", "pass", {"a": "pass", "b": "fail"}) for i in range(3)]
    rows2 += [Row(f"u{i}", "pass" if i % 2 else "fail",
                  {"a": "pass" if i % 2 else "fail"}) for i in range(12)]
    populate(store2, rub2, rows2)
    notes2 = " ".join(build_report(store2, rub2, ReportOptions(n_resamples=50)).provenance.notes)
    assert "3 item(s) were left out: their annotators tie" in notes2
    assert "likely higher than on all items" in notes2


def test_inverse_inclusion_probability_weighting(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    # 50 "hard" items sampled with p=1 (judge agrees 50%), 50 "easy" items with p=0.1 (agrees 100%)
    rows, entries = [], []
    for i in range(100):
        hard = i < 50
        h = "pass" if i % 2 else "fail"
        j = (h if i % 4 < 2 else FLIP[h]) if hard else h
        rows.append(Row(f"w{i}", j, {"h": h}))
        entries.append(
            QueueEntry(i, "ds", f"w{i}", 1.0 if hard else 0.1, "hard" if hard else "easy")
        )
    populate(store, rub, rows)
    store.save_queue("q1", rub.sha256, "disagreement", 0, entries)
    report = build_report(store, rub, ReportOptions(n_resamples=200))
    w = report.weighted
    assert w is not None and w.queue == "q1" and w.n_weighted == 100
    # 26 of the hard items agree: unweighted (26 + 50) / 100;
    # weighted (26*1 + 50*10) / (50*1 + 50*10)
    assert report.agreement is not None
    assert report.agreement.stats["percent_agreement"].statistic == pytest.approx(0.76)
    assert w.stats["percent_agreement"].statistic == pytest.approx(526 / 550)
    assert "inclusion probability" in w.note


def test_weighting_respects_the_queue_design(tmp_path: Path) -> None:
    # 50 "hard" items all drawn (p=1), 50 "easy" with p=0.1; only half the hard ones
    # are labeled so far. The labeled hard items stand for the whole hard stratum
    # (missing at random within it), not for half of it.
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows, entries = [], []
    for i in range(100):
        hard = i < 50
        stratum = "hard" if hard else "easy"
        entries.append(QueueEntry(i, "ds", f"w{i}", 1.0 if hard else 0.1, stratum))
        if hard and i >= 25:
            continue  # in the queue, not labeled yet
        h = "pass" if i % 2 else "fail"
        j = (h if i % 4 < 2 else FLIP[h]) if hard else h
        rows.append(Row(f"w{i}", j, {"h": h}))
    populate(store, rub, rows)
    store.save_queue("q1", rub.sha256, "disagreement", 0, entries)
    report = build_report(store, rub, ReportOptions(n_resamples=200, primary="gwet_ac1"))
    w = report.weighted
    assert w is not None and w.n_weighted == 75
    agree_hard = sum(1 for r in rows[:25] if r.judge == r.humans["h"])
    assert agree_hard == 13
    # the 25 labeled hard items carry the weight of all 50: (2*13 + 500) / (50 + 500)
    assert w.stats["percent_agreement"].statistic == pytest.approx((2 * 13 + 500) / 550)
    assert "missing at random within their stratum" in w.note
    # the weighted figure named gwet_ac1 is AC1 (the weighted table as whole copies)
    human = [r.humans["h"] for r in rows for _ in range(2 if int(r.item_id[1:]) < 25 else 10)]
    judge = [r.judge for r in rows for _ in range(2 if int(r.item_id[1:]) < 25 else 10)]
    expected = stats.gwet_ac1(judge, human, labels=["pass", "fail"]).statistic
    assert w.stats["gwet_ac1"].statistic == pytest.approx(expected)
    assert w.stats["gwet_ac1"].statistic != pytest.approx(
        stats.cohen_kappa(judge, human).statistic
    )
    # intervals resample each queue stratum on its own
    assert all(s.method == "stratified bootstrap" for s in w.stats.values())


def test_gwet_ac1_counts_every_category_of_the_scale(tmp_path: Path) -> None:
    # AC1's chance term divides by K - 1 with K the categories of the scale
    # (Gwet 2008), not those that happen to be used: nobody said "refused" here
    store = open_fresh(tmp_path)
    rub = rubric(CATEGORICAL)
    pattern = [("safe", "safe"), ("safe", "safe"), ("unsafe", "unsafe"), ("safe", "unsafe")]
    rows = [Row(f"c{i}", j, {"h": h}) for i, (j, h) in enumerate(pattern * 5)]
    populate(store, rub, rows)
    report = build_report(store, rub, ReportOptions(n_resamples=100, primary="gwet_ac1"))
    ag = report.agreement
    judge, human = [r.judge for r in rows], [r.humans["h"] for r in rows]
    on_scale = stats.gwet_ac1(judge, human, labels=["safe", "unsafe", "refused"]).statistic
    seen_only = stats.gwet_ac1(judge, human).statistic
    assert on_scale != pytest.approx(seen_only)
    assert ag is not None and ag.stats["gwet_ac1"].statistic == pytest.approx(on_scale)
    assert report.verdict.statistic.statistic == pytest.approx(on_scale)


def test_bias_section_renders_stored_probes(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(PAIRWISE)
    populate(store, rub, [Row(f"p{i}", "A", {"h": "A" if i % 3 else "B"}) for i in range(30)])
    create_run(store, rub, "probe-1", kind="probe:position")
    result = {
        "probe": "position",
        "schema_version": 1,
        "position_consistency": {"statistic": 0.8, "ci_low": 0.7, "ci_high": 0.88, "n": 100},
        "first_slot_rate": {
            "statistic": 0.15,
            "ci_low": 0.09,
            "ci_high": 0.23,
            "n": 100,
            "pvalue": 0.001,
        },
        "slot_counts": {"consistent": 80, "first": 15, "second": 5},
    }
    store.save_probe_result("probe-1", "position", rub.sha256, result)
    report = build_report(store, rub, ReportOptions(n_resamples=50))
    assert set(report.bias.headline) == {"position_consistency", "first_slot_rate"}
    assert report.bias.headline["first_slot_rate"].n == 100
    assert report.bias.probes[0].details["slot_counts"]["first"] == 15


def test_judge_run_and_dataset_filters(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = binary_rows(40, 1.0, seed=8)
    populate(store, rub, rows, run_id="good", model="m-good")
    bad = [Row(r.item_id, FLIP[r.judge or "pass"], {}) for r in rows]
    populate(store, rub, bad, run_id="bad", model="m-bad", create=False)
    # two judges and no choice: an error listing both, never a silent pick
    with pytest.raises(InputError, match="2 judges") as raised:
        build_report(store, rub, ReportOptions(n_resamples=50))
    assert "'m-good'" in str(raised.value) and "'m-bad'" in str(raised.value)
    assert "--judge-run" in str(raised.value) and "--model" in str(raised.value)
    by_model = build_report(store, rub, ReportOptions(n_resamples=50, model="m-bad"))
    assert by_model.provenance.judge_models_requested == ("m-bad",)
    chosen = build_report(store, rub, ReportOptions(n_resamples=50, judge_run="good"))
    assert chosen.agreement is not None
    assert chosen.agreement.stats["percent_agreement"].statistic == 1.0
    assert chosen.provenance.run_ids == ("good",)
    result = CliRunner().invoke(
        cli, ["report", "-r", str(BINARY), "--db", str(store.path), "--judge-run", "nope"]
    )
    assert isinstance(result.exception, InputError) and "nope" in str(result.exception)
    assert not math.isnan(chosen.agreement.primary_stat.ci_low)


def test_counts_provenance_and_scatter_match_the_full_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report reads only labeled items' rows; everything else must equal the full rows."""
    from test_report_support import make_judgment

    from judgekit.report import build as build_module
    from judgekit.report.pairing import select_judgments

    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    rng = random.Random(3)
    levels = list(rub.scale.labels)
    rows = [
        Row(
            f"i{i:03d}",
            None if i % 9 == 0 else rng.choice(levels),
            {"h1": rng.choice(levels)} if i % 3 == 0 else {},
            status="timeout" if i % 9 == 0 else "ok",
            response="x" * rng.randint(1, 300),
        )
        for i in range(120)
    ]
    populate(store, rub, rows)
    items = store.items_by_ids("ds", [r.item_id for r in rows])
    later = [  # re-judged (supersedes), a repeat sample, and a probe variant
        make_judgment(rub, "run-1", "ds", items["i000"], "4"),
        make_judgment(rub, "run-1", "ds", items["i003"], None, "refusal"),
        make_judgment(rub, "run-1", "ds", items["i006"], "1", sample_index=1),
        make_judgment(rub, "run-1", "ds", items["i009"], "5", variant="swapped"),
    ]
    store.record_judgments(later)
    monkeypatch.setattr(build_module, "MAX_SCATTER_POINTS", 25)
    report = build_report(store, rub, ReportOptions(n_resamples=50))

    selected = select_judgments(store.judgments(rubric_hash=rub.sha256, variant=""))
    statuses = [j.status for j in selected.values()]
    assert report.health.total == len(selected) == 120
    assert {r.status: r.count for r in report.health.rows if r.count} == {
        s: statuses.count(s) for s in set(statuses)
    }
    prov = report.provenance
    assert prov.n_judgments == 120 and prov.run_ids == ("run-1",)
    assert prov.judge_models_returned == ("judge-model-2025",)
    assert prov.sampling == ({"max_tokens": 64, "temperature": 0.0},)
    assert prov.first_judgment_at == prov.last_judgment_at == "2025-01-01T00:00:01+00:00"
    scored = [
        (key, rub.scale.value_of(j.label))
        for key, j in selected.items()
        if j.status == "ok" and j.label is not None
    ]
    step = math.ceil(len(scored) / 25)
    expected = [(len(items[k[1]].response or ""), s) for k, s in scored[::step]]
    assert report.scatter_total == len(scored)
    assert [(p.length, p.score) for p in report.scatter] == expected
    assert report.agreement is not None
    judge = {k: j for k, j in selected.items() if j.status == "ok"}
    labeled = [k for k in judge if k[1] in {r.item_id for r in rows if r.humans}]
    assert report.agreement.n_items == len(labeled)
    assert report.health.failed_labeled_items == sum(
        1 for r in rows if r.humans and selected[("ds", r.item_id)].status != "ok"
    )


def test_probe_figures_have_readable_names_and_pvalues(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(PAIRWISE)
    populate(store, rub, [Row(f"p{i}", "A", {"h": "A" if i % 3 else "B"}) for i in range(30)])
    create_run(store, rub, "probe-1", kind="probe:position")
    stat = {"statistic": 0.8, "ci_low": 0.7, "ci_high": 0.88, "n": 100}
    store.save_probe_result("probe-1", "position", rub.sha256, {
        "probe": "position",
        "position_consistency": stat,
        "first_slot_rate": {**stat, "statistic": 0.05, "pvalue": 1.0},
        "bpde": {**stat, "statistic": 0.11},
        "first_slot_test": {"k": 5, "n": 10, "statistic": 0.5, "ci_low": 0.187,
                            "ci_high": 0.813, "pvalue": 1.0},
        "slot_counts": {"consistent": 90, "first": 5, "second": 5},
    })
    report = build_report(store, rub, ReportOptions(n_resamples=50))
    entry = report.bias.probes[0]
    assert entry.stats["first_slot_test"].pvalue == 1.0
    assert entry.stats["position_consistency"].pvalue is None
    for fmt in ("text", "md", "html"):
        out = render(report, fmt)
        assert "Position entropy (BPDE)" in out, fmt
        assert "First-slot preference among inconsistent pairs" in out, fmt
        assert "bpde" not in out.lower().replace("(bpde)", ""), fmt
        assert "first slot test" not in out.lower(), fmt
    text = render(report, "text")
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if "First-slot preference" in x)
    # a name longer than the name column puts its figure on the next line
    assert lines[at + 1].strip() == "0.500 [0.187, 0.813] n=10 p=1.000"
    assert "| p |" in render(report, "md") and "<th>p</th>" in render(report, "html")
    data = json.loads(render(report, "json"))
    stats_json = data["bias"]["probes"][0]["statistics"]
    assert set(stats_json) >= {"bpde", "first_slot_test"}  # JSON keys as stored
    assert stats_json["first_slot_test"]["pvalue"] == 1.0
    assert "pvalue" not in stats_json["position_consistency"]


def clustered_rows() -> list[Row]:
    """200 items in 40 clusters of 5. Slice "x" (8 clusters): all 10 disagreements sit in
    2 clusters; slice "y" (32 clusters): 8 disagreements, one per cluster."""
    rows = []
    for i in range(200):
        cluster = i // 5
        human = "pass" if i % 2 else "fail"
        # slice x: clusters k0 and k1 are all wrong; slice y: one item in every 4th cluster
        wrong = cluster < 2 if i < 40 else (i % 5 == 0 and cluster % 4 == 0)
        judge = FLIP[human] if wrong else human
        rows.append(Row(f"c{i:03d}", judge, {"h": human}, slice="x" if i < 40 else "y",
                        cluster=f"k{cluster}"))
    return rows


def test_slice_test_accounts_for_clusters(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, clustered_rows())

    items = build_report(store, rub, ReportOptions(n_resamples=500, cluster_by="item")).slices
    assert items is not None and items.test.startswith("one-sided Fisher exact test")
    fisher = next(r for r in items.rows if r.name == "x")
    assert fisher.flagged and fisher.adjusted_pvalue < 0.01  # items treated as independent

    clustered = build_report(store, rub, ReportOptions(n_resamples=500)).slices
    assert clustered is not None
    assert clustered.test.startswith("one-sided cluster bootstrap test")
    assert "40 clusters" in clustered.test
    x = next(r for r in clustered.rows if r.name == "x")
    assert not x.flagged and x.pvalue > 0.05  # 2 bad clusters of 8 are weak evidence
    assert x.percent_agreement.statistic == fisher.percent_agreement.statistic == 0.75
    # seeded: the same report twice gives the same p-values
    again = build_report(store, rub, ReportOptions(n_resamples=500)).slices
    assert again is not None and [r.pvalue for r in again.rows] == [
        r.pvalue for r in clustered.rows
    ]
    text = render(build_report(store, rub, ReportOptions(n_resamples=500)), "text")
    assert "2 comparisons; one-sided cluster bootstrap test" in text


def test_slice_test_still_flags_a_slice_bad_across_its_clusters(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rows = clustered_rows()
    for i, row in enumerate(rows[:40]):  # slice x: disagreements in every cluster
        human = row.humans["h"]
        row.judge = FLIP[human] if i % 5 in (0, 1) else human
    populate(store, rub, rows)
    slices = build_report(store, rub, ReportOptions(n_resamples=1000)).slices
    assert slices is not None and slices.test.startswith("one-sided cluster bootstrap")
    assert {r.name for r in slices.rows if r.flagged} == {"x"}
