"""The Gymnasium environment queue/weighted_tardiness."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dcops
from dcops.cluster.queue.env import QueueEnv, make_queue_env
from dcops.cluster.queue.features import FEATURE_NAMES
from dcops.cluster.queue.heuristics import atc_log_index, make_rule
from dcops.cluster.queue.jobs import StreamConfig, streaming_instance
from dcops.cluster.queue.simulator import simulate

ATC_COLUMN = 1 + FEATURE_NAMES.index("atc_rel")


def run_atc(env: QueueEnv, seed: int) -> tuple[float, dict]:
    obs, _ = env.reset(options={"instance_seed": seed})
    total = 0.0
    while True:
        mask = obs["action_mask"].astype(bool)
        state, positions = env.decision_state()
        action = int(np.flatnonzero(positions == int(np.argmax(atc_log_index(state, env.atc_k))))[0])
        assert mask[action]
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        assert not truncated
        if terminated:
            return total, info


def test_environment_passes_the_gymnasium_checker():
    check_env(make_queue_env(n_jobs=40), skip_render_check=True)


def test_registered_task_builds_the_queue_environment():
    assert "queue/weighted_tardiness" in dcops.tasks()
    env = dcops.make_env("queue/weighted_tardiness", n_jobs=30, max_slots=8)
    assert isinstance(env, QueueEnv) and env.action_space.n == 8


def test_return_is_minus_scaled_total_weighted_tardiness_and_matches_the_simulator():
    env = make_queue_env(atc_k=1.0, reward_scale=1e-3)
    total, info = run_atc(env, seed=7)
    expected = simulate(streaming_instance(7), make_rule("atc", 1.0)).weighted_tardiness
    assert info["episode_weighted_tardiness"] == pytest.approx(expected)
    assert total == pytest.approx(-1e-3 * expected, rel=1e-9)


def test_same_seed_gives_identical_observations():
    a, b = make_queue_env(), make_queue_env()
    obs_a, _ = a.reset(seed=3)
    obs_b, _ = b.reset(seed=3)
    assert np.array_equal(obs_a["jobs"], obs_b["jobs"])
    for _ in range(20):
        obs_a, ra, *_ = a.step(0)
        obs_b, rb, *_ = b.step(0)
        assert ra == rb and np.array_equal(obs_a["jobs"], obs_b["jobs"])


def test_observation_slots_mark_occupied_rows_and_mask_matches():
    env = make_queue_env(max_slots=4, n_jobs=200)
    obs, _ = env.reset(seed=1)
    for _ in range(50):
        occupied = obs["jobs"][:, 0] > 0
        assert np.array_equal(occupied, obs["action_mask"].astype(bool))
        assert occupied.sum() >= 2 and np.all(np.abs(obs["jobs"]) <= 10)
        assert np.isclose(obs["jobs"][occupied, ATC_COLUMN].max(), 0.0)  # ATC's choice is always offered
        obs, _, terminated, _, _ = env.step(0)
        if terminated:
            break


def test_invalid_slot_is_penalised_counted_and_falls_back_to_fifo():
    env = make_queue_env(invalid_action_penalty=5.0, max_slots=32)
    obs, _ = env.reset(seed=2)
    empty_slot = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward_bad, _, _, info = env.step(empty_slot)
    assert info["invalid_action"] and info["invalid_actions"] == 1
    assert reward_bad <= -5.0
    _, _, _, _, info = env.step(999)  # outside the action space: same treatment, no crash
    assert info["invalid_actions"] == 2


def test_non_integer_action_raises_a_clear_error():
    env = make_queue_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="integer slot"):
        env.step(1.5)


def test_static_mode_and_several_machines_run_to_completion():
    for env in (make_queue_env(mode="static", n_jobs=20), make_queue_env(n_machines=2, n_jobs=60)):
        env.reset(seed=4)
        terminated, steps = False, 0
        while not terminated:
            _, _, terminated, _, info = env.step(0)
            steps += 1
        assert info["dispatched"] == env.n_jobs and steps < env.n_jobs


def test_instance_without_any_choice_ends_on_the_first_step():
    config = StreamConfig(n_jobs=2, load=0.01)  # two jobs far apart: no decision ever has two candidates
    env = make_queue_env()
    obs, info = env.reset(options={"instance": streaming_instance(0, config)})
    assert not info["has_choice"] and obs["action_mask"].sum() == 1
    _, _, terminated, _, info = env.step(0)
    assert terminated and info["episode_weighted_tardiness"] == pytest.approx(0.0)
