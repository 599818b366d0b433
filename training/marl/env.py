"""The learner-facing view of ``datacenter_ops`` for RLlib's masking module and SuperSuit.

:class:`RoleEnv` is a PettingZoo ``ParallelEnv`` over :class:`dcops.env.DatacenterOpsEnv`, whose agents are
already the ones a learner needs (``learner_0`` … for the teams of kind ``"learner"``, under names that do not
change between episodes, then ``scheduler``; ``dcops.env``, **Agents**). It does two things on top:

- ``scheduler`` (when ``scheduler="learner"``): its ``Dict`` observation becomes
  ``Dict(observations=Box(F,), action_mask=Box(S·A,) int8)``, the form
  :class:`dcops.training.marl.masking.MaskedPPOTorchRLModule` reads: ``observations`` concatenates the flattened
  ``requests``, ``request_mask``, ``cluster``, ``zones`` and ``teams`` arrays (F = 1404 with the defaults);
  ``action_mask`` is the environment's own (one entry per logit of the ``MultiDiscrete([A] × S)`` action, slot
  after slot: ``dcops.registry``, **Action masks**). The action is the environment's own.
- with ``scheduler`` set to a baseline name (``dcops.agents.schedulers.BASELINES``), the scheduler is scripted
  and not exposed: it decides from the structured public view every window (the only case that builds it).

Learners' observations, actions, rewards and infos (``infos[learner_k]["team"]`` is its team id this episode)
are the environment's. Every learner team has the same spaces (``Box(16,)``, ``MultiDiscrete([4, 4, 2] × 4)``),
so parameter sharing (SuperSuit) needs no padding. The optional ``cooling`` agent is not supported here
(``cooling`` must be scripted). The scheduler's info is kept small (infos travel through RLlib's episodes): its
reward terms and, at the end, the episode score. The object pickles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from dcops.env import SCHEDULER, DatacenterOpsEnv, learner_name

__all__ = ["FLAT_KEYS", "SCHEDULER", "RoleEnv", "learner_name"]

FLAT_KEYS = ("requests", "request_mask", "cluster", "zones", "teams")
"""Scheduler observation arrays concatenated (flattened, in this order) into ``observations``."""


class RoleEnv(ParallelEnv):
    """The learner-facing view of ``datacenter_ops`` (module docstring).

    :param scheduler: ``"learner"`` to expose the scheduler, or a baseline name to script it.
    :param env_config: keyword arguments of :func:`dcops.parallel_env` (``team_kinds``, ``n_windows``, …);
        ``cooling="agent"`` and ``structured_view`` are refused (the view decides ``structured_view``).
    """

    metadata = {"name": "datacenter_ops_v1_roles", "render_modes": [], "is_parallelizable": True}

    def __init__(self, scheduler: str = "learner", **env_config: Any) -> None:
        if env_config.get("cooling") == "agent":
            raise ValueError("cooling='agent' is not supported by RoleEnv: use 'rule', 'pid' or 'ppo'")
        if "structured_view" in env_config:
            raise ValueError("structured_view is set by RoleEnv (needed only for a scripted scheduler)")
        self.scheduler_mode = scheduler
        self.render_mode = None
        if scheduler == "learner":
            self._scripted = None
        else:
            from dcops.agents.schedulers import BASELINES

            if scheduler not in BASELINES:
                raise ValueError(f"scheduler must be 'learner' or one of {sorted(BASELINES)}, got {scheduler!r}")
            self._scripted = BASELINES[scheduler]()
        self.env = DatacenterOpsEnv(structured_view=self._scripted is not None, **env_config)
        self.possible_agents = [a for a in self.env.possible_agents if a != SCHEDULER or self._scripted is None]
        if not self.possible_agents:
            raise ValueError("nothing to learn: set scheduler='learner' or put 'learner' in team_kinds")
        self.agents: list[str] = []
        self._spaces_obs = {a: self.env.observation_space(a) for a in self.possible_agents}
        self._spaces_act = {a: self.env.action_space(a) for a in self.possible_agents}
        if self._scripted is None:
            inner = self.env.observation_space(SCHEDULER)
            lows = np.concatenate([np.broadcast_to(inner[k].low, inner[k].shape).ravel() for k in FLAT_KEYS])
            highs = np.concatenate([np.broadcast_to(inner[k].high, inner[k].shape).ravel() for k in FLAT_KEYS])
            self._spaces_obs[SCHEDULER] = gym.spaces.Dict({
                "observations": gym.spaces.Box(lows.astype(np.float32), highs.astype(np.float32), dtype=np.float32),
                "action_mask": inner["action_mask"],
            })
        self._view: dict[str, Any] = {}

    def observation_space(self, agent: str) -> gym.Space:
        return self._spaces_obs[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._spaces_act[agent]

    # ------------------------------------------------------------------ conversion
    def _scheduler_obs(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        flat = np.concatenate([np.asarray(obs[key], dtype=np.float32).ravel() for key in FLAT_KEYS])
        return {"observations": flat, "action_mask": obs["action_mask"]}

    def _convert(self, obs: dict[str, Any], infos: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The environment's observations and infos with the scheduler's converted (or, scripted, left out)."""
        scheduler_obs, sched = obs[SCHEDULER], infos[SCHEDULER]
        obs = {a: o for a, o in obs.items() if a != SCHEDULER}  # new dicts: the environment keeps its own
        infos = {a: i for a, i in infos.items() if a != SCHEDULER}
        if self._scripted is None:
            obs[SCHEDULER] = self._scheduler_obs(scheduler_obs)
            infos[SCHEDULER] = {"window": sched["window"], **sched.get("reward_terms", {})}
            if "episode" in sched:
                infos[SCHEDULER]["episode_score"] = sched["episode"]["score"]
        else:
            self._view = sched["view"]
        return obs, infos

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        return self._convert(obs, infos)

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("call reset() first; the episode is over")
        if self._scripted is not None and isinstance(actions, Mapping):
            if SCHEDULER in actions:
                raise ValueError(f"actions: the scheduler is scripted here ({self.scheduler_mode!r}), not an agent; "
                                 f"this episode's agents: {self.agents}")
            actions = {**actions, SCHEDULER: self._scripted.decide(self._view)}
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        if self._scripted is not None:
            rewards, terms, truncs = ({a: v for a, v in d.items() if a != SCHEDULER} for d in (rewards, terms, truncs))
        if not self.env.agents:
            self.agents = []
        obs, infos = self._convert(obs, infos)
        return obs, rewards, terms, truncs, infos

    def render(self) -> None:
        return None

    def close(self) -> None:
        self.env.close()
