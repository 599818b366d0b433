"""dcops: a multi-agent datacenter operations platform.

Public API (shared by users and tests):

- ``dcops.tasks()``: the registered task ids.
- ``dcops.make_env(task_id, **config)``: a Gymnasium environment for a single-agent task.
- ``dcops.make_vec_env(task_id, num_envs, **config)``: N episodes of a cooling task or ``cluster/operations``
  stepped together, as a Gymnasium ``VectorEnv`` (``dcops.vector_env``).
- ``dcops.make_sb3_vec_env(task_id, num_envs, **config)``: a Stable-Baselines3 ``VecEnv`` (``DummyVecEnv`` or
  ``SubprocVecEnv``) of any task, over ``gymnasium.make(dcops.gym_id(task_id))``, for SB3 algorithms (needs the
  ``train`` extra).
- ``dcops.parallel_env(**config)``: the PettingZoo ``ParallelEnv`` (``datacenter_ops``); the module
  ``dcops.datacenter_ops_v1`` gives it in PettingZoo's convention (``env()``, ``parallel_env()``, ``raw_env()``).
- ``dcops.gym_id(task_id)``: the task's Gymnasium id; importing ``dcops`` registers every task with Gymnasium, so
  ``gymnasium.make("dcops/CoolingCascadingChillerFailure-v0")`` works (``dcops.registry``: the naming rule).

Importing ``dcops`` is light: it never imports torch or the LLM stack, nor any environment module (the
Gymnasium entry points are ``"module:factory"`` strings).
"""

from __future__ import annotations

from typing import Any

from dcops.registry import gym_id, make_env, register_gymnasium, tasks

__version__ = "0.1.0"

__all__ = ["__version__", "gym_id", "make_env", "make_sb3_vec_env", "make_vec_env", "parallel_env", "tasks"]

register_gymnasium()


def parallel_env(**config: Any):
    """Return the PettingZoo parallel environment ``datacenter_ops`` (see ``dcops.env``)."""
    from dcops.env import parallel_env as _parallel_env

    return _parallel_env(**config)


def __getattr__(name: str) -> Any:
    # ``dcops.datacenter_ops_v1`` without importing it first (PEP 562), so ``import dcops`` stays light.
    if name == "datacenter_ops_v1":
        import dcops.datacenter_ops_v1  # sets the attribute on the package, so this runs once

        return dcops.datacenter_ops_v1
    raise AttributeError(f"module 'dcops' has no attribute {name!r}")


def make_vec_env(task_id: str, num_envs: int, **config: Any):
    """A Gymnasium ``VectorEnv`` of ``num_envs`` episodes of ``task_id`` stepped together (``dcops.vector_env``:
    cooling tasks fully batched, ``cluster/operations`` with its plant physics batched); ``config`` as for
    :func:`make_env`, plus ``autoreset_mode``.

    :raises KeyError: for a task without a vector form (the message lists those with one).
    """
    from dcops.vector_env import make_vec_env as _make_vec_env

    return _make_vec_env(task_id, num_envs, **config)


def make_sb3_vec_env(task_id: str, num_envs: int, **config: Any):
    """A Stable-Baselines3 ``VecEnv`` of ``num_envs`` environments of ``task_id`` (``dcops.vector_env.
    make_sb3_vec_env``: ``seed``, ``normalized``, ``vec_env_cls``); ``config`` as for :func:`make_env`. Imports
    stable-baselines3 (the ``train`` extra) only when called."""
    from dcops.vector_env import make_sb3_vec_env as _make_sb3_vec_env

    return _make_sb3_vec_env(task_id, num_envs, **config)
