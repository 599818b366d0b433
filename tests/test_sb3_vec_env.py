"""``dcops.make_sb3_vec_env``: a Stable-Baselines3 ``VecEnv`` over the tasks' Gymnasium ids, on which SB3's PPO
trains as on any registered Gymnasium environment."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dcops

sb3 = pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")


def test_the_sb3_vec_env_holds_monitored_gymnasium_envs_of_the_task_seeded_one_per_env():
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = dcops.make_sb3_vec_env("cluster/operations", 2, seed=7, n_windows=2, structured_view=False)
    assert isinstance(venv, DummyVecEnv) and venv.num_envs == 2
    assert all(isinstance(env, Monitor) and env.unwrapped.spec.id == dcops.gym_id("cluster/operations")
               for env in venv.envs)
    first = venv.reset()
    single = dcops.make_env("cluster/operations", n_windows=2, structured_view=False)
    for i in range(2):  # SB3 seeds env i with seed + i, as a single env reset with that seed
        obs, _ = single.reset(seed=7 + i)
        assert all(np.array_equal(first[key][i], obs[key]) for key in obs)
    actions = np.zeros((2, venv.action_space.shape[0]), dtype=np.int64)
    done = np.zeros(2, dtype=bool)
    for _ in range(2):
        _, rewards, done, infos = venv.step(actions)
        assert rewards.shape == (2,) and np.isfinite(rewards).all()
    assert done.all() and all("episode" in info and "terminal_observation" in info for info in infos)


def test_a_cooling_task_in_its_normalised_action_form():
    venv = dcops.make_sb3_vec_env("cooling/single_zone_recovery", 2, seed=0, normalized=True)
    assert venv.action_space.low.min() == -1.0 and venv.action_space.high.max() == 1.0
    venv.reset()
    _, rewards, _, _ = venv.step(np.zeros((2, venv.action_space.shape[0]), dtype=np.float32))
    assert np.isfinite(rewards).all()


def test_ppo_learns_on_it_for_a_few_hundred_steps():
    """Two PPO updates (2 envs x 128 steps) on cluster/operations: finite losses, a policy that moved, and the
    Monitor's finished episodes in SB3's episode buffer."""
    from stable_baselines3 import PPO

    from dcops.training.sb3_logging import sb3_logger

    torch.manual_seed(0)
    venv = dcops.make_sb3_vec_env("cluster/operations", 2, seed=0, n_windows=4, structured_view=False)
    model = PPO("MultiInputPolicy", venv, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu",
                policy_kwargs={"net_arch": [32]})
    model.set_logger(sb3_logger(None, "ppo"))  # no SB3-<date> folder in $TMPDIR
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    values = model.logger.name_to_value
    for key in ("train/policy_gradient_loss", "train/value_loss", "train/approx_kl", "train/entropy_loss"):
        assert math.isfinite(values[key]), key
    assert values["train/approx_kl"] > 0.0
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    assert len(model.ep_info_buffer) >= 2 * 256 // (2 * 4) - 2  # episodes of 4 windows, each env
    assert all(math.isfinite(info["r"]) and info["l"] == 4 for info in model.ep_info_buffer)
