"""Parameter sharing on one machine: every learner team of ``datacenter_ops`` as one SB3 vector env (SuperSuit).

SuperSuit's ``pettingzoo_env_to_vec_env_v1`` turns a ``ParallelEnv`` whose agents all share one observation and
one action space into a vector env with one slot per agent, so a single stable-baselines3 policy acts for all of
them (parameter sharing); ``concat_vec_envs_v1`` stacks several such environments. Two things make
``datacenter_ops`` fit:

- the scheduler has its own spaces (a ``Dict`` observation, ``MultiDiscrete([6] × 48)``), so it is scripted:
  :class:`dcops.training.marl.env.RoleEnv` with ``scheduler=<baseline name>`` exposes only the learner teams;
- the learner teams' views are already homogeneous (``Box(16,)`` and ``MultiDiscrete([4, 4, 2] × 4)`` for every
  team, whatever its id), so ``pad_observations_v0`` / ``pad_action_space_v0`` would be no-ops and are not applied
  (:func:`team_vec_env` checks it and raises if a future change makes them differ).

Vector slots: ``n_envs × L`` where L is the number of ``"learner"`` entries in ``team_kinds``; slot ``i·L + k``
is ``learner_k`` of environment ``i``.

SuperSuit 3.11's SB3 wrapper predates SB3's ``VecEnv.seed`` (SB3 ≥ 2 calls ``env.seed(seed)`` when a model is
built with ``seed=``); :class:`SeededSB3VecEnv` stores the seed and passes it to the next reset, as SB3's own
vector envs do.
"""

from __future__ import annotations

from typing import Any

from supersuit import concat_vec_envs_v1, pettingzoo_env_to_vec_env_v1
from supersuit.vector.sb3_vector_wrapper import SB3VecEnvWrapper

from dcops.training.marl.env import RoleEnv

DEFAULT_TEAM_KINDS = ("cooperative", "strategic", "learner", "learner")
"""Two honest/strategic scripted teams and two learner teams sharing one policy."""


class SeededSB3VecEnv(SB3VecEnvWrapper):
    """SuperSuit's SB3 wrapper with ``seed`` (module docstring): the seed applies to the next reset."""

    def __init__(self, venv: Any) -> None:
        super().__init__(venv)
        self._next_seed: int | None = None

    def seed(self, seed: int | None = None) -> list[int | None]:
        self._next_seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self._next_seed = seed
        observations, self.reset_infos = self.venv.reset(seed=self._next_seed, options=options)
        self._next_seed = None
        return observations


def team_vec_env(n_envs: int = 2, scheduler: str = "priority_threshold", **env_config: Any) -> SeededSB3VecEnv:
    """An SB3 ``VecEnv`` with one slot per learner team per environment (module docstring).

    :param n_envs: environments stacked (each contributes one slot per learner team).
    :param scheduler: the scripted scheduler (a name of ``dcops.agents.schedulers.BASELINES``).
    :param env_config: arguments of :func:`dcops.parallel_env`; ``team_kinds`` defaults to
        :data:`DEFAULT_TEAM_KINDS` and must contain ``"learner"``.
    """
    if n_envs < 1:
        raise ValueError(f"n_envs must be at least 1, got {n_envs}")
    if scheduler == "learner":
        raise ValueError("scheduler must be scripted here (a baseline name): SuperSuit shares one policy")
    env_config.setdefault("team_kinds", DEFAULT_TEAM_KINDS)
    if "learner" not in env_config["team_kinds"]:
        raise ValueError(f"team_kinds must contain 'learner', got {tuple(env_config['team_kinds'])}")
    env = RoleEnv(scheduler=scheduler, **env_config)
    spaces = {(repr(env.observation_space(a)), repr(env.action_space(a))) for a in env.possible_agents}
    if len(spaces) != 1:
        raise ValueError(f"learner team spaces differ ({spaces}): pad them (supersuit pad_observations_v0, "
                         "pad_action_space_v0) before sharing one policy")
    vec = pettingzoo_env_to_vec_env_v1(env)
    concat = concat_vec_envs_v1(vec, n_envs, num_cpus=0, base_class="gymnasium")
    return SeededSB3VecEnv(concat)
