"""The masked single-agent tasks expose ``action_masks()``, so sb3-contrib's ``MaskablePPO`` trains on them as
made (``gymnasium.make`` or ``dcops.make_env``), with no ``ActionMasker`` wrapper."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dcops

MASKED = ["cluster/operations", "queue/weighted_tardiness", *[t for t in dcops.tasks() if t.startswith("placement/")]]


def _expected_mask(task: str, obs, info) -> np.ndarray:
    """The mask as the task already publishes it (observation or info)."""
    if task == "cluster/operations":
        return obs["decision_mask"].reshape(-1).astype(bool)
    if task == "queue/weighted_tardiness":
        return obs["action_mask"].astype(bool)
    return info["action_mask"].astype(bool)


def _mask_size(space: gym.Space) -> int:
    return int(np.sum(space.nvec)) if isinstance(space, gym.spaces.MultiDiscrete) else int(space.n)


@pytest.mark.parametrize("task", MASKED)
def test_action_masks_is_the_published_mask_in_maskable_ppos_form(task):
    env = dcops.make_env(task)
    if task == "cluster/operations":
        with pytest.raises(RuntimeError, match="reset"):
            env.action_masks()
    obs, info = env.reset(seed=0)
    for _ in range(4):
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (_mask_size(env.action_space),)
        np.testing.assert_array_equal(mask, _expected_mask(task, obs, info))
        if isinstance(env.action_space, gym.spaces.MultiDiscrete):  # every sub-action has a valid choice
            assert all(row.any() for row in np.split(mask, np.cumsum(env.action_space.nvec)[:-1]))
        else:
            assert mask.any()
        action = (np.zeros(env.action_space.shape, np.int64) if isinstance(env.action_space, gym.spaces.MultiDiscrete)
                  else int(np.flatnonzero(mask)[0]))  # the first valid action
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset(seed=1)


@pytest.mark.parametrize("task", MASKED)
def test_maskable_ppo_learns_on_the_task_as_gymnasium_makes_it(task, tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from dcops.training.sb3_logging import sb3_logger

    env = gym.make(dcops.gym_id(task))
    policy = "MultiInputPolicy" if isinstance(env.observation_space, gym.spaces.Dict) else "MlpPolicy"
    model = MaskablePPO(policy, env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32]})
    model.set_logger(sb3_logger(None, "masks"))
    model.learn(128)
    assert model.num_timesteps == 128
    obs, _ = env.reset(seed=2)
    mask = env.get_wrapper_attr("action_masks")()
    action, _ = model.predict(obs, action_masks=mask, deterministic=True)
    chosen = np.atleast_1d(action)
    if isinstance(env.action_space, gym.spaces.MultiDiscrete):
        offsets = np.concatenate([[0], np.cumsum(env.action_space.nvec)[:-1]])
        assert mask[offsets + chosen].all()
    else:
        assert mask[int(chosen[0])]
