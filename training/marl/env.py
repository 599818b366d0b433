"""Role views of ``datacenter_ops`` for multi-agent learners (RLlib, SuperSuit + SB3).

:class:`RoleEnv` is a PettingZoo ``ParallelEnv`` over :class:`dcops.env.DatacenterOpsEnv` that exposes only the
agents whose actions matter to a learner, under names that do not change between episodes:

- ``scheduler`` (when ``scheduler="learner"``): its ``Dict`` observation becomes
  ``Dict(observations=Box(F,), action_mask=Box(S·A,) int8)``: ``observations`` concatenates the flattened
  ``requests``, ``request_mask``, ``cluster``, ``zones`` and ``teams`` arrays (F = 1404 with the defaults);
  ``action_mask`` is the environment's own (S slots × A codes, slot after slot), which lines up with the
  logits of the ``MultiDiscrete([A] × S)`` action (RLlib concatenates the per-slot logits in slot order), so a
  masking module can add ``log(mask)`` to them. The action is the environment's own ``MultiDiscrete``.
  With ``scheduler`` set to a baseline name (``dcops.agents.schedulers.BASELINES``), the scheduler is scripted
  and not exposed: it decides from the structured public view every window.
- ``learner_0`` … ``learner_{L-1}``: the teams whose kind is ``"learner"`` (``team_kinds``). The underlying
  ids ``team_i`` are shuffled over the kinds every episode, so ``learner_k`` is the k-th learner team of this
  episode (its ``team_i`` is in ``infos[learner_k]["team"]``). Spaces are the team's own ``Box(16,)`` and
  ``MultiDiscrete([4, 4, 2] × 4)``: every learner team has the same spaces, so parameter sharing (SuperSuit)
  needs no padding.

Scripted teams (cooperative, strategic, adaptive) ignore actions, so they are not agents here; the optional
``cooling`` agent of the underlying environment is not supported (``cooling`` must be scripted).

Rewards, terminations and truncations are the underlying agents'. Infos are kept small (they travel through
RLlib's episodes): the scheduler's reward terms and, at the end, the episode score. The object pickles.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from dcops.env import DatacenterOpsEnv

SCHEDULER = "scheduler"
FLAT_KEYS = ("requests", "request_mask", "cluster", "zones", "teams")
"""Scheduler observation arrays concatenated (flattened, in this order) into ``observations``."""


def learner_name(k: int) -> str:
    """The stable agent id of the k-th learner team of an episode."""
    return f"learner_{k}"


class RoleEnv(ParallelEnv):
    """The learner-facing view of ``datacenter_ops`` (module docstring).

    :param scheduler: ``"learner"`` to expose the scheduler, or a baseline name to script it.
    :param env_config: keyword arguments of :func:`dcops.parallel_env` (``team_kinds``, ``n_windows``, …);
        ``cooling="agent"`` and ``structured_view`` are refused (the view decides ``structured_view``).
    """

    metadata = {"name": "datacenter_ops_v0_roles", "render_modes": [], "is_parallelizable": True}

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
        kinds = self.env.config.team_kinds
        self.n_learners = sum(kind == "learner" for kind in kinds)
        learners = [learner_name(k) for k in range(self.n_learners)]
        self.possible_agents = ([SCHEDULER] if self._scripted is None else []) + learners
        if not self.possible_agents:
            raise ValueError("nothing to learn: set scheduler='learner' or put 'learner' in team_kinds")
        self.agents: list[str] = []
        inner_obs = self.env.observation_space(SCHEDULER)
        n_flat = sum(int(np.prod(inner_obs[key].shape)) for key in FLAT_KEYS)
        lows = np.concatenate([np.broadcast_to(inner_obs[k].low, inner_obs[k].shape).ravel() for k in FLAT_KEYS])
        highs = np.concatenate([np.broadcast_to(inner_obs[k].high, inner_obs[k].shape).ravel() for k in FLAT_KEYS])
        self._spaces_obs: dict[str, gym.Space] = {}
        self._spaces_act: dict[str, gym.Space] = {}
        if self._scripted is None:
            self._spaces_obs[SCHEDULER] = gym.spaces.Dict({
                "observations": gym.spaces.Box(lows.astype(np.float32), highs.astype(np.float32), (n_flat,),
                                               np.float32),
                "action_mask": inner_obs["action_mask"],
            })
            self._spaces_act[SCHEDULER] = self.env.action_space(SCHEDULER)
        team_probe = self.env.team_agents[0]
        for name in learners:
            self._spaces_obs[name] = self.env.observation_space(team_probe)
            self._spaces_act[name] = self.env.action_space(team_probe)
        self._team_of: dict[str, str] = {}
        self._infos: dict[str, Any] = {}

    def observation_space(self, agent: str) -> gym.Space:
        return self._spaces_obs[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._spaces_act[agent]

    # ------------------------------------------------------------------ conversion
    def _scheduler_obs(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        flat = np.concatenate([np.asarray(obs[key], dtype=np.float32).ravel() for key in FLAT_KEYS])
        return {"observations": flat, "action_mask": obs["action_mask"]}

    def _convert(self, obs: dict[str, Any], infos: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        out_obs: dict[str, Any] = {}
        out_infos: dict[str, Any] = {}
        sched = infos[SCHEDULER]
        if self._scripted is None:
            out_obs[SCHEDULER] = self._scheduler_obs(obs[SCHEDULER])
            out_infos[SCHEDULER] = {"window": sched["window"], **sched.get("reward_terms", {})}
            if "episode" in sched:
                out_infos[SCHEDULER]["episode_score"] = sched["episode"]["score"]
        for name, team in self._team_of.items():
            out_obs[name] = obs[team]
            out_infos[name] = {"team": team, "flags": len(infos[team]["flags"])}
        return out_obs, out_infos

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self._team_of = {learner_name(k): team for k, team in enumerate(self.env.learner_ids)}
        self._infos = infos
        self.agents = list(self.possible_agents)
        return self._convert(obs, infos)

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("call reset() first; the episode is over")
        inner: dict[str, Any] = {}
        if self._scripted is None:
            inner[SCHEDULER] = actions.get(SCHEDULER)
        else:
            inner[SCHEDULER] = self._scripted.decide(self._infos[SCHEDULER]["view"])
        for name, team in self._team_of.items():
            if name in actions:
                inner[team] = actions[name]
        obs, rewards, terms, truncs, infos = self.env.step(inner)
        self._infos = infos
        out_obs, out_infos = self._convert(obs, infos)
        ids = ({SCHEDULER: SCHEDULER} if self._scripted is None else {}) | self._team_of
        out_rewards = {name: float(rewards[inner_id]) for name, inner_id in ids.items()}
        out_terms = {name: bool(terms[inner_id]) for name, inner_id in ids.items()}
        out_truncs = {name: bool(truncs[inner_id]) for name, inner_id in ids.items()}
        if not self.env.agents:
            self.agents = []
        return out_obs, out_rewards, out_terms, out_truncs, out_infos

    def render(self) -> None:
        return None

    def close(self) -> None:
        self.env.close()
