"""Hand-made features of each candidate action, for the linear learned policy.

Every valid placement ``(job, GPU)`` of the observation and ``defer()`` get one row of
:data:`N_FEATURES` numbers; a policy scores the rows with one weight vector. Placement rows use the first
:data:`N_PLACE` columns (defer's are zero), the defer row the last :data:`N_DEFER` (placements' are zero),
so "place vs wait" is learned, not hard-coded. All values are roughly in ``[-1, 1]``.
"""

from __future__ import annotations

import numpy as np

from dcops.cluster.placement.actions import Action, Defer, Place
from dcops.cluster.placement.observation import PlacementObservation
from dcops.cluster.placement.scenarios import MAX_PRIORITY, run_ticks

PLACE_FEATURES: tuple[str, ...] = (
    "place_bias",  # 1 for every placement
    "priority",  # priority / 3
    "on_time",  # 1 if the job would complete by its deadline on this GPU
    "slack_after",  # (deadline - completion tick) / horizon
    "job_urgency",  # 1 - (deadline - tick - fastest possible run) / horizon
    "cost_excess",  # (run cost here - cheapest run cost anywhere) / cheapest run cost
    "run_cost",  # run cost here / 10 cost units
    "vram_leftover",  # unused VRAM fraction of the GPU
    "age",  # (tick - arrival) / horizon
    "cheaper_gpu_soon",  # 1 if a cheaper GPU for this job is busy now but frees in time for the deadline
    "queue_pressure",  # pending jobs per GPU, capped at 2, halved
    "speed",  # GPU speed / fastest GPU speed
)
DEFER_FEATURES: tuple[str, ...] = (
    "defer_bias",  # 1 for defer
    "waitable_fraction",  # fraction of pending jobs whose cheapest GPU is busy but frees in time
)
FEATURE_NAMES = PLACE_FEATURES + DEFER_FEATURES
N_PLACE, N_DEFER = len(PLACE_FEATURES), len(DEFER_FEATURES)
N_FEATURES = N_PLACE + N_DEFER


def candidate_features(obs: PlacementObservation) -> tuple[list[Action], np.ndarray]:
    """The candidate actions (every feasible placement, then defer) and their feature rows."""
    t, horizon = obs.tick, max(obs.horizon, 1)
    gpus = obs.gpus
    fastest = max(g.speed for g in gpus)
    jobs = {j.job_id: j for j in obs.pending}
    # Per pending job: cheapest run cost over every GPU that fits (busy or not), and whether that cheapest
    # GPU is busy now but frees early enough to finish by the deadline.
    cheapest: dict[str, float] = {}
    best_run: dict[str, int] = {}
    waitable: dict[str, float] = {}
    for j in obs.pending:
        fits = [(run_ticks(j.work, g.speed), g) for g in gpus if g.vram_gb >= j.vram_gb]
        cheapest[j.job_id] = min(r * g.cost_per_tick for r, g in fits)
        best_run[j.job_id] = min(r for r, _ in fits)
        waitable[j.job_id] = 0.0
        for r, g in fits:
            if g.free_at > t and r * g.cost_per_tick <= cheapest[j.job_id] + 1e-9 and g.free_at + r <= j.deadline:
                waitable[j.job_id] = 1.0
    pressure = min(len(obs.pending) / len(gpus), 2.0) / 2.0
    actions: list[Action] = []
    rows = []
    for p in obs.feasible:
        j, g = jobs[p.job_id], obs.gpu(p.gpu_id)
        run = run_ticks(j.work, g.speed)
        cost = run * g.cost_per_tick
        cheaper_soon = any(
            o.free_at > t
            and o.vram_gb >= j.vram_gb
            and run_ticks(j.work, o.speed) * o.cost_per_tick < cost - 1e-9
            and o.free_at + run_ticks(j.work, o.speed) <= j.deadline
            for o in gpus
        )
        row = np.zeros(N_FEATURES)
        row[:N_PLACE] = (
            1.0,
            j.priority / MAX_PRIORITY,
            float(p.on_time),
            np.clip((j.deadline - p.end) / horizon, -1.0, 1.0),
            1.0 - np.clip((j.deadline - t - best_run[j.job_id]) / horizon, 0.0, 1.0),
            (cost - cheapest[j.job_id]) / max(cheapest[j.job_id], 1e-9),
            cost / 10.0,
            (g.vram_gb - j.vram_gb) / g.vram_gb,
            (t - j.arrival) / horizon,
            float(cheaper_soon),
            pressure,
            g.speed / fastest,
        )
        actions.append(Place(p.job_id, p.gpu_id))
        rows.append(row)
    defer_row = np.zeros(N_FEATURES)
    defer_row[N_PLACE:] = (1.0, float(np.mean(list(waitable.values()))) if waitable else 0.0)
    actions.append(Defer())
    rows.append(defer_row)
    return actions, np.asarray(rows)
