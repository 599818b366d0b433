"""Local search over a priority list on several machines, decoded exactly as the simulator dispatches.

A *priority list* is a permutation of the instance's jobs; decoding it means running the simulator's rules
(:mod:`dcops.cluster.queue.simulator`) with the policy "the highest-listed waiting job runs next": the
earliest-free machine (lowest index on ties) takes a decision whenever a job waits, an idle machine waits
for the next arrival. :func:`decode` reimplements that loop in plain Python (a heap of waiting ranks), about
twenty times faster than the step-wise simulator, so that thousands of lists can be compared; the caller
re-scores the final list with the simulator itself.

On one machine :mod:`dcops.cluster.queue.dynasearch` is far stronger (busy periods decouple there); this
module serves several machines, where a change early in the list can move every later job to another
machine. Search: first-improvement descent over swaps and insertions of list entries at most
``max_move_distance`` apart, then kicks of a few random swaps, keeping the new list when it is no worse.
The work limit is a count of decoded lists, so the result never depends on the clock.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from dcops.cluster.queue.jobs import Instance


@dataclass(frozen=True)
class ListSearchSettings:
    """Work limits of :func:`improve_list` (counts only).

    :param max_evaluations: most lists decoded, in all.
    :param iterations: most kicks.
    :param kick_swaps: random swaps per kick.
    :param kick_distance: a kick swaps two entries at most this far apart in the list.
    :param max_move_distance: a descent move swaps or moves entries at most this far apart.
    """

    max_evaluations: int = 20_000
    iterations: int = 200
    kick_swaps: int = 3
    kick_distance: int = 8
    max_move_distance: int = 4


@dataclass(frozen=True)
class ListSearchOutcome:
    """Result of :func:`improve_list`.

    :param priority: the best list found (job indices, highest priority first).
    :param cost: its total weighted tardiness, weight x seconds.
    :param evaluations: lists decoded.
    :param kicks: kicks performed.
    """

    priority: np.ndarray
    cost: float
    evaluations: int
    kicks: int


def decode(instance: Instance, priority: np.ndarray, start_s: float = 0.0) -> np.ndarray:
    """Completion time of every job (instance order), seconds, when ``priority`` is dispatched non-delay."""
    n = instance.n_jobs
    rank = np.empty(n, dtype=np.int64)
    rank[np.asarray(priority, dtype=np.int64)] = np.arange(n)
    rank_of = rank.tolist()
    arrival = instance.arrival_s.tolist()
    processing = instance.processing_s.tolist()
    free_at = [float(start_s)] * instance.n_machines
    completion = [0.0] * n
    waiting: list[tuple[int, int]] = []
    next_arrival = dispatched = 0
    while dispatched < n:
        machine = free_at.index(min(free_at))  # earliest free, lowest index on ties (numpy.argmin's rule)
        now_s = free_at[machine]
        while next_arrival < n and arrival[next_arrival] <= now_s:
            heapq.heappush(waiting, (rank_of[next_arrival], next_arrival))
            next_arrival += 1
        if not waiting:
            free_at[machine] = arrival[next_arrival]
            continue
        job = heapq.heappop(waiting)[1]
        completion[job] = free_at[machine] = now_s + processing[job]
        dispatched += 1
    return np.asarray(completion)


def list_cost(instance: Instance, priority: np.ndarray, start_s: float = 0.0) -> float:
    """Total weighted tardiness of the decoded ``priority`` list, weight x seconds."""
    completion = decode(instance, priority, start_s)
    return float(np.sum(instance.weight * np.maximum(completion - instance.due_s, 0.0)))


def _moved(priority: np.ndarray, i: int, j: int, kind: int) -> np.ndarray:
    """A copy of ``priority`` with entries i < j swapped (kind 0), i moved after j (1) or j before i (2)."""
    out = priority.copy()
    if kind == 0:
        out[i], out[j] = out[j], out[i]
    elif kind == 1:
        out[i : j + 1] = np.roll(out[i : j + 1], -1)
    else:
        out[i : j + 1] = np.roll(out[i : j + 1], 1)
    return out


def improve_list(
    instance: Instance,
    priority: np.ndarray,
    settings: ListSearchSettings,
    rng: np.random.Generator,
    start_s: float = 0.0,
) -> ListSearchOutcome:
    """Iterated first-improvement search from ``priority``; never returns a list worse than it."""
    current = np.asarray(priority, dtype=np.int64).copy()
    n = len(current)
    cost = list_cost(instance, current, start_s)
    evaluations, kicks = 1, 0
    moves = [
        (i, i + gap, kind)
        for gap in range(1, max(1, min(settings.max_move_distance, n - 1)) + 1)
        for i in range(n - gap)
        for kind in ((0,) if gap == 1 else (0, 1, 2))
    ]

    def descend(start: np.ndarray, start_cost: float) -> tuple[np.ndarray, float]:
        nonlocal evaluations
        best, best_cost = start, start_cost
        improved = True
        while improved and evaluations < settings.max_evaluations and best_cost > 0.0:
            improved = False
            for i, j, kind in moves:
                if evaluations >= settings.max_evaluations:
                    break
                candidate = _moved(best, i, j, kind)
                candidate_cost = list_cost(instance, candidate, start_s)
                evaluations += 1
                if candidate_cost < best_cost:
                    best, best_cost, improved = candidate, candidate_cost, True
        return best, best_cost

    if n < 2:
        return ListSearchOutcome(current, cost, evaluations, kicks)
    current, cost = descend(current, cost)
    while kicks < settings.iterations and evaluations < settings.max_evaluations and cost > 0.0:
        kicks += 1
        kicked = current.copy()
        for _ in range(settings.kick_swaps):
            i = int(rng.integers(0, n))
            j = int(np.clip(i + rng.integers(-settings.kick_distance, settings.kick_distance + 1), 0, n - 1))
            kicked[i], kicked[j] = kicked[j], kicked[i]
        kicked_cost = list_cost(instance, kicked, start_s)
        evaluations += 1
        candidate, candidate_cost = descend(kicked, kicked_cost)
        if candidate_cost <= cost:
            current, cost = candidate, candidate_cost
    return ListSearchOutcome(current, cost, evaluations, kicks)
