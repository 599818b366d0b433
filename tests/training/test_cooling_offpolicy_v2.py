"""SAC and TQC against the plant v2 PPO recipe: the residual action is the rule's at zero, the validation controller
plays the rule action through the supervisor at zero (PPO's start), a tiny run of each algorithm trains, validates its start (the rule) with PPO's validation
and writes its record and curve, and the comparison report reads the curves as documented."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict

import numpy as np
import pytest

import dcops
from dcops.agents.cooling.ppo_v2 import N_ACTIONS_V2, base_rule, rule_action
from dcops.agents.cooling.rule_v2 import run_controller_v2
from dcops.cooling_env_v1 import TASK_SPECS
from dcops.training.cooling.offpolicy_v2 import (
    CoolingOffPolicyV2Config,
    ResidualRuleAction,
    curve_name,
    offpolicy_controller,
    record_name,
    train_cooling_offpolicy_v2,
)
from dcops.training.cooling.ppo_v2 import selection_key_v2, summarise, validation_episodes
from dcops.training.cooling.train_env_v2 import CoolingTrainEnvV2


def _task_env() -> CoolingTrainEnvV2:
    return CoolingTrainEnvV2(spec_source=lambda rng: TASK_SPECS["cooling/cascading_chiller_failure_v1"]())


def test_a_zero_residual_is_the_rule_action_exactly_and_larger_ones_are_clipped_to_the_range():
    wrapped = ResidualRuleAction(_task_env())
    np.testing.assert_array_equal(wrapped.action(np.zeros(N_ACTIONS_V2, dtype=np.float32)), rule_action())
    np.testing.assert_array_equal(wrapped.action(np.ones(N_ACTIONS_V2)), np.minimum(rule_action() + 1.0, 1.0))
    np.testing.assert_array_equal(wrapped.action(-np.ones(N_ACTIONS_V2)), np.maximum(rule_action() - 1.0, -1.0))
    assert wrapped.action_space == _task_env().action_space


def test_stepping_a_zero_residual_is_stepping_the_rule_action():
    wrapped, bare = ResidualRuleAction(_task_env()), _task_env()
    first, _ = wrapped.reset(seed=4)
    np.testing.assert_array_equal(first, bare.reset(seed=4)[0])
    for _ in range(8):
        obs_w, reward_w, *_ = wrapped.step(np.zeros(N_ACTIONS_V2, dtype=np.float32))
        obs_b, reward_b, *_ = bare.step(rule_action())
        np.testing.assert_array_equal(obs_w, obs_b)
        assert reward_w == reward_b


@pytest.mark.parametrize("task", ["cooling/multi_zone_sensor_drift_v1", "cooling/cascading_chiller_failure_v1"])
def test_the_validation_controller_with_no_model_plays_the_rule_through_the_supervisor(task, supervised_rule):
    env = dcops.make_env(task)
    controller = offpolicy_controller(None, lambda obs: obs)
    assert run_controller_v2(env, controller, seed=2) == run_controller_v2(env, supervised_rule(), seed=2)
    if task == "cooling/multi_zone_sensor_drift_v1":  # no tank: the supervised rule is the family rule itself
        assert run_controller_v2(env, controller, seed=2) == run_controller_v2(env, base_rule(), seed=2)


def _read_curve(path) -> list[dict[str, float]]:
    with path.open() as handle:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]


@pytest.mark.parametrize("algorithm", ["sac", "tqc"])
def test_a_tiny_run_trains_validates_the_rule_start_and_writes_its_record_and_curve(tmp_path, algorithm, supervised_rule):
    config = CoolingOffPolicyV2Config(algorithm=algorithm, timesteps=260, learning_starts=160, batch_size=32,
                                      buffer_size=1_000, eval_every=200, critic_hidden=(32, 32))
    record = train_cooling_offpolicy_v2(config, out=tmp_path, log=None)

    curve = _read_curve(tmp_path / curve_name(algorithm))
    assert [row["timesteps"] for row in curve] == [0.0, 200.0, 260.0]
    assert list(curve[0]) == ["timesteps", "wall_s", "objective_ratio", "zone_time_above_27_pct",
                              "worst_minutes_above_32", "score"]  # PPO's learning-curve columns
    rule = summarise(validation_episodes(supervised_rule()))
    assert {k: curve[0][k] for k in rule} == pytest.approx(rule, rel=1e-12)  # the start is PPO's: the rule action

    saved = json.loads((tmp_path / record_name(algorithm)).read_text())
    assert saved == json.loads(json.dumps(record, default=str))
    assert record["algorithm"] == algorithm and record["timesteps_trained"] == 260
    assert record["validation_of_start"] == pytest.approx(rule, rel=1e-12)
    kept = min(curve, key=lambda row: (selection_key_v2(row), row["timesteps"]))
    assert record["timesteps_selected"] == kept["timesteps"]
    assert curve[-1]["objective_ratio"] != curve[0]["objective_ratio"]  # 100 gradient steps moved the actor

    from dcops.training.cooling.offpolicy_v2_report import kept_controller

    replayed = summarise(validation_episodes(kept_controller(tmp_path, algorithm)))  # the saved zip and statistics
    assert replayed == record["validation_of_selected"]


def test_an_unknown_algorithm_is_refused():
    with pytest.raises(ValueError, match="unknown algorithm"):
        CoolingOffPolicyV2Config(algorithm="ddpg")


def _point(steps: float, wall_s: float, score: float, worst_32: float, ratio: float = 1.2) -> dict[str, float]:
    return {"timesteps": steps, "wall_s": wall_s, "objective_ratio": ratio, "zone_time_above_27_pct": 2.0,
            "worst_minutes_above_32": worst_32, "score": score}


def test_the_report_compares_at_equal_steps_and_wall_time_and_keeps_what_the_selection_would(tmp_path):
    from dcops.training.cooling.offpolicy_v2_report import Run, comparison_markdown, copy_run

    ppo_curve = [_point(0, 2, 0.60, 30), _point(200_000, 75, 0.61, 0), _point(400_000, 150, 0.62, 10),
                 _point(600_000, 230, 0.615, 0), _point(800_000, 300, 0.63, 0)]
    ppo = Run("ppo", ppo_curve, {"command": "dcops train-cooling-v2", "timesteps_trained": 800_000,
                                 "wall_time_s": 300.0})
    assert ppo.nearest("timesteps", 290_000)["timesteps"] == 200_000
    assert ppo.nearest("wall_s", 160)["timesteps"] == 400_000
    assert ppo.kept(200)["timesteps"] == 200_000  # 0.62 had minutes above 32 °C, so 0.61 is kept by then
    assert ppo.kept()["timesteps"] == 800_000 and ppo.steps_per_s == pytest.approx(800_000 / 300)

    sac_curve = [_point(0, 2, 0.599, 30), _point(20_000, 80, 0.64, 0, 1.1), _point(40_000, 160, 0.55, 0)]
    config = CoolingOffPolicyV2Config()
    sac_record = {"command": "dcops train-cooling-offpolicy --algorithm sac", "timesteps_trained": 40_000,
                  "wall_time_s": 160.0, "stopped_by_time_budget": True,
                  "config": json.loads(json.dumps(asdict(config)))}
    for name, curve, record in (("ppo", ppo_curve, ppo.record), ("sac", sac_curve, sac_record)):
        run_dir = tmp_path / name
        run_dir.mkdir()
        csv_name = "learning_curve_v2.csv" if name == "ppo" else curve_name(name)
        with (run_dir / csv_name).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(curve[0]))
            writer.writeheader()
            writer.writerows(curve)
        (run_dir / record_name(name)).write_text(json.dumps(record))
        copy_run(run_dir, name, tmp_path / "data")
    sac = Run.read(tmp_path / "data", "sac")
    assert sac.curve == sac_curve and Run.read(tmp_path / "data", "ppo").curve == ppo_curve
    report = comparison_markdown(ppo, [sac], "data")
    assert "| PPO | equal steps (nearest 40,000) | 0 |" in report  # PPO's nearest checkpoint to 40k steps is its start
    assert "| PPO | equal wall time (nearest 2.7 min) | 400,000 |" in report
    assert "| PPO | first trained checkpoint | 200,000 |" in report
    assert "| SAC | kept (whole run) | 20,000 |" in report
    assert "**SAC** ranks first" in report  # 0.64 with no minute above 32 °C beats PPO's 0.61 kept by 160 s
    assert "**SAC** is kept" in report and "1 of its 2 later checkpoints score below its start" in report
