"""The pure-Python placement simulator: one decision per tick, deterministic, no Gymnasium, no HTTP.

Dynamics of one :meth:`PlacementSim.step` at tick ``t``:

1. The action is checked (:meth:`PlacementSim.check`). A valid ``Place(job, gpu)`` starts the job now; it
   runs ``ceil(work / speed)`` ticks and completes at tick ``end = t + run_ticks``. An invalid action
   (unknown job or GPU, job not arrived or already placed/finished, GPU busy or reserved, not enough VRAM)
   costs :attr:`RewardConfig.invalid_penalty`, is logged with its reason and otherwise acts as ``Defer``.
2. Tick ``t`` is accounted: every GPU busy with one of our jobs is charged ``cost_per_tick``; every free GPU
   on which some pending job would fit (VRAM) while it waits costs :attr:`RewardConfig.idle_penalty`.
3. Time moves to ``t + 1``. A running job with ``end == t + 1 <= deadline`` completes
   (:attr:`RewardConfig.completion_reward` + ``priority`` × :attr:`RewardConfig.priority_bonus`). A job still
   pending or running at its deadline is missed (:attr:`RewardConfig.miss_penalty`); a late running job is
   stopped at its deadline and frees its GPU. Jobs whose ``arrival <= t + 1`` join the queue.
4. The episode ends when every job has completed or been missed (at the latest at the horizon, since
   deadlines never exceed it).

The total reward is therefore exactly
``Σ_completed (completion + priority bonus) − Σ_missed miss penalty − Σ_invalid invalid penalty
− Σ_ticks idle penalty − Σ_ticks cost``, with the constants of :class:`RewardConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dcops.cluster.placement.actions import MAX_RATIONALE_CHARS, Action, Defer, Place
from dcops.cluster.placement.dashboard import build_dashboard
from dcops.cluster.placement.observation import (
    ActionRecord,
    Dashboard,
    FeasiblePlacement,
    GpuView,
    JobView,
    Metrics,
    PlacementObservation,
)
from dcops.cluster.placement.scenarios import GpuSpec, JobSpec, Scenario, run_ticks


@dataclass(frozen=True)
class RewardConfig:
    """Reward constants (reward units; cost units count one for one).

    - ``completion_reward`` = 10 per job completed by its deadline,
    - ``priority_bonus`` = 5 per priority level of a completed job (priority 0..3, so +0..15),
    - ``miss_penalty`` = 10 per job that misses its deadline (never started, or stopped late),
    - ``invalid_penalty`` = 5 per invalid action,
    - ``idle_penalty`` = 0.5 per GPU-tick a GPU stays free while a pending job would fit on it,
    - ``cost_weight`` = 1 reward unit per cost unit (GPU ``cost_per_tick`` per busy tick).

    Completing a job is worth far more than any single tick of cost, so missing work is never cheap; the
    idle penalty is small so that waiting a tick for a cheaper GPU can pay off.
    """

    completion_reward: float = 10.0
    priority_bonus: float = 5.0
    miss_penalty: float = 10.0
    invalid_penalty: float = 5.0
    idle_penalty: float = 0.5
    cost_weight: float = 1.0

    def completion_value(self, job: JobSpec) -> float:
        """Reward for completing ``job`` on time: completion + priority bonus."""
        return self.completion_reward + self.priority_bonus * job.priority


@dataclass
class RewardTerms:
    """The signed reward contributions of one step (penalties are <= 0); ``total`` is their sum."""

    completion: float = 0.0
    priority_bonus: float = 0.0
    missed: float = 0.0
    invalid: float = 0.0
    idle: float = 0.0
    cost: float = 0.0

    @property
    def total(self) -> float:
        return self.completion + self.priority_bonus + self.missed + self.invalid + self.idle + self.cost


@dataclass(frozen=True)
class StepResult:
    """What :meth:`PlacementSim.step` returns: the next observation, the step reward and its terms, whether
    the episode is over, and why the action was invalid (``None`` when it was valid)."""

    observation: PlacementObservation
    reward: float
    terms: RewardTerms
    done: bool
    invalid_reason: str | None = None

    @property
    def valid(self) -> bool:
        return self.invalid_reason is None


@dataclass
class _JobState:
    spec: JobSpec
    status: str = "future"  # future | pending | running | completed | missed
    gpu_id: str | None = None
    start: int | None = None
    end: int | None = None
    finished_at: int | None = None


@dataclass
class _GpuState:
    spec: GpuSpec
    free_at: int = 0
    job_id: str | None = None


@dataclass
class _Totals:
    completion: float = 0.0
    priority_bonus: float = 0.0
    missed: float = 0.0
    invalid: float = 0.0
    idle: float = 0.0
    cost: float = 0.0
    n_completed: int = 0
    n_missed: int = 0
    n_invalid: int = 0
    total_cost: float = 0.0
    busy_gpu_ticks: int = 0
    available_gpu_ticks: int = 0
    history: list[ActionRecord] = field(default_factory=list)


class PlacementSim:
    """Deterministic simulator of one scenario. Create, :meth:`reset`, then :meth:`step` until ``done``."""

    def __init__(self, scenario: Scenario, rewards: RewardConfig | None = None) -> None:
        self.scenario = scenario.validate()
        self.rewards = rewards or RewardConfig()
        self._order = {j.job_id: i for i, j in enumerate(self.scenario.jobs)}
        self.reset()

    # --- public API -------------------------------------------------------------------------------------
    def reset(self) -> PlacementObservation:
        """Start the episode at tick 0 and return the first observation."""
        self.tick = 0
        self._jobs = {j.job_id: _JobState(j) for j in self.scenario.jobs}
        self._gpus = {g.gpu_id: _GpuState(g, free_at=g.busy_until) for g in self.scenario.gpus}
        self._totals = _Totals()
        self._arrive()
        self.done = self._all_resolved()
        return self.observation()

    def check(self, action: Action) -> str | None:
        """Why ``action`` is invalid now, or ``None`` if it is valid. Never raises."""
        if isinstance(action, Defer):
            return None
        if not isinstance(action, Place):
            return f"unknown action type {type(action).__name__}: expected Place(job_id, gpu_id) or Defer()"
        if not isinstance(action.job_id, str) or not isinstance(action.gpu_id, str):
            return "job_id and gpu_id must be strings"
        job = self._jobs.get(action.job_id)
        if job is None:
            return f"unknown job id {action.job_id!r}; visible jobs: {', '.join(self._visible_ids()) or 'none'}"
        gpu = self._gpus.get(action.gpu_id)
        if gpu is None:
            return f"unknown GPU id {action.gpu_id!r}; GPUs: {', '.join(self._gpus)}"
        if job.status == "future":
            # Do not leak the arrival tick: the agent is not supposed to know the future queue.
            return f"job {job.spec.job_id} has not arrived yet"
        if job.status == "running":
            return f"job {job.spec.job_id} is already running on {job.gpu_id} (until tick {job.end})"
        if job.status in ("completed", "missed"):
            return f"job {job.spec.job_id} is finished ({job.status} at tick {job.finished_at})"
        if gpu.free_at > self.tick:
            holder = f"running {gpu.job_id}" if gpu.job_id else "reserved by outside work"
            return f"GPU {gpu.spec.gpu_id} is busy until tick {gpu.free_at} ({holder})"
        if job.spec.vram_gb > gpu.spec.gpu_type.vram_gb:
            return (
                f"job {job.spec.job_id} needs {job.spec.vram_gb} GB of VRAM but GPU {gpu.spec.gpu_id} "
                f"has {gpu.spec.gpu_type.vram_gb} GB"
            )
        return None

    def feasible(self) -> tuple[FeasiblePlacement, ...]:
        """Every valid placement now, in queue order (arrival, then scenario order) × GPU order."""
        out = []
        for job in self._pending():
            for gpu in self._gpus.values():
                if gpu.free_at <= self.tick and job.spec.vram_gb <= gpu.spec.gpu_type.vram_gb:
                    end = self.tick + run_ticks(job.spec.work, gpu.spec.gpu_type.speed)
                    stop = min(end, job.spec.deadline)
                    cost = (stop - self.tick) * gpu.spec.gpu_type.cost_per_tick
                    out.append(FeasiblePlacement(job.spec.job_id, gpu.spec.gpu_id, end, cost, end <= job.spec.deadline))
        return tuple(out)

    def step(self, action: Action) -> StepResult:
        """Apply ``action`` at the current tick and advance one tick (see the module docstring)."""
        if self.done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        terms = RewardTerms()
        reason = self.check(action)
        if reason is None and isinstance(action, Place):
            self._start(action.job_id, action.gpu_id)
        elif reason is not None:
            terms.invalid -= self.rewards.invalid_penalty
        self._account_tick(terms)
        self.tick += 1
        self._finish_and_arrive(terms)
        self.done = self._all_resolved() or self.tick >= self.scenario.horizon
        self._record(action, reason, terms)
        return StepResult(self.observation(), terms.total, terms, self.done, reason)

    def observation(self) -> PlacementObservation:
        """The structured observation now (see :mod:`dcops.cluster.placement.observation`)."""
        gpus = tuple(self._gpu_view(g) for g in self._gpus.values())
        views = {s: tuple(self._job_view(j) for j in self._jobs.values() if j.status == s) for s in _STATUSES}
        t = self._totals
        metrics = Metrics(
            ticks=self.tick,
            total_reward=t.completion + t.priority_bonus + t.missed + t.invalid + t.idle + t.cost,
            completion_reward=t.completion,
            priority_bonus=t.priority_bonus,
            miss_penalty=t.missed,
            invalid_penalty=t.invalid,
            idle_penalty=t.idle,
            cost_penalty=t.cost,
            completed=t.n_completed,
            missed=t.n_missed,
            invalid=t.n_invalid,
            total_cost=t.total_cost,
            busy_gpu_ticks=t.busy_gpu_ticks,
            available_gpu_ticks=t.available_gpu_ticks,
        )
        pending = tuple(sorted(views["pending"], key=lambda j: (j.arrival, self._order[j.job_id])))
        feasible = self.feasible() if not self.done else ()
        obs = PlacementObservation(
            scenario=self.scenario.name,
            tick=self.tick,
            horizon=self.scenario.horizon,
            done=self.done,
            gpus=gpus,
            pending=pending,
            running=views["running"],
            completed=views["completed"],
            missed=views["missed"],
            metrics=metrics,
            history=tuple(t.history),
            feasible=feasible,
            dashboard=Dashboard("", "", (), ()),  # rendered from the finished observation just below
        )
        return replace(obs, dashboard=build_dashboard(obs))

    # --- internals --------------------------------------------------------------------------------------
    def _pending(self) -> list[_JobState]:
        order = self._order
        jobs = [j for j in self._jobs.values() if j.status == "pending"]
        return sorted(jobs, key=lambda j: (j.spec.arrival, order[j.spec.job_id]))

    def _visible_ids(self) -> list[str]:
        return [j.spec.job_id for j in self._jobs.values() if j.status != "future"]

    def _start(self, job_id: str, gpu_id: str) -> None:
        job, gpu = self._jobs[job_id], self._gpus[gpu_id]
        job.status, job.gpu_id, job.start = "running", gpu_id, self.tick
        job.end = self.tick + run_ticks(job.spec.work, gpu.spec.gpu_type.speed)
        gpu.job_id = job_id
        gpu.free_at = min(job.end, job.spec.deadline)

    def _account_tick(self, terms: RewardTerms) -> None:
        pending = self._pending()
        for gpu in self._gpus.values():
            if gpu.job_id is not None:
                cost = gpu.spec.gpu_type.cost_per_tick
                terms.cost -= self.rewards.cost_weight * cost
                self._totals.total_cost += cost
                self._totals.busy_gpu_ticks += 1
                self._totals.available_gpu_ticks += 1
            elif gpu.free_at <= self.tick:
                self._totals.available_gpu_ticks += 1
                if any(j.spec.vram_gb <= gpu.spec.gpu_type.vram_gb for j in pending):
                    terms.idle -= self.rewards.idle_penalty

    def _finish_and_arrive(self, terms: RewardTerms) -> None:
        now = self.tick
        for job in self._jobs.values():
            if job.status == "running" and job.end is not None and job.end <= now and job.end <= job.spec.deadline:
                job.status, job.finished_at = "completed", now
                terms.completion += self.rewards.completion_reward
                terms.priority_bonus += self.rewards.priority_bonus * job.spec.priority
                self._totals.n_completed += 1
                self._release(job)
            elif job.status in ("running", "pending") and job.spec.deadline <= now:
                if job.status == "running":
                    self._release(job)
                job.status, job.finished_at = "missed", now
                terms.missed -= self.rewards.miss_penalty
                self._totals.n_missed += 1
        self._arrive()

    def _release(self, job: _JobState) -> None:
        gpu = self._gpus[job.gpu_id] if job.gpu_id else None
        if gpu is not None and gpu.job_id == job.spec.job_id:
            gpu.job_id = None

    def _arrive(self) -> None:
        for job in self._jobs.values():
            if job.status == "future" and job.spec.arrival <= self.tick:
                job.status = "pending"

    def _all_resolved(self) -> bool:
        return all(j.status in ("completed", "missed") for j in self._jobs.values())

    def _record(self, action: Action, reason: str | None, terms: RewardTerms) -> None:
        t = self._totals
        t.completion += terms.completion
        t.priority_bonus += terms.priority_bonus
        t.missed += terms.missed
        t.invalid += terms.invalid
        t.idle += terms.idle
        t.cost += terms.cost
        if reason is not None:
            t.n_invalid += 1
        is_place = isinstance(action, Place)
        rationale = getattr(action, "rationale", "")
        t.history.append(
            ActionRecord(
                tick=self.tick - 1,
                action="place" if is_place else ("defer" if isinstance(action, Defer) else "unknown"),
                job_id=action.job_id if is_place else None,
                gpu_id=action.gpu_id if is_place else None,
                rationale=str(rationale)[:MAX_RATIONALE_CHARS],
                valid=reason is None,
                reason=reason,
                reward=terms.total,
            )
        )

    def _gpu_view(self, gpu: _GpuState) -> GpuView:
        kind = gpu.spec.gpu_type
        if gpu.job_id is not None:
            state = "busy"
        elif gpu.free_at > self.tick:
            state = "reserved"
        else:
            state = "free"
        return GpuView(
            gpu.spec.gpu_id, kind.name, kind.vram_gb, kind.speed, kind.cost_per_tick, state, gpu.free_at, gpu.job_id
        )

    @staticmethod
    def _job_view(job: _JobState) -> JobView:
        s = job.spec
        return JobView(
            s.job_id, s.vram_gb, s.work, s.deadline, s.priority, s.arrival, job.status,
            job.gpu_id, job.start, job.end, job.finished_at,
        )


_STATUSES = ("pending", "running", "completed", "missed")
