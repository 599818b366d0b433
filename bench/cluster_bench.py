"""Cluster environment speed: scheduler windows per second of ``datacenter_ops_v0`` with the rule-based cooling.

One window is a full environment step: the scheduler's decisions, 18 physics steps of the plant (5 min each)
under the rule-based controller, completions, audits, the reward, oversight, the teams' next submissions and
every agent's observation. Resets are included (an episode is 8 windows). The scheduler action is a fixed
array (accept every slot), so the figure measures the environment, not a policy. Measured with the structured
view for language agents (the default) and without it (``structured_view=False``, what an RL loop needs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dcops.bench.physics_bench import _rate


def cluster_window_rate(structured_view: bool = True, min_seconds: float = 2.0, **config: Any) -> float:
    """Environment windows per second, resets included (see the module docstring)."""
    import dcops

    env = dcops.parallel_env(structured_view=structured_view, **config)
    action = {"scheduler": np.zeros(env.config.max_slots, dtype=np.int64)}
    seed = [0]

    def work() -> int:
        env.reset(seed=seed[0])
        seed[0] += 1
        windows = 0
        while env.agents:
            env.step(action)
            windows += 1
        return windows

    return _rate(work, min_seconds)


def run_cluster_bench(physics_steps_per_s: float | None = None) -> dict[str, Any]:
    """The cluster figures, with the physics-only ceiling (18 plant steps per window) when given."""
    with_view = cluster_window_rate(structured_view=True)
    without_view = cluster_window_rate(structured_view=False)
    figures: dict[str, Any] = {
        "cluster_windows_per_s": with_view,
        "cluster_windows_per_s_no_view": without_view,
    }
    if physics_steps_per_s:
        figures["cluster_window_physics_share"] = with_view * 18.0 / physics_steps_per_s
    figures["targets"] = {"cluster_windows_per_s >= 500": with_view >= 500.0}
    return figures
