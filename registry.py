"""Task registry: task id -> ``"module:factory"``, imported lazily so ``import dcops`` stays light.

Each factory takes keyword configuration and returns a ``gymnasium.Env``.

**Gymnasium ids.** ``import dcops`` also registers every task in Gymnasium's registry
(:func:`register_gymnasium`), with the same ``"module:factory"`` strings as entry points, so no environment
module is imported until ``gymnasium.make`` builds one. The id of a task follows one rule (:func:`gym_id`):

    ``<family>/<name>[_v<N>]``  →  ``dcops/<Family><Name>-v<N>``  (N = 0 when the task id has no suffix)

where ``<Family><Name>`` is the CamelCase of the family and the name without its version suffix:
``cooling/cascading_chiller_failure`` → ``dcops/CoolingCascadingChillerFailure-v0``,
``cooling/cascading_chiller_failure_v1`` (plant v2) → ``dcops/CoolingCascadingChillerFailure-v1``,
``cluster/operations`` → ``dcops/ClusterOperations-v0``. The Gymnasium version is the task's own version, not
the cluster game's (``ClusterOperations-v0`` plays ``datacenter_ops_v1``, the default game, like
``cluster/operations``). Every cooling task, whose ``Box`` action is in physical units (°C, fan fraction, ...),
has a second id with ``Normalized`` after the name (``dcops/CoolingCascadingChillerFailureNormalized-v0``): the
same environment under ``gymnasium.wrappers.RescaleAction(-1, 1)``, recorded in the spec so ``gymnasium.make(
env.spec)`` rebuilds it; -1 maps to the physical lower bound and 1 to the upper, linearly.
``gymnasium.make(id, **config)`` passes ``config`` to the factory as ``dcops.make_env(task_id, **config)`` does.

**Action masks.** Every masked environment follows one convention: the masked tasks (``cluster/operations``,
``queue/weighted_tardiness``, ``placement/*``) and the multi-agent ``datacenter_ops`` scheduler. The mask,
``action_mask``, is a 1-D int8 array with one entry per logit of the action, 1 where the choice is valid: ``n``
entries for ``Discrete(n)``; ``sum(nvec)`` for ``MultiDiscrete(nvec)``, dimension after dimension (entry
``slot · A + code`` of the scheduler's ``[A] × S``), the layout sb3-contrib's ``MaskablePPO`` and RLlib
masking modules read. It is in the observation when the observation is a ``Dict`` (``obs["action_mask"]``),
in the info otherwise (``info["action_mask"]``), where PettingZoo's tests look for it; every action space
samples with it (``space.sample(mask)``; for ``MultiDiscrete``, ``dcops.cluster.decisions.SlotDecisions``);
and a single-agent task's ``action_masks()`` returns the same mask as bool, the hook ``MaskablePPO`` calls.
``tests/test_action_masks.py`` checks every registered task and the multi-agent environment against it.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

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


GYM_NAMESPACE = "dcops"
"""The namespace of every dcops id in Gymnasium's registry."""

NORMALIZED = "Normalized"
"""What a normalised-action id adds after the name (cooling tasks only)."""

_RESCALE_TO_UNIT = WrapperSpec(
    name="RescaleAction",
    entry_point="gymnasium.wrappers.transform_action:RescaleAction",  # where the wrapper's own spec says it lives
    kwargs={"min_action": -1.0, "max_action": 1.0},
)


def has_physical_box_action(task_id: str) -> bool:
    """Whether ``task_id``'s action is a ``Box`` in physical units (the cooling tasks), so it has a
    ``Normalized`` Gymnasium id."""
    return task_id.startswith("cooling/")


def gym_id(task_id: str, normalized: bool = False) -> str:
    """The Gymnasium id of ``task_id`` (module docstring: the naming rule).

    :param task_id: a registered task id, e.g. ``"cooling/single_zone_recovery_v1"``.
    :param normalized: the id of the ``[-1, 1]`` action form (cooling tasks only).
    :raises KeyError: for an unknown task, or ``normalized`` for a task whose action is not a physical ``Box``.
    """
    if task_id not in _TASKS:
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(tasks())}")
    if normalized and not has_physical_box_action(task_id):
        raise KeyError(f"task {task_id!r} has no normalised form (only the cooling tasks' Box actions do)")
    family, name = task_id.split("/")
    versioned = re.fullmatch(r"(?P<base>.+)_v(?P<version>\d+)", name)
    base, version = (versioned["base"], int(versioned["version"])) if versioned else (name, 0)
    camel = "".join(word.capitalize() for word in f"{family}_{base}".split("_"))
    return f"{GYM_NAMESPACE}/{camel}{NORMALIZED if normalized else ''}-v{version}"


def gym_ids() -> dict[str, str]:
    """Every dcops Gymnasium id -> its task id (the normalised ids included)."""
    ids = {gym_id(task_id): task_id for task_id in tasks()}
    ids.update({gym_id(task_id, normalized=True): task_id for task_id in tasks() if has_physical_box_action(task_id)})
    return ids


def register_gymnasium() -> None:
    """Register every task in Gymnasium's registry (lazily: entry points are ``"module:factory"`` strings).

    Idempotent: an id already registered (a second import of the package) is left as it is, so Gymnasium never
    warns about overriding it."""
    for identifier, task_id in gym_ids().items():
        if identifier in gym.registry:
            continue
        normalized = identifier != gym_id(task_id)
        gym.register(id=identifier, entry_point=_TASKS[task_id],
                     additional_wrappers=(_RESCALE_TO_UNIT,) if normalized else ())
