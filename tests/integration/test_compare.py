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


# -- clusters: resample whole clusters when items share one, as the report does --------

UNCLUSTERED_JUDGES_TEXT = (
    "Judges compared on 60 items with an ok verdict from both and a human label\n"
    "  Human reference: the single human label per item\n"
    "  A = m1 (http://127.0.0.1:9/v1): correctness v1, run good\n"
    "     Cohen's kappa             0.799 [0.601, 0.925] n=60\n"
    "     Agreement with humans     0.900 [0.799, 0.953] n=60\n"
    "     Statuses                  ok=60\n"
    "  B = m2 (http://127.0.0.1:9/v1): correctness v1, run weak\n"
    "     Cohen's kappa             0.503 [0.248, 0.700] n=60\n"
    "     Agreement with humans     0.750 [0.628, 0.842] n=60\n"
    "     Statuses                  ok=60\n"
    "  Agreement A - B (McNemar exact test): 0.150 [0.009, 0.287] n=60 p=0.064\n"
    "  Cohen's kappa A - B (paired bootstrap; p: judges swapped per item): 0.296 [0.031, 0.501] "
    "n=60 p=0.047\n"
)
UNCLUSTERED_CANDIDATES_TEXT = (
    "Candidates compared on 60 shared items (pass rate; 0 item(s) excluded because a "
    "judgment failed)\n"
    "  A pass rate             0.517 [0.400, 0.634] n=60\n"
    "  B pass rate             0.467 [0.333, 0.617] n=60\n"
    "  A - B micro               0.050 [-0.100, 0.184] n=60 p=0.657\n"
    "  A - B macro over slices   0.088 [-0.081, 0.213] n=60\n"
    "    s1                      -0.025 [-0.176, 0.150] n=40\n"
    "    s2                      0.200 [-0.100, 0.450] n=20\n"
    "  Abstentions/failures A: none\n"
    "  Abstentions/failures B: none\n"
)
JUDGES_KEYS = {
    "kind", "primary", "n_items", "reference", "a", "b", "agreement_difference", "agreement_test",
    "levels",
    "pvalue", "primary_difference",
}
CANDIDATES_KEYS = {
    "kind", "score", "n_items", "mean_a", "mean_b", "micro_difference", "macro_difference",
    "pvalue", "slices", "abstentions_a", "abstentions_b", "excluded",
}


def _small_store(tmp_path: Path, cluster: str | None) -> Store:
    """60 items, two judges on "ds" and the first judge on "cand-b"; ``cluster`` per item:
    None (no field), "own" (every item its own cluster) or "tens" (clusters of 10)."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(11)
    humans = [rng.choice(["pass", "fail"]) for _ in range(60)]
    good = [h if rng.random() < 0.9 else FLIP[h] for h in humans]
    weak = [h if rng.random() < 0.7 else FLIP[h] for h in humans]

    def cl(i: int) -> str | None:
        return None if cluster is None else f"c{i}" if cluster == "own" else f"c{i // 10}"

    def sl(i: int) -> str:
        return "s1" if i % 3 else "s2"

    populate(
        store,
        rub,
        [
            Row(f"i{i}", g, {"h": h}, slice=sl(i), cluster=cl(i))
            for i, (g, h) in enumerate(zip(good, humans, strict=True))
        ],
        run_id="good",
        model="m1",
    )
    populate(store, rub, [Row(f"i{i}", w) for i, w in enumerate(weak)], run_id="weak",
             model="m2", create=False)
    store.import_items("cand-b", [])
    populate(store, rub, [Row(f"i{i}", w, slice=sl(i)) for i, w in enumerate(weak)],
             dataset="cand-b", run_id="cb", model="m1")
    return store


def _cli_outputs(store: Store, *extra: str) -> dict[str, str]:
    out = {}
    for fmt in ("text", "json"):
        common = ["-r", str(BINARY), "--db", str(store.path), "--format", fmt,
                  "--resamples", "200", *extra]
        judges = CliRunner().invoke(
            cli, ["compare", "judges", *common, "--run-a", "good", "--run-b", "weak"]
        )
        cands = CliRunner().invoke(
            cli,
            ["compare", "candidates", *common, "--dataset-a", "ds", "--dataset-b", "cand-b",
             "--run", "good"],
        )
        assert judges.exit_code == 0 and cands.exit_code == 0, judges.output + cands.output
        out[f"judges_{fmt}"], out[f"candidates_{fmt}"] = judges.output, cands.output
    return out


def test_without_clusters_compare_output_is_unchanged(tmp_path: Path) -> None:
    plain = _cli_outputs(_small_store(tmp_path / "plain", None))
    assert plain["judges_text"] == UNCLUSTERED_JUDGES_TEXT
    assert plain["candidates_text"] == UNCLUSTERED_CANDIDATES_TEXT
    assert set(json.loads(plain["judges_json"])) == JUDGES_KEYS
    assert set(json.loads(plain["candidates_json"])) == CANDIDATES_KEYS
    assert json.loads(plain["judges_json"])["agreement_test"] == "McNemar exact test"
    # every item its own cluster, or clustering turned off: no cluster of 2 items, same output
    assert _cli_outputs(_small_store(tmp_path / "own", "own")) == plain
    clustered = _small_store(tmp_path / "tens", "tens")
    assert _cli_outputs(clustered, "--cluster-by", "item") == plain
    # ... while the default picks the items' clusters up
    on = _cli_outputs(clustered)
    assert on != plain
    assert json.loads(on["judges_json"])["cluster_by"] == "cluster"
    assert "6 clusters of 60 items" in on["candidates_text"]


def test_items_sharing_prompts_are_clustered_by_prompt_like_the_report(tmp_path: Path) -> None:
    """No cluster field, but answers to 6 prompts: compare resamples prompts, as report does."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(3)
    humans = [rng.choice(["pass", "fail"]) for _ in range(60)]
    weak = [h if rng.random() < 0.7 else FLIP[h] for h in humans]
    populate(store, rub, [Row(f"i{i}", h, {"h": h}, prompt=f"prompt {i // 10}")
                          for i, h in enumerate(humans)], run_id="good", model="m1")
    populate(store, rub, [Row(f"i{i}", w) for i, w in enumerate(weak)], run_id="weak",
             model="m2", create=False)
    by_default = compare_judges(store, rub, rub, run_a="good", run_b="weak")
    by_prompt = compare_judges(store, rub, rub, run_a="good", run_b="weak", cluster_by="prompt")
    flat = compare_judges(store, rub, rub, run_a="good", run_b="weak", cluster_by="item")
    assert by_default.clustering is not None and flat.clustering is None
    assert by_default.clustering.cluster_by == "prompt" and by_default.clustering.n_clusters == 6
    assert by_default.to_dict() == by_prompt.to_dict() != flat.to_dict()
    assert by_default.agreement_test == "paired cluster bootstrap"
    text = CliRunner().invoke(cli, ["compare", "judges", "-r", str(BINARY), "--db",
                                    str(store.path), "--run-a", "good", "--run-b", "weak"])
    assert text.exit_code == 0, text.output
    assert "cluster bootstrap by prompt (6 clusters of 60 items)" in text.output


def _clustered_judges(tmp_path: Path) -> tuple[Store, np.ndarray, np.ndarray, np.ndarray]:
    """Judge A always right; judge B wrong on whole clusters of 10 (about 30% of them)."""
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(5)
    n_clusters, size = 30, 10
    humans, weak, ids = [], [], []
    for c in range(n_clusters):
        wrong = rng.random() < 0.3
        for _ in range(size):
            h = rng.choice(["pass", "fail"])
            humans.append(h)
            weak.append(FLIP[h] if wrong else h)
            ids.append(f"c{c}")
    populate(
        store,
        rub,
        [Row(f"i{i:03d}", h, {"h": h}, cluster=ids[i]) for i, h in enumerate(humans)],
        run_id="good",
        model="m1",
    )
    populate(store, rub, [Row(f"i{i:03d}", w) for i, w in enumerate(weak)], run_id="weak",
             model="m2", create=False)
    ca = np.ones(len(humans), dtype=bool)
    cb = np.array(weak) == np.array(humans)
    return store, ca, cb, np.array(ids, dtype=object)


def test_compare_judges_with_clusters_uses_a_cluster_bootstrap(tmp_path: Path) -> None:
    store, ca, cb, ids = _clustered_judges(tmp_path)
    rub = rubric(BINARY)
    spec_kwargs = {"n_resamples": 1000, "random_state": 0, "confidence_level": 0.95}
    flat = compare_judges(store, rub, rub, run_a="good", run_b="weak", cluster_by="item")
    c = compare_judges(store, rub, rub, run_a="good", run_b="weak")
    assert flat.agreement_test == "McNemar exact test" and flat.clustering is None
    assert c.agreement_test == "paired cluster bootstrap"
    assert c.clustering is not None and c.clustering.n_clusters == 30
    assert c.notes and "McNemar's exact test" in c.notes[0] and "independent" in c.notes[0]
    expected = stats.paired_bootstrap(ca.astype(float), cb.astype(float), clusters=ids,
                                      **spec_kwargs)
    d = c.agreement_difference
    assert d.statistic == pytest.approx(flat.agreement_difference.statistic)
    assert (d.ci_low, d.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
    assert c.pvalue == pytest.approx(expected.pvalue)
    # whole clusters wrong at once: the clustered interval is much wider than the item-level one
    assert d.ci_high - d.ci_low > 2 * (
        flat.agreement_difference.ci_high - flat.agreement_difference.ci_low
    )
    assert d.ci_low <= 0.3 <= d.ci_high  # the rate clusters were made wrong at
    assert d.ci_low <= d.statistic <= d.ci_high
    width = c.primary_difference.ci_high - c.primary_difference.ci_low
    assert width > flat.primary_difference.ci_high - flat.primary_difference.ci_low
    # the per-judge figures are clustered too, like the report's
    assert c.b.percent_agreement.ci_high - c.b.percent_agreement.ci_low > (
        flat.b.percent_agreement.ci_high - flat.b.percent_agreement.ci_low
    )

    args = ["compare", "judges", "-r", str(BINARY), "--db", str(store.path), "--run-a", "good",
            "--run-b", "weak"]
    data = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)
    assert data["agreement_test"] == "paired cluster bootstrap"
    assert data["primary_test"] == "paired cluster bootstrap; p: judges swapped per item"
    assert data["cluster_by"] == "cluster" and data["n_clusters"] == 30
    assert data["interval_method"].startswith("1000-resample cluster bootstrap by cluster")
    assert "McNemar" in data["notes"][0]
    text = CliRunner().invoke(cli, args).output
    assert "Agreement A - B (paired cluster bootstrap)" in text
    method = "1000-resample cluster bootstrap by cluster (30 clusters of 300 items)"
    assert f"Intervals: {method}" in text
    assert "Note: McNemar's exact test" in text
    off = CliRunner().invoke(cli, [*args, "--cluster-by", "item"]).output
    assert "McNemar exact test" in off and "cluster" not in off


def test_compare_candidates_with_clusters(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(BINARY)
    rng = random.Random(8)
    rows_a, rows_b, ids, slices = [], [], [], []
    for c in range(24):  # whole clusters pass or fail together, for each candidate
        sl = "hard" if c % 3 == 0 else "easy"
        a = "pass" if rng.random() < 0.7 else "fail"
        b = "pass" if rng.random() < 0.4 else "fail"
        for k in range(8):
            item_id = f"q{c:02d}-{k}"
            rows_a.append(Row(item_id, a, slice=sl, cluster=f"p{c}"))
            rows_b.append(Row(item_id, b, slice=sl))
            ids.append(f"p{c}")
            slices.append(sl)
    populate(store, rub, rows_a, dataset="cand-a", run_id="ra")
    store.import_items("cand-b", [])
    populate(store, rub, rows_b, dataset="cand-b", run_id="rb")
    flat = compare_candidates(store, rub, "cand-a", "cand-b", cluster_by="item")
    c = compare_candidates(store, rub, "cand-a", "cand-b")
    assert flat.clustering is None and flat.macro_difference.method == "bootstrap"
    assert c.clustering is not None and c.clustering.n_clusters == 24
    sa = np.array([r.judge == "pass" for r in rows_a], dtype=float)
    sb = np.array([r.judge == "pass" for r in rows_b], dtype=float)
    cl = np.array(ids, dtype=object)
    expected = stats.paired_bootstrap(sa, sb, clusters=cl, n_resamples=1000, random_state=0)
    m = c.micro_difference
    assert m.statistic == pytest.approx(sa.mean() - sb.mean())
    assert (m.ci_low, m.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
    assert m.method == "paired cluster bootstrap" and c.pvalue == pytest.approx(expected.pvalue)
    assert m.ci_low <= m.statistic <= m.ci_high
    assert m.ci_high - m.ci_low > 2 * (flat.micro_difference.ci_high - flat.micro_difference.ci_low)
    # macro over slices: clusters resampled within each slice
    assert c.macro_difference.method == "stratified cluster bootstrap"
    assert c.macro_difference.statistic == pytest.approx(flat.macro_difference.statistic)
    assert c.macro_difference.ci_high - c.macro_difference.ci_low > (
        flat.macro_difference.ci_high - flat.macro_difference.ci_low
    )
    hard = np.array(slices) == "hard"
    assert c.slices["hard"].ci_high - c.slices["hard"].ci_low > (
        flat.slices["hard"].ci_high - flat.slices["hard"].ci_low
    )
    expected_hard = stats.paired_bootstrap(sa[hard], sb[hard], clusters=cl[hard],
                                           n_resamples=1000, random_state=0)
    assert c.slices["hard"].ci_low == pytest.approx(expected_hard.ci_low)

    args = ["compare", "candidates", "-r", str(BINARY), "--db", str(store.path),
            "--dataset-a", "cand-a", "--dataset-b", "cand-b"]
    data = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)
    assert data["cluster_by"] == "cluster" and data["n_clusters"] == 24
    assert data["macro_method"] == "stratified cluster bootstrap" and data["notes"]
    text = CliRunner().invoke(cli, args).output
    method = "1000-resample cluster bootstrap by cluster (24 clusters of 192 items)"
    assert f"Intervals: {method}" in text
    # --cluster-by another field: slices as clusters (2 of them)
    by_slice = json.loads(
        CliRunner().invoke(cli, [*args, "--format", "json", "--cluster-by", "slice"]).output
    )
    assert by_slice["cluster_by"] == "slice" and by_slice["n_clusters"] == 2
