"""Gymnasium environment ``queue/weighted_tardiness``: pick the next job to run, minimise weighted tardiness.

==================  ===========================================================================
Creation            ``dcops.make_env("queue/weighted_tardiness", **config)`` or ``make_queue_env(**config)``
Action space        ``Discrete(max_slots)``: the slot of the job to run next
Observation space   ``Dict(jobs=Box(-10, 10, (max_slots, F + 1), float32), action_mask=MultiBinary(max_slots))``
Episode             one instance (200 jobs by default), from the first arrival until the last job completes
==================  ===========================================================================

**Observations.** ``jobs[i]`` describes the job in slot i: column 0 is 1 for an occupied slot and 0 for
padding, columns 1..F are the features of :mod:`dcops.cluster.queue.features` (dimensionless, clipped to
[-10, 10]). Slots hold the waiting jobs in arrival order; when more than ``max_slots`` wait, the
``max_slots`` best by ATC. ``action_mask[i]`` (int8) is 1 for an occupied slot, the mask convention of
``dcops.registry``. The environment also exposes ``action_masks()`` (the same, as bool) for sb3-contrib's
MaskablePPO.

**Actions.** The slot of the job to start now on the machine that just became free. Decision epochs with a
single waiting job need no decision: the environment dispatches that job itself and moves on, so every step
the agent sees is a real choice between two or more jobs. An *invalid* action (an empty slot, or an integer
outside the space) is not a crash: the environment runs the first waiting job instead (FIFO), subtracts
``invalid_action_penalty`` from the reward, and reports ``info["invalid_action"] = True``; counts are in
``info["invalid_actions"]``. A non-integer action raises ``ValueError``.

**Rewards.** ``-reward_scale x`` the weighted tardiness accrued between this decision and the next (a late
job costs its weight per second until it completes). The last step adds what is still accrued until every job
has completed, so the undiscounted return is exactly ``-reward_scale x`` the episode's total weighted
tardiness. Example: two jobs of weight 4 and 1 are 30 s and 100 s past due during a 50 s interval that starts
after both due dates: accrued = 4 x 50 + 1 x 50 = 250 weight-seconds, reward = -0.025 at the default scale 1e-4
(a typical 200-job episode then returns about -5 to -10).

**Episode end.** ``terminated`` once every job has been dispatched (the final reward covers their
completions); never truncated. ``info["episode_weighted_tardiness"]`` then holds the total.

**Arguments** (``make_queue_env``):

- ``mode`` ("streaming"): "streaming" (Poisson arrivals) or "static" (all jobs at 0).
- ``n_jobs`` (200 streaming / 50 static), ``load`` (0.85), ``n_machines`` (1): the instance generator
  (:class:`dcops.cluster.queue.jobs.StreamConfig`).
- ``atc_k`` (1.0): ATC look-ahead used by the features and the candidate filter.
- ``max_slots`` (32): jobs shown per decision.
- ``reward_scale`` (1e-4): reward per weight-second of tardiness.
- ``invalid_action_penalty`` (1.0): subtracted from the reward of an invalid action.
- ``seed_range`` ((0, 500_000)): instance seeds drawn from ``np_random`` on reset; the held-out test seeds
  (1,000,000 ..) are outside it. ``reset(options={"instance_seed": s})`` or ``options={"instance": inst}``
  fixes the instance.
- ``render_mode`` (None): ``"ansi"`` makes :meth:`QueueEnv.render` return the decision as text (time, jobs
  dispatched and waiting, the weighted tardiness already committed, the candidate slots with weight,
  processing time and time to due date); None renders nothing.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dcops.cluster.queue.features import FEATURE_CLIP, N_FEATURES, candidate_positions, job_features
from dcops.cluster.queue.jobs import Instance, StreamConfig, static_instance, streaming_instance
from dcops.cluster.queue.seeds import EPISODE_SEED_LIMIT
from dcops.cluster.queue.simulator import (
    QueueSimulator,
    QueueState,
    accrued_weighted_tardiness,
    weighted_tardiness,
)


class QueueEnv(gym.Env):
    """Single-agent job ordering; see the module docstring for the full description."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        mode: str = "streaming",
        n_jobs: int | None = None,
        load: float = 0.85,
        n_machines: int = 1,
        atc_k: float = 1.0,
        max_slots: int = 32,
        reward_scale: float = 1e-4,
        invalid_action_penalty: float = 1.0,
        seed_range: tuple[int, int] = (0, EPISODE_SEED_LIMIT),
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if mode not in ("streaming", "static"):
            raise ValueError(f"mode must be 'streaming' or 'static', got {mode!r}")
        if max_slots < 2:
            raise ValueError("max_slots must be >= 2")
        self.mode = mode
        self.n_jobs = n_jobs if n_jobs is not None else (200 if mode == "streaming" else 50)
        self.stream_config = StreamConfig(n_jobs=self.n_jobs, load=load, n_machines=n_machines)
        self.atc_k = float(atc_k)
        self.max_slots = int(max_slots)
        self.reward_scale = float(reward_scale)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.seed_range = seed_range
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.max_slots)
        self.observation_space = spaces.Dict(
            {
                "jobs": spaces.Box(-FEATURE_CLIP, FEATURE_CLIP, (self.max_slots, N_FEATURES + 1), np.float32),
                "action_mask": spaces.MultiBinary(self.max_slots),
            }
        )
        self._sim: QueueSimulator | None = None
        self._positions = np.zeros(0, dtype=np.int64)
        self._last_time_s = -np.inf
        self._invalid_actions = 0
        self._observation_mask = np.zeros(self.max_slots, dtype=np.int8)

    # -- helpers -------------------------------------------------------------------------------------------
    def _make_instance(self, options: dict[str, Any] | None) -> Instance:
        options = options or {}
        if "instance" in options:
            return options["instance"]
        seed = options.get("instance_seed")
        if seed is None:
            seed = int(self.np_random.integers(*self.seed_range))
        if self.mode == "static":
            return static_instance(int(seed), n_jobs=self.n_jobs, config=self.stream_config)
        return streaming_instance(int(seed), self.stream_config)

    def _advance_to_choice(self) -> bool:
        """Dispatch forced single-job epochs; return True at an epoch with two or more waiting jobs."""
        sim = self._sim
        while sim.advance():
            if len(sim.waiting) > 1:
                return True
            sim.dispatch(0)
        return False

    def _observation(self) -> dict[str, np.ndarray]:
        jobs = np.zeros((self.max_slots, N_FEATURES + 1), dtype=np.float32)
        mask = np.zeros(self.max_slots, dtype=np.int8)
        if self._sim is not None and not self._sim.done and len(self._sim.waiting) > 1:
            state = self._sim.state()
            self._positions = candidate_positions(state, self.atc_k, self.max_slots)
            k = len(self._positions)
            jobs[:k, 0] = 1.0
            jobs[:k, 1:] = job_features(state, self.atc_k)[self._positions]
            mask[:k] = 1
        else:
            # No decision left (a terminal observation): one dummy slot keeps maskable samplers valid.
            self._positions = np.zeros(0, dtype=np.int64)
            mask[0] = 1
        return {"jobs": jobs, "action_mask": mask}

    def _info(self) -> dict[str, Any]:
        sim = self._sim
        return {
            "time_s": sim.now_s,
            "n_waiting": len(sim.waiting),
            "dispatched": len(sim.order),
            "invalid_actions": self._invalid_actions,
            "instance": sim.instance.name,
        }

    def decision_state(self) -> tuple[QueueState, np.ndarray] | None:
        """The current decision (waiting jobs and the waiting-list position of each slot), None when over.

        Lets an expert (e.g. ATC for the imitation warm start) act on the exact state behind the observation.
        """
        if self._sim is None or self._sim.done or len(self._positions) == 0:
            return None
        return self._sim.state(), self._positions.copy()

    # -- Gymnasium API -------------------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """Boolean mask of the valid slots (MaskablePPO's hook)."""
        return self._observation_mask.astype(bool)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        instance = self._make_instance(options)
        self._sim = QueueSimulator(instance)
        self._invalid_actions = 0
        self._last_time_s = -np.inf
        has_choice = self._advance_to_choice()
        obs = self._observation()
        self._observation_mask = obs["action_mask"]
        info = self._info()
        info["has_choice"] = has_choice
        return obs, info

    def step(self, action):
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        if isinstance(action, np.ndarray) and action.size == 1:
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer slot index, got {action!r}")
        sim = self._sim
        action = int(action)
        invalid = False
        penalty = 0.0
        if not sim.done:  # a degenerate instance with no choice at all is already finished at reset
            invalid = not 0 <= action < len(self._positions)
            if invalid:
                self._invalid_actions += 1
                penalty = self.invalid_action_penalty
            sim.dispatch(0 if invalid else int(self._positions[action]))
        has_choice = self._advance_to_choice()
        until = sim.now_s if has_choice else np.inf
        accrued = accrued_weighted_tardiness(sim.instance, sim.completion_s, self._last_time_s, until)
        self._last_time_s = until
        reward = -self.reward_scale * accrued - penalty
        obs = self._observation()
        self._observation_mask = obs["action_mask"]
        info = self._info()
        info["invalid_action"] = invalid
        info["accrued_weighted_tardiness"] = accrued
        terminated = not has_choice
        if terminated:
            info["episode_weighted_tardiness"] = weighted_tardiness(sim.instance, sim.completion_s)
        return obs, float(reward), terminated, False, info

    def render(self) -> str | None:
        """The current decision as text (``render_mode="ansi"``); None otherwise."""
        if self.render_mode != "ansi":
            return None
        if self._sim is None:
            return "queue/weighted_tardiness (not reset)"
        sim = self._sim
        inst = sim.instance
        dispatched = np.asarray(sim.order, dtype=np.int64)
        committed = float(np.sum(inst.weight[dispatched] * np.maximum(sim.completion_s[dispatched] - inst.due_s[dispatched], 0.0)))
        lines = [f"queue/weighted_tardiness {inst.name}  t {sim.now_s:,.0f} s  dispatched {len(sim.order)}/{inst.n_jobs}"
                 f"  waiting {len(sim.waiting)}  weighted tardiness committed {committed:,.0f} weight-s"]
        shown = self._positions[:_RENDER_SLOTS]
        if len(shown):
            lines.append("  slot   job  weight  processing s  due in s")
            for slot, position in enumerate(shown):
                job = sim.waiting[int(position)]
                lines.append(f"  {slot:4d} {job:5d} {inst.weight[job]:7.2f} {inst.processing_s[job]:13,.0f}"
                             f" {inst.due_s[job] - sim.now_s:9,.0f}")
            if len(self._positions) > len(shown):
                lines.append(f"  ... {len(self._positions) - len(shown)} more slots")
        return "\n".join(lines)


_RENDER_SLOTS = 8
"""Candidate slots an ``"ansi"`` rendering lists (the rest are counted)."""


def make_queue_env(**config: Any) -> QueueEnv:
    """Factory registered as ``queue/weighted_tardiness``; see :class:`QueueEnv` for the arguments."""
    return QueueEnv(**config)
