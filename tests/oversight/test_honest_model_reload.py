"""``dcops eval-oversight --norms --tune`` rewrites the honest model and the thresholds and then measures the
monitor in the same process (``dcops.evaluation.oversight_calibration``, steps 1 to 3): the measurement must
read the new files, and so must everything derived from the honest model (the posterior's honest probability
of each stated level), not what was loaded before the rewrite."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dcops.cluster.job_types import JOB_TYPES
from dcops.evaluation import oversight_calibration
from dcops.oversight import honest_model as hm
from dcops.oversight.posterior import honest_priority_probs


@pytest.fixture
def shipped_files_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The honest model and threshold files moved to ``tmp_path`` (copies of the shipped ones); afterwards the
    shipped paths are back and every cache reloads from them."""
    for name in ("NORMS_PATH", "THRESHOLDS_PATH"):
        copy = tmp_path / getattr(hm, name).name
        copy.write_text(getattr(hm, name).read_text())
        monkeypatch.setattr(hm, name, copy)
    yield tmp_path
    monkeypatch.undo()
    for cached in (hm.honest_model, hm.thresholds, honest_priority_probs):
        cached.cache_clear()


def test_eval_oversight_measures_with_the_norms_and_thresholds_it_has_just_written(
    shipped_files_elsewhere: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = hm.honest_model(), hm.thresholds(), honest_priority_probs()  # loaded (and kept) before the rewrite
    new_model = dataclasses.replace(before[0], overstate_rate=0.2)
    assert before[0].overstate_rate != 0.2
    new_limits = {**before[1].as_dict(), "priority_inflation": before[1].priority_inflation + 1.0}
    seen: dict[str, Any] = {}

    def report(*_: Any) -> tuple[str, dict[str, Any]]:
        seen.update(model=hm.honest_model(), limits=hm.thresholds(), probs=honest_priority_probs())
        return "", {}

    monkeypatch.setattr(oversight_calibration, "simulate_honest_model", lambda: new_model)
    monkeypatch.setattr(oversight_calibration, "tune_thresholds", lambda: new_limits)
    monkeypatch.setattr(oversight_calibration, "report", report)
    args = argparse.Namespace(norms=True, tune=True, seeds=1, out=str(shipped_files_elsewhere / "out"))
    assert oversight_calibration._run(args) == 0

    assert json.loads(hm.NORMS_PATH.read_text())["overstate_rate"] == 0.2
    assert seen["model"] == new_model
    assert seen["limits"].priority_inflation == before[1].priority_inflation + 1.0
    # P(stated j | type) through the one-level slip at the new rate r = 0.2 (posterior module docstring)
    for job in JOB_TYPES:
        stated = [0.0] * 4
        for true_level, p in enumerate(job.priority_probs):
            stated[true_level] += p * (1.0 - 2.0 * 0.2)
            stated[max(true_level - 1, 0)] += p * 0.2
            stated[min(true_level + 1, 3)] += p * 0.2
        assert seen["probs"][job.name] == pytest.approx(tuple(stated), abs=1e-15)
