"""The learner-facing role view of ``datacenter_ops`` and the action-masking PPO module (no Ray cluster)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from dcops.training.marl.env import FLAT_KEYS, RoleEnv

KINDS = ("cooperative", "strategic", "learner", "learner")


def test_scripted_scheduler_view_passes_the_pettingzoo_api_test_and_exposes_only_learner_teams():
    env = RoleEnv(scheduler="priority_threshold", team_kinds=KINDS, n_windows=3)
    assert env.possible_agents == ["learner_0", "learner_1"]
    parallel_api_test(env, num_cycles=6)


def test_learners_are_the_environments_own_agents_and_rewards_are_theirs():
    env = RoleEnv(team_kinds=KINDS, n_windows=3)
    assert env.possible_agents == env.env.possible_agents == ["learner_0", "learner_1", "scheduler"]
    seen = set()
    for seed in range(6):
        _, infos = env.reset(seed=seed)
        inner_learners = list(env.env.learner_team.values())
        assert [infos[f"learner_{k}"]["team"] for k in range(2)] == inner_learners
        assert all(env.env.team_kind[team] == "learner" for team in inner_learners)
        seen.add(tuple(inner_learners))
    assert len(seen) > 1  # the team ids are shuffled over the kinds, the learner names are not
    with pytest.raises(ValueError, match="team ids are not agent names"):
        env.step({"scheduler": np.zeros(48, dtype=np.int64), inner_learners[0]: np.zeros(12, dtype=np.int64)})
    scripted = RoleEnv(scheduler="priority_threshold", team_kinds=KINDS, n_windows=3)
    scripted.reset(seed=0)
    with pytest.raises(ValueError, match="scheduler is scripted"):
        scripted.step({"scheduler": np.zeros(48, dtype=np.int64)})
    _, rewards, *_ = scripted.step({"learner_0": np.zeros(12, dtype=np.int64)})  # learner_1 states honestly
    assert set(rewards) == {"learner_0", "learner_1"}


def test_scheduler_observation_flattens_the_public_arrays_and_keeps_the_environments_int8_mask():
    env = RoleEnv(team_kinds=KINDS, n_windows=2)
    raw, _ = env.env.reset(seed=4)
    converted = env._scheduler_obs(raw["scheduler"])
    expected = np.concatenate([np.asarray(raw["scheduler"][k], dtype=np.float32).ravel() for k in FLAT_KEYS])
    np.testing.assert_array_equal(converted["observations"], expected)
    assert converted["action_mask"] is raw["scheduler"]["action_mask"] and converted["action_mask"].dtype == np.int8
    obs, _ = env.reset(seed=4)
    assert env.observation_space("scheduler").contains(obs["scheduler"])
    while env.agents:
        actions = {a: env.action_space(a).sample() for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        assert set(rewards) == {"scheduler", "learner_0", "learner_1"}
        assert -1.10 <= rewards["scheduler"] <= 0.65
        for agent, ob in obs.items():
            assert env.observation_space(agent).contains(ob), agent
    assert all(terms.values()) and not any(truncs.values())
    assert "episode_score" in infos["scheduler"]
    pickle.loads(pickle.dumps(env))


def test_role_env_rejects_what_it_cannot_serve():
    with pytest.raises(ValueError, match="cooling"):
        RoleEnv(cooling="agent")
    with pytest.raises(ValueError, match="scheduler"):
        RoleEnv(scheduler="no_such_baseline")
    with pytest.raises(ValueError, match="nothing to learn"):
        RoleEnv(scheduler="accept_all", team_kinds=("cooperative", "strategic"))


def test_masked_module_never_samples_a_forbidden_decision():
    torch = pytest.importorskip("torch")
    pytest.importorskip("ray.rllib")
    from ray.rllib.core.columns import Columns

    from dcops.training.marl.masking import MaskedPPOTorchRLModule

    env = RoleEnv(team_kinds=KINDS, n_windows=2)
    obs, _ = env.reset(seed=1)
    obs, *_ = env.step({a: env.action_space(a).sample() for a in env.agents})  # last window: no DEFER allowed
    sched = obs["scheduler"]
    mask = sched["action_mask"].reshape(-1, 6)
    assert mask[:, 2:].sum() == 0 and mask[:, 1].sum() > 0
    torch.manual_seed(0)
    module = MaskedPPOTorchRLModule(observation_space=env.observation_space("scheduler"),
                                    action_space=env.action_space("scheduler"),
                                    model_config={"fcnet_hiddens": [32]})

    def sample(action_mask: np.ndarray) -> np.ndarray:
        batch = {Columns.OBS: {"observations": torch.as_tensor(np.repeat(sched["observations"][None], 256, 0)),
                               "action_mask": torch.as_tensor(np.repeat(action_mask[None], 256, 0))}}
        logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        return module.get_exploration_action_dist_cls().from_logits(logits).sample().numpy()

    actions = sample(sched["action_mask"])
    assert actions.shape == (256, 48)
    assert all(mask[slot, code] for row in actions for slot, code in enumerate(row))
    unmasked = sample(np.ones_like(sched["action_mask"]))
    assert not all(mask[slot, code] for row in unmasked for slot, code in enumerate(row))  # masking is what helps
    values = module.compute_values({Columns.OBS: {"observations": torch.as_tensor(sched["observations"][None]),
                                                  "action_mask": torch.as_tensor(sched["action_mask"][None])}})
    assert values.shape == (1,) and torch.isfinite(values).all()


def test_masked_module_checks_the_mask_against_the_action_space():
    pytest.importorskip("ray.rllib")
    import gymnasium as gym

    from dcops.training.marl.masking import MaskedPPOTorchRLModule

    space = gym.spaces.Dict({"observations": gym.spaces.Box(-1, 1, (4,)), "action_mask": gym.spaces.Box(0, 1, (5,))})
    with pytest.raises(ValueError, match="logits"):
        MaskedPPOTorchRLModule(observation_space=space, action_space=gym.spaces.MultiDiscrete([3, 3]))
    with pytest.raises(ValueError, match="observation_space"):
        MaskedPPOTorchRLModule(observation_space=space["observations"], action_space=gym.spaces.Discrete(5))
