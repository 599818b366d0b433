"""Greedy heuristic policies, each optimising one thing and blind to the rest.

All four only ever choose among ``observation.feasible`` (so they make no invalid action) and skip
placements that would finish after the job's deadline (starting late work only burns cost: the job is
stopped at its deadline and missed anyway). They place at most one job per tick, like every policy.

- :class:`Fifo`: oldest job first (backfilling past jobs that fit nowhere now), on the first free GPU in
  the cluster's listed (rack) order. The naive baseline.
- :class:`EarliestDeadlineFirst`: most urgent job first, on the GPU that completes it soonest (fastest).
- :class:`BestFitVram`: the (job, GPU) pair that leaves the least VRAM unused, oldest job on ties.
- :class:`CheapestGpu`: oldest job first, on the GPU where its whole run costs least, *waiting* for that GPU
  if it is busy but frees in time to meet the deadline (the only heuristic that ever defers with work it
  could start).
"""

from __future__ import annotations

from dataclasses import dataclass

from dcops.cluster.placement.actions import Action, Defer, Place
from dcops.cluster.placement.observation import FeasiblePlacement, PlacementObservation
from dcops.cluster.placement.scenarios import run_ticks


def _on_time(obs: PlacementObservation) -> list[FeasiblePlacement]:
    return [p for p in obs.feasible if p.on_time]


@dataclass
class Fifo:
    """First come, first served with backfill; first-fit GPU in cluster order."""

    name: str = "fifo"

    def act(self, observation: PlacementObservation) -> Action:
        options = _on_time(observation)
        for job in observation.pending:  # already in arrival order
            for p in options:  # GPU order within a job
                if p.job_id == job.job_id:
                    return Place(p.job_id, p.gpu_id, f"FIFO: {p.job_id} is the oldest job that fits; first free GPU")
        return Defer("FIFO: nothing can start on time")


@dataclass
class EarliestDeadlineFirst:
    """Most urgent job first, on the GPU that finishes it soonest (ties: cheaper, then cluster order)."""

    name: str = "edf"

    def act(self, observation: PlacementObservation) -> Action:
        options = _on_time(observation)
        gpu_rank = {g.gpu_id: i for i, g in enumerate(observation.gpus)}
        for job in sorted(observation.pending, key=lambda j: (j.deadline, j.arrival)):
            mine = [p for p in options if p.job_id == job.job_id]
            if mine:
                p = min(mine, key=lambda p: (p.end, p.cost, gpu_rank[p.gpu_id]))
                return Place(
                    p.job_id, p.gpu_id, f"EDF: {p.job_id} has the earliest deadline ({job.deadline}); fastest GPU"
                )
        return Defer("EDF: nothing can start on time")


@dataclass
class BestFitVram:
    """The feasible (job, GPU) pair with the least unused VRAM (ties: older job, then cluster order)."""

    name: str = "best_fit"

    def act(self, observation: PlacementObservation) -> Action:
        options = _on_time(observation)
        if not options:
            return Defer("best-fit: nothing can start on time")
        job_rank = {j.job_id: i for i, j in enumerate(observation.pending)}
        gpu_rank = {g.gpu_id: i for i, g in enumerate(observation.gpus)}
        vram = {j.job_id: j.vram_gb for j in observation.pending}

        def leftover(p: FeasiblePlacement) -> tuple[int, int, int]:
            return (observation.gpu(p.gpu_id).vram_gb - vram[p.job_id], job_rank[p.job_id], gpu_rank[p.gpu_id])

        p = min(options, key=leftover)
        return Place(p.job_id, p.gpu_id, f"best-fit: {p.job_id} on {p.gpu_id} leaves {leftover(p)[0]} GB unused")


@dataclass
class CheapestGpu:
    """Oldest job first on its cheapest GPU overall, waiting for that GPU when it frees in time."""

    name: str = "cheapest"

    def act(self, observation: PlacementObservation) -> Action:
        now = observation.tick
        waiting = []
        for job in observation.pending:
            best = None
            for i, g in enumerate(observation.gpus):
                if g.vram_gb < job.vram_gb:
                    continue
                ticks = run_ticks(job.work, g.speed)
                start = max(now, g.free_at)
                if start + ticks > job.deadline:
                    continue
                key = (ticks * g.cost_per_tick, start + ticks, i)
                if best is None or key < best[0]:
                    best = (key, g)
            if best is None:
                continue  # cannot finish anywhere: let it go rather than burn cost
            gpu = best[1]
            if gpu.free_at <= now:
                return Place(job.job_id, gpu.gpu_id, f"cheapest: {gpu.gpu_id} runs {job.job_id} for {best[0][0]:.1f}")
            waiting.append(f"{job.job_id} waits for {gpu.gpu_id} (free at tick {gpu.free_at})")
        return Defer("cheapest: " + ("; ".join(waiting) if waiting else "nothing can start on time"))


@dataclass
class AlwaysDefer:
    """Never places anything: the reference floor of the normalised score (every job is missed)."""

    name: str = "always_defer"

    def act(self, observation: PlacementObservation) -> Action:
        return Defer("reference: do nothing")


HEURISTICS = (Fifo, EarliestDeadlineFirst, BestFitVram, CheapestGpu)
"""The four greedy heuristics (classes; instantiate with no argument)."""
