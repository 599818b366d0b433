"""Episodes stepped together through the batched kernels (``dcops.agents.cooling.ppo_batched``) equal their Python
paths byte for byte: several episodes at once, declined and raising plant steps, an error mid-window in a batch,
and a policy whose bits the kernels would not reproduce is left to the per-episode path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dcops
import dcops.agents.cooling.ppo_batched as ppo_batched
from dcops.agents.cooling.ppo import NumpyPolicy, shipped_policy
from dcops.physics.compiled_plant import JIT_ENV, compiled, plant_kernel
from dcops.physics.plant import PlantBoundary, step_plant
from tests.cluster.test_compiled_window import _assert_same_episode, _bytes, _faulty_episode

numba = pytest.importorskip("numba")


@pytest.fixture(scope="module")
def batched() -> None:
    """Skip where the batched kernels do not reproduce the shipped policy's bits (they are then never used)."""
    if not ppo_batched.agrees(shipped_policy()):
        pytest.skip("this machine's BLAS or tanh gives the batched MLP other bits: the per-episode path runs")


def _use_kernels_calling(monkeypatch, replacements) -> None:
    """Step batches through kernels whose calls in ``replacements`` go elsewhere (compiled here, uncached)."""
    head, hidden, tail = (numba.njit(error_model="python")(f) for f in ppo_batched.kernels_calling(replacements))
    kernels = ppo_batched._Kernels(head, hidden, tail, compiled(plant_kernel))
    monkeypatch.setattr(ppo_batched, "_kernels", lambda: kernels)


@pytest.fixture
def declining(monkeypatch) -> dict[str, int]:
    """Batched kernels whose plant step declines (returns False) or raises ``ZeroDivisionError`` on about two
    steps in seven, chosen by the zone temperature's bits; compiled for the test only. Counts the Python steps
    and the restarts of ``tail`` after a raise."""
    kernel = compiled(plant_kernel)

    @numba.njit(error_model="python")
    def plant(zones, c, zone0, chw0, fan, supply, chw, econ, it, alive, dry, wet, chillers, dt, out_zone, out_plant):
        pick = int(abs(zone0[0]) * 1e6) % 7
        if pick == 3:
            return False
        if pick == 5:
            raise ZeroDivisionError("as the float path raises it")
        return kernel(zones, c, zone0, chw0, fan, supply, chw, econ, it, alive, dry, wet, chillers, dt, out_zone,
                      out_plant)

    _use_kernels_calling(monkeypatch, {"_plant": plant})
    counts = {"python": 0, "restarts": 0}
    python_step, tail_raised = ppo_batched._Batch._python_step, ppo_batched._Batch._tail_raised

    def counted_step(self, *args):
        counts["python"] += 1
        return python_step(self, *args)

    def counted_raise(i, tail, tail_args, status, error):
        counts["restarts"] += int(np.flatnonzero(status != ppo_batched._NOT_REACHED)[-1]) + 1 < status.shape[0]
        return tail_raised(i, tail, tail_args, status, error)

    monkeypatch.setattr(ppo_batched._Batch, "_python_step", counted_step)
    monkeypatch.setattr(ppo_batched._Batch, "_tail_raised", staticmethod(counted_raise))
    return counts


def test_declined_and_raising_plant_steps_run_through_step_plant(monkeypatch, batched, declining):
    declined_run = _faulty_episode(monkeypatch, jit=True)
    assert declining["python"] >= 40  # of 144 steps
    _assert_same_episode(declined_run, _faulty_episode(monkeypatch, jit=False))


def _make(seeds: list[int], jit: bool, monkeypatch, nan_at: dict[int, int] | None = None) -> list:
    """Cluster environments with random faults reset on ``seeds``; ``nan_at`` {env index: global step} makes
    zone 0's inlet reading NaN there."""
    monkeypatch.setenv(JIT_ENV, "1" if jit else "0")
    envs = [dcops.parallel_env(structured_view=False, faults="random") for _ in seeds]
    for index, (env, seed) in enumerate(zip(envs, seeds, strict=True)):
        env.reset(seed=seed)
        if nan_at and index in nan_at:
            env.episode.inlet_errors.noise_k[nan_at[index], 0] = np.nan
    return envs


@pytest.mark.parametrize("declines", [False, True])
def test_a_batch_of_random_fault_episodes_equals_each_episode_on_the_python_path(monkeypatch, batched, request,
                                                                                 declines: bool):
    """Five episodes with random faults (different trips, fan failures, drifts) stepped as one batch, window
    by window, give each episode's Python-path observations, rewards and records, byte for byte."""
    from dcops.vector_env import run_windows

    counts = request.getfixturevalue("declining") if declines else None
    sizes: list[int] = []
    step_windows = ppo_batched.BatchedPPO.step_windows

    def spy(self, episodes, windows):
        sizes.append(len(episodes))
        return step_windows(self, episodes, windows)

    monkeypatch.setattr(ppo_batched.BatchedPPO, "step_windows", spy)
    seeds = [3, 14, 15, 92, 65]
    batch, alone = _make(seeds, True, monkeypatch), _make(seeds, False, monkeypatch)
    rng = np.random.default_rng(5)
    while batch[0].agents:
        actions = [rng.integers(0, 4, size=env.config.max_slots) for env in batch]
        monkeypatch.setenv(JIT_ENV, "1")
        stepped = run_windows(batch, actions)
        monkeypatch.setenv(JIT_ENV, "0")
        for env, action, (obs, reward, *_) in zip(alone, actions, stepped, strict=True):
            single_obs, rewards, *_ = env.step({"scheduler": action})
            assert reward == rewards["scheduler"]
            assert all(_bytes(obs[key]) == _bytes(single_obs["scheduler"][key]) for key in obs)
    for env_b, env_a in zip(batch, alone, strict=True):
        for name in ("facility_kw", "cooling_kw", "inlet_c", "it_kw_total", "_pue_cum"):
            assert _bytes(getattr(env_b.episode, name)) == _bytes(getattr(env_a.episode, name)), name
    assert sizes == [5] * batch[0].config.n_windows  # one batch of five, every window
    if counts is not None:
        assert counts["python"] >= 100 and counts["restarts"] >= 10  # both hand-backs, tail restarted mid-batch


def _python_steps(env, action, steps: int) -> None:
    """Begin ``env``'s window with ``action`` and run its first ``steps`` physics steps on the Python path, as
    ``ClusterEpisode.run_window`` does."""
    env.begin_step({"scheduler": action})
    episode = env.episode
    window = episode.begin_window()
    state = episode.state
    for i in range(steps):
        control = episode.controller.control(i, state)
        dry, wet, chillers, alive = window.step_inputs[i]
        state, out = step_plant(episode.plant, state, control, PlantBoundary(window.rows[i], dry, wet, chillers,
                                                                              alive), episode.dt_s)
        episode.record_step(state, control, out)


def _assert_same_state(a, b) -> None:
    """The plant state, last outputs and control, and the PPO controller's state of two episodes."""
    assert _bytes(a.state.zone_temp_c) == _bytes(b.state.zone_temp_c)
    assert _bytes(a.state.chw_supply_c) == _bytes(b.state.chw_supply_c)
    for name in a.last_outputs._fields:
        assert _bytes(getattr(a.last_outputs, name)) == _bytes(getattr(b.last_outputs, name)), name
    for field in ("fan_speed", "supply_setpoint_c", "chw_setpoint_c"):
        assert _bytes(getattr(a.last_control, field)) == _bytes(getattr(b.last_control, field)), field
    ppo_a, ppo_b = a.controller.controller, b.controller.controller
    assert _bytes(ppo_a.features._previous) == _bytes(ppo_b.features._previous)
    assert _bytes(ppo_a.last_action) == _bytes(ppo_b.last_action)
    assert ppo_a.layer.trim._trims == ppo_b.layer.trim._trims and ppo_a.layer.trim_max == ppo_b.layer.trim_max


def _batch_failing_in_window_1(monkeypatch, nan_at: dict[int, int], error: type[Exception], match: str):
    """Three random-fault episodes (NaN readings at ``nan_at``) stepped as one batch through window 0, then window
    1, which raises ``error``; and the same three on the Python path after window 0, their window 1 not begun.
    Returns (batch, alone, actions)."""
    from dcops.vector_env import run_windows

    seeds = [7, 8, 9]
    batch, alone = _make(seeds, True, monkeypatch, nan_at), _make(seeds, False, monkeypatch, nan_at)
    actions = [np.zeros(env.config.max_slots, dtype=np.int64) for env in batch]
    monkeypatch.setenv(JIT_ENV, "1")
    run_windows(batch, actions)
    with pytest.raises(error, match=match):
        run_windows(batch, actions)
    monkeypatch.setenv(JIT_ENV, "0")
    for env, action in zip(alone, actions, strict=True):
        env.step({"scheduler": action})
    return batch, alone, actions


def test_an_error_mid_window_leaves_each_episode_of_the_batch_at_a_step_it_finished(monkeypatch, batched):
    """Three episodes, NaN readings at step 4 of window 1 in the second and third: the second's set-points raise
    the decoder's error. It is left as the per-episode loop leaves its episode (the Python path's, raising at the
    same step); the first, which finished the step, after step 4; the third, which did not, after step 3, its
    controller's state included (its features had taken the NaN reading)."""
    step = 4
    batch, alone, actions = _batch_failing_in_window_1(monkeypatch, {1: 18 + step, 2: 18 + step}, ValueError,
                                                       "not finite")
    _python_steps(alone[0], actions[0], step + 1)
    alone[1].begin_step({"scheduler": actions[1]})
    with pytest.raises(ValueError, match="not finite"):
        alone[1].episode.run_window()
    _python_steps(alone[2], actions[2], step)
    for env_b, env_a in zip(batch, alone, strict=True):
        _assert_same_state(env_b.episode, env_a.episode)
    assert np.isnan(batch[1].episode.controller.controller.features._previous[0])
    assert not np.isnan(batch[2].episode.controller.controller.features._previous[0])


def test_a_policy_whose_bits_the_kernels_do_not_reproduce_steps_the_per_episode_way(batched):
    shipped = shipped_policy()

    class Nudged(NumpyPolicy):
        def mean_action(self, normalised):
            return np.nextafter(super().mean_action(normalised), np.inf)

    nudged = Nudged(**{f.name: getattr(shipped, f.name) for f in dataclasses.fields(NumpyPolicy)})
    assert ppo_batched.agrees(nudged) is False
    single = Nudged(**{**{f.name: getattr(shipped, f.name) for f in dataclasses.fields(NumpyPolicy)},
                       "weights": shipped.weights[-1:], "biases": shipped.biases[-1:]})
    assert ppo_batched.agrees(single) is False  # no hidden layer: no head kernel to run it
    env = dcops.parallel_env(structured_view=False)
    env.reset(seed=0)
    actor = env.episode.controller.compiled_actor
    window = env.episode.begin_window()
    assert actor.batch_key(env.episode, window) is not None
    actor._policy = nudged
    assert actor.batch_key(env.episode, window) is None


@pytest.mark.parametrize(("kernel", "finished_first"), [("_features", False), ("_setpoints", True)])
def test_a_kernel_error_mid_window_leaves_each_episode_of_the_batch_at_a_step_it_finished(monkeypatch, batched,
                                                                                         kernel: str,
                                                                                         finished_first: bool):
    """The controller's kernel raises for the second of three episodes at step 4 of window 1 (its features in
    ``head``, its set-points in ``tail``): the error propagates; the first episode is after step 4 where its tail
    had run (``_setpoints``), else after step 3; the third, whose turn never came, after step 3, its controller's
    state included; the second, whose step did not finish, has the plant state of step 3."""
    from dcops.agents.cooling.ppo_compiled import features_kernel, setpoints_kernel

    real = compiled(features_kernel if kernel == "_features" else setpoints_kernel)
    if kernel == "_features":
        @numba.njit(error_model="python")
        def raising(telemetry, state, mean, scale, clip, out):
            if telemetry[0] != telemetry[0]:
                raise ZeroDivisionError("a controller error")
            real(telemetry, state, mean, scale, clip, out)
    else:
        @numba.njit(error_model="python")
        def raising(mean, telemetry, state, trims, constants, design, max_air, low, high, out):
            if telemetry[0] != telemetry[0]:
                raise ZeroDivisionError("a controller error")
            return real(mean, telemetry, state, trims, constants, design, max_air, low, high, out)

    _use_kernels_calling(monkeypatch, {kernel: raising})
    step = 4
    batch, alone, actions = _batch_failing_in_window_1(monkeypatch, {1: 18 + step}, ZeroDivisionError,
                                                       "a controller error")
    for env, done in zip(alone, [step + int(finished_first), step, step], strict=True):
        _python_steps(env, actions[0], done)
    _assert_same_state(batch[0].episode, alone[0].episode)
    _assert_same_state(batch[2].episode, alone[2].episode)
    assert _bytes(batch[1].episode.state.zone_temp_c) == _bytes(alone[1].episode.state.zone_temp_c)


def test_the_compiled_kernels_are_keyed_by_the_called_kernels_modules(monkeypatch, tmp_path):
    """numba's disk cache sees this file only: each batched kernel carries a digest of the called kernels' module
    files as a closure variable (which numba's cache key hashes), so an edit there recompiles them."""
    import sys

    stamp = ppo_batched._stamp()
    for kernel in (ppo_batched._kernels().head, ppo_batched._kernels().hidden, ppo_batched._kernels().tail):
        assert [cell.cell_contents for cell in kernel.py_func.__closure__] == [stamp]
    for module in ("dcops.physics.compiled_plant", "dcops.agents.cooling.ppo_compiled",
                   "dcops.cluster.compiled_window"):
        edited = tmp_path / f"{module}.py"
        edited.write_text(open(sys.modules[module].__file__).read() + "\n# an edit\n")
        monkeypatch.setattr(sys.modules[module], "__file__", str(edited))
        assert ppo_batched._stamp() != stamp, module
        monkeypatch.undo()
    assert ppo_batched._stamp() == stamp
    with pytest.raises(ValueError, match="_plants"):
        ppo_batched.kernels_calling({"_plants": None})
