"""The SuperSuit + SB3 parameter-sharing example: learner teams share one PPO policy, the scheduler is scripted."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("supersuit")
pytest.importorskip("stable_baselines3")

from dcops.training.marl.env import RoleEnv  # noqa: E402
from dcops.training.marl.supersuit import team_vec_env  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "supersuit_sb3_teams.py"
KINDS = ("cooperative", "strategic", "learner", "learner")


def test_team_vec_env_has_one_slot_per_learner_team_and_steps():
    venv = team_vec_env(n_envs=3, n_windows=2, team_kinds=KINDS)
    assert venv.num_envs == 3 * 2
    venv.seed(5)
    obs = venv.reset()
    assert obs.shape == (6, 16) and np.all(np.isfinite(obs))
    dones_seen = 0
    for _ in range(4):  # two windows per episode: two full episodes, with the vector env's auto-reset
        actions = np.stack([venv.action_space.sample() for _ in range(venv.num_envs)])
        venv.step_async(actions)
        obs, rewards, dones, infos = venv.step_wait()
        assert obs.shape == (6, 16) and rewards.shape == (6,)
        assert np.all((rewards >= -1.0) & (rewards <= 1.0))  # a team's window reward is a bounded ratio
        dones_seen += int(dones.sum())
        assert {info["team"] for info in infos} <= {f"team_{i}" for i in range(4)}
    assert dones_seen == 2 * 6


def test_team_vec_env_refuses_a_learning_scheduler_or_no_learner_team():
    with pytest.raises(ValueError, match="scheduler"):
        team_vec_env(scheduler="learner", team_kinds=KINDS)
    with pytest.raises(ValueError, match="team_kinds"):
        team_vec_env(team_kinds=("cooperative", "strategic", "adaptive", "cooperative"))


def test_example_trains_a_shared_policy_with_finite_losses_and_valid_actions():
    example = runpy.run_path(str(EXAMPLE))
    run = example["train_teams"](timesteps=384, n_envs=2, n_windows=3, n_steps=32, eval_seeds=range(1000, 1002))
    assert run.n_envs == 2 * 2
    losses = {k: v for k, v in run.logged.items() if "loss" in k}
    assert {"train/policy_gradient_loss", "train/value_loss"} <= set(losses)
    assert all(math.isfinite(v) for v in losses.values())
    assert math.isfinite(run.before) and math.isfinite(run.after)
    env = RoleEnv(scheduler="priority_threshold", n_windows=3, team_kinds=KINDS)
    obs, _ = env.reset(seed=3)
    for agent in env.agents:
        action, _ = run.model.predict(obs[agent], deterministic=False)
        assert env.action_space(agent).contains(np.asarray(action, dtype=np.int64))
