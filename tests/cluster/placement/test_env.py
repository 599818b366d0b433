"""The Gymnasium wrapper of the placement task and its registration."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dcops
from dcops.cluster.placement.actions import Defer, Place
from dcops.cluster.placement.env import PlacementEnv, make_placement_env
from dcops.cluster.placement.scenarios import CANONICAL

TASKS = [f"placement/{name}" for name in CANONICAL]


def _check(env) -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*alternative render modes.*")  # needs gymnasium.make
        check_env(env)


@pytest.mark.parametrize("task", TASKS)
def test_every_canonical_task_is_registered_and_passes_the_gymnasium_checker(task):
    assert task in dcops.tasks()
    env = dcops.make_env(task, render_mode="ansi")
    _check(env)
    assert env.unwrapped.scenario.name == task.split("/")[1]


def test_the_generated_variant_passes_the_checker():
    _check(make_placement_env("generated", seed=3))


def test_the_action_encoding_is_slot_times_gpus_plus_gpu_with_defer_last():
    env = make_placement_env("deadline_crunch")
    env.reset()
    assert env.action_space.n == 10 * 4 + 1 and env.defer_action == 40
    assert env.decode(40) == Defer()
    assert env.decode(0 * 4 + 3) == Place("J1", "h100-0")
    assert env.encode(Place("J6", "a100-0")) == 5 * 4 + 2
    assert env.decode(env.encode(Place("J3", "l4-1"))) == Place("J3", "l4-1")


def test_the_action_mask_marks_exactly_the_valid_actions():
    env = make_placement_env("wait_for_capacity")
    _, info = env.reset()
    sim = env.sim
    for a in range(env.action_space.n):
        valid = sim.check(env.decode(a)) is None if a != env.defer_action else True
        if a < len(env.scenario.jobs) * env.max_gpus and a % env.max_gpus < len(env.scenario.gpus):
            assert bool(info["action_mask"][a]) == valid, env.decode(a)
        else:
            assert info["action_mask"][a] == (1 if a == env.defer_action else 0)
    assert info["action_mask"].dtype == np.int8


def test_an_invalid_index_is_penalised_reported_and_the_episode_continues():
    env = make_placement_env("deadline_crunch")
    env.reset()
    _, reward, terminated, truncated, info = env.step(9 * 4 + 0)  # job slot 9 is empty in a 6-job scenario
    assert "unknown job id '<empty job slot 9>'" in info["invalid_reason"]
    assert info["reward_terms"]["invalid"] == -5.0 and not terminated and not truncated
    _, _, _, _, info = env.step(4 * 4 + 0)  # tick 1: J5 (30 GB) has arrived but does not fit the 24 GB l4-0
    assert "needs 30 GB" in info["invalid_reason"]
    assert info["observation"]["metrics"]["invalid"] == 2


def test_info_carries_the_structured_observation_and_the_dashboard():
    env = make_placement_env("reserve_large_gpu", render_mode="ansi")
    obs, info = env.reset()
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
    assert {g["gpu_id"] for g in info["observation"]["gpus"]} == {"h100-0", "a100-0", "l4-0", "l4-1"}
    assert info["dashboard"] == env.render()
    assert "Feasible actions" in info["dashboard"]
    _, _, _, _, info = env.step_action(Place("J1", "l4-0", "keep the H100 for big jobs"))
    assert info["observation"]["history"][0]["rationale"] == "keep the H100 for big jobs"
    assert info["action"] == "place(J1, l4-0)"


def _rollout(env: PlacementEnv, seed: int, policy_seed: int) -> list:
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace = [obs.tobytes()]
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, done, _, info = env.step(action)
        trace.append((obs.tobytes(), reward, info["dashboard"]))
    return trace


def test_the_same_seed_gives_an_identical_episode_and_another_seed_a_different_one():
    a = _rollout(make_placement_env("generated"), seed=11, policy_seed=0)
    b = _rollout(make_placement_env("generated"), seed=11, policy_seed=0)
    c = _rollout(make_placement_env("generated"), seed=12, policy_seed=0)
    assert a == b
    assert a != c


def test_the_factory_seed_is_used_by_the_first_reset():
    env = make_placement_env("generated", seed=5)
    env.reset()
    first = env.scenario
    env.reset(seed=5)
    assert env.scenario == first


def test_episodes_terminate_within_the_horizon_and_never_truncate():
    for task in TASKS:
        env = dcops.make_env(task)
        env.reset()
        steps, done, truncated = 0, False, False
        while not done:
            _, _, done, truncated, _ = env.step(env.defer_action)
            steps += 1
            assert not truncated
        assert steps <= env.unwrapped.scenario.horizon


def test_bad_configuration_names_the_argument():
    with pytest.raises(ValueError, match="max_jobs"):
        make_placement_env("deadline_crunch", max_jobs=3)
    with pytest.raises(ValueError, match="render_mode"):
        make_placement_env("deadline_crunch", render_mode="human")
    with pytest.raises(KeyError, match="unknown placement scenario"):
        make_placement_env("no_such_scenario")
