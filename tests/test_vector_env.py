"""Vector environments (``dcops.vector_env``): N batched episodes equal N independent single environments."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, VectorEnv
from hypothesis import given, settings
from hypothesis import strategies as st

import dcops

COOLING = {  # short episodes keep the file fast; the physics and reward code are those of the full tasks
    "cooling/single_zone_recovery": {},
    "cooling/multi_zone_sensor_drift": {"n_steps": 14},
    "cooling/cascading_chiller_failure": {"n_steps": 40},
}
TOL = 1e-9  # the violation's zone-weighted sum is a BLAS dot in one and a matrix-vector product in the other


def _close(a: Any, b: Any, what: str) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=0, atol=TOL,
                               err_msg=what)


def _random_actions(env: VectorEnv, rng: np.random.Generator) -> np.ndarray:
    space = env.single_action_space
    return rng.uniform(space.low, space.high, size=(env.num_envs, space.shape[0]))


@pytest.mark.parametrize("task", list(COOLING))
def test_cooling_vector_env_equals_independent_envs(task: str) -> None:
    """Step for step across an episode end and the next-step autoreset: observations, rewards, flags, infos
    and final scores of episode i equal those of a single env seeded ``seed + i`` and reset when it ends."""
    n, config = 3, {**COOLING[task], "diagnostics": True}  # every info key, the true inlets included
    venv = dcops.make_vec_env(task, n, **config)
    singles = [dcops.make_env(task, **config) for _ in range(n)]
    obs, _ = venv.reset(seed=11)
    for i, env in enumerate(singles):
        _close(obs[i], env.reset(seed=11 + i)[0], "reset observation")
    rng = np.random.default_rng(0)
    ended = np.zeros(n, dtype=bool)
    scores = 0
    for step in range(2 * venv.task.n_steps + 3):
        actions = _random_actions(venv, rng)
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP autoreset: this step resets, ignores the action, reward 0
                single_obs, single_reward, single_terminated = env.reset()[0], 0.0, False
            else:
                single_obs, single_reward, single_terminated, _, info = env.step(actions[i])
                for key in ("it_kw", "cooling_kw", "facility_kw", "pue", "inlet_c", "carbon_g",
                            "violation_minutes_27", "violation_minutes_32", "chiller_capacity_kw", "chw_supply_c"):
                    _close(infos[key][i], info[key], f"step {step} env {i} info {key}")
                if single_terminated:
                    assert infos["_score"][i]
                    _close(infos["score"][i], info["score"], "score")
                    summary = venv.summaries()[i]
                    for key, value in info["summary"].items():
                        _close(summary[key], value, f"summary {key}")
                    scores += 1
            _close(obs[i], single_obs, f"step {step} env {i} observation")
            _close(rewards[i], single_reward, f"step {step} env {i} reward")
            assert terminated[i] == single_terminated
            ended[i] = single_terminated
    assert scores == 2 * n


def test_same_step_autoreset_returns_the_next_episode_and_the_final_observation() -> None:
    task, config = "cooling/single_zone_recovery", {"n_steps": 3}
    venv = dcops.make_vec_env(task, 2, autoreset_mode=AutoresetMode.SAME_STEP, **config)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    singles = [dcops.make_env(task, **config) for _ in range(2)]
    venv.reset(seed=[4, 9])
    for env, seed in zip(singles, [4, 9], strict=True):
        env.reset(seed=seed)
    action = np.tile(venv.single_action_space.high, (2, 1))
    for _ in range(3):
        obs, _, terminated, _, infos = venv.step(action)
        singles_out = [env.step(action[0]) for env in singles]
    assert terminated.all() and infos["_final_obs"].all()
    for i, env in enumerate(singles):
        _close(infos["final_obs"][i], singles_out[i][0], "final observation")
        _close(infos["final_info"]["score"][i], singles_out[i][4]["score"], "final score")
        _close(obs[i], env.reset()[0], "first observation of the next episode")


def test_reset_mask_resets_only_the_masked_episodes() -> None:
    venv = dcops.make_vec_env("cooling/single_zone_recovery", 3)
    venv.reset(seed=0)
    stepped, *_ = venv.step(np.tile(venv.single_action_space.low, (3, 1)))
    obs, _ = venv.reset(seed=[None, 50, None], options={"reset_mask": np.array([False, True, False])})
    fresh = dcops.make_env("cooling/single_zone_recovery").reset(seed=50)[0]
    _close(obs[1], fresh, "reset episode")
    _close(obs[[0, 2]], stepped[[0, 2]], "untouched episodes")
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.array([1, 0, 1])})


@pytest.mark.parametrize("task", [*COOLING, "cluster/operations"])
def test_vector_api_checks(task: str) -> None:
    """The Gymnasium ≥ 1.0 vector API, space containment, seeding determinism and a seed list."""
    config = COOLING.get(task, {"n_windows": 2})
    venv = dcops.make_vec_env(task, 2, **config)
    assert isinstance(venv, VectorEnv) and venv.num_envs == 2
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert venv.observation_space.contains(venv.reset(seed=3)[0])
    actions = venv.action_space.sample()
    first = [venv.reset(seed=3)[0], *venv.step(actions)]
    again = dcops.make_vec_env(task, 2, **config)
    second = [again.reset(seed=[3, 4])[0], *again.step(actions)]
    assert venv.observation_space.contains(first[1])
    assert data_equivalence(first[:5], second[:5])
    assert first[2].dtype == np.float64 and first[3].dtype == np.bool_ and first[4].dtype == np.bool_


@pytest.mark.parametrize(("vector_jit", "single_jit"), [("0", "0"), ("0", "1"), ("1", "1"), ("1", "0")])
def test_cluster_vector_env_equals_independent_envs(monkeypatch, vector_jit: str, single_jit: str) -> None:
    """The vector env's episodes (their plants batched as arrays with ``DCOPS_JIT=0``, stepped together through the
    batched kernels with ``1``) give the scheduler's observations, rewards and infos of single envs (Python or
    compiled), bit for bit, through a whole episode and the next-step autoreset."""
    from dcops.physics.compiled_plant import JIT_ENV

    n, config = 2, {"n_windows": 3}
    venv = dcops.make_vec_env("cluster/operations", n, **config)
    singles = [dcops.make_env("cluster/operations", **config) for _ in range(n)]
    monkeypatch.setenv(JIT_ENV, vector_jit)  # read at each reset, the vector env's autoresets included
    obs, infos = venv.reset(seed=21)
    compiled = [env.parallel.controller.compiled_actor is not None for env in venv.envs]
    assert compiled == [vector_jit == "1"] * n
    monkeypatch.setenv(JIT_ENV, single_jit)
    for i, env in enumerate(singles):
        single_obs, single_info = env.reset(seed=21 + i)
        assert data_equivalence({k: v[i] for k, v in obs.items()}, single_obs)
        assert infos["window"][i] == single_info["window"]
    rng = np.random.default_rng(1)
    ended = np.zeros(n, dtype=bool)
    for step in range(2 * config["n_windows"] + 2):
        actions = rng.integers(0, 6, size=(n, venv.single_action_space.shape[0]))
        monkeypatch.setenv(JIT_ENV, vector_jit)
        obs, rewards, terminated, _, infos = venv.step(actions)
        monkeypatch.setenv(JIT_ENV, single_jit)
        for i, env in enumerate(singles):
            if ended[i]:
                single_obs, single_reward, single_terminated = env.reset()[0], 0.0, False
            else:
                single_obs, single_reward, single_terminated, _, info = env.step(actions[i])
                assert infos["facility_kwh"][i] == info["facility_kwh"], f"step {step} env {i}"
                assert infos["reward_terms"]["thermal"][i] == info["reward_terms"]["thermal"]
            assert data_equivalence({k: v[i] for k, v in obs.items()}, single_obs), f"step {step} env {i}"
            assert rewards[i] == single_reward and terminated[i] == single_terminated
            ended[i] = single_terminated


def test_cluster_vector_env_with_the_ppo_cooling_controller_matches_a_single_env() -> None:
    venv = dcops.make_vec_env("cluster/operations", 2, cooling="ppo", n_windows=2)
    single = dcops.make_env("cluster/operations", cooling="ppo", n_windows=2)
    venv.reset(seed=8)
    single.reset(seed=9)
    actions = np.zeros((2, venv.single_action_space.shape[0]), dtype=np.int64)
    obs, rewards, *_ , infos = venv.step(actions)
    single_obs, single_reward, *_, info = single.step(actions[1])
    assert data_equivalence({k: v[1] for k, v in obs.items()}, single_obs)
    assert rewards[1] == single_reward and infos["max_facility_kw"][1] == info["max_facility_kw"]


@settings(max_examples=25, deadline=None)
@given(env_index=st.integers(0, 2), field=st.integers(0, 5), value=st.sampled_from([np.nan, np.inf, -np.inf]))
def test_a_non_finite_action_is_rejected_naming_the_episode_and_field(env_index: int, field: int, value: float
                                                                      ) -> None:
    venv = dcops.make_vec_env("cooling/multi_zone_sensor_drift", 3, n_steps=4)
    venv.reset(seed=0)
    actions = np.tile(venv.single_action_space.low, (3, 1)).astype(np.float64)
    actions[env_index, field] = value
    names = ["fan_speed[0]", "fan_speed[1]", "fan_speed[2]", "supply_setpoint_c[0]", "supply_setpoint_c[1]",
             "supply_setpoint_c[2]"]
    with pytest.raises(ValueError, match=re.escape(f"actions[{env_index}] field {names[field]} is not finite")):
        venv.step(actions)
    # Nothing was stepped: the next valid step equals a fresh vector env's first step.
    fresh = dcops.make_vec_env("cooling/multi_zone_sensor_drift", 3, n_steps=4)
    fresh.reset(seed=0)
    good = np.tile(venv.single_action_space.low, (3, 1))
    _close(venv.step(good)[0], fresh.step(good)[0], "observation after a rejected action")


def test_malformed_batches_are_rejected() -> None:
    venv = dcops.make_vec_env("cooling/single_zone_recovery", 2)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros((2, 4)))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(2, 4\)"):
        venv.step(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="actions must be a numeric array"):
        venv.step([["fast", 1, 2, 3], [0, 1, 2, 3]])
    cluster = dcops.make_vec_env("cluster/operations", 2, n_windows=2)
    cluster.reset(seed=0)
    with pytest.raises(ValueError, match="2 rows"):
        cluster.step(np.zeros((3, cluster.single_action_space.shape[0]), dtype=np.int64))
    with pytest.raises(ValueError, match="seed"):
        cluster.reset(seed=[1, 2, 3])
    with pytest.raises(KeyError, match="no vector form"):
        dcops.make_vec_env("queue/weighted_tardiness", 2)
    with pytest.raises(ValueError, match="num_envs"):
        dcops.make_vec_env("cooling/single_zone_recovery", 0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        dcops.make_vec_env("cooling/single_zone_recovery", 2, autoreset_mode=AutoresetMode.DISABLED)


def test_cooling_vector_env_keeps_the_diagnostics_from_the_policy_by_default() -> None:
    from dcops.boundary import DIAGNOSTIC_INFO_KEYS

    task = "cooling/multi_zone_sensor_drift"
    venv = dcops.make_vec_env(task, 2, n_steps=3)
    single = dcops.make_env(task, n_steps=3)
    venv.reset(seed=0)
    single.reset(seed=0)
    _, _, _, _, infos = venv.step(np.tile(single.action_space.low, (2, 1)))
    _, _, _, _, info = single.step(single.action_space.low)
    assert not DIAGNOSTIC_INFO_KEYS["cooling"] & set(infos)
    assert {k for k in infos if not k.startswith("_")} == set(info) - {"zone_ids", "time"}


def _added_one_by_one(env: VectorEnv, items: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """Gymnasium's own merge: ``VectorEnv._add_info`` for each (episode, info) in order."""
    infos: dict[str, Any] = {}
    for env_num, info in items:
        infos = env._add_info(infos, info, env_num)
    return infos


def _same_infos(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal keys in the same order, arrays of equal dtype, shape and values, recursively."""
    assert list(a) == list(b)
    for key in a:
        if isinstance(a[key], dict):
            _same_infos(a[key], b[key])
        elif not isinstance(a[key], np.ndarray):  # what _add_info leaves where a key mixes dicts and leaves
            assert data_equivalence(a[key], b[key]), key
        else:
            assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
            if a[key].dtype == object:
                assert all(data_equivalence(x, y) for x, y in zip(a[key], b[key], strict=True)), key
            else:  # bits: NaN equals NaN, -0.0 does not equal 0.0
                assert a[key].tobytes() == b[key].tobytes(), key


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_merged_cluster_infos_are_gymnasiums_whole_episodes(monkeypatch, mode) -> None:
    """The cluster vector env's infos (``merge_infos``, key by key) equal what Gymnasium's ``_add_info`` builds info
    by info, at reset, every window, the last (with its episode summary) and the autoreset, in both modes."""
    from dcops import vector_env

    seen: list[tuple[list[tuple[int, dict[str, Any]]], dict[str, Any]]] = []
    merge, depth = vector_env.merge_infos, [0]

    def spy(env, items):  # the vector env's calls, not merge_infos' own for nested dicts
        depth[0] += 1
        try:
            merged = merge(env, items)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            seen.append((items, merged))
        return merged

    monkeypatch.setattr(vector_env, "merge_infos", spy)
    venv = dcops.make_vec_env("cluster/operations", 3, autoreset_mode=mode, n_windows=2)
    venv.reset(seed=4)
    actions = np.zeros((3, venv.single_action_space.shape[0]), dtype=np.int64)
    for _ in range(5):
        venv.step(actions)
    assert len(seen) == 6
    same_step = mode == AutoresetMode.SAME_STEP
    assert any("episode" in merged.get("final_info", {}) if same_step else "episode" in merged for _, merged in seen)
    assert any("final_info" in merged for _, merged in seen) == same_step
    for items, merged in seen:
        _same_infos(merged, _added_one_by_one(venv, items))


_leaf = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, width=32), st.booleans(), st.text(max_size=2),
                  st.just(np.float32(1.5)), st.just(np.int64(2)), st.just(np.bool_(True)), st.just(np.arange(3.0)),
                  st.none())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.dictionaries(
    st.sampled_from(["a", "b", "_a", "final_obs"]),
    st.one_of(_leaf, st.dictionaries(st.sampled_from(["x", "_x", "final_obs"]), _leaf, max_size=2)), max_size=4)),
    max_size=6))
def test_merged_infos_equal_gymnasiums_for_any_infos(items) -> None:
    """Mixed types under one key (the first value's type wins, later ones are cast into it), dicts and leaves under
    one key or a key named as another's mask (Gymnasium's own merge then runs), ``final_obs`` at the top and
    nested, numpy scalars, repeated episodes: the same result, or an error where Gymnasium's merge raises one."""
    from dcops.vector_env import merge_infos

    venv = dcops.make_vec_env("cluster/operations", 4, n_windows=1)
    errors = (TypeError, ValueError, AttributeError, OverflowError)  # where values cannot share a key's array
    try:
        expected = _added_one_by_one(venv, items)
    except errors:
        with pytest.raises(errors):  # the first failing key may differ: merged key by key, not info by info
            merge_infos(venv, items)
        return
    _same_infos(merge_infos(venv, items), expected)
