"""The three levels of agreement checked against the field's own scripts, run unmodified.

SummEval's expert annotations and G-Eval's result files cannot be read here (the public
repositories keep them as large files outside git), so the study is synthesised with SummEval's
shape: 16 systems x 100 documents, three experts rating 1-5 on one criterion, and a judge whose
score is the mean of two sampled answers (half points, as G-Eval's averaged or
probability-weighted scores have) beside its integer label. The same numbers go through
judgekit's CLI and through:

- **per document**: G-Eval's ``meta_eval_summeval.py`` (tests/fixtures/geval/, MIT), run as a
  subprocess on the JSON layout it reads; its printed table (4 decimals) is parsed. The same
  figures come to full precision from mt-metrics-eval's ``AverageCorrelation`` averaged by item
  (tests/fixtures/mt-metrics-eval/, Apache-2.0);
- **system level**: mt-metrics-eval's ``Correlation`` on per-system mean scores (Kendall tau-b,
  Spearman, Pearson) and its ``Agreement`` (Kocmi et al. 2021's pairwise accuracy);
- **item level**: ``scipy.stats.spearmanr`` of the judge's score against the experts' mean.

Each check would fail on the lower-median reference or on the judge's integer labels, which
give other figures on these data.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = ROOT / "rubrics" / "helpfulness.toml"
GEVAL_SCRIPT = ROOT / "tests" / "fixtures" / "geval" / "meta_eval_summeval.py"
MTME_DIR = ROOT / "tests" / "fixtures" / "mt-metrics-eval"
#: git blob ids of the copies at the commits their READMEs name: the copies stay unmodified
UPSTREAM_BLOBS = {
    "geval/meta_eval_summeval.py": "dc6a7415f2ebc6c03d474fa3db3b95368fbd5c5d",
    "geval/LICENSE": "18135ae8ca7894f95dd82e7b4f23b0e5bf9110e0",
    "mt-metrics-eval/mt_metrics_eval/__init__.py": "312ea45df96db7eefe4775a304d7741dc598996d",
    "mt-metrics-eval/mt_metrics_eval/stats.py": "2ae7105da05bb4560daae4c4440d0bd008f4639f",
    "mt-metrics-eval/mt_metrics_eval/pce.py": "cb880d72679d9b923af2f03a36e0c745bab8b92e",
    "mt-metrics-eval/mt_metrics_eval/tau_optimization.py":
        "e7312be431aa6bcf9a35f1e5a79a92464eb79dc6",
    "mt-metrics-eval/LICENSE": "d645695673349e3947e8e5ae42332d0ac3164cd7",
}
N_SYSTEMS, N_DOCS, EXPERTS = 16, 100, ("expert1", "expert2", "expert3")
DIMENSION = "coherence"


def summeval_study(seed: int = 2023) -> dict[str, Any]:
    """Documents x systems, three experts 1-5, a judge answering twice per summary.

    Document 0's summaries all get the same judge score and document 1's the same expert
    scores, so both scripts' rule for documents where one side is constant is exercised.
    The last system's judge answers copy the one before's, so two systems tie on the judge's
    mean while people tell them apart: the one case where pairwise-accuracy conventions part.
    """
    rng = np.random.default_rng(seed)
    quality = np.linspace(-1.5, 1.5, N_SYSTEMS)
    doc = np.repeat(np.arange(N_DOCS), N_SYSTEMS)
    system = np.tile(np.arange(N_SYSTEMS), N_DOCS)
    latent = 3.1 + quality[system] + rng.normal(0, 0.9, doc.size)
    experts = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.6, (doc.size, 3))), 1, 5)
    answers = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (doc.size, 2))), 1, 5)
    answers[doc == 0] = 4
    experts[doc == 1] = 3
    last = system == N_SYSTEMS - 1
    answers[last] = answers[system == N_SYSTEMS - 2]
    answers = answers.astype(int)
    experts = experts.astype(int)
    # as meta_eval_summeval.py computes them: the mean of the parsed answers, and the
    # "scores" field of summeval.json, which is the experts' mean
    score = np.array([sum(float(a) for a in row) / len(row) for row in answers])
    human = np.array([sum(int(e) for e in row) / len(row) for row in experts])
    label = np.floor(score + 0.5).astype(int)  # 3.5 -> 4
    return {"doc": doc, "system": system, "experts": experts, "answers": answers,
            "score": score, "human": human, "label": label}


def write_geval_results(path: Path, study: dict[str, Any]) -> None:
    """The layout of G-Eval's results/gpt4_*_detailed.json: one object per summary."""
    rows = [{"doc_id": f"cnndm-{study['doc'][i]:03d}", "system_id": f"M{study['system'][i]}",
             "all_responses": [str(a) for a in study["answers"][i]],
             "scores": {DIMENSION: float(study["human"][i])}}
            for i in range(study["doc"].size)]
    path.write_text(json.dumps(rows))


def run_geval(path: Path) -> dict[str, float]:
    """G-Eval's script as its README runs it; its table's Pearson, Spearman and Kendall."""
    done = subprocess.run([sys.executable, str(GEVAL_SCRIPT), "--input_fp", str(path),
                           "--dimension", DIMENSION], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert f"len(pred_scores): {N_DOCS}" in done.stdout
    header = re.search(r"\|\s*Pearson\s*\|\s*Spearman\s*\|\s*Kendall\s*\|", done.stdout)
    assert header, done.stdout
    row = re.search(r"\|\s*(-?[\d.]+)\s*\|\s*(-?[\d.]+)\s*\|\s*(-?[\d.]+)\s*\|",
                    done.stdout[header.end():])
    assert row, done.stdout
    return dict(zip(("pearson", "spearman", "kendall_tau"), map(float, row.groups()),
                    strict=True))


def mt_metrics_eval() -> ModuleType:
    """mt-metrics-eval's stats module from its vendored, unmodified copy."""
    sys.path.insert(0, str(MTME_DIR))
    try:
        return importlib.import_module("mt_metrics_eval.stats")
    finally:
        sys.path.remove(str(MTME_DIR))


def write_store(tmp: Path, study: dict[str, Any]) -> str:
    db = str(tmp / "judgekit.db")
    items, labels, verdicts = (tmp / n for n in ("items.jsonl", "labels.jsonl", "verdicts.jsonl"))
    with items.open("w") as fi, labels.open("w") as fl, verdicts.open("w") as fv:
        for i in range(study["doc"].size):
            item_id = f"d{study['doc'][i]:03d}-M{study['system'][i]}"
            fi.write(json.dumps({"id": item_id, "input": f"Article {study['doc'][i]}.",
                                 "response": f"summary {i}", "model": f"M{study['system'][i]}",
                                 "doc_id": f"cnndm-{study['doc'][i]:03d}"}) + "\n")
            for name, value in zip(EXPERTS, study["experts"][i], strict=True):
                fl.write(json.dumps({"item_id": item_id, "annotator": name,
                                     "label": str(value)}) + "\n")
            fv.write(json.dumps({"item_id": item_id, "judge": "geval-gpt4",
                                 "label": str(study["label"][i]),
                                 "score": float(study["score"][i])}) + "\n")
    for args in (["import", str(items), "--name", "summeval", "--db", db],
                 ["labels", "import", str(labels), "--rubric", str(RUBRIC), "--db", db],
                 ["judgments", "import", str(verdicts), "--rubric", str(RUBRIC), "--db", db]):
        code, out, err = run_cli(*args)
        assert code == 0, (args, out, err)
    return db


def report(db: str, reference: str) -> dict[str, Any]:
    code, out, err = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--format", "json",
                             "--reference", reference, "--group-by", "doc_id",
                             "--resamples", "100")
    assert code in (0, 1, 3), err
    return json.loads(out)


@pytest.fixture(scope="module")
def study_and_reports(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("geval")
    study = summeval_study()
    db = write_store(tmp, study)
    results = tmp / "gpt4_coh_detailed.json"
    write_geval_results(results, study)
    return study, report(db, "mean"), report(db, "median"), results


def by_system(study: dict[str, Any], values: np.ndarray) -> list[float]:
    """A system-major vector (each system's scores over the documents), as mt-metrics-eval
    lays out segment scores."""
    order = np.lexsort((study["doc"], study["system"]))
    return [float(v) for v in values[order]]


def test_per_document_figures_equal_geval_meta_eval_summeval(
    study_and_reports: tuple[dict[str, Any], dict[str, Any], dict[str, Any], Path],
) -> None:
    study, mean, median, results = study_and_reports
    printed = run_geval(results)
    group = mean["levels"]["per_group"]
    assert group["group_by"] == "doc_id" and group["n_groups"] == N_DOCS
    # documents 0 (judge constant) and 1 (experts constant) are skipped, as the script skips
    assert group["n_groups_used"] == N_DOCS - 2
    ours = {name: group["statistics"][name]["statistic"] for name in printed}
    for name, value in printed.items():
        assert ours[name] == pytest.approx(value, abs=5.1e-5), name
    # the same figures to full precision from mt-metrics-eval, averaged over documents
    mtme = mt_metrics_eval()
    gold, metric = by_system(study, study["human"]), by_system(study, study["score"])
    corr = mtme.Correlation(N_SYSTEMS, gold, metric)
    full = {"pearson": corr.Pearson(average_by="item"),
            "spearman": corr.Spearman(average_by="item"),
            "kendall_tau": corr.Kendall(average_by="item")}
    for name, (value, _pvalue, n_used) in full.items():
        assert n_used == N_DOCS - 2
        assert ours[name] == pytest.approx(value, abs=1e-12), name
        assert round(value, 4) == pytest.approx(printed[name], abs=1e-12)
    # the check can fail: the lower-median reference gives other per-document figures
    other = median["levels"]["per_group"]["statistics"]
    assert abs(other["spearman"]["statistic"] - printed["spearman"]) > 0.01


def test_system_level_equals_mt_metrics_eval_on_per_system_means(
    study_and_reports: tuple[dict[str, Any], dict[str, Any], dict[str, Any], Path],
) -> None:
    study, mean, _, _ = study_and_reports
    system = mean["levels"]["system"]
    names = [f"M{s}" for s in range(N_SYSTEMS)]
    rows = {row["name"]: row for row in system["systems"]}
    assert sorted(rows) == sorted(names) and system["n_pairs"] == 120
    judge_means = [float(np.mean(study["score"][study["system"] == s])) for s in range(N_SYSTEMS)]
    human_means = [float(np.mean(study["human"][study["system"] == s])) for s in range(N_SYSTEMS)]
    for s, name in enumerate(names):
        assert rows[name]["judge_mean"] == pytest.approx(judge_means[s], abs=1e-12)
        assert rows[name]["human_mean"] == pytest.approx(human_means[s], abs=1e-12)
    mtme = mt_metrics_eval()
    corr = mtme.Correlation(N_SYSTEMS, human_means, judge_means)
    figures = system["statistics"]
    assert figures["kendall_tau"]["statistic"] == pytest.approx(corr.Kendall()[0], abs=1e-12)
    assert figures["spearman"]["statistic"] == pytest.approx(corr.Spearman()[0], abs=1e-12)
    assert figures["pearson"]["statistic"] == pytest.approx(corr.Pearson()[0], abs=1e-9)
    # pairwise accuracy: Kocmi et al.'s Agreement counts a pair ordered alike (or tied on
    # both sides) as 1 and anything else as 0; judgekit counts a pair tied on one side
    # only as 0.5. The study has exactly one such pair (the copied judge answers).
    agree, n_pairs = mtme.Agreement(human_means, judge_means)
    assert n_pairs == 120
    one_sided = sum(
        (judge_means[a] == judge_means[b]) != (human_means[a] == human_means[b])
        for a in range(N_SYSTEMS) for b in range(a + 1, N_SYSTEMS))
    assert one_sided == 1
    accuracy = figures["pairwise_accuracy"]["statistic"]
    assert accuracy == pytest.approx((agree + 0.5 * one_sided) / n_pairs, abs=1e-12)
    assert accuracy != pytest.approx(agree / n_pairs)
    # the report names the pair and gives the published count beside its own
    assert system["n_pairs_one_sided_tie"] == one_sided
    db = str(study_and_reports[3].parent / "judgekit.db")
    _, text, _ = run_cli("report", "--rubric", str(RUBRIC), "--db", db, "--reference", "mean",
                         "--group-by", "doc_id", "--resamples", "100")
    assert (f"({accuracy * n_pairs:g} of 120 system pairs ordered as people order them; 1 pair "
            f"ties on one side only and counts half (Kocmi et al. 2021 count such a pair 0: "
            f"{agree:g} of 120)") in " ".join(text.split())
    # Deutsch et al. (2023)'s tie-calibrated accuracy counts the same way as Agreement
    assert corr.KendallVariants(variant="acc23")[0] == pytest.approx(agree / n_pairs, abs=1e-12)
    # the check can fail: with the judge's tie, Stuart's tau-c is another figure
    assert abs(corr.Kendall(variant="c")[0] - corr.Kendall()[0]) > 1e-4


def test_item_level_spearman_keeps_half_points_against_the_experts_mean(
    study_and_reports: tuple[dict[str, Any], dict[str, Any], dict[str, Any], Path],
) -> None:
    study, mean, median, _ = study_and_reports
    expected = sps.spearmanr(study["score"], study["human"]).statistic
    stats = mean["agreement"]["statistics"]
    assert mean["agreement"]["reference_rule"] == "mean"
    assert mean["agreement"]["judge_scored_items"] == int(np.count_nonzero(
        study["score"] != study["label"]))
    assert stats["spearman"]["statistic"] == pytest.approx(expected, abs=1e-12)
    # the check can fail: integer labels, or the lower-median reference, give other figures
    with_labels = sps.spearmanr(study["label"], study["human"]).statistic
    assert abs(with_labels - expected) > 1e-3
    assert abs(median["agreement"]["statistics"]["spearman"]["statistic"] - expected) > 1e-3


def test_the_copies_are_the_upstream_files_unmodified() -> None:
    fixtures = ROOT / "tests" / "fixtures"
    for name, blob in UPSTREAM_BLOBS.items():
        data = (fixtures / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name
