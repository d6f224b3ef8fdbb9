"""``judgekit estimate`` and the report's estimate section on real SQLite stores.

Each figure is checked against :mod:`judgekit.stats` on the same arrays, so the
CLI, the report and the library cannot disagree; bad input is one line, exit 2.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_report_support import (
    BINARY,
    ORDINAL,
    PAIRWISE,
    Row,
    create_run,
    open_fresh,
    populate,
    rubric,
)

from judgekit import stats
from judgekit.cli.main import cli, main
from judgekit.report import ReportOptions, build_report, render
from judgekit.store import QueueEntry
from judgekit.types import Item, Label

FLIP = {"pass": "fail", "fail": "pass"}


def binary_store(tmp_path: Path, n: int = 400, labeled: int = 80, cluster_size: int = 0):
    rng = random.Random(3)
    rows = []
    for i in range(n):
        human = "pass" if rng.random() < 0.6 else "fail"
        judge = human if rng.random() < 0.85 else FLIP[human]
        humans = {"h1": human} if i < labeled else {}
        cluster = f"prompt{i // cluster_size}" if cluster_size else None
        rows.append(Row(f"i{i:04d}", judge, humans, slice=["a", "b"][i % 2], cluster=cluster))
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    populate(store, rub, rows)
    return store, rub, rows


def run_cli(tmp_path: Path, *args: str):
    return CliRunner().invoke(
        cli, ["estimate", "--db", str(tmp_path / "judgekit.db"), *args], catch_exceptions=False
    )


def arrays(rows, values):
    lab = [r for r in rows if r.humans]
    y = [values[r.humans["h1"]] for r in lab]
    f = [values[r.judge] for r in lab]
    fu = [values[r.judge] for r in rows if r.judge is not None]
    return y, f, fu


def test_binary_estimate_equals_stats_on_the_same_arrays(tmp_path: Path) -> None:
    store, _, rows = binary_store(tmp_path)
    store.close()
    result = run_cli(tmp_path, "--rubric", str(BINARY), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    y, f, fu = arrays(rows, {"pass": 1.0, "fail": 0.0})
    ppi = stats.ppi_mean(y, f, fu, bounds=(0, 1))
    assert data["target"] == "pass_rate"
    assert data["n_labeled"] == 80 and data["n_judged"] == 400
    assert data["ppi"]["statistic"] == pytest.approx(ppi.statistic, abs=1e-12)
    assert (data["ppi"]["ci_low"], data["ppi"]["ci_high"]) == pytest.approx(
        ppi.confidence_interval(), abs=1e-12
    )
    assert data["ppi"]["n"] == 80
    assert data["lambda"] == pytest.approx(ppi.lam)
    assert data["effective_labels"] == pytest.approx(ppi.effective_n)
    assert data["effective_labels"] > 80
    assert data["labels_only"]["statistic"] == pytest.approx(sum(y) / len(y))
    assert data["judge_only"]["statistic"] == pytest.approx(sum(fu) / len(fu))
    assert data["judge_only"]["n"] == 400
    rg = stats.rogan_gladen(y, f, fu)
    assert data["rogan_gladen"]["statistic"] == pytest.approx(rg.statistic, abs=1e-12)
    assert data["rogan_gladen"]["ci_low"] == pytest.approx(rg.confidence_interval()[0])


def test_text_output_names_every_estimate(tmp_path: Path) -> None:
    binary_store(tmp_path)[0].close()
    result = run_cli(tmp_path, "--rubric", str(BINARY))
    assert result.exit_code == 0, result.output
    for words in ("judge only (the judge's own rate", "labels only", "PPI++", "Rogan-Gladen"):
        assert words in result.output
    assert "n=80 labeled, N=400 judged" in result.output
    assert "worth" in result.output


def test_ordinal_targets_are_the_mean_and_each_share(tmp_path: Path) -> None:
    rng = random.Random(5)
    rows = []
    for i in range(300):
        human = rng.choice("12345")
        judge = str(min(5, max(1, int(human) + rng.choice([-1, 0, 0, 1]))))
        rows.append(Row(f"o{i}", judge, {"h1": human} if i < 90 else {}))
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    populate(store, rub, rows)
    store.close()
    data = json.loads(run_cli(tmp_path, "--rubric", str(ORDINAL), "--format", "json").output)
    keys = [t["key"] for t in data["targets"]]
    assert keys == ["mean_score"] + [f"share_at_least_{k}" for k in "2345"]
    assert data["rogan_gladen"] is None
    values = {k: float(k) for k in "12345"}
    y, f, fu = arrays(rows, values)
    assert data["ppi"]["statistic"] == pytest.approx(stats.ppi_mean(y, f, fu).statistic)
    at_least_4 = {k: float(int(k) >= 4) for k in "12345"}
    y4, f4, fu4 = arrays(rows, at_least_4)
    share = next(t for t in data["targets"] if t["key"] == "share_at_least_4")
    assert share["ppi"]["statistic"] == pytest.approx(stats.ppi_mean(y4, f4, fu4).statistic)


def test_pairwise_win_rate_counts_a_tie_as_half(tmp_path: Path) -> None:
    rng = random.Random(7)
    rows = [
        Row(f"p{i}", rng.choice(["A", "B", "tie"]), {"h1": rng.choice(["A", "B", "tie"])})
        for i in range(40)
    ] + [Row(f"q{i}", rng.choice(["A", "B", "tie"])) for i in range(100)]
    store = open_fresh(tmp_path)
    rub = rubric(PAIRWISE)
    populate(store, rub, rows)
    store.close()
    data = json.loads(run_cli(tmp_path, "--rubric", str(PAIRWISE), "--format", "json").output)
    assert data["target"] == "win_rate_a"
    assert "tie counts half" in data["targets"][0]["name"]
    y, _, _ = arrays(rows, {"A": 1.0, "B": 0.0, "tie": 0.5})
    assert data["labels_only"]["statistic"] == pytest.approx(sum(y) / len(y))


def test_clusters_give_a_cluster_robust_interval(tmp_path: Path) -> None:
    store, _, rows = binary_store(tmp_path, cluster_size=4)
    store.close()
    data = json.loads(run_cli(tmp_path, "--rubric", str(BINARY), "--format", "json").output)
    assert "cluster-robust variance by cluster (100 clusters)" in data["design"]
    y, f, fu = arrays(rows, {"pass": 1.0, "fail": 0.0})
    lab = [f"v:{r.cluster}" for r in rows if r.humans]
    unl = [f"v:{r.cluster}" for r in rows]
    ppi = stats.ppi_mean(y, f, fu, clusters=lab, unlabeled_clusters=unl, bounds=(0, 1))
    assert data["ppi"]["statistic"] == pytest.approx(ppi.statistic)
    assert data["ppi"]["ci_high"] == pytest.approx(ppi.confidence_interval()[1])


def test_a_non_uniform_queue_weights_the_labels(tmp_path: Path) -> None:
    store, rub, rows = binary_store(tmp_path, labeled=0)
    # the queue oversampled judge-fail items: 60 labeled, probabilities 0.5 vs 0.1
    entries, labels = [], []
    fails = [r for r in rows if r.judge == "fail"]
    picked = fails[:40] + [r for r in rows if r.judge == "pass"][:20]
    for pos, r in enumerate(picked):
        prob = 0.5 if r.judge == "fail" else 0.1
        entries.append(QueueEntry(pos, "ds", r.item_id, prob, r.judge))
        human = r.judge if pos % 5 else FLIP[r.judge]
        r.humans = {"h1": human}
        labels.append(Label("ds", r.item_id, rub.sha256, "h1", human))
    store.add_labels(labels)
    store.save_queue("q", rub.sha256, "stratified", 0, entries)
    store.close()
    data = json.loads(run_cli(tmp_path, "--rubric", str(BINARY), "--format", "json").output)
    assert "queue 'q'" in data["design"] and "1/inclusion probability" in data["design"]
    values = {"pass": 1.0, "fail": 0.0}
    lab = sorted(picked, key=lambda r: r.item_id)
    w = [1.0 / (0.5 if r.judge == "fail" else 0.1) for r in lab]
    y = [values[r.humans["h1"]] for r in lab]
    f = [values[r.judge] for r in lab]
    fu = [values[r.judge] for r in rows]
    ppi = stats.ppi_mean(y, f, fu, weights=w, bounds=(0, 1))
    assert data["ppi"]["statistic"] == pytest.approx(ppi.statistic)
    assert data["ppi"]["ci_low"] == pytest.approx(ppi.confidence_interval()[0])
    labels_only = stats.classical_mean(y, weights=w)
    assert data["labels_only"]["statistic"] == pytest.approx(labels_only.statistic)
    assert data["labels_only"]["statistic"] != pytest.approx(sum(y) / len(y))


def test_by_slice_is_stratified_ppi(tmp_path: Path) -> None:
    store, _, rows = binary_store(tmp_path)
    store.close()
    data = json.loads(
        run_cli(tmp_path, "--rubric", str(BINARY), "--by", "slice", "--format", "json").output
    )
    assert data["by"] == "slice" and [s["name"] for s in data["slices"]] == ["a", "b"]
    y, f, fu = arrays(rows, {"pass": 1.0, "fail": 0.0})
    strata = [r.slice for r in rows if r.humans]
    expected = stats.ppi_mean_stratified(
        y, f, fu, strata, [r.slice for r in rows], sizes={"a": 200, "b": 200}, bounds=(0, 1)
    )
    assert data["stratified"]["statistic"] == pytest.approx(expected.statistic)
    assert data["slices"][0]["n_judged"] == 200 and data["slices"][0]["n_labeled"] == 40
    text = run_cli(tmp_path, "--rubric", str(BINARY), "--by", "slice").output
    assert "by slice (stratified PPI++" in text and "overall" in text


def test_compare_two_candidates_on_the_same_prompts(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(11)
    sides = {}
    for ds, rate in (("cand_a", 0.7), ("cand_b", 0.5)):
        rows = []
        for i in range(300):
            human = "pass" if rng.random() < rate else "fail"
            judge = human if rng.random() < 0.85 else FLIP[human]
            rows.append(Row(f"i{i:03d}", judge, {"h1": human} if i < 60 else {}))
        store.save_rubric(rub)
        store.import_items(
            ds,
            [
                Item(id=r.item_id, input=f"question {r.item_id}", response="a response")
                for r in rows
            ],
        )
        populate(store, rub, rows, dataset=ds, run_id=f"run-{ds}", create=False)
        sides[ds] = rows
    store.close()
    result = run_cli(
        tmp_path, "--rubric", str(BINARY), "--compare", "cand_a", "cand_b", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    values = {"pass": 1.0, "fail": 0.0}
    a, b = arrays(sides["cand_a"], values), arrays(sides["cand_b"], values)
    ids = [f"id:i{i:03d}" for i in range(60)]
    ids_u = [f"id:i{i:03d}" for i in range(300)]
    expected = stats.ppi_mean_difference(a, b, clusters=(ids, ids_u, ids, ids_u))
    assert data["difference"]["statistic"] == pytest.approx(expected.statistic)
    assert data["difference"]["ci_low"] == pytest.approx(expected.confidence_interval()[0])
    assert data["n_clusters"] == 300
    text = run_cli(tmp_path, "--rubric", str(BINARY), "--compare", "cand_a", "cand_b").output
    assert "difference cand_a - cand_b" in text


def test_no_labels_is_nan_with_a_reason(tmp_path: Path) -> None:
    binary_store(tmp_path, labeled=0)[0].close()
    result = run_cli(tmp_path, "--rubric", str(BINARY), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ppi"]["statistic"] is None and "no labeled items" in data["ppi"]["reason"]
    assert data["judge_only"]["statistic"] is not None
    assert "label some judged items" in data["reason"]


def test_a_missing_store_is_an_error_and_is_not_created(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "none.db"
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "--db", str(missing), "--rubric", str(BINARY)])
    assert exc.value.code == 2
    assert f"no store at {missing}" in capsys.readouterr().err
    assert not missing.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--dataset", "nope"], "no dataset 'nope'"),
        (["--judge-run", "nope"], "no run 'nope'"),
        (["--judge-run", "other-run"], "judged with rubric"),
        (["--compare", "ds", "nope"], "no dataset 'nope'"),
    ],
)
def test_bad_choices_exit_2_with_one_line(tmp_path: Path, capsys, extra, message) -> None:
    store = binary_store(tmp_path)[0]
    other = rubric(ORDINAL)
    store.save_rubric(other)
    create_run(store, other, "other-run")
    store.close()
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "--db", str(tmp_path / "judgekit.db"), "--rubric", str(BINARY), *extra])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", [["report"], ["estimate"], ["plan", "--estimate", "ppi"]])
def test_an_unknown_run_is_named_by_every_report_command(tmp_path: Path, capsys,
                                                         command: list[str]) -> None:
    binary_store(tmp_path)[0].close()
    with pytest.raises(SystemExit) as exc:
        main([*command, "--db", str(tmp_path / "judgekit.db"), "--rubric", str(BINARY),
              "--judge-run", "nope"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"no run 'nope' in {tmp_path / 'judgekit.db'}" in err and err.count("\n") == 1


def test_no_judgments_is_an_error(tmp_path: Path, capsys) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    store.save_rubric(rub)
    store.close()
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "--db", str(tmp_path / "judgekit.db"), "--rubric", str(BINARY)])
    assert exc.value.code == 2
    assert "no usable judgments" in capsys.readouterr().err


def test_the_report_carries_the_estimate_in_every_format(tmp_path: Path) -> None:
    store, rub, _ = binary_store(tmp_path)
    report = build_report(store, rub, ReportOptions(n_resamples=100))
    store.close()
    data = json.loads(render(report, "json"))
    for key in ("judge_only", "labels_only", "ppi", "rogan_gladen"):
        assert set(data["estimate"][key]) >= {"statistic", "ci_low", "ci_high", "n"}
    html = render(report, "html")
    assert '<svg id="estimate-intervals"' in html and html.count('class="ci"') >= 4
    assert "PPI++" in render(report, "text") and "PPI++" in render(report, "md")
    assert math.isfinite(report.estimate.targets[0].stats["ppi"].ci_low)


def test_plan_ppi_from_the_store(tmp_path: Path) -> None:
    _, _, rows = binary_store(tmp_path)
    result = CliRunner().invoke(
        cli,
        [
            "plan",
            "--estimate",
            "ppi",
            "--half-width",
            "0.03",
            "--rubric",
            str(BINARY),
            "--db",
            str(tmp_path / "judgekit.db"),
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    y, f, _ = arrays(rows, {"pass": 1.0, "fail": 0.0})
    rho = float(np.corrcoef(y, f)[0, 1])
    expected = stats.ppi_sample_size(
        half_width=0.03, variance=float(np.var(y, ddof=1)), correlation=rho, n_unlabeled=400
    )
    assert data["labels_needed"] == expected
    assert data["labels_only_needed"] > data["labels_needed"]
    assert data["current"] == 80 and data["judged"] == 400


def test_plan_ppi_from_given_moments(capsys) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "plan",
            "--estimate",
            "ppi",
            "--half-width",
            "0.05",
            "--expected",
            "0.5",
            "--correlation",
            "0",
            "--format",
            "json",
        ],
    )
    data = json.loads(result.output)
    assert (
        data["labels_needed"]
        == data["labels_only_needed"]
        == stats.proportion_sample_size(half_width=0.05, p=0.5)
    )
    with pytest.raises(SystemExit) as exc:
        main(["plan", "--estimate", "ppi", "--half-width", "0.05"])
    assert exc.value.code == 2 and "--correlation" in capsys.readouterr().err
