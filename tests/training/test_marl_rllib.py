"""``dcops train-marl``: the shipped configs, their checks, and a two-iteration RLlib smoke run on local Ray.

The smoke run starts Ray with 2 CPUs (no dashboard, a 100 MB object store), two env runners, 2-window episodes
and a 32-step batch; it took 32-58 s on the loaded 2-core machine, most of it Ray and actor start-up.
"""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from dcops.training.marl.config import MarlConfig, load_config


def test_shipped_configs_load_and_differ_where_a_cluster_should():
    laptop, cluster = load_config("laptop"), load_config("cluster")
    assert laptop.ray.address is None and cluster.ray.address == "auto"
    assert laptop.learners.num_gpus_per_learner == 0 and cluster.learners.num_gpus_per_learner >= 1
    assert cluster.env_runners.num_env_runners > laptop.env_runners.num_env_runners
    for config in (laptop, cluster):
        assert config.env["scheduler"] == "learner" and "learner" in config.env["team_kinds"]


def test_shipped_configs_pass_rllib_validation_with_one_policy_per_role():
    pytest.importorskip("ray.rllib")
    from dcops.training.marl.rllib import build_algorithm_config, policy_for

    for name in ("laptop", "cluster"):
        config = load_config(name)
        algo_config = build_algorithm_config(config)
        algo_config.validate()
        assert set(algo_config.policies) == {"scheduler", "team"}
        assert algo_config.num_env_runners == config.env_runners.num_env_runners
        assert algo_config.num_learners == config.learners.num_learners
        assert algo_config.num_gpus_per_learner == config.learners.num_gpus_per_learner
    assert [policy_for(a) for a in ("scheduler", "learner_0", "learner_2")] == ["scheduler", "team", "team"]


@pytest.mark.parametrize(("data", "field"), [
    ({"training": {"bogus": 1}}, "bogus"),
    ({"nonsense": {}}, "nonsense"),
    ({"env": {"n_windoze": 3}}, "n_windoze"),
    ({"env": {"cooling": "agent"}}, "env.cooling"),
    ({"training": {"minibatch_size": 1024, "train_batch_size_per_learner": 64}}, "minibatch_size"),
    ({"env": {"scheduler": "accept_all", "team_kinds": ["cooperative", "strategic"]}}, "nothing to learn"),
    ({"env": {"n_windows": 0}}, "env: n_windows"),
    ({"env": 3}, "env: Input should be a valid dictionary"),
    ({"run": {"iterations": 0}}, "run.iterations: Input should be greater than or equal to 1"),
    ({"run": {"seed": -1}}, "run.seed"),
    ({"training": {"num_epochs": 2.5}}, r"training.num_epochs: Input should be a valid integer \(got 2.5\)"),
    # Strict: nothing is coerced, so a YAML slip is an error, not a silently different run.
    ({"run": {"iterations": "5"}}, r"run.iterations: Input should be a valid integer \(got '5'\)"),
    ({"env_runners": {"num_env_runners": True}}, r"env_runners.num_env_runners: .*integer \(got True\)"),
    ({"model": {"vf_share_layers": "yes"}}, r"model.vf_share_layers: Input should be a valid boolean"),
    ({"learners": {"num_gpus_per_learner": True}}, r"learners.num_gpus_per_learner: .*number \(got True\)"),
    ({"env": {"scheduler": "nonsense"}}, r"env.scheduler: 'learner' or a scripted baseline of .*'nonsense'"),
    ({"training": {"gamma": 1.5}}, "training.gamma: Input should be less than or equal to 1"),
    ({"env_runners": {"num_envs_per_env_runner": 0}}, "env_runners.num_envs_per_env_runner"),
    ({"env_runners": {"num_env_runners": -1}}, "env_runners.num_env_runners"),
    ({"env_runners": {"rollout_fragment_length": "later"}}, r"env_runners.rollout_fragment_length: .* or Input should be 'auto' \(got 'later'\)"),
    ({"learners": {"num_learners": -1}}, "learners.num_learners"),
    ({"learners": {"num_gpus": 1}}, r"learners.num_gpus: unknown field; known: \['num_cpus_per_learner'"),
    ({"model": {"fcnet_hiddens": [64, 0]}}, "model.fcnet_hiddens: Input should be greater than or equal to 1"),
    ({"ray": {"include_dashboard": "sometimes"}}, "ray.include_dashboard"),
])
def test_bad_configs_are_refused_naming_the_field(data, field):
    with pytest.raises(ValueError, match=field):
        MarlConfig.from_dict(data, source="bad.yaml")


def test_every_error_of_a_config_is_reported_at_once_under_its_source():
    with pytest.raises(ValueError) as error:
        MarlConfig.from_dict({"nonsense": {}, "training": {"bogus": 1, "lr": 0}}, source="bad.yaml")
    message = str(error.value)
    assert message.startswith("bad.yaml: ")
    for part in ("nonsense: unknown section", "training.bogus: unknown field", "training.lr: Input should be greater"):
        assert part in message


def test_a_file_lists_only_what_it_changes_and_an_empty_section_keeps_the_defaults():
    config = MarlConfig.from_dict({"env": {"n_windows": 3}, "training": None, "run": {"seed": 7}})
    assert config.env == {"scheduler": "learner", "team_kinds": ["cooperative", "cooperative", "learner", "learner"],
                          "n_windows": 3}
    assert config.training == MarlConfig().training and config.run.seed == 7 and config.run.iterations == 20


def test_overrides_assigned_after_loading_are_checked_by_revalidate():
    config = load_config("laptop")
    config.revalidate("laptop")
    config.training.minibatch_size = 10_000
    with pytest.raises(ValueError, match="laptop with overrides: training: minibatch_size"):
        config.revalidate("laptop with overrides")


def test_scripted_reference_returns_rank_a_careful_scheduler_above_rejecting_everything():
    from dcops.training.marl.rllib import scripted_scheduler_return

    env = {"scheduler": "learner", "team_kinds": ["cooperative", "strategic", "learner", "learner"], "n_windows": 3}
    careful = scripted_scheduler_return(env, "priority_threshold", range(3))
    reject = scripted_scheduler_return(env, "reject_all", range(3))
    assert -1.10 * 3 <= reject < 0 < careful <= 0.65 * 3


def test_train_marl_command_reports_a_bad_config_without_a_traceback(tmp_path, capsys):
    from dcops.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("learners:\n  num_gpus: 1\n")
    assert main(["train-marl", "--config", str(bad), "--out", str(tmp_path / "run")]) == 2
    assert "num_gpus" in capsys.readouterr().out


def test_two_iterations_with_two_env_runners_give_finite_learner_metrics(tmp_path, ray_tmpdir):
    ray = pytest.importorskip("ray")
    torch = pytest.importorskip("torch")
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    from dcops.training.marl.env import RoleEnv
    from dcops.training.marl.rllib import LOSS_KEYS, train_marl

    config = MarlConfig.from_dict({
        "env": {"n_windows": 2, "team_kinds": ["cooperative", "strategic", "learner", "learner"]},
        "env_runners": {"num_env_runners": 2, "rollout_fragment_length": 16, "sample_timeout_s": 120},
        "training": {"train_batch_size_per_learner": 32, "minibatch_size": 16, "num_epochs": 1},
        "model": {"fcnet_hiddens": [32]},
        "run": {"iterations": 2, "checkpoint_every": 0, "seed": 0},
    })
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024,
             configure_logging=False, log_to_driver=False)
    try:
        rows = train_marl(config, tmp_path)
        assert ray.is_initialized()  # train_marl leaves a Ray it did not start running
    finally:
        ray.shutdown()

    assert [row["iteration"] for row in rows] == [1, 2]
    assert rows[-1]["env_steps_lifetime"] >= 64
    for row in rows:
        for policy in ("scheduler", "team"):
            for key in LOSS_KEYS:
                assert math.isfinite(row[f"{policy}/{key}"]), (row["iteration"], policy, key)
        assert row["scheduler/entropy"] > 0 and row["team/entropy"] > 0
    returns = [row["scheduler/episode_return_mean"] for row in rows]
    assert all(math.isfinite(r) and -1.10 * 2 <= r <= 0.65 * 2 for r in returns)  # 2 windows, bounded rewards

    with (tmp_path / "metrics.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 2
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 2
    assert json.loads((tmp_path / "config.json").read_text())["env"]["n_windows"] == 2

    # The scheduler's trained module restores from the checkpoint and only takes decisions the env allows.
    module = RLModule.from_checkpoint(tmp_path / "checkpoints" / "iter_0002" / "learner_group" / "learner"
                                      / "rl_module" / "scheduler")
    env = RoleEnv(**config.env)
    obs, _ = env.reset(seed=11)
    sched = obs["scheduler"]
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in sched.items()}}
    logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    action = module.get_inference_action_dist_cls().from_logits(logits).to_deterministic().sample().numpy()[0]
    mask = sched["action_mask"].reshape(len(action), -1)
    assert env.action_space("scheduler").contains(np.asarray(action, dtype=np.int64))
    assert all(mask[slot, code] for slot, code in enumerate(action))
