"""The exact optimum of a scenario by dynamic programming over its (small) state space.

The simulator is deterministic, so the best total reward from any decision point is a function of the
state ``(tick, unplaced jobs, tick at which each GPU frees)``: a running job's future (its completion or its
stop at the deadline, and every tick of its cost) is fixed the moment it is placed, so the solver books it
then. The value obeys

    V(t, U, F) = max over a in {defer} ∪ {place(j, g): j ∈ U arrived, g free at t, VRAM fits}
                 [ r_place(a) − idle(t, U', F') − miss(t+1, U') + V(t+1, U' \\ missed, F') ]

with ``V = 0`` once no unplaced job remains. Memoisation (a dict keyed by the state, GPUs of the same type
made interchangeable by sorting their free ticks) makes this a DP over at most
``horizon × 2^jobs × (horizon + 1)^gpus`` states, exponential in the number of jobs. In practice the
reachable part is tiny, because one placement per tick and expiring deadlines prune it hard: the canonical
scenarios need 1 000 to 7 000 states (0.1-0.5 s in CPython) and the generator's bounds (6-10 jobs, 3-4
GPUs, 10-16 ticks) keep each of the 100 evaluation scenarios under about 10 000 states and half a second.
Placements that finish late are searched too, so the result is exact for the
whole action set; it is *clairvoyant* (it knows future arrivals, which policies do not see): an upper bound.

:class:`OptimalPolicy` plays the optimum through the ordinary policy interface; it re-derives the state
from each observation, so it stays optimal from wherever it is handed control.
"""

from __future__ import annotations

from dataclasses import dataclass

from dcops.cluster.placement.actions import Action, Defer, Place
from dcops.cluster.placement.observation import PlacementObservation
from dcops.cluster.placement.scenarios import Scenario, run_ticks
from dcops.cluster.placement.sim import RewardConfig

State = tuple[int, int, tuple[int, ...]]
"""``(tick, bitmask of unplaced jobs in scenario order, free tick of each GPU in scenario order)``."""


class OptimumSolver:
    """Memoised DP of one scenario; :meth:`solve` gives the optimal value and the plan from reset."""

    def __init__(self, scenario: Scenario, rewards: RewardConfig | None = None) -> None:
        self.scenario = scenario.validate()
        self.rewards = r = rewards or RewardConfig()
        jobs, gpus = scenario.jobs, scenario.gpus
        self._n_jobs, self._n_gpus = len(jobs), len(gpus)
        self._arrival = [j.arrival for j in jobs]
        self._deadline = [j.deadline for j in jobs]
        self._fits = [[j.vram_gb <= g.gpu_type.vram_gb for g in gpus] for j in jobs]
        self._run = [[run_ticks(j.work, g.gpu_type.speed) for g in gpus] for j in jobs]
        self._cost = [g.gpu_type.cost_per_tick * r.cost_weight for g in gpus]
        self._value = [r.completion_value(j) for j in jobs]
        # GPUs with the same type are interchangeable: canonical keys sort their free ticks.
        kinds: dict[object, list[int]] = {}
        for i, g in enumerate(gpus):
            kinds.setdefault(g.gpu_type, []).append(i)
        self._groups = tuple(tuple(v) for v in kinds.values())
        self._kind_of = [next(k for k, grp in enumerate(self._groups) if i in grp) for i in range(self._n_gpus)]
        self._memo: dict[tuple, float] = {}

    @property
    def states_explored(self) -> int:
        """Distinct (canonical) states evaluated so far: the measure of the search cost."""
        return len(self._memo)

    def initial_state(self) -> State:
        mask = (1 << self._n_jobs) - 1
        return 0, mask, tuple(g.busy_until for g in self.scenario.gpus)

    def solve(self) -> tuple[float, list[Action]]:
        """Optimal total reward from reset and one optimal action sequence (one action per tick)."""
        state = self.initial_state()
        value = self.value(state)
        plan: list[Action] = []
        while state[1] and state[0] < self.scenario.horizon:
            _, (j, g) = self.best(state)
            plan.append(self._action(j, g))
            state = self._transition(state, j, g)[1]
        return value, plan

    def value(self, state: State) -> float:
        """Best total reward from ``state`` to the end of the episode."""
        t, mask, _ = state
        if not mask or t >= self.scenario.horizon:
            return 0.0
        key = self._key(state)
        cached = self._memo.get(key)
        if cached is None:
            cached = self._memo[key] = self.best(state)[0]
        return cached

    def best(self, state: State) -> tuple[float, tuple[int | None, int | None]]:
        """The best reward-to-go in ``state`` and an optimal ``(job index, GPU index)`` (``None``s = defer).

        Ties go to the first placement in job × GPU order, then to defer.
        """
        best_total, best_choice = float("-inf"), (None, None)
        for j, g in self._choices(state):
            reward, nxt = self._transition(state, j, g)
            total = reward + self.value(nxt)
            if total > best_total + 1e-9:
                best_total, best_choice = total, (j, g)
        return best_total, best_choice

    def q_value(self, state: State, action: Action) -> float:
        """Total reward from ``state`` if ``action`` is played now and optimal play follows.

        ``value(state) - q_value(state, action)`` is the regret of one decision (0 for an optimal one); an
        invalid action scores like a defer minus the invalid penalty.
        """
        j = g = None
        penalty = 0.0
        if isinstance(action, Place):
            jobs = [job.job_id for job in self.scenario.jobs]
            gpus = [gpu.gpu_id for gpu in self.scenario.gpus]
            if action.job_id in jobs and action.gpu_id in gpus and self._valid(state, jobs.index(action.job_id), gpus.index(action.gpu_id)):
                j, g = jobs.index(action.job_id), gpus.index(action.gpu_id)
            else:
                penalty = self.rewards.invalid_penalty
        reward, nxt = self._transition(state, j, g)
        return reward - penalty + self.value(nxt)

    def best_action(self, state: State) -> Action:
        """An optimal action in ``state`` as a :class:`Place` or :class:`Defer`."""
        return self._action(*self.best(state)[1])

    # --- internals --------------------------------------------------------------------------------------
    def _action(self, j: int | None, g: int | None) -> Action:
        if j is None or g is None:
            return Defer()
        return Place(self.scenario.jobs[j].job_id, self.scenario.gpus[g].gpu_id)

    def _key(self, state: State) -> tuple:
        t, mask, free = state
        return (t, mask, tuple(tuple(sorted(max(free[i], t) for i in grp)) for grp in self._groups))

    def _valid(self, state: State, j: int, g: int) -> bool:
        t, mask, free = state
        return bool((mask >> j) & 1) and self._arrival[j] <= t and free[g] <= t and self._fits[j][g]

    def _choices(self, state: State) -> list[tuple[int | None, int | None]]:
        t, mask, free = state
        out: list[tuple[int | None, int | None]] = []
        for j in range(self._n_jobs):
            if not (mask >> j) & 1 or self._arrival[j] > t:
                continue
            kinds_done: set[int] = set()  # free GPUs of one type are interchangeable
            for g in range(self._n_gpus):
                if free[g] <= t and self._fits[j][g] and self._kind_of[g] not in kinds_done:
                    kinds_done.add(self._kind_of[g])
                    out.append((j, g))
        out.append((None, None))
        return out

    def _transition(self, state: State, j: int | None, g: int | None) -> tuple[float, State]:
        t, mask, free = state
        r = self.rewards
        reward = 0.0
        if j is not None and g is not None:
            end = t + self._run[j][g]
            stop = min(end, self._deadline[j])
            reward += (self._value[j] if end <= self._deadline[j] else -r.miss_penalty) - (stop - t) * self._cost[g]
            mask &= ~(1 << j)
            free = free[:g] + (stop,) + free[g + 1 :]
        # Idle penalty for tick t: free GPUs on which some arrived, unplaced job fits.
        waiting = [j2 for j2 in range(self._n_jobs) if (mask >> j2) & 1 and self._arrival[j2] <= t]
        for g2 in range(self._n_gpus):
            if free[g2] <= t and any(self._fits[j2][g2] for j2 in waiting):
                reward -= r.idle_penalty
        # Unplaced jobs whose deadline is reached are missed at t + 1.
        for j2 in range(self._n_jobs):
            if (mask >> j2) & 1 and self._deadline[j2] <= t + 1:
                reward -= r.miss_penalty
                mask &= ~(1 << j2)
        return reward, (t + 1, mask, free)


@dataclass
class OptimalPolicy:
    """The clairvoyant optimum of one scenario, played through the ordinary policy interface."""

    scenario: Scenario
    rewards: RewardConfig | None = None
    name: str = "optimum"

    def __post_init__(self) -> None:
        self.solver = OptimumSolver(self.scenario, self.rewards)

    def act(self, observation: PlacementObservation) -> Action:
        placed = {j.job_id for j in (*observation.running, *observation.completed, *observation.missed)}
        mask = sum(1 << i for i, j in enumerate(self.scenario.jobs) if j.job_id not in placed)
        by_id = {g.gpu_id: g for g in observation.gpus}
        free = tuple(by_id[g.gpu_id].free_at for g in self.scenario.gpus)
        to_go, (j, g) = self.solver.best((observation.tick, mask, free))
        why = f"optimum (knows future arrivals): best reward-to-go {to_go:.1f}"
        action = self.solver._action(j, g)
        return Place(action.job_id, action.gpu_id, why) if isinstance(action, Place) else Defer(why)


def optimal_value(scenario: Scenario, rewards: RewardConfig | None = None) -> float:
    """Optimal total reward of ``scenario`` from reset."""
    solver = OptimumSolver(scenario, rewards)
    return solver.value(solver.initial_state())
