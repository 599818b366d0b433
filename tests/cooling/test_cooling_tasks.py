"""The three cooling tasks: Gymnasium compliance, determinism, bad input, scores and task-specific physics."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import dcops
from dcops.agents.cooling import PIDController, RuleBasedController
from dcops.cooling_env import TASKS, run_controller

COOLING_TASKS = list(TASKS)
INFO_KEYS = {"it_kw", "cooling_kw", "facility_kw", "pue", "zone_ids", "carbon_g", "chiller_capacity_kw", "time"}
DIAGNOSTIC_KEYS = {"inlet_c", "violation_minutes_27", "violation_minutes_32", "chw_supply_c"}


def test_three_cooling_tasks_are_registered():
    assert COOLING_TASKS == ["cooling/cascading_chiller_failure", "cooling/multi_zone_sensor_drift",
                             "cooling/single_zone_recovery"]


def test_unknown_task_error_lists_the_known_ones():
    with pytest.raises(KeyError, match="cooling/single_zone_recovery"):
        dcops.make_env("cooling/nope")


@pytest.mark.parametrize("task_id", COOLING_TASKS)
def test_gymnasium_env_checker_passes(task_id):
    check_env(dcops.make_env(task_id), skip_render_check=False)


@pytest.mark.parametrize("task_id", COOLING_TASKS)
def test_whole_episodes_replay_bit_for_bit_from_a_seed(task_id):
    def play(seed: int):
        env = dcops.make_env(task_id, diagnostics=True)
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        done = False
        while not done:
            obs, reward, done, _, info = env.step(env.action_space.sample())
            trace += [obs, np.array([reward]), info["inlet_c"], np.array([info["facility_kw"]])]
        return trace

    first, second, other = play(11), play(11), play(12)
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


@pytest.mark.parametrize("task_id", COOLING_TASKS)
def test_info_carries_the_documented_fields_and_a_final_score(task_id):
    env, evaluated = dcops.make_env(task_id), dcops.make_env(task_id, diagnostics=True)
    _, info = env.reset(seed=0)
    _, evaluator_info = evaluated.reset(seed=0)
    assert "faults" not in info and "faults" in evaluator_info  # the fault schedule is private
    done = False
    while not done:
        action = env.action_space.sample()
        _, _, done, truncated, info = env.step(action)
        _, _, _, _, evaluator_info = evaluated.step(action)
        assert INFO_KEYS <= set(info) and not DIAGNOSTIC_KEYS & set(info)  # no truth reaches the policy
        assert set(evaluator_info) == set(info) | DIAGNOSTIC_KEYS
        assert len(evaluator_info["inlet_c"]) == len(info["zone_ids"])
        assert not truncated
    assert 0.0 <= info["score"] <= 1.0
    assert info["summary"]["pue"] > 1.0


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(COOLING_TASKS), st.integers(0, 2**16), st.sampled_from(["low", "high", "random"]))
def test_no_nan_or_inf_for_any_action_in_the_action_space(task_id, seed, kind):
    env = dcops.make_env(task_id, diagnostics=True)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    done = False
    total = 0.0
    while not done:
        action = {"low": env.action_space.low, "high": env.action_space.high}.get(kind, env.action_space.sample())
        obs, reward, done, _, info = env.step(action)
        assert np.all(np.isfinite(obs)) and np.isfinite(reward)
        assert np.isfinite(info["facility_kw"]) and np.all(np.isfinite(info["inlet_c"]))
        total += reward
    assert 0.0 <= info["score"] <= 1.0
    assert total <= 0.0  # every per-step reward is a cost


@pytest.mark.parametrize(
    ("bad_action", "message"),
    [(np.zeros(3), "must have 10 values"), ([0.5] * 4 + [20.0] * 4 + [np.nan, 1.0], "chw_setpoint_c"),
     ([0.5, np.inf] + [0.5] * 2 + [20.0] * 4 + [10.0, 1.0], r"fan_speed\[1\]"), ("open the valves", "numeric")],
)
def test_a_malformed_action_is_rejected_by_field_and_the_episode_stays_usable(bad_action, message):
    env = dcops.make_env("cooling/cascading_chiller_failure")
    obs, _ = env.reset(seed=3)
    with pytest.raises(ValueError, match=message):
        env.step(bad_action)
    good = env.action_space.sample()
    reference = dcops.make_env("cooling/cascading_chiller_failure")
    reference.reset(seed=3)
    np.testing.assert_array_equal(env.step(good)[0], reference.step(good)[0])


def test_out_of_range_actions_are_clipped_to_the_box():
    env, clipped = dcops.make_env("cooling/single_zone_recovery"), dcops.make_env("cooling/single_zone_recovery")
    env.reset(seed=0)
    clipped.reset(seed=0)
    wild = env.step(np.array([9.0, -40.0, 99.0, 3.0]))[0]
    boxed = clipped.step(np.clip(np.array([9.0, -40.0, 99.0, 3.0]), env.action_space.low, env.action_space.high))[0]
    np.testing.assert_array_equal(wild, boxed)


def test_drifting_sensor_reads_low_while_its_return_sensor_stays_true():
    env = dcops.make_env("cooling/multi_zone_sensor_drift", diagnostics=True)
    env.reset(seed=5)
    (drift,) = env.unwrapped.faults
    controller = RuleBasedController.for_task("cooling/multi_zone_sensor_drift")
    from dcops.cooling_env import controller_context

    controller.reset(controller_context(env))
    obs, _ = env.reset(seed=5)
    done = False
    while not done:
        obs, _, done, _, info = env.step(controller.act(obs))
    z = drift.zone
    reported_inlet, reported_return = obs[5 * z], obs[5 * z + 1]
    assert reported_inlet < info["inlet_c"][z] - 2.0
    assert abs(reported_return - env.unwrapped._state.zone_temp_c[z]) < 1.0


def test_hard_task_loses_chiller_capacity_then_recovers():
    env = dcops.make_env("cooling/cascading_chiller_failure")
    env.reset(seed=0)
    capacity = []
    done = False
    while not done:
        _, _, done, _, info = env.step(env.action_space.high)
        capacity.append(info["chiller_capacity_kw"])
    capacity = np.array(capacity)
    assert capacity.min() < 0.4 * capacity[0]
    assert capacity[-1] > 0.95 * capacity[0]


@pytest.mark.parametrize("task_id", COOLING_TASKS)
def test_reference_controllers_play_whole_episodes(task_id):
    env = dcops.make_env(task_id)
    for controller in (RuleBasedController.for_task(task_id), PIDController()):
        result = run_controller(env, controller, seed=0)
        assert 0.0 < result.score <= 1.0
        assert result.summary["it_kwh"] > 0


def test_pid_is_misled_by_the_drifting_sensor_and_the_rule_is_not():
    env = dcops.make_env("cooling/multi_zone_sensor_drift")
    rule = run_controller(env, RuleBasedController.for_task("cooling/multi_zone_sensor_drift"), seed=1)
    pid = run_controller(env, PIDController(), seed=1)
    zone = env.unwrapped.faults[0].zone
    assert pid.summary["minutes_above_27"][zone] > 30.0
    assert rule.summary["minutes_above_27"][zone] < pid.summary["minutes_above_27"][zone]


def test_render_ansi_describes_the_zones():
    env = dcops.make_env("cooling/single_zone_recovery", render_mode="ansi")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    text = env.render()
    assert "hall" in text and "PUE" in text


def test_unknown_task_option_is_rejected():
    with pytest.raises(TypeError, match="n_stepz"):
        dcops.make_env("cooling/single_zone_recovery", n_stepz=5)


def test_task_options_override_the_defaults():
    env = dcops.make_env("cooling/single_zone_recovery", n_steps=5, climate="phoenix")
    env.reset(seed=0)
    steps = 0
    done = False
    while not done:
        done = env.step(env.action_space.sample())[2]
        steps += 1
    assert steps == 5


def test_environment_pickles_and_wraps():
    import pickle

    env = pickle.loads(pickle.dumps(dcops.make_env("cooling/multi_zone_sensor_drift")))
    wrapped = gym.wrappers.RescaleAction(env, -1.0, 1.0)
    wrapped.reset(seed=0)
    assert wrapped.step(np.zeros(8, dtype=np.float32))[0].shape == env.observation_space.shape


def test_importing_dcops_does_not_import_torch():
    code = "import sys, dcops; dcops.make_env('cooling/single_zone_recovery'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
