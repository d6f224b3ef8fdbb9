"""The API passes ``reference=`` through to the report and the estimate, as the CLI does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from test_report_levels import summeval_like, write_store

from judgekit.store import open_store
from tests.support.serve import running_service, token


def test_report_and_estimate_take_the_reference(tmp_path: Path) -> None:
    data = summeval_like()
    db = Path(write_store(tmp_path, data))
    with open_store(db) as store:
        reader = token(store, "reader", "read")
    with running_service(db, tmp_path) as service:
        mean = service.get("/api/v1/report?rubric=helpfulness&reference=mean&resamples=200",
                           reader)
        assert mean.status_code == 200, mean.text
        agreement = mean.json()["agreement"]
        assert agreement["reference_rule"] == "mean"
        assert agreement["statistics"]["spearman"]["statistic"] == pytest.approx(
            sps.spearmanr(data["score"], data["experts"].mean(axis=1)).statistic, abs=1e-12)
        assert mean.json()["levels"]["system"]["n_systems"] == 8
        default = service.get("/api/v1/report?rubric=helpfulness&resamples=200", reader)
        assert default.json()["agreement"]["reference_rule"] == "median"
        estimate = service.get("/api/v1/estimate?rubric=helpfulness&reference=mean", reader)
        assert "--reference mean" in estimate.json()["reference"]
        assert estimate.json()["targets"][0]["labels_only"]["statistic"] == pytest.approx(
            float(np.mean(data["experts"])))
        bad = service.get("/api/v1/report?rubric=helpfulness&reference=average", reader)
        assert bad.status_code == 422
