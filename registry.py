"""Task registry: task id -> ``"module:factory"``, imported lazily so ``import dcops`` stays light.

Each factory takes keyword configuration and returns a ``gymnasium.Env``.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym

_TASKS: dict[str, str] = {
    "cooling/single_zone_recovery": "dcops.cooling_env:make_single_zone_recovery",
    "cooling/multi_zone_sensor_drift": "dcops.cooling_env:make_multi_zone_sensor_drift",
    "cooling/cascading_chiller_failure": "dcops.cooling_env:make_cascading_chiller_failure",
    "cooling/single_zone_recovery_v1": "dcops.cooling_env_v1:make_single_zone_recovery",
    "cooling/multi_zone_sensor_drift_v1": "dcops.cooling_env_v1:make_multi_zone_sensor_drift",
    "cooling/cascading_chiller_failure_v1": "dcops.cooling_env_v1:make_cascading_chiller_failure",
    "cooling/daily_operations_v1": "dcops.cooling_env_v1:make_daily_operations",
    "cluster/operations": "dcops.env:make_scheduler_env",
    "queue/weighted_tardiness": "dcops.cluster.queue.env:make_queue_env",
    "placement/deadline_crunch": "dcops.cluster.placement.env:make_deadline_crunch",
    "placement/cost_pressure": "dcops.cluster.placement.env:make_cost_pressure",
    "placement/wait_for_capacity": "dcops.cluster.placement.env:make_wait_for_capacity",
    "placement/reserve_large_gpu": "dcops.cluster.placement.env:make_reserve_large_gpu",
    "placement/generated": "dcops.cluster.placement.env:make_generated",
}


def tasks() -> list[str]:
    """Return every registered task id, sorted."""
    return sorted(_TASKS)


def make_env(task_id: str, **config: Any) -> gym.Env:
    """Build the Gymnasium environment registered as ``task_id`` with ``config`` overrides.

    :raises KeyError: for an unknown task id (the message lists the known ones).
    """
    try:
        target = _TASKS[task_id]
    except KeyError:
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(tasks())}") from None
    module_name, factory_name = target.split(":")
    factory = getattr(importlib.import_module(module_name), factory_name)
    return factory(**config)
