"""``judgekit compare``: two judges against humans, and two candidates under one judge."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_report_support import (
    BINARY,
    ORDINAL,
    Row,
    create_run,
    make_judgment,
    open_fresh,
    populate,
    rubric,
)

from judgekit import stats
from judgekit.cli.main import cli
from judgekit.compare import compare_candidates, compare_judges
from judgekit.errors import InputError
from judgekit.store import Store
from judgekit.types import Rubric

FLIP = {"pass": "fail", "fail": "pass"}


def test_two_judges_mcnemar_on_binary(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(1)
    humans = [rng.choice(["pass", "fail"]) for _ in range(200)]
    good = [h if rng.random() < 0.95 else FLIP[h] for h in humans]
    weak = [h if rng.random() < 0.7 else FLIP[h] for h in humans]
    populate(
        store,
        rub,
        [Row(f"i{i}", g, {"h": h}) for i, (g, h) in enumerate(zip(good, humans, strict=True))],
        run_id="good",
        model="m1",
    )
    populate(
        store,
        rub,
        [Row(f"i{i}", w, {}) for i, w in enumerate(weak)],
        run_id="weak",
        model="m2",
        create=False,
    )
    c = compare_judges(store, rub, rub, run_a="good", run_b="weak")
    ca = np.array(good) == np.array(humans)
    cb = np.array(weak) == np.array(humans)
    expected = stats.mcnemar(ca, cb)
    assert c.n_items == 200 and c.agreement_test == "McNemar exact test"
    assert c.agreement_difference.statistic == pytest.approx(expected.statistic)
    assert c.pvalue == pytest.approx(expected.pvalue) and c.pvalue < 0.001
    assert c.primary_difference.ci_low > 0
    assert c.a.primary.statistic == pytest.approx(
        stats.cohen_kappa(good, humans, labels=["pass", "fail"]).statistic
    )
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            "judges",
            "-r",
            str(BINARY),
            "--db",
            str(store.path),
            "--run-a",
            "good",
            "--run-b",
            "weak",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["agreement_difference"]["n"] == 200


def test_two_judges_paired_bootstrap_on_ordinal(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(ORDINAL)
    rng = random.Random(2)
    humans = [str(rng.randint(1, 5)) for _ in range(120)]
    populate(store, rub, [Row(f"o{i}", h, {"h": h}) for i, h in enumerate(humans)], run_id="a")
    noisy = [str(rng.randint(1, 5)) if rng.random() < 0.5 else h for h in humans]
    populate(
        store,
        rub,
        [Row(f"o{i}", n, {}) for i, n in enumerate(noisy)],
        run_id="b",
        model="noisy-model",
        create=False,
    )
    c = compare_judges(store, rub, rub, run_a="a", run_b="b")
    assert c.agreement_test == "paired bootstrap"
    assert c.agreement_difference.statistic == pytest.approx(
        1 - np.mean(np.array(noisy) == np.array(humans))
    )
    assert c.agreement_difference.ci_low > 0
    text = (
        CliRunner()
        .invoke(
            cli,
            [
                "compare",
                "judges",
                "-r",
                str(ORDINAL),
                "--db",
                str(store.path),
                "--run-a",
                "a",
                "--run-b",
                "b",
            ],
        )
        .output
    )
    assert "Quadratic-weighted kappa A - B" in text


def test_two_candidates_micro_macro_and_abstentions(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(3)
    rows_a, rows_b = [], []
    for i in range(160):
        sl = "hard" if i < 40 else "easy"
        a = "pass" if rng.random() < (0.5 if sl == "hard" else 0.9) else "fail"
        b = "pass" if rng.random() < (0.3 if sl == "hard" else 0.8) else "fail"
        rows_a.append(Row(f"q{i}", a, slice=sl))
        rows_b.append(Row(f"q{i}", b, slice=sl))
    rows_b[0].judge, rows_b[0].status = None, "refusal"
    rows_a[1].judge, rows_a[1].status = None, "parse_error"
    populate(store, rub, rows_a, dataset="cand-a", run_id="ra")
    store.import_items("cand-b", [])
    populate(store, rub, rows_b, dataset="cand-b", run_id="rb")
    c = compare_candidates(store, rub, "cand-a", "cand-b")
    keep = [i for i in range(160) if i not in (0, 1)]
    sa = np.array([rows_a[i].judge == "pass" for i in keep], dtype=float)
    sb = np.array([rows_b[i].judge == "pass" for i in keep], dtype=float)
    assert c.n_items == 158 and c.excluded == 2
    assert c.abstentions_a == {"parse_error": 1} and c.abstentions_b == {"refusal": 1}
    assert c.micro_difference.statistic == pytest.approx(sa.mean() - sb.mean())
    hard = np.array([i < 40 for i in keep])
    macro = ((sa - sb)[hard].mean() + (sa - sb)[~hard].mean()) / 2
    assert c.macro_difference.statistic == pytest.approx(macro)
    assert set(c.slices) == {"hard", "easy"} and c.slices["hard"].n == 38
    out = CliRunner().invoke(
        cli,
        [
            "compare",
            "candidates",
            "-r",
            str(BINARY),
            "--db",
            str(store.path),
            "--dataset-a",
            "cand-a",
            "--dataset-b",
            "cand-b",
        ],
    )
    assert out.exit_code == 0 and "refusal=1" in out.output


# -- which judgments stand for a judge: the report's rule (docs/reports.md) -----------


def _probe_rows(
    store: Store, rub: Rubric, run_id: str, dataset: str, verdicts: dict[str, str], kind: str
) -> None:
    """A probe run of the same judge writing plain (variant "") judgments, after the judge run."""
    create_run(store, rub, run_id, dataset, "judge-model", kind)
    items = store.items_by_ids(dataset, list(verdicts))
    for item_id, label in verdicts.items():
        store.record_judgment(make_judgment(rub, run_id, dataset, items[item_id], label))
        store.record_judgment(
            make_judgment(rub, run_id, dataset, items[item_id], label, variant="swapped")
        )


def test_compare_judges_selects_judgments_like_the_report(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    humans = ["pass" if i % 2 else "fail" for i in range(40)]
    populate(store, rub, [Row(f"i{i}", h, {"h": h}) for i, h in enumerate(humans)], run_id="good")
    weak = [FLIP[h] if i % 4 == 0 else h for i, h in enumerate(humans)]
    populate(
        store, rub, [Row(f"i{i}", w) for i, w in enumerate(weak)], run_id="weak",
        model="weak-model", create=False,
    )
    create_run(store, rub, "rerun")  # the good judge again, every call answered from the cache
    # a probe at the good judge's own sampling writes plain rows (wrong on every item), later
    _probe_rows(store, rub, "probe", "ds", {f"i{i}": FLIP[h] for i, h in enumerate(humans)},
                "probe:length")

    c = compare_judges(store, rub, rub, run_a="rerun", run_b="weak")
    assert c.n_items == 40
    assert c.a.percent_agreement.statistic == 1.0  # the judge's rows, not the probe's
    assert c.b.percent_agreement.statistic == pytest.approx(0.75)
    same = compare_judges(store, rub, rub, run_a="good", run_b="weak")
    assert same.a.percent_agreement.statistic == 1.0
    # naming the probe run reports the probe's judge, rows of any run kind included
    probe = compare_judges(store, rub, rub, run_a="probe", run_b="weak")
    assert probe.a.percent_agreement.statistic == 0.0
    with pytest.raises(InputError, match="same judge"):
        compare_judges(store, rub, rub, run_a="rerun", run_b="good")
    with pytest.raises(InputError, match=r"2 judges.*--run-a RUN_ID"):
        compare_judges(store, rub, rub, run_a=None, run_b="weak")

    result = CliRunner().invoke(
        cli,
        ["compare", "judges", "-r", str(BINARY), "--db", str(store.path),
         "--run-a", "rerun", "--run-b", "weak", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["a"]["percent_agreement"]["statistic"] == 1.0


def test_compare_candidates_applies_one_runs_judge_to_both_datasets(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    a = ["pass"] * 30 + ["fail"] * 10
    b = ["pass"] * 20 + ["fail"] * 20
    populate(store, rub, [Row(f"q{i}", x) for i, x in enumerate(a)], dataset="cand-a",
             run_id="ra")
    store.import_items("cand-b", [])
    populate(store, rub, [Row(f"q{i}", x) for i, x in enumerate(b)], dataset="cand-b",
             run_id="rb")
    # a later probe of the same judge on cand-a: plain rows that fail everything
    _probe_rows(store, rub, "probe", "cand-a", {f"q{i}": "fail" for i in range(40)},
                "probe:consistency")

    for run_id in (None, "ra", "rb"):  # one judge: its judge/import rows on both datasets
        c = compare_candidates(store, rub, "cand-a", "cand-b", run_id=run_id)
        assert c.n_items == 40
        assert c.mean_a.statistic == pytest.approx(0.75), run_id
        assert c.micro_difference.statistic == pytest.approx(0.25), run_id
    out = CliRunner().invoke(
        cli,
        ["compare", "candidates", "-r", str(BINARY), "--db", str(store.path),
         "--dataset-a", "cand-a", "--dataset-b", "cand-b", "--run", "ra", "--format", "json"],
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["n_items"] == 40

    # a second judge on cand-b only: each dataset's judge differs, so a run id must choose
    store.import_items("cand-c", [])
    populate(store, rub, [Row(f"q{i}", x) for i, x in enumerate(b)], dataset="cand-c",
             run_id="other", model="other-model")
    with pytest.raises(InputError, match="choose the judge of both with --run"):
        compare_candidates(store, rub, "cand-a", "cand-c")
