"""``judgekit agree`` on a ``labels export`` file and straight from the store."""

from __future__ import annotations

import json
from pathlib import Path

from judgekit import stats
from judgekit.store import Store
from judgekit.types import ADJUDICATED_SOURCE, Label
from tests.support.annotate import RUBRIC_TEXT, make_items, rubric, run_cli

A = ["pass", "fail", "pass", "pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail", "pass"]
B = ["pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail", "pass", "fail", "fail", "pass"]



def seed(store: Store, tmp_path: Path) -> Path:
    rub = rubric("binary")
    store.import_items("d", make_items("binary", len(A)))
    store.save_rubric(rub)
    ids = [f"item-{i:03d}" for i in range(len(A))]
    store.add_labels([Label("d", i, rub.sha256, "ann", a) for i, a in zip(ids, A, strict=True)])
    store.add_labels([Label("d", i, rub.sha256, "bea", b) for i, b in zip(ids, B, strict=True)])
    # not raters: a label given with the judge shown, an adjudication, a skip
    store.add_labels([
        Label("d", ids[0], rub.sha256, "cyd", "fail", blind=False),
        Label("d", ids[2], rub.sha256, "lead", "pass", source=ADJUDICATED_SOURCE),
        Label("d", ids[3], rub.sha256, "dan", None, seconds=1.0),
    ])
    path = tmp_path / "binary.toml"
    path.write_text(RUBRIC_TEXT["binary"])
    return path


def test_agree_reads_a_labels_export(tmp_path: Path, tmp_db: Store) -> None:
    rubric_path = seed(tmp_db, tmp_path)
    exported = tmp_path / "labels.csv"
    code, _ = run_cli("labels", "export", "--rubric", str(rubric_path), "--db", str(tmp_db.path),
                  "--format", "csv", "--out", str(exported))
    assert code == 0
    code, output = run_cli("agree", str(exported), "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    # the unblinded rater cyd counts here (the file says nothing of blindness to agree);
    # the adjudication and the skip do not
    pairs = {(p["rater_a"], p["rater_b"]) for p in data["pairwise_cohen_kappa"]["pairs"]}
    assert ("ann", "bea") in pairs and not any("lead" in p or "dan" in p for p in pairs)
    kappa = stats.cohen_kappa(A, B, labels=["pass", "fail"])
    ann_bea = next(p for p in data["pairwise_cohen_kappa"]["pairs"]
                   if (p["rater_a"], p["rater_b"]) == ("ann", "bea"))
    assert abs(ann_bea["statistic"] - kappa.statistic) < 1e-12


def test_agree_reads_the_store(tmp_path: Path, tmp_db: Store) -> None:
    rubric_path = seed(tmp_db, tmp_path)
    args = ["agree", "--rubric", str(rubric_path), "--db", str(tmp_db.path), "--format", "json"]
    code, output = run_cli(*args)
    assert code == 0, output
    data = json.loads(output)
    assert data["n_raters"] == 2 and data["n_ratings"] == 2 * len(A)  # blind labels only
    alpha = stats.krippendorff_alpha([A, B], level="nominal")
    assert abs(data["krippendorff_alpha"]["statistic"] - alpha.statistic) < 1e-12
    code, output = run_cli(*args, "--include-unblinded")
    assert json.loads(output)["n_raters"] == 3
    code, output = run_cli("agree", "--rubric", str(rubric_path), "--db", str(tmp_path / "x.db"))
    assert code == 2 and "no store at" in output and not (tmp_path / "x.db").exists()
    code, output = run_cli("agree")
    assert code == 2 and "ratings FILE or --rubric" in output
