"""The figures the judge-evaluation literature publishes, reproduced through the CLI.

SummEval's expert annotations are not in ../shared/data and the G-Eval repository stores its
copy (``data/summeval.json``) as a file too large for the mirror, so the data here is
synthesised with SummEval's structure: documents x systems, three experts rating 1-5 per
summary, and a G-Eval-like judge whose probability-weighted score has half points beside its
integer label. Every figure is checked against an independent computation with scipy and
sklearn, written the way G-Eval's ``meta_eval_summeval.py`` and SummEval's system-level table
compute them:

- item level: Spearman of the judge's score against the mean of the experts, half points kept;
- per document: Spearman within each document's summaries, averaged over the documents where
  both sides vary;
- system level: Kendall's tau of per-system mean scores;
- pairwise system accuracy: the share of system pairs ordered alike (Shen et al. 2023).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from tests.support.cli import run_cli

RUBRIC = Path(__file__).resolve().parents[2] / "rubrics" / "helpfulness.toml"
N_DOCS, N_SYSTEMS, EXPERTS = 24, 8, ("expert1", "expert2", "expert3")


def summeval_like(seed: int = 7) -> dict[str, np.ndarray]:
    """Documents x systems with system quality, three experts 1-5, a judge score with halves."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(-1.2, 1.2, N_SYSTEMS)
    doc = np.repeat(np.arange(N_DOCS), N_SYSTEMS)
    system = np.tile(np.arange(N_SYSTEMS), N_DOCS)
    latent = 3.2 + quality[system] + rng.normal(0, 0.8, doc.size)
    experts = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.6, (doc.size, 3))), 1, 5)
    score = np.clip(np.rint(2 * (latent + rng.normal(0, 0.9, doc.size))) / 2, 1, 5)
    score[:: N_SYSTEMS * 3] = 5.0  # some documents' judge scores reach the top
    label = np.clip(np.floor(score + 0.5), 1, 5).astype(int)  # 3.5 -> 4, as G-Eval rounds
    return {"doc": doc, "system": system, "experts": experts.astype(int), "score": score,
            "label": label}


def write_store(tmp_path: Path, data: dict[str, np.ndarray],
                responses: list[str] | None = None) -> str:
    """Items, expert labels and the judge's verdicts imported through the CLI."""
    db = str(tmp_path / "judgekit.db")
    items = tmp_path / "items.jsonl"
    labels = tmp_path / "labels.jsonl"
    verdicts = tmp_path / "verdicts.jsonl"
    with items.open("w") as fi, labels.open("w") as fl, verdicts.open("w") as fv:
        for i in range(data["doc"].size):
            item_id = f"d{data['doc'][i]:03d}-s{data['system'][i]}"
            fi.write(json.dumps({"id": item_id, "input": f"Summarise document {data['doc'][i]}.",
                                 "response": responses[i] if responses else f"summary {i}",
                                 "model": f"M{data['system'][i]}"}) + "\n")
            for name, value in zip(EXPERTS, data["experts"][i], strict=True):
                fl.write(json.dumps({"item_id": item_id, "annotator": name,
                                     "label": str(value)}) + "\n")
            fv.write(json.dumps({"item_id": item_id, "judge": "geval-gpt4",
                                 "label": str(data["label"][i]),
                                 "score": float(data["score"][i])}) + "\n")
    for args in (["import", str(items), "--name", "summeval", "--db", db],
                 ["labels", "import", str(labels), "--rubric", str(RUBRIC), "--db", db],
                 ["judgments", "import", str(verdicts), "--rubric", str(RUBRIC), "--db", db]):
        code, out, err = run_cli(*args)
        assert code == 0, (args, out, err)
    return db


def report_json(db: str, *extra: str) -> dict:
    code, out, err = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--format", "json",
                             "--resamples", "200", *extra)
    assert code in (0, 1, 3), err
    return json.loads(out)


@pytest.fixture(scope="module")
def summeval(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, np.ndarray], str]:
    data = summeval_like()
    return data, write_store(tmp_path_factory.mktemp("summeval"), data)


def lower_median(experts: np.ndarray) -> np.ndarray:
    return np.sort(experts, axis=1)[:, (experts.shape[1] - 1) // 2]


def test_item_level_spearman_uses_the_mean_of_experts_and_the_judges_half_points(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    data, db = summeval
    mean = report_json(db, "--reference", "mean")
    expert_mean = data["experts"].mean(axis=1)
    assert (data["score"] != data["label"]).any() and (expert_mean % 1 != 0).any()
    agreement = mean["agreement"]
    assert agreement["reference_rule"] == "mean"
    assert agreement["judge_scored_items"] == int(np.count_nonzero(data["score"] != data["label"]))
    assert "mean of the annotators' values" in agreement["reference"]
    assert agreement["statistics"]["spearman"]["statistic"] == pytest.approx(
        sps.spearmanr(data["score"], expert_mean).statistic, abs=1e-12)
    assert agreement["statistics"]["kendall_tau"]["statistic"] == pytest.approx(
        sps.kendalltau(data["score"], expert_mean).statistic, abs=1e-12)
    assert agreement["statistics"]["mean_bias"]["statistic"] == pytest.approx(
        float(np.mean(data["score"] - expert_mean)), abs=1e-12)
    # kappa needs a level: the judge's label against the experts' lower median, as by default
    kappa = cohen_kappa_score(data["label"], lower_median(data["experts"]), weights="quadratic")
    assert agreement["statistics"]["weighted_kappa"]["statistic"] == pytest.approx(kappa, abs=1e-12)
    default = report_json(db)
    assert default["agreement"]["reference_rule"] == "median"
    assert default["agreement"]["statistics"]["weighted_kappa"]["statistic"] == pytest.approx(
        kappa, abs=1e-12)
    assert default["agreement"]["statistics"]["spearman"]["statistic"] == pytest.approx(
        sps.spearmanr(data["score"], lower_median(data["experts"])).statistic, abs=1e-12)
    assert mean["agreement"]["statistics"]["spearman"] != default["agreement"]["statistics"][
        "spearman"]


def test_per_document_spearman_is_g_evals_average_over_documents_that_vary(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    data, db = summeval
    levels = report_json(db, "--reference", "mean")["levels"]
    expert_mean = data["experts"].mean(axis=1)
    # meta_eval_summeval.py: skip documents where either side is constant, average the rest
    per_doc = {"spearman": [], "kendall_tau": [], "pearson": []}
    for d in range(N_DOCS):
        pred, human = data["score"][data["doc"] == d], expert_mean[data["doc"] == d]
        if len(set(pred)) <= 1 or len(set(human)) <= 1:
            continue
        per_doc["spearman"].append(sps.spearmanr(pred, human)[0])
        per_doc["kendall_tau"].append(sps.kendalltau(pred, human)[0])
        per_doc["pearson"].append(sps.pearsonr(pred, human)[0])
    group = levels["per_group"]
    assert group["group_by"] == "prompt" and group["n_groups"] == N_DOCS
    assert group["n_groups_used"] == len(per_doc["spearman"])
    for name, values in per_doc.items():
        stat = group["statistics"][name]
        assert stat["statistic"] == pytest.approx(float(np.mean(values)), abs=1e-12)
        assert stat["ci_low"] < stat["statistic"] < stat["ci_high"]
        assert stat["n"] == len(values)


def test_system_level_kendall_and_pairwise_accuracy(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    data, db = summeval
    system = report_json(db, "--reference", "mean")["levels"]["system"]
    expert_mean = data["experts"].mean(axis=1)
    # equal means are ties however they were summed: compare them to 9 decimals
    judge_means = np.round([data["score"][data["system"] == s].mean() for s in range(N_SYSTEMS)],
                           9)
    human_means = np.round([expert_mean[data["system"] == s].mean() for s in range(N_SYSTEMS)], 9)
    assert system["system_by"] == "model" and system["n_systems"] == N_SYSTEMS
    assert [row["name"] for row in system["systems"]] == [f"M{s}" for s in range(N_SYSTEMS)]
    assert [row["human_mean"] for row in system["systems"]] == pytest.approx(human_means)
    figures = system["statistics"]
    assert figures["kendall_tau"]["statistic"] == pytest.approx(
        sps.kendalltau(judge_means, human_means).statistic, abs=1e-12)
    assert figures["spearman"]["statistic"] == pytest.approx(
        sps.spearmanr(judge_means, human_means).statistic, abs=1e-12)
    assert figures["pearson"]["statistic"] == pytest.approx(
        sps.pearsonr(judge_means, human_means).statistic, abs=1e-9)
    pairs = list(itertools.combinations(range(N_SYSTEMS), 2))
    agree = 0.0
    for a, b in pairs:
        dj = np.sign(judge_means[a] - judge_means[b])
        dh = np.sign(human_means[a] - human_means[b])
        agree += 1.0 if dj == dh else 0.5 if 0 in (dj, dh) else 0.0
    assert system["n_pairs"] == len(pairs) == 28
    assert figures["pairwise_accuracy"]["statistic"] == pytest.approx(agree / len(pairs))
    for name in ("kendall_tau", "pairwise_accuracy"):
        stat = figures[name]
        assert stat["ci_low"] is not None and stat["ci_low"] < stat["ci_high"]
        assert stat["ci_low"] <= stat["statistic"] <= stat["ci_high"]


def test_every_format_shows_the_levels_and_the_reference(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    _, db = summeval
    _code, text, _ = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--reference", "mean",
                            "--resamples", "200")
    assert "Agreement by level (item, per group, system)" in text
    assert "Pairwise system accuracy:" in text and "of 28 system pairs" in text
    assert "--reference mean" in text and "the judge's own score (not its label's value)" in text
    for fmt, marker in (("md", "## Agreement by level"), ("html", 'id="levels"')):
        _, out, _ = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--format", fmt,
                               "--resamples", "200")
        assert marker in out and "Pairwise system accuracy" in out


def test_estimate_targets_the_mean_of_experts_and_says_so(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    data, db = summeval
    code, out, err = run_cli("estimate", "--rubric", str(RUBRIC), "--db", db, "--format", "json",
                             "--reference", "mean")
    assert code == 0, err
    section = json.loads(out)
    assert "--reference mean" in section["reference"]
    head = section["targets"][0]
    assert head["key"] == "mean_score"
    assert head["labels_only"]["statistic"] == pytest.approx(data["experts"].mean())
    assert head["judge_only"]["statistic"] == pytest.approx(data["score"].mean())
    code, default, _ = run_cli("estimate", "--rubric", str(RUBRIC), "--db", db, "--format", "json")
    assert "--reference median" in json.loads(default)["reference"]
    assert json.loads(default)["targets"][0]["labels_only"]["statistic"] == pytest.approx(
        lower_median(data["experts"]).mean())
    code, text, _ = run_cli("estimate", "--rubric", str(RUBRIC), "--db", db, "--reference", "mean")
    assert "judge only (the judge's own mean, not corrected)" in text
    assert "human reference: mean score: human value the mean of the annotators' values" in text


def test_system_by_names_another_field_and_a_missing_one_is_an_input_error(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    _, db = summeval
    code, out, err = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--system-by",
                             "meta.nowhere")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "error: --system-by meta.nowhere: no compared item has this field"]


def test_reference_mean_needs_an_ordinal_scale(tmp_path: Path) -> None:
    binary = Path(__file__).resolve().parents[2] / "rubrics" / "correctness.toml"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "input": "q", "response": "r"}) + "\n")
    db = str(tmp_path / "judgekit.db")
    assert run_cli("import", str(items), "--name", "d", "--db", db)[0] == 0
    before = Path(db).read_bytes()
    code, out, err = run_cli("report", "--rubric", str(binary), "--db", db, "--reference", "mean")
    assert code == 2 and out == ""
    assert "--reference mean needs an ordinal scale" in err and "Traceback" not in err
    assert Path(db).read_bytes() == before


def test_compare_judges_by_model_shows_both_judges_at_every_level(tmp_path: Path) -> None:
    data = summeval_like()
    db = write_store(tmp_path, data)
    rng = np.random.default_rng(3)
    worse = np.clip(data["score"] + rng.choice([-1.5, 0.0, 1.5], data["score"].size), 1, 5)
    verdicts = tmp_path / "weak.jsonl"
    with verdicts.open("w") as f:
        for i in range(data["doc"].size):
            f.write(json.dumps({"item_id": f"d{data['doc'][i]:03d}-s{data['system'][i]}",
                                "judge": "weak-judge", "label": str(int(np.floor(worse[i] + 0.5))),
                                "score": float(worse[i])}) + "\n")
    imported = run_cli("judgments", "import", str(verdicts), "--rubric", str(RUBRIC), "--db", db)
    assert imported[0] == 0
    args = ("compare", "judges", "--rubric", str(RUBRIC), "--db", db, "--model-a", "geval-gpt4",
            "--model-b", "weak-judge", "--reference", "mean", "--resamples", "200")
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    expert_mean = data["experts"].mean(axis=1)
    for side, scores in (("a", data["score"]), ("b", worse)):
        levels = result["levels"][side]
        means = [np.round(scores[data["system"] == s].mean(), 9) for s in range(N_SYSTEMS)]
        human = [np.round(expert_mean[data["system"] == s].mean(), 9) for s in range(N_SYSTEMS)]
        assert levels["system"]["statistics"]["kendall_tau"]["statistic"] == pytest.approx(
            sps.kendalltau(means, human).statistic, abs=1e-12)
        assert levels["item"]["spearman"]["statistic"] == pytest.approx(
            sps.spearmanr(scores, expert_mean).statistic, abs=1e-12)
    assert "--reference mean" in result["reference"]
    code, text, _ = run_cli(*args)
    assert "System level (by model; 8 systems, 28 pairs)" in text
    assert "Per group (by prompt;" in text
    # naming a model that did not judge is one line and exit 2
    code, _, err = run_cli("compare", "judges", "--rubric", str(RUBRIC), "--db", db,
                           "--model-a", "nobody", "--model-b", "weak-judge")
    assert code == 2 and "no judgments by model 'nobody'" in err


def test_agree_compares_the_judge_with_the_mean_of_the_other_raters(tmp_path: Path) -> None:
    data = summeval_like()
    ratings = tmp_path / "ratings.csv"
    rows = ["item_id,rater,label"]
    for i in range(data["doc"].size):
        rows += [f"i{i},{name},{value}" for name, value in zip(EXPERTS, data["experts"][i],
                                                              strict=True)]
        rows.append(f"i{i},judge,{data['label'][i]}")
    ratings.write_text("\n".join(rows) + "\n")
    code, out, err = run_cli("agree", str(ratings), "--level", "ordinal", "--judge", "judge",
                             "--reference", "mean", "--format", "json", "--resamples", "200")
    assert code == 0, err
    figure = json.loads(out)["judge_parity"]["against_reference"]
    assert figure["reference"] == "the mean of the other raters" and figure["measure"] == "spearman"
    assert figure["statistic"] == pytest.approx(
        sps.spearmanr(data["label"], data["experts"].mean(axis=1)).statistic, abs=1e-12)
    code, _, err = run_cli("agree", str(ratings), "--level", "ordinal", "--reference", "mean")
    assert code == 2 and "--reference needs --judge" in err


def test_ceiling_sets_the_judges_quadratic_kappa_beside_the_annotators_like_for_like(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    data, db = summeval
    ceiling = report_json(db)["human_ceiling"]
    experts = data["experts"]
    pairs = list(itertools.combinations(range(3), 2))
    human = np.mean([cohen_kappa_score(experts[:, a], experts[:, b], weights="quadratic")
                     for a, b in pairs])
    judge = np.mean([cohen_kappa_score(data["label"], experts[:, a], weights="quadratic")
                     for a in range(3)])
    stats = ceiling["statistics"]
    assert stats["mean_pairwise_weighted_kappa"]["statistic"] == pytest.approx(human, abs=1e-12)
    assert stats["judge_mean_weighted_kappa"]["statistic"] == pytest.approx(judge, abs=1e-12)
    low, high = (stats["mean_pairwise_weighted_kappa"][k] for k in ("ci_low", "ci_high"))
    assert low < human < high
    assert "Like for like on Quadratic-weighted kappa" in ceiling["parity"]
    # --annotator keeps the ceiling, computed on the other two experts
    single = report_json(db, "--annotator", "expert1")["human_ceiling"]
    assert single is not None and single["n_annotators"] == 2
    assert single["statistics"]["mean_pairwise_weighted_kappa"]["statistic"] == pytest.approx(
        cohen_kappa_score(experts[:, 1], experts[:, 2], weights="quadratic"), abs=1e-12)
    assert "other than 'expert1'" in single["reason"]
    _, text, _ = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--resamples", "200")
    assert "Fleiss' kappa (nominal: every level its own category)" in text


def test_length_bias_from_stored_verdicts_sets_judge_beside_people(tmp_path: Path) -> None:
    data = summeval_like()
    rng = np.random.default_rng(11)
    # the judge's score grows with length; people's does not
    words = np.clip(np.rint(10 + 12 * (data["score"] - 3) + rng.normal(0, 4, data["score"].size)),
                    1, None).astype(int)
    responses = [" ".join(["word"] * n) for n in words]
    db = write_store(tmp_path, data, responses)
    probes = {p["probe"]: p for p in report_json(db, "--reference", "mean")["bias"]["probes"]}
    figures = probes["length_from_verdicts"]["statistics"]
    lengths = np.array([len(r) for r in responses], dtype=float)
    expert_mean = data["experts"].mean(axis=1)
    assert figures["length_correlation"]["statistic"] == pytest.approx(
        sps.spearmanr(data["score"], lengths).statistic, abs=1e-12)
    assert figures["human_length_correlation"]["statistic"] == pytest.approx(
        sps.spearmanr(expert_mean, lengths).statistic, abs=1e-12)
    assert figures["length_correlation"]["statistic"] > figures["human_length_correlation"][
        "statistic"]
    assert figures["length_slope_human_adjusted"]["ci_low"] > 0


def _ceiling_store(tmp_path: Path) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """A judge named gpt-4 scoring 'gpt2' summaries and others: people give the others the top
    level far more often, and the judge never rates above the top, so an unstratified
    comparison makes the judge look partial to gpt2 while within levels it is not."""
    rng = np.random.default_rng(5)
    n = 240
    system = np.arange(n) % 4  # 0 = gpt2, 1-3 others
    human = np.where(system == 0, rng.choice([3, 4, 5], n, p=[0.3, 0.4, 0.3]),
                     rng.choice([3, 4, 5], n, p=[0.05, 0.1, 0.85]))
    judge = np.clip(human + rng.choice([-1, 0, 1], n, p=[0.2, 0.5, 0.3]), 1, 5)
    items, labels, verdicts = (tmp_path / f for f in ("i.jsonl", "l.jsonl", "v.jsonl"))
    names = ["gpt2", "bart", "pegasus", "t5"]
    items.write_text("".join(json.dumps({"id": f"x{i}", "input": f"doc {i // 4}",
                                         "response": "s" * (20 + i % 7),
                                         "model": names[system[i]]}) + "\n" for i in range(n)))
    labels.write_text("".join(json.dumps({"item_id": f"x{i}", "annotator": "expert1",
                                          "label": str(human[i])}) + "\n" for i in range(n)))
    verdicts.write_text("".join(json.dumps({"item_id": f"x{i}", "judge": "gpt-4-0314",
                                            "label": str(judge[i])}) + "\n" for i in range(n)))
    db = str(tmp_path / "judgekit.db")
    for args in (["import", str(items), "--name", "cnn", "--db", db],
                 ["labels", "import", str(labels), "--rubric", str(RUBRIC), "--db", db],
                 ["judgments", "import", str(verdicts), "--rubric", str(RUBRIC), "--db", db]):
        assert run_cli(*args)[0] == 0
    return db, system, human, judge


def test_self_preference_compares_families_within_levels_of_the_human_reference(
    tmp_path: Path,
) -> None:
    db, system, human, judge = _ceiling_store(tmp_path)
    report = report_json(db, "--max-self-preference", "1")
    probes = {p["probe"]: p for p in report["bias"]["probes"]}
    entry = probes["self_preference"]
    figures, details = entry["statistics"], entry["details"]
    above = judge > human
    own = system == 0
    plain = above[own].mean() - above[~own].mean()
    levels = [lv for lv in np.unique(human) if own[human == lv].any() and (~own)[human == lv].any()]
    weights = np.array([np.count_nonzero(own & (human == lv)) for lv in levels], dtype=float)
    within = np.array([above[own & (human == lv)].mean() - above[~own & (human == lv)].mean()
                       for lv in levels])
    assert figures["self_preference_unstratified"]["statistic"] == pytest.approx(plain)
    assert figures["self_preference"]["statistic"] == pytest.approx(
        float((weights * within).sum() / weights.sum()))
    assert plain > 0.1 > figures["self_preference"]["statistic"]
    assert details["stratified_by"] == "human reference level"
    assert details["n_strata"] == len(levels)
    assert details["own_family_models"] == {"gpt2": "prefix 'gpt'"}
    assert "by prefix 'gpt'" in details["family_from"]
    # --family-map keeps GPT-2 out of the judge's family: nothing left to compare, and the
    # probe asked for by giving the map cannot be computed: one line, exit 2
    mapping = tmp_path / "families.json"
    mapping.write_text(json.dumps({"gpt2": "gpt2"}))
    code, _, err = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--family-map",
                           str(mapping))
    assert code == 2
    assert "no compared response is from the judge's family 'gpt'" in err
    assert "families seen: gpt2, bart" in err
    mapping.write_text("[1, 2]")
    code, _, err = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--family-map",
                           str(mapping))
    assert code == 2 and "needs a JSON object of model name -> family" in err


def test_the_report_frame_has_a_row_per_level_figure(
    summeval: tuple[dict[str, np.ndarray], str],
) -> None:
    from judgekit.report import ReportOptions, build_report
    from judgekit.rubrics import load_rubric
    from judgekit.store import open_store

    _, db = summeval
    with open_store(db) as store:
        report = build_report(store, load_rubric(str(RUBRIC)),
                              ReportOptions(reference="mean", n_resamples=100))
    frame = report.to_frame()
    system = frame[frame["section"] == "level:system"]
    assert set(system["name"]) == {"spearman", "kendall_tau", "pearson", "pairwise_accuracy"}
    assert report.levels is not None
    assert float(system[system["name"] == "kendall_tau"]["statistic"].iloc[0]) == (
        report.levels.system["kendall_tau"].statistic)
