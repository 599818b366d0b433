"""Vector-environment speed: env-steps/s of ``dcops.make_vec_env`` against the single environment it batches.

Why both, in one process: the ratio (vector over single) is what batching buys on this machine whatever else
is running; the absolute figures move with machine load. The cooling vector env batches everything, so its
ratio grows with N; the cluster vector env batches only the plant physics and the cooling controller of a window
(the job logic stays per episode), so what more batching could buy is bounded by the share of a window they
still take, which is measured (``cluster_vector_physics_share_16``), and by the bound it sets: even physics that
cost nothing would raise the vector env's own windows/s by at most 1 / (1 − share)
(``cluster_vector_16_bound_with_free_physics``), its ratio to one env by the same factor. The other parts of a
window are measured the same way (``cluster_vector_window_shares_16``: teams, oversight, bookkeeping, dispatch,
scoring, observations, resets), which is what any further batching would have to take on. The cluster vector
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


PHYSICS = "plant and cooling controller"
"""The part of :func:`cluster_window_shares` that batching across episodes covers today."""


def window_parts() -> dict[str, list[tuple[Any, str]]]:
    """The parts of a cluster vector window that :func:`cluster_window_shares` times: for each, the (owner,
    attribute) of the calls whose time is its own (exclusive of the other parts' calls made inside them)."""
    from dcops import env as env_module
    from dcops import vector_env
    from dcops.agents.teams.base import TeamBase
    from dcops.cluster.episode import ClusterEpisode
    from dcops.oversight.calibrated import CalibratedMonitor
    from dcops.oversight.monitor import OversightMonitor

    def defining(cls: type, name: str) -> list[tuple[Any, str]]:  # the class and every subclass that overrides
        found, stack = [], [cls]
        while stack:
            klass = stack.pop()
            stack.extend(klass.__subclasses__())
            if name in vars(klass):
                found.append((klass, name))
        return found

    ops = env_module.DatacenterOpsEnv
    return {
        PHYSICS: [(ClusterEpisode, "step_compiled"), (vector_env, "_step_batched"), (vector_env, "step_batches")],
        "teams drafting and stating requests": defining(TeamBase, "submit"),
        "oversight monitor": [(CalibratedMonitor, "observe"), (CalibratedMonitor, "take_requests"),
                              (OversightMonitor, "observe")],
        "requests' bookkeeping (ledger, team statistics, observation rows)": [(ops, "_submit")],
        "decisions, queue, dispatch and the window's IT load": [(ops, "begin_step"), (ClusterEpisode, "begin_window")],
        "window scoring, completions and audits": [(ClusterEpisode, "end_window")],
        "observations and infos": [(ops, "_observe")],
        "episode resets (set-up)": [(ops, "reset")],
    }


def cluster_window_shares(num_envs: int = 16, steps: int = 96, **config: Any) -> dict[str, float]:
    """Where a cluster vector env's wall time goes: each part's share (:func:`window_parts`), timed around its
    calls over ``steps`` vector steps (after a warm-up), exclusive of the other parts' calls made inside them
    (a reset's first requests count as the teams' and the bookkeeping's), and ``"the rest"``: the vector env's own
    batching and info merge, rewards, flag counting, audit statistics, the teams' feedback and episode summaries,
    and the timing's own cost (a few hundred wrapped calls a vector step, each timed). Batching across
    episodes covers :data:`PHYSICS` today, so while the rest of the game stays per episode the vector env's
    windows/s cannot rise by more than 1 / (1 − that share), nor its ratio to one env. The timed calls are wrapped
    for the measurement and restored after it."""
    import functools
    import time

    import dcops

    env = dcops.make_vec_env("cluster/operations", num_envs, structured_view=False, **config)
    env.reset(seed=0)
    action = np.zeros((num_envs, env.single_action_space.shape[0]), dtype=np.int64)
    for _ in range(8):
        env.step(action)
    parts = window_parts()
    spent = dict.fromkeys(parts, 0.0)
    inner = [0.0]  # time of timed calls inside the one running now (subtracted from it)

    def timed(part: str, function: Any) -> Any:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            outer, inner[0] = inner[0], 0.0
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                spent[part] += elapsed - inner[0]
                inner[0] = outer + elapsed
        return wrapper

    originals = [(owner, name, vars(owner)[name]) for targets in parts.values() for owner, name in targets]
    try:
        for part, targets in parts.items():
            for owner, name in targets:
                setattr(owner, name, timed(part, vars(owner)[name]))
        start = time.perf_counter()
        for _ in range(steps):
            env.step(action)
        total = time.perf_counter() - start
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    shares = {part: value / total for part, value in spent.items()}
    shares["the rest"] = 1.0 - sum(shares.values())
    return shares


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
    shares = cluster_window_shares(16, cooling="ppo")
    figures["cluster_vector_window_shares_16"] = shares
    figures["cluster_vector_physics_share_16"] = share = shares[PHYSICS]
    figures["ratios"] = {
        "cooling_vector_64_over_single_env": figures["cooling_vector_env_steps_per_s_64"] / cooling_env_steps_per_s,
        "cluster_vector_16_over_single_env": figures["cluster_vector_windows_per_s_16"] / cluster_windows_per_s,
        "cluster_vector_8_over_sync_vector_env_8": max(batched) / max(sync),
        # Amdahl's bound on what making the physics free could still buy the vector env (cluster_window_shares).
        "cluster_vector_16_bound_with_free_physics": 1.0 / (1.0 - share),
    }
    # Issue #28: 16 batched episodes at least 6× one env's windows per second (not met: README, Speed).
    figures["targets"] = {"cluster_vector_16_over_single_env >= 6": figures["ratios"][
        "cluster_vector_16_over_single_env"] >= 6.0}
    return figures
