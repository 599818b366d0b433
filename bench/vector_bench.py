"""Vector-environment speed: env-steps/s of ``dcops.make_vec_env`` against the single environment it batches.

Why both, in one process: the ratio (vector over single) is what batching buys on this machine whatever else
is running; the absolute figures move with machine load. The cooling vector env batches everything, so its
ratio grows with N; the cluster vector env batches only the plant physics and the cooling controller of a window
(the job logic stays per episode), so what more batching could buy is bounded by the share of a window they
still take, which is measured (``cluster_vector_physics_share_16``), and by the bound it sets: even physics that
cost nothing would raise the vector env's own windows/s by at most 1 / (1 − share)
(``cluster_vector_16_bound_with_free_physics``), its ratio to one env by the same factor. The cluster vector
env is also measured against gymnasium's ``SyncVectorEnv`` over the same single environments (what it would be
replaced by).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dcops.bench.physics_bench import _rate

COOLING_TASK = "cooling/cascading_chiller_failure"


def cooling_vector_rate(num_envs: int, task_id: str = COOLING_TASK, min_seconds: float = 1.0) -> float:
    """Env-steps per second (steps × episodes) of a cooling vector env with a fixed mid-box action."""
    import dcops

    env = dcops.make_vec_env(task_id, num_envs)
    env.reset(seed=0)
    action = np.tile((env.single_action_space.low + env.single_action_space.high) / 2.0, (num_envs, 1))

    def work() -> int:
        for _ in range(20):
            env.step(action)
        return 20 * num_envs

    return _rate(work, min_seconds)


def cluster_vector_rate(num_envs: int, min_seconds: float = 2.0, sync: bool = False, **config: Any) -> float:
    """Scheduler windows per second (windows × episodes) of the cluster vector env, accept-all actions, no
    structured view (what an RL loop uses); ``sync``: gymnasium's ``SyncVectorEnv`` over ``num_envs``
    ``dcops.make_env("cluster/operations")`` instead (the same episodes, physics stepped one plant at a time)."""
    import dcops

    if sync:
        from functools import partial

        from gymnasium.vector import SyncVectorEnv

        factory = partial(dcops.make_env, "cluster/operations", structured_view=False, **config)
        env = SyncVectorEnv([factory] * num_envs)
    else:
        env = dcops.make_vec_env("cluster/operations", num_envs, structured_view=False, **config)
    env.reset(seed=0)
    action = np.zeros((num_envs, env.single_action_space.shape[0]), dtype=np.int64)
    windows = env.envs[0].parallel.config.n_windows
    resetting = np.zeros(num_envs, dtype=bool)

    def work() -> int:
        nonlocal resetting
        played = 0
        for _ in range(windows + 1):  # an episode's windows and the next-step reset
            played += int(np.count_nonzero(~resetting))
            resetting = env.step(action)[2]
        return played

    return _rate(work, min_seconds)


def cluster_physics_share(num_envs: int = 16, steps: int = 96, **config: Any) -> float:
    """The share of a cluster vector env's wall time spent stepping its episodes' plants and cooling controllers
    (``compiled_window.step_batches`` for the PPO controller, ``ClusterEpisode.step_compiled`` for another compiled
    controller, and the batched array step of episodes without a compiled form), timed
    around those calls over ``steps`` vector steps (after a warm-up): what batching the physics could at most
    remove, so while the per-request game stays per episode the vector env's windows/s cannot rise by more than
    1 / (1 − share), nor its ratio to one env. The three calls are wrapped for the measurement and restored after it."""
    import time

    import dcops
    from dcops import vector_env
    from dcops.cluster.episode import ClusterEpisode

    env = dcops.make_vec_env("cluster/operations", num_envs, structured_view=False, **config)
    env.reset(seed=0)
    action = np.zeros((num_envs, env.single_action_space.shape[0]), dtype=np.int64)
    for _ in range(8):
        env.step(action)
    spent = [0.0]
    compiled, batched, together = ClusterEpisode.step_compiled, vector_env._step_batched, vector_env.step_batches

    def timed(function: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args)
            finally:
                spent[0] += time.perf_counter() - start
        return wrapper

    ClusterEpisode.step_compiled, vector_env._step_batched = timed(compiled), timed(batched)
    vector_env.step_batches = timed(together)
    try:
        start = time.perf_counter()
        for _ in range(steps):
            env.step(action)
        total = time.perf_counter() - start
    finally:
        ClusterEpisode.step_compiled, vector_env._step_batched = compiled, batched
        vector_env.step_batches = together
    return spent[0] / total


def run_vector_bench(cooling_env_steps_per_s: float, cluster_windows_per_s: float) -> dict[str, Any]:
    """Vector figures with their ratios to the single-environment figures measured in the same run (the cluster
    one with the default cooling, PPO)."""
    figures: dict[str, Any] = {}
    for n in (8, 64):
        figures[f"cooling_vector_env_steps_per_s_{n}"] = cooling_vector_rate(n)
    figures["cluster_vector_windows_per_s_16"] = cluster_vector_rate(16, cooling="ppo")
    # The batched physics against gymnasium's SyncVectorEnv of the same 8 episodes, alternated so that both see
    # the same machine load (best of three each).
    batched, sync = [], []
    for _ in range(3):
        batched.append(cluster_vector_rate(8, min_seconds=1.0, cooling="ppo"))
        sync.append(cluster_vector_rate(8, min_seconds=1.0, sync=True, cooling="ppo"))
    figures["cluster_vector_windows_per_s_8"] = max(batched)
    figures["cluster_sync_vector_windows_per_s_8"] = max(sync)
    figures["cluster_vector_physics_share_16"] = share = cluster_physics_share(16, cooling="ppo")
    figures["ratios"] = {
        "cooling_vector_64_over_single_env": figures["cooling_vector_env_steps_per_s_64"] / cooling_env_steps_per_s,
        "cluster_vector_16_over_single_env": figures["cluster_vector_windows_per_s_16"] / cluster_windows_per_s,
        "cluster_vector_8_over_sync_vector_env_8": max(batched) / max(sync),
        # Amdahl's bound on what making the physics free could still buy the vector env (cluster_physics_share).
        "cluster_vector_16_bound_with_free_physics": 1.0 / (1.0 - share),
    }
    # Issue #28: 16 batched episodes at least 6× one env's windows per second (not met: README, Speed).
    figures["targets"] = {"cluster_vector_16_over_single_env >= 6": figures["ratios"][
        "cluster_vector_16_over_single_env"] >= 6.0}
    return figures
