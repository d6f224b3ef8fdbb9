"""Agreement levels on real human ratings: SQuALITY's 300 summaries (../shared/data).

20 stories x 5 questions x 3 systems (bart, bart-dpr, human), each summary rated 0-100 by three
of four workers. An ordinal rubric holds at most 10 levels, so ratings are binned to 1-10
(rating // 10 + 1, 100 -> 10). The "judge" is the alphabetically first worker of each summary
(an informative, imperfect rater; worker_2's verdicts are reported), the human reference the mean
of all three (``--reference mean``); every figure is checked against scipy on the same numbers.
Groups are the (story, question) pairs: each holds the three systems' answers to one question.
The system order matches the upstream README's mean overall ratings (bart 18.1 < bart-dpr 27.9 <
human 91.3).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from tests.support.cli import run_cli
from tests.support.shared_data import SHARED_DATA

SOURCE = SHARED_DATA / "squality_human_eval" / "squality_human_eval.jsonl"
pytestmark = pytest.mark.shared_data
PUBLISHED = {"bart": 18.1, "bart-dpr": 27.9, "human": 91.3}


def binned(rating: int) -> int:
    return min(10, rating // 10 + 1)


def rubric_text() -> str:
    levels = "\n".join(f'"{v}" = "Ratings {10 * v - 10} to {10 * v - 1}."' for v in range(1, 11))
    return ("name = \"squality-overall\"\nversion = \"1\"\n[scale]\nkind = \"ordinal\"\nmin = 1\n"
            f"max = 10\n[scale.levels]\n{levels}\n[prompt]\n"
            "user = \"Question: {input}\\n\\nAnswer: {response}\\n\\n{scale}\"\n")


def test_system_means_reproduce_the_published_ratings(tmp_path: Path) -> None:
    if not SOURCE.exists():
        pytest.skip("../shared/data/squality_human_eval is absent")
    rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]
    rubric = tmp_path / "squality.toml"
    rubric.write_text(rubric_text())
    items, labels, verdicts = (tmp_path / n for n in ("i.jsonl", "l.jsonl", "v.jsonl"))
    judge, human, system, group = [], [], [], []
    with items.open("w") as fi, labels.open("w") as fl, verdicts.open("w") as fv:
        for row in rows:
            meta = row["meta"]
            question = f"{meta['passage_id']}-{meta['question_index']}"
            fi.write(json.dumps({"id": row["id"], "input": row["input"],
                                 "response": row["response"], "model": meta["system"],
                                 "question": question}) + "\n")
            ratings = sorted((h["annotator"], binned(int(h["label"])))
                             for h in row["human_labels"])
            for name, value in ratings:
                fl.write(json.dumps({"item_id": row["id"], "annotator": name,
                                     "label": str(value)}) + "\n")
            fv.write(json.dumps({"item_id": row["id"], "judge": ratings[0][0],
                                 "label": str(ratings[0][1])}) + "\n")
            judge.append(float(ratings[0][1]))
            human.append(float(np.mean([v for _, v in ratings])))
            system.append(meta["system"])
            group.append(question)
    db = str(tmp_path / "judgekit.db")
    for args in (["import", str(items), "--name", "squality", "--db", db],
                 ["labels", "import", str(labels), "--rubric", str(rubric), "--db", db],
                 ["judgments", "import", str(verdicts), "--rubric", str(rubric), "--db", db]):
        code, _, err = run_cli(*args)
        assert code == 0, err
    # several "judges" (one per worker name): take the most common one's verdicts
    code, out, err = run_cli("report", "--rubric", str(rubric), "--db", db, "--format", "json",
                             "--reference", "mean", "--group-by", "question", "--model",
                             "worker_2", "--resamples", "300")
    assert code in (0, 1, 3), err
    data = json.loads(out)
    keep = np.array([j == "worker_2" for j in (json.loads(line)["judge"] for line in
                                               verdicts.read_text().splitlines())])
    judge_a, human_a = np.array(judge)[keep], np.array(human)[keep]
    system_a, group_a = np.array(system)[keep], np.array(group)[keep]
    levels = data["levels"]
    rows_by = {r["name"]: r for r in levels["system"]["systems"]}
    for name in PUBLISHED:
        assert rows_by[name]["human_mean"] == pytest.approx(human_a[system_a == name].mean())
        assert rows_by[name]["judge_mean"] == pytest.approx(judge_a[system_a == name].mean())
    # the systems are ordered as the published mean ratings order them
    order = sorted(PUBLISHED, key=PUBLISHED.__getitem__)
    assert sorted(rows_by, key=lambda n: rows_by[n]["human_mean"]) == order
    assert levels["system"]["statistics"]["kendall_tau"]["statistic"] == pytest.approx(
        sps.kendalltau([rows_by[n]["judge_mean"] for n in order],
                       [rows_by[n]["human_mean"] for n in order]).statistic, abs=1e-12)
    # item level and per question, against scipy
    stats = data["agreement"]["statistics"]
    assert stats["spearman"]["statistic"] == pytest.approx(
        sps.spearmanr(judge_a, human_a).statistic, abs=1e-12)
    per_group = []
    for g in sorted(set(group_a)):
        j, h = judge_a[group_a == g], human_a[group_a == g]
        if len(j) > 1 and len(set(j)) > 1 and len(set(h)) > 1:
            per_group.append(sps.spearmanr(j, h).statistic)
    assert levels["per_group"]["statistics"]["spearman"]["statistic"] == pytest.approx(
        float(np.mean(per_group)), abs=1e-12)
    assert levels["per_group"]["n_groups_used"] == len(per_group)
