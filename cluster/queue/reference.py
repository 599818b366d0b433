"""A near-optimal reference schedule for the queue benchmark, feasible under the simulator's own rules.

"PPO ties ATC" says little until one knows how far both are from the best possible schedule. The
reference answers that with a strong, deterministic local search on the very problem the simulator scores:

- What is searched: a *priority list* (a permutation of the instance's jobs). The simulator decodes it as a
  policy, :class:`PriorityListPolicy`: at every decision epoch the highest-listed waiting job runs. Every
  list is therefore a schedule the simulator can produce (non-delay, non-preemptive, earliest-free machine
  first), and its score is the simulator's total weighted tardiness. :func:`reference_schedule` re-scores
  the final list with :func:`~dcops.cluster.queue.simulator.simulate` and reports that number.
- Where it starts: the realised dispatch order of the best of the given heuristics on this instance. Read
  as a list, a realised order reproduces its own schedule, and the search only accepts lists that are no
  worse, so the reference is never worse than the best heuristic, scenario by scenario.
- One machine (the benchmark's streaming scenario and OR-Library): non-delay schedules on one machine
  share their *busy periods* (the machine's workload does not depend on the order), so each busy period is
  an independent problem: jobs back to back from the period's first arrival, each starting no earlier
  than its arrival. Each is solved by iterated dynasearch (:mod:`dcops.cluster.queue.dynasearch`); a static
  instance is one busy period with every job released at 0. The same search reaches the proven optimum on
  most OR-Library wt40 / wt50 instances (the benchmark reports how many), which is what validates it.
- Several machines: iterated first-improvement search over the list (:mod:`dcops.cluster.queue.list_search`),
  weaker but still never worse than its start.

Work limits are counts (kicks per busy period, decoded lists), never clock time, and the random kicks come
from ``numpy.random.default_rng`` seeded by ``ReferenceConfig.seed`` and the busy period's index, so the same
instance and configuration give the same reference on every run and every machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dcops.cluster.queue.dynasearch import BusyMachineProblem, SearchSettings, iterated_dynasearch
from dcops.cluster.queue.jobs import Instance
from dcops.cluster.queue.list_search import ListSearchSettings, improve_list
from dcops.cluster.queue.simulator import Policy, QueueState, Schedule, simulate

REFERENCE_NAME = "ILS reference"
# Kicks in a busy period with release dates stay local: a far swap almost always moves a job before its
# arrival, and the repair that follows would undo most of the kick.
LOCAL_KICK_DISTANCE = 16


@dataclass(frozen=True)
class ReferenceConfig:
    """Budget and kick shape of the reference search (counts only, no clock time).

    :param iterations: most kicks per busy period (one machine) or in all (several machines).
    :param patience: a busy period stops after this many kicks in a row without improvement (0: never early).
    :param kick_swaps: random swaps per kick.
    :param kick_distance: most positions between the two jobs of a kick swap; None for anywhere in the
        sequence when every job is released when the period starts (static instances) and
        :data:`LOCAL_KICK_DISTANCE` otherwise.
    :param kick_window: a busy period with arrivals longer than this is kicked one random segment of this
        many positions at a time, with ``iterations`` and ``patience`` per segment length (a static
        instance is kicked as a whole).
    :param max_move_distance: longest interval one dynasearch move spans (positions).
    :param max_list_evaluations: decoded lists allowed to the several-machine search.
    :param seed: seed of the kicks.
    """

    iterations: int = 100
    patience: int = 50
    kick_swaps: int = 3
    kick_distance: int | None = None
    kick_window: int = 40
    max_move_distance: int = 50
    max_list_evaluations: int = 20_000
    seed: int = 0


@dataclass(frozen=True)
class ReferenceResult:
    """The reference schedule of one instance.

    :param priority: the priority list, job indices, highest first; :class:`PriorityListPolicy` decodes it.
    :param schedule: the simulator's schedule of that list.
    :param weighted_tardiness: its total weighted tardiness (the simulator's), weight x seconds.
    :param start_policy: the heuristic whose realised order started the search.
    :param start_weighted_tardiness: that heuristic's total weighted tardiness on the instance.
    :param kicks: kicks performed, all busy periods together.
    :param n_busy_periods: busy periods searched separately (1 on several machines).
    """

    priority: np.ndarray
    schedule: Schedule
    weighted_tardiness: float
    start_policy: str
    start_weighted_tardiness: float
    kicks: int
    n_busy_periods: int


class PriorityListPolicy:
    """A fixed priority list as a simulator policy: the highest-listed waiting job runs next.

    :param priority: job indices of the instance, highest priority first (a permutation).
    :param name: label for reports.
    """

    def __init__(self, priority: np.ndarray, name: str = "priority list") -> None:
        priority = np.asarray(priority, dtype=np.int64)
        if not np.array_equal(np.sort(priority), np.arange(len(priority))):
            raise ValueError("priority must be a permutation of the job indices 0..n-1")
        self.name = name
        self.rank = np.empty(len(priority), dtype=np.float64)
        self.rank[priority] = np.arange(len(priority))

    def scores(self, state: QueueState) -> np.ndarray:
        """Minus the list position of every waiting job (the first listed scores highest)."""
        return -self.rank[state.job_index]


def busy_periods(schedule: Schedule) -> list[np.ndarray]:
    """Job indices of each busy period of a one-machine schedule, in dispatch order.

    A period ends where the machine idles: the next job starts after the previous one completed (in the
    simulator it then starts exactly at its arrival).
    """
    order = schedule.order
    if len(order) == 0:
        return []
    breaks = np.flatnonzero(schedule.start_s[order[1:]] > schedule.completion_s[order[:-1]]) + 1
    return np.split(order, breaks)


def _search_settings(config: ReferenceConfig, static: bool, n_jobs: int) -> SearchSettings:
    """Kicks anywhere on a static problem; local kicks in segments when releases constrain the order."""
    if static:
        distance, window = config.kick_distance or n_jobs, 0
    else:
        distance, window = config.kick_distance or LOCAL_KICK_DISTANCE, config.kick_window
    return SearchSettings(
        iterations=config.iterations,
        patience=config.patience,
        kick_swaps=config.kick_swaps,
        kick_distance=distance,
        kick_window=window,
        max_move_distance=config.max_move_distance,
    )


def _one_machine_list(
    instance: Instance, start: Schedule, config: ReferenceConfig
) -> tuple[np.ndarray, int, int]:
    """Iterated dynasearch on every busy period of ``start``; return (priority list, kicks, periods)."""
    pieces, kicks = [], 0
    periods = busy_periods(start)
    for index, jobs in enumerate(periods):
        if len(jobs) < 2:
            pieces.append(jobs)
            continue
        period_start_s = float(start.start_s[jobs[0]])
        problem = BusyMachineProblem(
            instance.processing_s[jobs],
            instance.weight[jobs],
            instance.due_s[jobs],
            instance.arrival_s[jobs],
            period_start_s,
        )
        static = bool(np.all(problem.release_s <= period_start_s))
        settings = _search_settings(config, static, len(jobs))
        rng = np.random.default_rng([config.seed, index])
        outcome = iterated_dynasearch(problem, np.arange(len(jobs)), settings, rng)
        pieces.append(jobs[outcome.sequence])
        kicks += outcome.kicks
    return np.concatenate(pieces), kicks, len(periods)


def reference_schedule(
    instance: Instance,
    starts: Sequence[Policy],
    config: ReferenceConfig | None = None,
) -> ReferenceResult:
    """The reference schedule of ``instance``, searched from the best of the ``starts`` heuristics.

    :param instance: any instance the simulator runs (one or several machines, with or without arrivals).
    :param starts: policies whose realised orders are candidate starting lists (at least one).
    :param config: search budget; the defaults are the benchmark's.
    :raises RuntimeError: if the simulator scores the final list worse than the start (a decoder mismatch).
    """
    if not starts:
        raise ValueError("reference_schedule needs at least one starting policy")
    config = config or ReferenceConfig()
    schedules = [simulate(instance, policy) for policy in starts]
    best = int(np.argmin([s.weighted_tardiness for s in schedules]))
    start = schedules[best]
    if instance.n_jobs < 2:
        priority, kicks, periods = start.order, 0, instance.n_jobs
    elif instance.n_machines == 1:
        priority, kicks, periods = _one_machine_list(instance, start, config)
    else:
        settings = ListSearchSettings(
            max_evaluations=config.max_list_evaluations,
            iterations=config.iterations,
            kick_swaps=config.kick_swaps,
            kick_distance=config.kick_distance or LOCAL_KICK_DISTANCE,
        )
        outcome = improve_list(instance, start.order, settings, np.random.default_rng([config.seed, 0]))
        priority, kicks, periods = outcome.priority, outcome.kicks, 1
    schedule = simulate(instance, PriorityListPolicy(priority, REFERENCE_NAME))
    tolerance = 1e-9 * max(1.0, start.weighted_tardiness)
    if schedule.weighted_tardiness > start.weighted_tardiness + tolerance:
        raise RuntimeError(
            f"{instance.name}: the simulator scores the reference list {schedule.weighted_tardiness} but its start "
            f"{start.weighted_tardiness}; the search's decoder disagrees with the simulator"
        )
    return ReferenceResult(
        np.asarray(priority, dtype=np.int64),
        schedule,
        schedule.weighted_tardiness,
        starts[best].name,
        start.weighted_tardiness,
        kicks,
        periods,
    )
