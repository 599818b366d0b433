"""``dcops.remote_env.RemoteSchedulerEnv``: the scheduler's Gymnasium environment with its episodes on a real
server. Its spaces are the local ``SchedulerEnv``'s; over a whole episode its observations, rewards, masks and
ending equal the local environment's on the episode the server played (its private seed, which the tests'
operator knows), for the same codes; MaskablePPO trains on it; and bad use is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.env import SchedulerEnv
from dcops.remote_env import RemoteSchedulerEnv

OPTIONS = {"n_windows": 3, "cooling": "rule", "scenario": "adversarial"}


def _masked_codes(mask: np.ndarray, n_slots: int, rng: np.random.Generator) -> np.ndarray:
    """A valid code for every slot, at random among those the mask allows."""
    rows = mask.reshape(n_slots, -1)
    return np.array([rng.choice(np.flatnonzero(row)) for row in rows], dtype=np.int64)


def test_a_served_episode_is_the_local_one_step_for_step(live_server):
    remote = RemoteSchedulerEnv(live_server.url, **OPTIONS)
    local = SchedulerEnv(structured_view=False, **OPTIONS)
    assert remote.observation_space == local.observation_space and remote.action_space == local.action_space
    try:
        obs, _ = remote.reset(seed=11)
        expected, _ = local.reset(seed=live_server.env_seed(11))
        rng = np.random.default_rng(0)
        steps, terminated = 0, False
        while not terminated:
            assert remote.observation_space.contains(obs)
            for key in expected:
                np.testing.assert_array_equal(obs[key], expected[key], err_msg=f"step {steps} {key}")
            np.testing.assert_array_equal(remote.action_masks(), local.action_masks())
            codes = _masked_codes(remote.action_masks(), local.action_space.shape[0], rng)
            obs, reward, terminated, truncated, info = remote.step(codes)
            expected, expected_reward, expected_terminated, _, expected_info = local.step(codes)
            assert reward == expected_reward and terminated == expected_terminated and not truncated
            steps += 1
        assert steps == OPTIONS["n_windows"]
        assert info["episode"]["score"] == expected_info["episode"]["score"]
    finally:
        remote.close()


def test_maskable_ppo_trains_on_the_served_environment(live_server):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = RemoteSchedulerEnv(live_server.url, n_windows=2, cooling="rule")
    try:
        from dcops.training.sb3_logging import sb3_logger

        model = sb3_contrib.MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=8, n_epochs=1, seed=0)
        model.set_logger(sb3_logger(None, "remote"))  # no SB3-<date> folder in $TMPDIR
        model.learn(8)
        assert model.num_timesteps == 8
    finally:
        env.close()


def test_misuse_is_refused_by_name(live_server):
    with pytest.raises(ValueError, match="observation: "):
        RemoteSchedulerEnv(live_server.url, observation="full")
    env = RemoteSchedulerEnv(live_server.url, n_windows=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(env.action_space.shape, dtype=np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        env.action_masks()
    env.close()
