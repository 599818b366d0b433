"""``datacenter_ops_v1`` in PettingZoo's convention: ``env()``, ``raw_env()`` and ``parallel_env()``.

=====================  ===================================================================================
Import                 ``from dcops import datacenter_ops_v1``
Creation               ``datacenter_ops_v1.parallel_env(**config)`` (native ``ParallelEnv``);
                       ``datacenter_ops_v1.env(**config)`` (AEC, order enforced); ``raw_env(**config)`` (AEC,
                       unwrapped)
Agents                 ``learner_0`` … ``learner_{L-1}`` (one per ``"learner"`` in ``team_kinds``; none by
                       default), ``cooling`` (with ``cooling="agent"``), then ``scheduler``
Actions, observations  as :mod:`dcops.env` (scheduler ``MultiDiscrete([6] × 48)``, observation ``Dict`` with an
                       int8 ``action_mask`` (288,))
State                  ``state()`` in ``state_space``: ``Box(1692,)`` float32 with the defaults, every agent's
                       observation flattened end to end
Render modes           ``"ansi"`` (``render()`` returns text), ``"human"`` (``render()`` prints it)
Episode                8 admission windows (``n_windows``), or ``max_cycles`` if fewer (then truncated)
=====================  ===================================================================================

The environment is :class:`dcops.env.DatacenterOpsEnv` in game version 1, the one ``dcops.parallel_env()``
gives; ``dcops.env``'s module docstring is its manual (observations, actions, rewards with a worked example,
episode end, every argument). This module adds nothing to the game, only PettingZoo's three constructors
(with the RL default ``structured_view=False``, below):

- ``parallel_env(**config)``: the ``ParallelEnv`` itself (every agent acts at once, one step per window).
- ``raw_env(**config)``: the same game as an ``AECEnv``, by PettingZoo's ``parallel_to_aec_wrapper``: the
  agents act in turn (``agent_iter()``), and the window runs when the last live agent of the cycle has acted.
- ``env(**config)``: ``raw_env`` under PettingZoo's ``OrderEnforcingWrapper`` (``parallel_to_aec``), the form
  to hand to AEC code and to ``pettingzoo.test.api_test``.

Only agents whose actions change the game are agents: learner teams, the cooling agent if asked for, and the
scheduler, in that order (scripted teams decide for themselves; ``dcops.env``, **Agents**). The scheduler is last
because ``pettingzoo.test.api_test`` compares every agent's observation with the first agent's as arrays and
the scheduler observes a ``Dict``: in this order ``api_test`` passes unmodified on every configuration. Its
``action_mask`` is the flat int8 mask of ``dcops.registry``'s convention, and its action space samples with it
(``env.action_space("scheduler").sample(observation["action_mask"])``, as PettingZoo's tests do).

**Arguments** (all keyword, the same for the three): those of :func:`dcops.env.parallel_env` (``n_windows``,
``team_kinds``, ``cooling``, ``faults``, ..., ``render_mode``, ``team_factory``), ``max_cycles`` (``None``: the
episode runs its ``n_windows`` windows; an integer below that: every agent is truncated after ``max_cycles``
windows) and ``structured_view``, which is **False** here: this is the entry for RL, so the scheduler's info
carries no ``view`` (and no posterior is computed for it), which keeps infos small and steps fast. Language
agents, evaluations and the server read the view: ``structured_view=True`` here, or ``dcops.parallel_env()``,
where it is on by default. ``game_version`` is 1 here (another raises ``ValueError``: version 0 is
``dcops.parallel_env(game_version=0)``).

Invalid scheduler input is penalised and reported, never raised (``dcops.env``), so ``env()`` has no
``AssertOutOfBoundsWrapper``: it would refuse the structured actions the scheduler may pass.

Example::

    from dcops import datacenter_ops_v1

    env = datacenter_ops_v1.env(render_mode="human", max_cycles=4, team_kinds=("cooperative", "learner"))
    env.reset(seed=0)
    for agent in env.agent_iter():  # learner_0, then scheduler, every window
        observation, reward, termination, truncation, info = env.last()
        mask = observation["action_mask"] if agent == "scheduler" else None
        env.step(None if termination or truncation else env.action_space(agent).sample(mask))
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from dcops.env import DatacenterOpsEnv, env_name

GAME_VERSION = 1
"""The game this module builds (``env_name(GAME_VERSION)`` is the module's name)."""

__all__ = ["env", "parallel_env", "raw_env"]


def parallel_env(**config: Any) -> DatacenterOpsEnv:
    """The ``ParallelEnv`` (module docstring: arguments; ``structured_view`` defaults to False here).

    :raises ValueError: for a ``game_version`` other than 1.
    """
    version = config.pop("game_version", GAME_VERSION)
    if version != GAME_VERSION:
        raise ValueError(f"game_version: {env_name(GAME_VERSION)} is game version {GAME_VERSION}, got {version!r}; "
                         "dcops.parallel_env(game_version=0) builds version 0")
    config.setdefault("structured_view", False)
    return DatacenterOpsEnv(game_version=GAME_VERSION, **config)


def raw_env(**config: Any) -> AECEnv:
    """The AEC form without wrappers (PettingZoo's ``parallel_to_aec_wrapper`` over :func:`parallel_env`)."""
    return parallel_to_aec_wrapper(parallel_env(**config))


def env(**config: Any) -> AECEnv:
    """The AEC form with PettingZoo's order enforcing (``parallel_to_aec`` over :func:`parallel_env`)."""
    return parallel_to_aec(parallel_env(**config))
