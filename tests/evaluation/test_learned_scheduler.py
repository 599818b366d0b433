"""The learned scheduler ``ppo`` in the evaluation: found by name, fed the window's public observation, plays
whole episodes with no invalid action, and needs no torch."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import LEARNED, LearnedScheduler
from dcops.agents.schedulers.learned import SlotPolicy, shipped_policy
from dcops.evaluation.matrix import Cell
from dcops.evaluation.play import run_episode, scheduler_action
from dcops.evaluation.policies import baseline_names, make_policy, validate_scheduler
from dcops.evaluation.runner import run_cell

OBS_KEYS = {"requests", "request_mask", "action_mask", "cluster", "zones", "teams"}
KEY = "00112233445566778899aabbccddeeff"


def test_ppo_is_found_by_name_beside_the_baselines_but_not_among_the_default_rows(tmp_path):
    assert "ppo" in LEARNED
    assert validate_scheduler("ppo") == "ppo"
    assert validate_scheduler("ppo@runs/x/bc_scheduler.npz") == "ppo@runs/x/bc_scheduler.npz"
    with pytest.raises(ValueError, match="weights file"):
        validate_scheduler("ppo@")
    assert "ppo" not in baseline_names()  # the default matrix and the baselines' tables stay as published
    assert isinstance(make_policy("ppo"), LearnedScheduler)
    path = tmp_path / "other.npz"
    params = {k: v * 2.0 for k, v in shipped_policy().params.items()}
    SlotPolicy(params).save(path)
    other = make_policy(f"ppo@{path}")
    np.testing.assert_array_equal(other.policy.params["W1"], params["W1"])


@pytest.mark.parametrize(("mix", "condition"), [("one_strategic", "normal"), ("two_strategic", "oversubscribed")])
def test_ppo_plays_whole_evaluation_cells_with_no_invalid_action(mix, condition):
    row = run_cell(Cell("ppo", mix, condition, 0, game_version=1, seed_key=KEY))
    assert row["invalid_entries"] == 0
    assert row["policy_defaulted"] == 0
    assert row["invalid_rate"] == 0.0
    assert row["pending_decisions"] > 0
    assert -1.10 <= row["score"] <= 0.65


class _Recording(dict):
    """An observation dict that remembers which keys were read."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def test_ppo_decides_from_the_public_observation_alone():
    env = dcops.parallel_env(climate="leesburg", grid_region="PJM", faults=())
    observations, infos = env.reset(seed=3)
    scheduler = LearnedScheduler()
    while env.agents:
        observation = _Recording(observations["scheduler"])
        action = scheduler.decide(None, observation)  # no view at all: it is never read
        assert observation.read <= OBS_KEYS
        # What the evaluation hands it is this same observation, and the answer is the same.
        np.testing.assert_array_equal(scheduler_action(scheduler, infos["scheduler"]["view"],
                                                       observations["scheduler"]), action)
        mask = observations["scheduler"]["action_mask"].reshape(48, 6).astype(bool)
        assert mask[np.arange(48), action].all()
        observations, _, _, _, infos = env.step({"scheduler": action})
        assert infos["scheduler"]["invalid"]["count"] == 0


def test_view_reading_schedulers_are_still_asked_with_the_view_alone():
    class ViewOnly:
        def decide(self, view):
            return [{"request_id": r["request_id"], "decision": "REJECT"} for r in view["pending"]]

    summary = run_episode(ViewOnly(), 1, n_windows=2)
    assert summary["invalid_entries"] == 0


def test_the_ppo_scheduler_runs_without_torch():
    code = ("import sys, dcops\n"
            "from dcops.agents.schedulers import LEARNED\n"
            "from dcops.evaluation.play import run_episode\n"
            "s = run_episode(LEARNED['ppo'](), 0, n_windows=2)\n"
            "assert s['invalid_entries'] == 0, s['invalid_entries']\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_bad_weights_files_are_refused_naming_the_file_and_array(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        SlotPolicy.load(tmp_path / "absent.npz")
    np.savez(tmp_path / "other.npz", w0=np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"not a slot policy, arrays \['Wg'"):
        SlotPolicy.load(tmp_path / "other.npz")
    params = dict(shipped_policy().params)
    params["W2"] = params["W2"][:, :-1]  # one hidden unit short: the layers no longer chain
    np.savez(tmp_path / "cut.npz", **params)
    with pytest.raises(ValueError, match="array W2 has shape"):
        SlotPolicy.load(tmp_path / "cut.npz")
    with pytest.raises(ValueError, match="absent.npz"):  # what dcops eval calls before any cell
        make_policy(f"ppo@{tmp_path / 'absent.npz'}")
