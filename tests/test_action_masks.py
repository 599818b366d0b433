"""One action-mask convention everywhere (``dcops.registry``, **Action masks**): a 1-D int8 ``action_mask`` with
one entry per logit, in the observation (a ``Dict``) or else the info, which the action space samples with; the
masked single-agent tasks' ``action_masks()`` is the same as bool, so sb3-contrib's ``MaskablePPO`` trains on
them as made (``gymnasium.make`` or ``dcops.make_env``), with no ``ActionMasker`` wrapper."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import dcops
from dcops import datacenter_ops_v1
from dcops.cluster.decisions import SlotDecisions

MASKED = ["cluster/operations", "queue/weighted_tardiness", *[t for t in dcops.tasks() if t.startswith("placement/")]]


def _published(obs, info) -> np.ndarray:
    """The mask where the convention puts it: the observation if it is a dict, else the info."""
    return obs["action_mask"] if isinstance(obs, dict) else info["action_mask"]


def _expected_mask(task: str, obs, info) -> np.ndarray:
    """The mask as the task already publishes it (observation or info)."""
    return _published(obs, info).astype(bool)


def _mask_size(space: gym.Space) -> int:
    return int(np.sum(space.nvec)) if isinstance(space, gym.spaces.MultiDiscrete) else int(space.n)


def test_the_masked_tasks_are_every_registered_task_with_action_masks():
    assert sorted(t for t in dcops.tasks() if hasattr(dcops.make_env(t).unwrapped, "action_masks")) == sorted(MASKED)


def _check_convention(space: gym.Space, mask: np.ndarray) -> None:
    assert isinstance(mask, np.ndarray) and mask.dtype == np.int8 and mask.ndim == 1
    assert mask.shape == (_mask_size(space),) and set(np.unique(mask)) <= {0, 1}
    for _ in range(5):  # the space samples with the mask, and only what it allows
        action = np.atleast_1d(space.sample(mask))
        offsets = np.concatenate([[0], np.cumsum(space.nvec)[:-1]]) if isinstance(space, gym.spaces.MultiDiscrete) else 0
        assert mask[offsets + action].all()


@pytest.mark.parametrize("task", MASKED)
def test_every_masked_task_publishes_one_int8_entry_per_logit_and_action_masks_is_it_as_bool(task):
    env = dcops.make_env(task)
    obs, info = env.reset(seed=0)
    for _ in range(3):
        mask = _published(obs, info)
        _check_convention(env.action_space, mask)
        np.testing.assert_array_equal(env.action_masks(), mask.astype(bool))
        obs, _, terminated, truncated, info = env.step(env.action_space.sample(mask))
        if terminated or truncated:
            obs, info = env.reset(seed=1)


@pytest.mark.parametrize("config", [{}, {"team_kinds": ("cooperative", "learner"), "cooling": "agent"}],
                         ids=["default", "learner_and_cooling_agent"])
def test_the_multi_agent_scheduler_follows_the_same_convention(config):
    env = datacenter_ops_v1.parallel_env(n_windows=3, **config)
    observations, infos = env.reset(seed=2)
    space = env.action_space("scheduler")
    assert isinstance(space, gym.spaces.MultiDiscrete)
    while env.agents:
        mask = observations["scheduler"]["action_mask"]
        _check_convention(space, mask)
        slots = mask.reshape(env.config.max_slots, -1)  # slot after slot: entry slot · A + code
        assert slots[:, 0].all() and (slots[:, 1] == observations["scheduler"]["request_mask"]).all()
        actions = {a: env.action_space(a).sample() for a in env.agents if a != "scheduler"}
        observations, _, _, _, infos = env.step({**actions, "scheduler": space.sample(mask)})
        assert infos["scheduler"]["invalid"]["count"] == 0  # a masked sample is always a valid decision


def test_the_scheduler_action_space_is_a_multidiscrete_that_also_takes_the_flat_mask():
    space = SlotDecisions(np.full(3, 4))
    mask = np.array([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1], dtype=np.int8)
    space.seed(0)
    assert all(list(space.sample(mask)) in ([0, 1, 3], [0, 2, 3]) for _ in range(20))
    per_slot = tuple(np.split(mask, 3))  # Gymnasium's own form still works
    assert space.sample(per_slot)[0] == 0
    for wrong in (mask[:-1], np.concatenate([mask, [1]]).astype(np.int8)):  # one entry too few, one too many
        with pytest.raises(ValueError, match="mask: .* 12 entries"):
            space.sample(wrong)
    with pytest.raises(ValueError, match="mask: int8 zeros and ones"):
        space.sample(mask.astype(np.float32))
    with pytest.raises(ValueError, match="mask: int8 zeros and ones"):
        space.sample(mask * 2)
    clone = pickle.loads(pickle.dumps(space))
    assert type(clone) is SlotDecisions and clone == space == gym.spaces.MultiDiscrete(np.full(3, 4))
    assert gym.spaces.flatten_space(space) == gym.spaces.flatten_space(gym.spaces.MultiDiscrete(np.full(3, 4)))
    assert gym.spaces.flatten(space, np.array([0, 1, 3])).shape == (12,)


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
