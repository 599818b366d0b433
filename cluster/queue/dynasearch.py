"""Iterated dynasearch for total weighted tardiness on one machine that never idles.

The problem: jobs with processing times p (s), weights w, due dates d (s) and release times r (s) run back to
back on one machine from ``start_s``; a sequence is *feasible* when every job starts at or after its release.
Cost: ``sum_j w_j * max(0, C_j - d_j)``. Two cases of the queue benchmark are exactly this problem:

- a static instance (OR-Library): every r = 0 and ``start_s`` = 0, so every permutation is feasible;
- one *busy period* of a streaming instance on one machine (see :mod:`dcops.cluster.queue.reference`): the
  machine works without a break from the period's first arrival, and a sequence is a schedule the simulator
  can produce exactly when every job has arrived by the time the job before it completes.

Search (after Congram, Potts and van de Velde 2002, with the insertion moves of Grosso, Della Croce and Tadei
2004): a *move* rearranges one interval of positions [i, j] by swapping its ends, moving job i to the end, or
moving job j to the front. Completion times outside [i, j] do not change, so moves on disjoint intervals add
up, and a dynamic programme over positions finds the best *set* of disjoint moves in one step (the
dynasearch neighbourhood, which holds every single swap and insertion). Descent repeats that step until no
set improves; iterated search kicks the local optimum with a few random swaps, descends again and keeps the
result when it is no worse. The work limit is a count of kicks, never clock time, and randomness comes
only from the numpy ``Generator`` passed in, so a run is repeatable exactly.

Completion times are accumulated left to right from ``start_s`` (``numpy.add.accumulate``), the same
floating-point chain the simulator computes, so a sequence judged feasible here is dispatched identically
there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# A predicted improvement smaller than this share of the cost is treated as rounding noise, not progress.
RELATIVE_TOLERANCE = 1e-10


@dataclass(frozen=True)
class BusyMachineProblem:
    """Jobs that run back to back on one machine from ``start_s``.

    :param processing_s: processing times, seconds, > 0.
    :param weight: weights, > 0 (tardiness cost per second late).
    :param due_s: due dates, seconds.
    :param release_s: release times, seconds; a job may not start before its release.
    :param start_s: time at which the machine starts the first job, seconds.
    """

    processing_s: np.ndarray
    weight: np.ndarray
    due_s: np.ndarray
    release_s: np.ndarray
    start_s: float = 0.0

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.processing_s)


@dataclass(frozen=True)
class SearchSettings:
    """Work limits and kick shape of :func:`iterated_dynasearch` (all counts, no clock time).

    :param iterations: most kicks per ``kick_window`` positions of the sequence (each kick is followed by a
        descent).
    :param patience: stop after this many kicks per ``kick_window`` positions in a row that found nothing
        better (0: never stop early).
    :param kick_swaps: random pairwise swaps per kick.
    :param kick_distance: the two jobs of a kick swap are at most this many positions apart.
    :param kick_window: on a sequence longer than this, each kick and the descent after it stay inside a
        random segment of this many positions (everything outside keeps its completion time), so a kick
        costs the same on a 50-job and a 200-job busy period; 0 for the whole sequence always.
    :param max_move_distance: longest interval j - i a move may span (bounds the work per step to
        O(n x distance^2) on long sequences; every move fits when it is at least n - 1).
    :param max_descent_steps: safety cap on dynasearch steps per descent.
    """

    iterations: int = 200
    patience: int = 60
    kick_swaps: int = 3
    kick_distance: int = 8
    kick_window: int = 0
    max_move_distance: int = 50
    max_descent_steps: int = 1_000


@dataclass(frozen=True)
class SearchOutcome:
    """Result of :func:`iterated_dynasearch`.

    :param sequence: the best sequence found (job indices of the problem, first to last).
    :param cost: its total weighted tardiness, weight x seconds.
    :param initial_cost: cost of the sequence the search started from.
    :param kicks: kicks performed.
    :param last_improvement: the kick after which the final cost was first reached (0: by the first descent).
    """

    sequence: np.ndarray
    cost: float
    initial_cost: float
    kicks: int
    last_improvement: int = 0


def completion_times(problem: BusyMachineProblem, sequence: np.ndarray) -> np.ndarray:
    """Completion time of each position of ``sequence``, seconds (left-to-right sums from ``start_s``)."""
    chain = np.concatenate(([problem.start_s], problem.processing_s[sequence]))
    return np.add.accumulate(chain)[1:]


def sequence_cost(problem: BusyMachineProblem, sequence: np.ndarray) -> float:
    """Total weighted tardiness of ``sequence``; ``inf`` when some job would start before its release."""
    completion = completion_times(problem, sequence)
    start = np.concatenate(([problem.start_s], completion[:-1]))
    if np.any(problem.release_s[sequence] > start):
        return float("inf")
    tardiness = np.maximum(completion - problem.due_s[sequence], 0.0)
    return float(np.sum(problem.weight[sequence] * tardiness))


def repair(problem: BusyMachineProblem, sequence: np.ndarray) -> np.ndarray:
    """Read ``sequence`` as a priority list and dispatch it without idling: the feasible sequence it yields.

    Whenever the machine frees up, the first listed job that has been released runs next (the simulator's
    rule), so a feasible sequence is returned unchanged.

    :raises ValueError: when no job has been released while the machine is free (not a busy period).
    """
    if np.isfinite(sequence_cost(problem, sequence)):
        return sequence
    remaining = [int(j) for j in sequence]
    release = problem.release_s
    out: list[int] = []
    now_s = float(problem.start_s)
    while remaining:
        position = next((i for i, job in enumerate(remaining) if release[job] <= now_s), None)
        if position is None:
            raise ValueError(f"no job released at {now_s} s: the jobs do not form one busy period")
        job = remaining.pop(position)
        out.append(job)
        now_s = now_s + float(problem.processing_s[job])
    return np.asarray(out, dtype=np.int64)


def _job_cost(
    weight: np.ndarray,
    due_s: np.ndarray,
    release_s: np.ndarray,
    start_s: np.ndarray,
    completion_s: np.ndarray,
) -> np.ndarray:
    """Weighted tardiness of jobs at the given start / completion times; ``inf`` where started too early."""
    cost = weight * np.maximum(completion_s - due_s, 0.0)
    return np.where(start_s >= release_s, cost, np.inf)


# Move kinds of the dynasearch neighbourhood on an interval [i, j].
SWAP, FORWARD, BACKWARD = 0, 1, 2


@dataclass(frozen=True)
class _Layout:
    """Index arrays of the move evaluation that depend only on (n, max_distance), built once per size."""

    in_range: np.ndarray  # (n, n) bool: 0 < j - i <= max distance
    top: int  # longest interval length that fits
    adjacent: np.ndarray  # i of the intervals [i, i + 1]
    after: np.ndarray  # (n - 1, top - 1): position i + 1 + m, indexing arrays padded with top - 1 entries
    i: np.ndarray  # (n - 1, 1)
    j: np.ndarray  # (n - 1, top - 1): i + length, clipped to n - 1
    inside: np.ndarray  # (top - 1, top - 1) float: offset m + 1 < length, the positions strictly inside
    pair_i: np.ndarray  # i, j of the (i, length) cells that are real intervals
    pair_j: np.ndarray
    pair_ok: np.ndarray  # (n - 1, top - 1) bool


@lru_cache(maxsize=512)
def _layout(n: int, max_distance: int) -> _Layout:
    i_idx, k_idx = np.indices((n, n))
    in_range = (k_idx > i_idx) & (k_idx - i_idx <= max_distance)
    top = min(max_distance, n - 1)
    pad = max(top - 1, 0)
    length = np.arange(2, top + 1)
    i = np.arange(n - 1)[:, None]
    j_raw = i + length[None, :]
    pair_ok = j_raw < n
    j = np.minimum(j_raw, n - 1)
    layout = _Layout(
        in_range=in_range,
        top=top,
        adjacent=np.arange(n - 1),
        after=i + 1 + np.arange(pad)[None, :],
        i=i,
        j=j,
        inside=(np.arange(1, top)[None, :] < length[:, None]).astype(np.float64),
        pair_i=np.broadcast_to(i, j.shape)[pair_ok],
        pair_j=j[pair_ok],
        pair_ok=pair_ok,
    )
    for array in vars(layout).values():
        if isinstance(array, np.ndarray):
            array.flags.writeable = False  # shared by every call of this size
    return layout


def _interval_moves(problem: BusyMachineProblem, sequence: np.ndarray, max_distance: int):
    """Cost change of the best move on every interval [i, j] and which move it is.

    Returns ``(delta, kind)``, both (n, n): ``delta[i, j]`` is new minus old cost of positions i..j under
    the best of the three moves (``inf`` where none is feasible or j - i is out of range).
    """
    n = len(sequence)
    layout = _layout(n, max_distance)
    in_range = layout.in_range
    p = problem.processing_s[sequence]
    w = problem.weight[sequence]
    d = problem.due_s[sequence]
    r = problem.release_s[sequence]
    completion = completion_times(problem, sequence)
    start = np.concatenate(([problem.start_s], completion[:-1]))
    lateness = completion - d
    old_prefix = np.concatenate(([0.0], np.cumsum(w * np.maximum(lateness, 0.0))))
    # The job that leaves position i (forward insertion) or arrives at position i (swap, backward insertion).
    leaving_to_j = w[:, None] * np.maximum(completion[None, :] - d[:, None], 0.0)  # job i completing at C_j
    entering_at_i = _job_cost(  # job j starting at start_i
        w[None, :], d[None, :], r[None, :], start[:, None], start[:, None] + p[None, :]
    )
    # Forward insertion: jobs i+1..j move earlier by p_i.
    shifted_earlier = _job_cost(
        w[None, :], d[None, :], r[None, :], start[None, :] - p[:, None], completion[None, :] - p[:, None]
    )
    forward = np.cumsum(np.where(in_range, shifted_earlier, 0.0), axis=1) + leaving_to_j
    # Backward insertion: jobs i..j-1 move later by p_j (row = j, column = k, summed over k >= i).
    shifted_later = w[None, :] * np.maximum(lateness[None, :] + p[:, None], 0.0)
    later_upto_j = np.where(in_range.T, shifted_later, 0.0)
    backward_by_j = np.cumsum(later_upto_j[:, ::-1], axis=1)[:, ::-1]  # [j, i] = sum_{k=i}^{j-1}
    backward = backward_by_j.T + entering_at_i
    # Swap: jobs i+1..j-1 shift by p_j - p_i. Laid out as [i, length, offset], memory O(n x distance^2).
    swap = np.full((n, n), np.inf)
    if layout.top >= 1:
        a = layout.adjacent
        swap[a, a + 1] = entering_at_i[a, a + 1] + leaving_to_j[a, a + 1]
    if layout.top >= 2:
        pad = layout.top - 1

        def after(values: np.ndarray, fill: float) -> np.ndarray:
            """[i, ., m] = values at position i + 1 + m, ``fill`` past the end."""
            return np.concatenate((values, np.full(pad, fill)))[layout.after][:, None, :]

        shift = (p[layout.j] - p[layout.i])[:, :, None]
        cost = after(lateness, 0.0) + shift  # lateness after the shift
        np.maximum(cost, 0.0, out=cost)
        cost *= after(w, 0.0)  # zero weight past the end: no cost
        cost *= layout.inside
        middle = cost.sum(axis=2)
        if np.any(r > problem.start_s):
            # A job moved earlier may not start before its release: start_k + shift >= r_k.
            too_early = (shift < after(r - start, -np.inf)) & (layout.inside > 0)
            middle[too_early.any(axis=2)] = np.inf
        ii, jj = layout.pair_i, layout.pair_j
        swap[ii, jj] = entering_at_i[ii, jj] + middle[layout.pair_ok] + leaving_to_j[ii, jj]
    moves = np.stack([swap, forward, backward])
    kind = np.argmin(moves, axis=0)
    best = np.take_along_axis(moves, kind[None], axis=0)[0]
    interval_old = old_prefix[None, 1:] - old_prefix[:-1, None]  # [i, j] = sum_{k=i}^{j} old_k
    with np.errstate(invalid="ignore"):
        delta = np.where(in_range, best - interval_old, np.inf)
    return delta, kind


def _apply(sequence: np.ndarray, i: int, j: int, kind: int) -> None:
    """Apply one move on positions [i, j] of ``sequence`` in place."""
    if kind == SWAP:
        sequence[i], sequence[j] = sequence[j], sequence[i]
    elif kind == FORWARD:
        sequence[i : j + 1] = np.roll(sequence[i : j + 1], -1)
    else:
        sequence[i : j + 1] = np.roll(sequence[i : j + 1], 1)


def dynasearch_step(
    problem: BusyMachineProblem, sequence: np.ndarray, cost: float, max_distance: int
) -> tuple[np.ndarray, float] | None:
    """The best set of disjoint moves on ``sequence`` (cost ``cost``); None when no set improves it.

    Dynamic programme: ``gain[j + 1]`` is the best cost change on positions 0..j, either leaving position j
    as it is (``gain[j]``) or ending a move on [i, j] (``gain[i] + delta[i, j]``).
    """
    n = len(sequence)
    if n < 2:
        return None
    delta, kind = _interval_moves(problem, sequence, max_distance)
    gain = np.zeros(n + 1)
    choice = np.full(n + 1, -1, dtype=np.int64)  # start i of the move ending at j, -1 for none
    for j in range(1, n):
        lo = max(0, j - max_distance)
        candidates = gain[lo:j] + delta[lo:j, j]
        best = int(candidates.argmin())
        if candidates[best] < gain[j]:
            gain[j + 1], choice[j + 1] = candidates[best], lo + best
        else:
            gain[j + 1] = gain[j]
    if not gain[n] < -RELATIVE_TOLERANCE * max(cost, 1.0):
        return None
    new = sequence.copy()
    j = n
    while j > 0:
        if choice[j] < 0:
            j -= 1
            continue
        i = int(choice[j])
        _apply(new, i, j - 1, int(kind[i, j - 1]))
        j = i
    new_cost = sequence_cost(problem, new)
    # The programme adds shifted times; the exact chain decides (rounding can cost a borderline move).
    if not new_cost < cost:
        return None
    return new, new_cost


def descend(
    problem: BusyMachineProblem, sequence: np.ndarray, settings: SearchSettings
) -> tuple[np.ndarray, float]:
    """Dynasearch steps from a feasible ``sequence`` until none improves; return the local optimum."""
    cost = sequence_cost(problem, sequence)
    for _ in range(settings.max_descent_steps):
        if cost == 0.0:
            break
        step = dynasearch_step(problem, sequence, cost, settings.max_move_distance)
        if step is None:
            break
        sequence, cost = step
    return sequence, cost


def kick(sequence: np.ndarray, rng: np.random.Generator, swaps: int, distance: int) -> np.ndarray:
    """``swaps`` random swaps of two positions at most ``distance`` apart (a copy)."""
    out = sequence.copy()
    n = len(out)
    distance = max(1, min(distance, n - 1))
    for _ in range(swaps):
        i = int(rng.integers(0, n))
        j = i + int(rng.integers(1, distance + 1)) * (1 if rng.random() < 0.5 else -1)
        j = min(max(j, 0), n - 1)
        if j == i:
            j = i + 1 if i + 1 < n else i - 1
        out[i], out[j] = out[j], out[i]
    return out


def segment_problem(
    problem: BusyMachineProblem, sequence: np.ndarray, lo: int, hi: int
) -> BusyMachineProblem:
    """Positions ``lo`` .. ``hi - 1`` of ``sequence`` as a problem of their own (local job indices 0..).

    The segment starts when position ``lo - 1`` completes (the same floating-point chain), and reordering
    it leaves every completion time outside it unchanged, so its cost change is the whole sequence's.
    """
    jobs = sequence[lo:hi]
    start_s = problem.start_s if lo == 0 else float(completion_times(problem, sequence[:lo])[-1])
    return BusyMachineProblem(
        problem.processing_s[jobs],
        problem.weight[jobs],
        problem.due_s[jobs],
        problem.release_s[jobs],
        start_s,
    )


def iterated_dynasearch(
    problem: BusyMachineProblem,
    initial: np.ndarray,
    settings: SearchSettings,
    rng: np.random.Generator,
) -> SearchOutcome:
    """Iterated dynasearch from ``initial`` (repaired to a feasible sequence first).

    The accepted sequence never gets worse (a kick's local optimum replaces it only when no worse), so the
    result is never worse than ``initial``; the search stops early at zero cost (nothing can beat it) or
    after ``settings.patience`` kicks without improvement.
    """
    start = repair(problem, np.asarray(initial, dtype=np.int64))
    initial_cost = sequence_cost(problem, start)
    current, current_cost = descend(problem, start, settings)
    n = problem.n_jobs
    kicks = last_improvement = since_better = 0
    if n < 4 and settings.max_move_distance >= 2:
        # Every order of three jobs or fewer is one move away, so the descent is already optimal.
        return SearchOutcome(current, current_cost, initial_cost, 0)
    window = settings.kick_window if 0 < settings.kick_window < n else n
    scale = -(-n // window)  # kicks cover the sequence window by window
    while kicks < settings.iterations * scale and current_cost > 0.0:
        if settings.patience and since_better >= settings.patience * scale:
            break
        kicks += 1
        if window < n:
            lo = int(rng.integers(0, n - window + 1))
            segment = segment_problem(problem, current, lo, lo + window)
            base = np.arange(window)
            base_cost = sequence_cost(segment, base)
        else:
            lo, segment, base, base_cost = 0, problem, current, current_cost
        kicked = repair(segment, kick(base, rng, settings.kick_swaps, settings.kick_distance))
        found, found_cost = descend(segment, kicked, settings)
        change = found_cost - base_cost
        if change < -RELATIVE_TOLERANCE * max(current_cost, 1.0):
            since_better, last_improvement = 0, kicks
        else:
            since_better += 1
        if change <= 0.0:
            if window < n:
                current = current.copy()
                current[lo : lo + window] = current[lo : lo + window][found]
                current_cost = sequence_cost(problem, current)
            else:
                current, current_cost = found, found_cost
    return SearchOutcome(current, current_cost, initial_cost, kicks, last_improvement)
