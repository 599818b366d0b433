"""Event-driven, non-preemptive dispatch simulator for one or several identical machines.

The simulator owns time; a *policy* only answers one question at each decision epoch: which waiting job
runs next on the machine that just became free. A decision epoch occurs whenever a machine is free and at
least one job waits; a free machine with an empty queue idles until the next arrival (the schedule is
non-delay: no policy can keep a machine idle while jobs wait). Machines are served earliest-free first,
lowest index on ties.

Policies implement :class:`Policy`: ``scores(state)`` returns one number per waiting job and the highest
score runs next. Ties go to the job that arrived first (waiting jobs are kept in arrival order and
``numpy.argmax`` returns the first maximum), so every run is deterministic.

Time is in seconds. Weighted tardiness of job j: ``w_j * max(0, C_j - d_j)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dcops.cluster.queue.jobs import Instance


@dataclass(frozen=True)
class QueueState:
    """What a policy sees at a decision epoch: the waiting jobs (arrival order) and the machines.

    :param now_s: decision time, seconds.
    :param processing_s: processing times of the waiting jobs, seconds.
    :param weight: their weights.
    :param due_s: their due dates, seconds.
    :param arrival_s: their release times, seconds (all <= ``now_s``).
    :param job_index: their indices in the instance.
    :param busy_remaining_s: for every *other* machine, seconds until it is free (0 when idle).
    """

    now_s: float
    processing_s: np.ndarray
    weight: np.ndarray
    due_s: np.ndarray
    arrival_s: np.ndarray
    job_index: np.ndarray
    busy_remaining_s: np.ndarray

    @property
    def n_waiting(self) -> int:
        """Number of waiting jobs."""
        return len(self.processing_s)


class Policy(Protocol):
    """A dispatching policy: one score per waiting job, the highest runs next."""

    name: str

    def scores(self, state: QueueState) -> np.ndarray:
        """Return an array of shape ``(state.n_waiting,)``; higher means run sooner."""
        ...


@dataclass(frozen=True)
class Schedule:
    """The outcome of one simulated episode.

    :param start_s: start time of every job, seconds (instance order).
    :param completion_s: completion time of every job, seconds.
    :param machine: machine index of every job.
    :param order: job indices in dispatch order.
    :param weighted_tardiness: total weighted tardiness, weight x seconds.
    """

    start_s: np.ndarray
    completion_s: np.ndarray
    machine: np.ndarray
    order: np.ndarray
    weighted_tardiness: float


def weighted_tardiness(instance: Instance, completion_s: np.ndarray) -> float:
    """Total weighted tardiness ``sum_j w_j * max(0, C_j - d_j)`` of completion times ``completion_s``."""
    return float(np.sum(instance.weight * np.maximum(completion_s - instance.due_s, 0.0)))


def accrued_weighted_tardiness(
    instance: Instance, completion_s: np.ndarray, from_s: float, to_s: float
) -> float:
    """Weighted tardiness accrued during the interval ``(from_s, to_s]``.

    A job accrues ``w_j`` per second from its due date until it completes; ``completion_s`` is ``inf`` for
    jobs not yet dispatched. Summed over consecutive intervals covering ``(-inf, inf)`` this gives exactly the
    total weighted tardiness, which is why the environment uses it as a dense reward.
    """
    lo = np.maximum(instance.due_s, from_s)
    hi = np.minimum(completion_s, to_s)
    return float(np.sum(instance.weight * np.maximum(hi - lo, 0.0)))


class QueueSimulator:
    """Step-wise simulator: :meth:`advance` to the next decision, then :meth:`dispatch` one waiting job.

    :param instance: the jobs (sorted by arrival) and the number of machines.
    :param start_s: time at which every machine becomes available, seconds.
    """

    def __init__(self, instance: Instance, start_s: float = 0.0) -> None:
        self.instance = instance
        n = instance.n_jobs
        self.free_at_s = np.full(instance.n_machines, float(start_s))
        self.start_s = np.full(n, np.nan)
        self.completion_s = np.full(n, np.inf)
        self.machine = np.full(n, -1, dtype=np.int64)
        self.order: list[int] = []
        self.waiting: list[int] = []
        self.now_s = float(start_s)
        self._next_arrival = 0
        self._machine = 0

    @property
    def done(self) -> bool:
        """True once every job has been dispatched."""
        return len(self.order) == self.instance.n_jobs

    def advance(self) -> bool:
        """Move time to the next decision epoch; return False when every job has been dispatched."""
        arrival = self.instance.arrival_s
        n = self.instance.n_jobs
        while not self.done:
            machine = int(np.argmin(self.free_at_s))
            t = float(self.free_at_s[machine])
            while self._next_arrival < n and arrival[self._next_arrival] <= t:
                self.waiting.append(self._next_arrival)
                self._next_arrival += 1
            if self.waiting:
                self.now_s, self._machine = t, machine
                return True
            # Idle until the next arrival (there is one, since not every job is dispatched).
            self.free_at_s[machine] = float(arrival[self._next_arrival])
        return False

    def state(self) -> QueueState:
        """The decision state at the current epoch (call after :meth:`advance` returned True)."""
        idx = np.asarray(self.waiting, dtype=np.int64)
        inst = self.instance
        others = np.delete(self.free_at_s, self._machine)
        return QueueState(
            now_s=self.now_s,
            processing_s=inst.processing_s[idx],
            weight=inst.weight[idx],
            due_s=inst.due_s[idx],
            arrival_s=inst.arrival_s[idx],
            job_index=idx,
            busy_remaining_s=np.maximum(others - self.now_s, 0.0),
        )

    def dispatch(self, position: int) -> int:
        """Start the waiting job at ``position`` (index into the waiting list) now; return its job index."""
        if not 0 <= position < len(self.waiting):
            raise IndexError(f"position {position} outside the waiting queue of {len(self.waiting)} jobs")
        job = self.waiting.pop(position)
        self.start_s[job] = self.now_s
        self.completion_s[job] = self.now_s + float(self.instance.processing_s[job])
        self.machine[job] = self._machine
        self.free_at_s[self._machine] = self.completion_s[job]
        self.order.append(job)
        return job

    def schedule(self) -> Schedule:
        """The finished schedule (every job dispatched)."""
        if not self.done:
            raise RuntimeError("the episode is not finished: some jobs were never dispatched")
        return Schedule(
            start_s=self.start_s.copy(),
            completion_s=self.completion_s.copy(),
            machine=self.machine.copy(),
            order=np.asarray(self.order, dtype=np.int64),
            weighted_tardiness=weighted_tardiness(self.instance, self.completion_s),
        )


def simulate(instance: Instance, policy: Policy, start_s: float = 0.0) -> Schedule:
    """Run ``policy`` on ``instance`` until every job has completed; deterministic.

    A queue of one job needs no decision, so the policy is only asked when two or more jobs wait.
    """
    sim = QueueSimulator(instance, start_s)
    while sim.advance():
        if len(sim.waiting) == 1:
            sim.dispatch(0)
            continue
        scores = np.asarray(policy.scores(sim.state()), dtype=np.float64)
        if scores.shape != (len(sim.waiting),):
            raise ValueError(
                f"policy {policy.name!r} returned {scores.shape} scores for {len(sim.waiting)} jobs"
            )
        if np.isnan(scores).any():
            raise ValueError(f"policy {policy.name!r} returned NaN scores")
        sim.dispatch(int(np.argmax(scores)))
    return sim.schedule()
