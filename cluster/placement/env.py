"""GPU placement tasks: a Gymnasium wrapper around :class:`~dcops.cluster.placement.sim.PlacementSim`.

An agent sees a small GPU cluster and a queue of inference-style jobs and makes one decision per tick:
start one job on one GPU, or defer. Everything is scored from the simulator's own dynamics.

===================  =====================================================================================
Creation             ``dcops.make_env("placement/deadline_crunch" | "placement/cost_pressure" |
                     "placement/wait_for_capacity" | "placement/reserve_large_gpu", **overrides)`` or
                     ``make_placement_env(scenario="deadline_crunch", seed=None, **overrides)``
                     (``scenario="generated"`` draws a new scenario from the seed at every reset)
Agent                one scheduler
Action               ``Discrete(max_jobs · max_gpus + 1)``: ``a = job_slot · max_gpus + gpu_slot`` places the
                     job in that slot on that GPU; ``a = max_jobs · max_gpus`` (the last) is ``defer()``.
                     Slots follow the scenario's job and GPU order. ``info["action_mask"]`` marks the valid ones
                     (``action_masks()`` too, as booleans, for sb3-contrib's ``MaskablePPO``).
Observation          ``Box(1 + 6·max_gpus + 11·max_jobs)`` float32 in [-1, 1], layout below; the structured
                     observation (JSON-ready dict) and the text dashboard are in ``info``
Episode              one step per tick; ``terminated`` once every job has completed or missed its deadline
                     (at the latest at the horizon, 10-20 ticks); ``truncated`` is always False
===================  =====================================================================================

**Observation vector.** ``[tick / horizon]``; then per GPU slot (6 values): present, free now, ticks until
free / horizon, VRAM / largest VRAM, speed / fastest speed, cost per tick / dearest; then per job slot
(11 values): visible (arrived), pending, running, completed, missed, VRAM / largest VRAM, work / largest
work, priority / 3, (deadline − tick) / horizon, (tick − arrival) / horizon, ticks until it completes /
horizon (running jobs). Empty slots and jobs that have not arrived yet are all zeros.

**Actions and invalid actions.** A placement of an empty slot, of a job that has not arrived or is already
placed or finished, on a GPU that is busy or reserved or has too little VRAM is *invalid*: it costs the
invalid penalty, ``info["invalid_reason"]`` says why, the tick passes as a defer, and the episode goes on.
Structured actions (``Place(job_id, gpu_id, rationale)``, ``Defer(rationale)``) can be played with
:meth:`PlacementEnv.step_action`; the rationale is logged in the history and never scored.

**Rewards** (constants of :class:`~dcops.cluster.placement.sim.RewardConfig`)::

    reward_t = Σ completed at t (10 + 5 · priority) − 10 · missed at t − 5 · [invalid action]
               − 0.5 · (free GPUs on which a waiting job would fit) − Σ busy GPUs cost_per_tick

Worked example: tick 0 of ``placement/deadline_crunch``, action ``place(J1, h100-0)``. J1 (priority 0,
3 work units) runs one tick on the H100 (speed 3, 4.0 per tick) and completes at tick 1 (+10 + 0); the two
L4s and the A100 stay free while J2-J4 (16 GB) wait (−3 × 0.5): reward = 10 − 4.0 − 1.5 = 4.5.

**Info** (every step): ``action_mask`` (int8, one per action: ``dcops.registry``'s mask convention),
``observation`` (the structured observation as a dict: GPUs, pending/running/completed/missed jobs, metrics,
history, feasible placements, dashboard), ``dashboard`` (text), ``invalid_reason`` (``None`` when valid), ``reward_terms`` (completion,
priority_bonus, missed, invalid, idle, cost), ``action`` (what was played, e.g. ``place(J1, h100-0)``).

**Arguments**: ``scenario`` (a canonical name, ``"generated"``, ``"generated_<seed>"`` or a
:class:`~dcops.cluster.placement.scenarios.Scenario`), ``seed`` (seed of the first reset), ``max_jobs``
(10) and ``max_gpus`` (4) (the padded slot counts; a scenario must fit), ``rewards``
(:class:`RewardConfig`), ``generator`` (:class:`~dcops.cluster.placement.generator.GeneratorConfig`, for
``"generated"``), ``render_mode`` (``"ansi"``: the dashboard text).

Canonical scenarios (see :mod:`dcops.cluster.placement.scenarios`): ``deadline_crunch`` (urgency must win
even at a higher cost), ``cost_pressure`` (fit-for-purpose GPUs, no over-provisioning),
``wait_for_capacity`` (deferring the first tick for a cheaper GPU is right), ``reserve_large_gpu`` (keep the
only large-VRAM GPU free for the job that needs it).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import gymnasium as gym
import numpy as np

from dcops.cluster.placement.actions import Action, Defer, Place
from dcops.cluster.placement.catalog import get_scenario
from dcops.cluster.placement.generator import GeneratorConfig, draw_scenario
from dcops.cluster.placement.observation import PlacementObservation
from dcops.cluster.placement.scenarios import MAX_PRIORITY, Scenario
from dcops.cluster.placement.sim import PlacementSim, RewardConfig, StepResult

GPU_FEATURES = 6
JOB_FEATURES = 11


class PlacementEnv(gym.Env):
    """The placement task as a Gymnasium environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        scenario: str | Scenario = "deadline_crunch",
        seed: int | None = None,
        max_jobs: int = 10,
        max_gpus: int = 4,
        rewards: RewardConfig | None = None,
        generator: GeneratorConfig | None = None,
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode: must be None or 'ansi', got {render_mode!r}")
        self.generated = scenario == "generated"
        self.generator = generator or GeneratorConfig()
        if self.generated and (self.generator.max_jobs > max_jobs or self.generator.max_gpus > max_gpus):
            raise ValueError("generator: max_jobs/max_gpus must not exceed the env's max_jobs/max_gpus")
        self._fixed = None if self.generated else (get_scenario(scenario) if isinstance(scenario, str) else scenario)
        if self._fixed is not None:
            self._check_fits(self._fixed.validate(), max_jobs, max_gpus)
        self.max_jobs, self.max_gpus = max_jobs, max_gpus
        self.rewards = rewards or RewardConfig()
        self.render_mode = render_mode
        self._first_seed = seed
        self.action_space = gym.spaces.Discrete(max_jobs * max_gpus + 1)
        size = 1 + GPU_FEATURES * max_gpus + JOB_FEATURES * max_jobs
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(size,), dtype=np.float32)
        self.sim: PlacementSim | None = None
        self._obs: PlacementObservation | None = None

    @staticmethod
    def _check_fits(scenario: Scenario, max_jobs: int, max_gpus: int) -> None:
        if len(scenario.jobs) > max_jobs:
            raise ValueError(f"max_jobs: scenario {scenario.name!r} has {len(scenario.jobs)} jobs > {max_jobs}")
        if len(scenario.gpus) > max_gpus:
            raise ValueError(f"max_gpus: scenario {scenario.name!r} has {len(scenario.gpus)} GPUs > {max_gpus}")

    @property
    def defer_action(self) -> int:
        """Index of ``defer()`` (the last action)."""
        return self.max_jobs * self.max_gpus

    @property
    def scenario(self) -> Scenario:
        """The scenario of the current episode."""
        if self.sim is None:
            raise RuntimeError("call reset() first")
        return self.sim.scenario

    # --- Gymnasium API ---------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None and self._first_seed is not None:
            seed, self._first_seed = self._first_seed, None
        super().reset(seed=seed)
        scenario = self._fixed if self._fixed is not None else draw_scenario(self.np_random, "generated", self.generator)
        self.sim = PlacementSim(scenario, self.rewards)
        self._obs = self.sim.reset()
        return self._vector(), self._info(None, None, None)

    def step(self, action: int):
        if self.sim is None:
            raise RuntimeError("call reset() first")
        return self.step_action(self.decode(int(action)))

    def step_action(self, action: Action):
        """Play a structured action (``Place``/``Defer`` with rationale); same return as :meth:`step`."""
        if self.sim is None:
            raise RuntimeError("call reset() first")
        result = self.sim.step(action)
        self._obs = result.observation
        return self._vector(), float(result.reward), result.done, False, self._info(result, action, result.invalid_reason)

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self._obs is not None:
            return self._obs.dashboard.text()
        return None

    # --- encoding ----------------------------------------------------------------------------------------
    def decode(self, action: int) -> Action:
        """The structured action of index ``action`` (an empty slot gives a placement of an unknown id)."""
        if not 0 <= action <= self.defer_action:
            return Place(f"<action {action} out of range>", "-")
        if action == self.defer_action:
            return Defer()
        slot, gpu_slot = divmod(action, self.max_gpus)
        jobs, gpus = self.scenario.jobs, self.scenario.gpus
        job_id = jobs[slot].job_id if slot < len(jobs) else f"<empty job slot {slot}>"
        gpu_id = gpus[gpu_slot].gpu_id if gpu_slot < len(gpus) else f"<empty GPU slot {gpu_slot}>"
        return Place(job_id, gpu_id)

    def encode(self, action: Action) -> int:
        """The index of a structured action (``ValueError`` naming the id if it has no slot)."""
        if isinstance(action, Defer):
            return self.defer_action
        jobs = [j.job_id for j in self.scenario.jobs]
        gpus = [g.gpu_id for g in self.scenario.gpus]
        if action.job_id not in jobs:
            raise ValueError(f"job_id: {action.job_id!r} is not a job of scenario {self.scenario.name!r}")
        if action.gpu_id not in gpus:
            raise ValueError(f"gpu_id: {action.gpu_id!r} is not a GPU of scenario {self.scenario.name!r}")
        return jobs.index(action.job_id) * self.max_gpus + gpus.index(action.gpu_id)

    def action_mask(self) -> np.ndarray:
        """int8 mask over the action space: 1 for every valid placement and for defer."""
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        mask[self.defer_action] = 1
        if self._obs is not None and not self._obs.done:
            for p in self._obs.feasible:
                mask[self.encode(Place(p.job_id, p.gpu_id))] = 1
        return mask

    def action_masks(self) -> np.ndarray:
        """:meth:`action_mask` as booleans: the hook sb3-contrib's ``MaskablePPO`` calls, so it trains on this
        environment with no ``ActionMasker`` wrapper (defer is always valid, so the mask is never empty)."""
        return self.action_mask().astype(bool)

    def _vector(self) -> np.ndarray:
        obs, sc = self._obs, self.scenario
        assert obs is not None
        t, horizon = obs.tick, sc.horizon
        max_vram = max(g.gpu_type.vram_gb for g in sc.gpus)
        max_speed = max(g.gpu_type.speed for g in sc.gpus)
        max_cost = max(max(g.gpu_type.cost_per_tick for g in sc.gpus), 1e-9)
        max_work = max(j.work for j in sc.jobs)
        out = np.zeros(self.observation_space.shape, dtype=np.float32)
        out[0] = t / horizon
        views = {g.gpu_id: g for g in obs.gpus}
        for i, spec in enumerate(sc.gpus):
            g = views[spec.gpu_id]
            base = 1 + GPU_FEATURES * i
            out[base : base + GPU_FEATURES] = (
                1.0,
                float(g.state == "free"),
                max(g.free_at - t, 0) / horizon,
                g.vram_gb / max_vram,
                g.speed / max_speed,
                g.cost_per_tick / max_cost,
            )
        jobs = {j.job_id: j for j in (*obs.pending, *obs.running, *obs.completed, *obs.missed)}
        for i, spec in enumerate(sc.jobs):
            j = jobs.get(spec.job_id)
            if j is None:
                continue  # not arrived yet: the agent does not see it
            base = 1 + GPU_FEATURES * self.max_gpus + JOB_FEATURES * i
            remaining = (j.end - t) / horizon if j.status == "running" and j.end is not None else 0.0
            out[base : base + JOB_FEATURES] = (
                1.0,
                float(j.status == "pending"),
                float(j.status == "running"),
                float(j.status == "completed"),
                float(j.status == "missed"),
                j.vram_gb / max_vram,
                j.work / max_work,
                j.priority / MAX_PRIORITY,
                (j.deadline - t) / horizon,
                (t - j.arrival) / horizon,
                remaining,
            )
        return np.clip(out, -1.0, 1.0)

    def _info(self, result: StepResult | None, action: Action | None, reason: str | None) -> dict[str, Any]:
        obs = self._obs
        assert obs is not None
        return {
            "action_mask": self.action_mask(),
            "observation": obs.to_dict(),
            "dashboard": obs.dashboard.text(),
            "invalid_reason": reason,
            "reward_terms": asdict(result.terms) if result is not None else {},
            "action": str(action) if action is not None else None,
            "scenario": obs.scenario,
        }


def make_placement_env(scenario: str | Scenario = "deadline_crunch", seed: int | None = None, **config: Any) -> PlacementEnv:
    """Build a :class:`PlacementEnv` (see the module docstring for ``config``)."""
    return PlacementEnv(scenario=scenario, seed=seed, **config)


def make_deadline_crunch(**config: Any) -> PlacementEnv:
    """``placement/deadline_crunch``: urgency must win even at a higher cost."""
    return make_placement_env("deadline_crunch", **config)


def make_cost_pressure(**config: Any) -> PlacementEnv:
    """``placement/cost_pressure``: fit-for-purpose GPUs, no over-provisioning."""
    return make_placement_env("cost_pressure", **config)


def make_wait_for_capacity(**config: Any) -> PlacementEnv:
    """``placement/wait_for_capacity``: deferring the first tick for a cheaper GPU is right."""
    return make_placement_env("wait_for_capacity", **config)


def make_reserve_large_gpu(**config: Any) -> PlacementEnv:
    """``placement/reserve_large_gpu``: keep the only large-VRAM GPU free for the job that needs it."""
    return make_placement_env("reserve_large_gpu", **config)


def make_generated(**config: Any) -> PlacementEnv:
    """``placement/generated``: a new scenario drawn from the seed at every reset (``generator.py``), so the
    seed of a reset chooses the instance."""
    return make_placement_env("generated", **config)


__all__ = [
    "PlacementEnv",
    "make_cost_pressure",
    "make_deadline_crunch",
    "make_generated",
    "make_placement_env",
    "make_reserve_large_gpu",
    "make_wait_for_capacity",
]
