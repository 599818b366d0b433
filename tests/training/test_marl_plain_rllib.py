"""The plain RLlib recipe: ``datacenter_ops_v1`` unmodified in RLlib's ``ParallelPettingZooEnv``, RLlib's
``FlattenObservations`` connector and default PPO modules, trained one tiny iteration on a local Ray.

Ray starts with 2 CPUs (no dashboard, a 100 MB object store) in the test's own temp folder; the env runs in the
driver (no env runner actors), 2-window episodes, a 32-step batch."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from dcops.training.marl.plain_rllib import make_env, plain_ppo_config, policy_for  # noqa: E402

ENV = {"n_windows": 2, "cooling": "rule", "team_kinds": ["cooperative", "strategic", "learner", "learner"]}


def test_the_recipe_wraps_datacenter_ops_v1_unmodified_and_maps_one_policy_per_role():
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    from dcops.env import DatacenterOpsEnv

    env = make_env(ENV)
    assert isinstance(env, ParallelPettingZooEnv) and type(env.par_env) is DatacenterOpsEnv
    assert env.par_env.metadata["name"] == "datacenter_ops_v1" and not env.par_env.structured_view
    assert sorted(env.possible_agents) == ["learner_0", "learner_1", "scheduler"]
    assert [policy_for(a) for a in ("learner_0", "learner_1", "scheduler", "cooling")] == [
        "team", "team", "scheduler", "cooling"]
    config = plain_ppo_config(ENV, num_env_runners=0)
    config.validate()
    assert set(config.policies) == {"team", "scheduler"}
    assert plain_ppo_config(num_env_runners=0).policies.keys() == {"scheduler"}  # the defaults: no learner team


def test_one_iteration_trains_rllibs_default_modules_on_the_flattened_observations(tmp_path, ray_tmpdir):
    ray = pytest.importorskip("ray")
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule

    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024,
             configure_logging=False, log_to_driver=False)
    algo = plain_ppo_config(ENV, num_env_runners=0, train_batch_size=32, minibatch_size=16, num_epochs=1,
                            fcnet_hiddens=(32,)).build_algo()
    try:
        result = algo.train()
        module = algo.get_module("scheduler")
        assert type(module) is DefaultPPOTorchRLModule  # RLlib's own module, no masking
        flat = 48 * 26 + 48 + 288 + 20 + 4 * 7 + 4 * 15  # the Dict flattened by FlattenObservations
        assert module.observation_space.shape == (flat,)
        assert algo.get_module("team").observation_space.shape == (16,)
    finally:
        algo.stop()
    assert result["num_env_steps_sampled_lifetime"] >= 32
    for policy in ("scheduler", "team"):
        stats = result["learners"][policy]
        for key in ("policy_loss", "vf_loss", "entropy", "total_loss"):
            assert math.isfinite(float(stats[key])), (policy, key)
    returns = result["env_runners"]["module_episode_returns_mean"]
    assert -1.10 * 2 <= returns["scheduler"] <= 0.65 * 2 and np.isfinite(returns["team"])
