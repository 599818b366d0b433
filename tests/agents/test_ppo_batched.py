"""Episodes stepped together through the batched kernels (``dcops.agents.cooling.ppo_batched``) equal their Python
paths byte for byte: a declined or raising plant step, several episodes at once, and a policy whose bits the
kernels would not reproduce is left to the per-episode path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dcops
import dcops.agents.cooling.ppo_batched as ppo_batched
from dcops.agents.cooling.ppo import NumpyPolicy, shipped_policy
from dcops.physics.compiled_plant import JIT_ENV, compiled, plant_kernel
from tests.cluster.test_compiled_window import _assert_same_episode, _faulty_episode

numba = pytest.importorskip("numba")


def _declining_kernels(monkeypatch):
    """Batched kernels whose plant step declines (returns False) or raises ``ZeroDivisionError`` on about two
    steps in seven, chosen by the zone temperature's bits, compiled for this test only (not cached)."""
    kernel = compiled(plant_kernel)

    @numba.njit(error_model="python")
    def declining(zones, c, zone0, chw0, fan, supply, chw, econ, it, alive, dry, wet, chillers, dt, out_zone,
                  out_plant):
        pick = int(abs(zone0[0]) * 1e6) % 7
        if pick == 3:
            return False
        if pick == 5:
            raise ZeroDivisionError("as the float path raises it")
        return kernel(zones, c, zone0, chw0, fan, supply, chw, econ, it, alive, dry, wet, chillers, dt, out_zone,
                      out_plant)

    ppo_batched._kernels()  # the callees bound to their compiled forms
    monkeypatch.setattr(ppo_batched, "_plant", declining)
    head, hidden, tail = (numba.njit(error_model="python")(f) for f in ppo_batched._make_kernels("test"))
    kernels = ppo_batched._Kernels(head, hidden, tail, kernel)
    monkeypatch.setattr(ppo_batched, "_kernels", lambda: kernels)


def test_declined_and_raising_plant_steps_run_through_step_plant(monkeypatch):
    _declining_kernels(monkeypatch)
    calls = {"python": 0}
    python_step = ppo_batched._Batch._python_step

    def counted(self, *args):
        calls["python"] += 1
        return python_step(self, *args)

    monkeypatch.setattr(ppo_batched._Batch, "_python_step", counted)
    declined_run = _faulty_episode(monkeypatch, jit=True)
    assert calls["python"] >= 40  # of 144 steps: both kinds of hand-back were exercised
    _assert_same_episode(declined_run, _faulty_episode(monkeypatch, jit=False))


def _episode_digest(env) -> list[bytes]:
    episode = env.episode
    return [getattr(episode, name).tobytes() for name in ("facility_kw", "cooling_kw", "inlet_c", "it_kw_total")]


@pytest.mark.parametrize("declining", [False, True])
def test_a_batch_of_random_fault_episodes_equals_each_episode_on_the_python_path(monkeypatch, declining: bool):
    """Five episodes with random faults (different trips, fan failures, drifts) stepped as one batch, window
    by window, give each episode's Python-path records and rewards, byte for byte."""
    from dcops.vector_env import run_windows

    if declining:
        _declining_kernels(monkeypatch)
    seeds = [3, 14, 15, 92, 65]
    monkeypatch.setenv(JIT_ENV, "1")
    batch = [dcops.parallel_env(structured_view=False, faults="random") for _ in seeds]
    for env, seed in zip(batch, seeds, strict=True):
        env.reset(seed=seed)
    monkeypatch.setenv(JIT_ENV, "0")
    alone = [dcops.parallel_env(structured_view=False, faults="random") for _ in seeds]
    for env, seed in zip(alone, seeds, strict=True):
        env.reset(seed=seed)
    rng = np.random.default_rng(5)
    together = []
    while batch[0].agents:
        actions = [rng.integers(0, 4, size=env.config.max_slots) for env in batch]
        monkeypatch.setenv(JIT_ENV, "1")
        stepped = run_windows(batch, actions)
        monkeypatch.setenv(JIT_ENV, "0")
        for env, action, (_, reward, *_) in zip(alone, actions, stepped, strict=True):
            _, rewards, *_ = env.step({"scheduler": action})
            assert reward == rewards["scheduler"]
        together.append(stepped)
    for env_b, env_a in zip(batch, alone, strict=True):
        assert _episode_digest(env_b) == _episode_digest(env_a)
    assert len(together) == batch[0].config.n_windows


def test_a_policy_whose_bits_the_kernels_do_not_reproduce_steps_the_per_episode_way():
    shipped = shipped_policy()
    assert ppo_batched.agrees(shipped) in (True, False)  # a machine-dependent fact, checked once per process

    class Nudged(NumpyPolicy):
        def mean_action(self, normalised):
            return np.nextafter(super().mean_action(normalised), np.inf)

    nudged = Nudged(**{f.name: getattr(shipped, f.name) for f in dataclasses.fields(NumpyPolicy)})
    assert ppo_batched.agrees(nudged) is False
    env = dcops.parallel_env(structured_view=False)
    env.reset(seed=0)
    actor = env.episode.controller.compiled_actor
    window = env.episode.begin_window()
    assert (actor.batch_key(env.episode, window) is not None) is ppo_batched.agrees(shipped)
    actor._policy = nudged
    assert actor.batch_key(env.episode, window) is None
