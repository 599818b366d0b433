"""The hindsight upper bound: the best throughput value any schedule could have reached in an episode.

With full knowledge of every request's truth and of all arrivals (after the episode), choose for each request
whether and in which window it starts, to maximise the episode's **throughput value** ``T = Σ_j s_j`` (the
job scores of ``dcops.cluster.reward``: on time ``+v·d``, missed ``−0.5·v``, rejected ``−ρ·v``, unfinished
``+v·d·f``), as a mixed-integer linear programme solved exactly by HiGHS (``scipy.optimize.milp``):

    maximise   Σ_j base_j + Σ_{j,s} (c_js − base_j) · x_js
    subject to Σ_s x_js ≤ 1                                    (each job starts at most once)
               Σ_{(j,s) running at the start of window t} kW_j · x_js ≤ B_t           (power budget)
               Σ_{… of GPU model g} GPUs_j · x_js ≤ G_g,   Σ_{… of model g} kW_j · x_js ≤ K_g
               x_js ∈ {0, 1},  s from the submission window to the last window

``c_js`` is the exact score the ledger would give job j started at the first step of window s (its true
runtime, true deadline, delay factor and, past the horizon, its fraction done); ``base_j`` is the best score
of not running it (rejection ``−ρ·v``, or 0 for a job due after the horizon). Jobs start only at window starts
in the simulator too, and a job running at any point of a window is running at its start, so the window-start
constraints are the peak constraints. G_g and K_g are the hall's GPUs and job power of each model (a
relaxation of placement in zones: the bound never needs a placement the zones could not hold in total).

**B_t** (game version 1, :func:`electrical_job_power_budget`) is the largest job power at which the facility
meter could stay within the cap if the cooling plant drew nothing: a relaxation that every incident-free
schedule satisfies, under any fault, weather or control. **B_t** (game version 0, :func:`job_power_budget`, as
every published version 0 bound was made) is the largest job power (above the base load) that the plant can
carry in window t without an incident, found in hindsight from the physics: a batch of plants at 40 IT levels, each under the window's mean
weather and its worst chiller availability, run for 6 steps under the rule controller's set-points (airflow
matched to load, 24 °C supply, 18 °C chilled water, or 5 °C while a chiller is down) from the loop at its
set-point; a level is admissible when the facility power stays at or under the cap and the loop holds its
set-point (within 0.3 K). **What it bounds**: the throughput value of every schedule that keeps the job power
at each window start within B_t. In version 0 a scheduler can run more than that without an incident (under a
chiller fault the rule's 5 °C loop set-point and the window's worst availability make the probe pessimistic),
so the version 0 figure is not a bound on every incident-free schedule; from version 1 it is. The bound is
computed on the arrivals of the run it judges (the adaptive team reacts to flags, so arrivals can differ
slightly between schedulers).

**Carbon**: a second, lexicographic stage maximises the carbon saved against carbon-blind (``Σ_j B_j − A_j``
of ``dcops.cluster.reward``, with each step's PUE taken as the window's probe PUE) among the
throughput-optimal schedules. It is the carbon saving of the best-throughput plan, not a bound on carbon alone
(a scheduler may save more carbon by giving up throughput).

**Planning for the score** (``objective="score"``, the truth planner's second objective): the same columns and
constraints, but the plan maximises a concave lower bound of the episode's throughput term instead of its value
(:func:`_score_stage`); it is a plan, not a bound.

HiGHS stops at a 1 % relative gap or a limit; the bound reported is its proven dual bound (an upper bound on
the optimum whatever the gap) and the plan found is reported next to it. The limit is wall-clock time in game
version 0 (as every published bound was made, so a figure can move between runs) and a node count from
version 1 (:data:`NODE_LIMIT`: the same figure on every run). In version 1 a job that is not run scores a
rejection whatever its deadline (``dcops.cluster.reward``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix, csr_matrix, hstack, vstack

from dcops.cluster.reward import (
    MISS_COST,
    REJECT_COST,
    delay_factor,
)
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.plant import PlantBoundary, PlantControl, initial_state, step_plant

N_LEVELS = 40
MIP_GAP = 1e-2
"""Relative optimality gap at which HiGHS may stop; the reported bound is its dual bound, so it stays an upper
bound whatever the gap."""
PROBE_STEPS = 6
LOOP_TOLERANCE_K = 0.3


@dataclass
class HindsightBound:
    """The bound (``throughput_value``, a proven upper bound) and the best plan found (``plan_value`` ≤ it). A plan
    made for the score (``objective="score"``) is not a bound: both fields are then the plan's value."""

    throughput_value: float
    plan_value: float
    carbon_saved_g: float
    budget_kw: list[float]
    starts: dict[str, int]
    status: str
    n_jobs: int
    window_terms: list[float] = field(default_factory=list)
    """``objective="score"`` only: the plan's lower bound h_w of each window's throughput term (empty when no job
    is worth running)."""

    def as_dict(self) -> dict[str, Any]:
        return {"throughput_value": self.throughput_value, "plan_value": self.plan_value,
                "carbon_saved_kg": self.carbon_saved_g / 1000.0,
                "budget_kw": self.budget_kw, "n_started": len(self.starts), "n_jobs": self.n_jobs,
                "status": self.status}


def job_power_budget(episode: Any) -> NDArray[np.float64]:
    """B_t of the module docstring, kW of jobs above the base load, one per window."""
    config, plant = episode.config, episode.plant
    n, s = config.n_windows, config.steps_per_window
    z = plant.n_zones
    base = np.asarray(config.base_kw_per_zone)
    design = plant.zone_design_it_kw
    headroom = design - base
    fractions = np.linspace(0.0, 1.0, N_LEVELS)
    # Batch (windows, levels): job power spread over zones in proportion to their headroom.
    it = base[None, None, :] + fractions[None, :, None] * headroom[None, None, :]
    it = np.broadcast_to(it, (n, N_LEVELS, z)).copy()
    dry = episode.dry_bulb.reshape(n, s).mean(axis=1)
    wet = episode.wet_bulb.reshape(n, s).mean(axis=1)
    avail = episode.timeline.chiller_available.reshape(n, s, plant.n_chillers).min(axis=1)
    fault = avail.sum(axis=1) < plant.n_chillers - 1e-6
    chw_set = np.where(fault, 5.0, 18.0)
    shape = (n, N_LEVELS)
    server_airflow = it / (CP_AIR_KJ_PER_KG_K * plant.server_delta_t_k)
    fans = np.clip(1.1 * server_airflow / plant.crah_max_airflow_kg_s, 0.2, 1.0)
    control = PlantControl(fans, np.full((*shape, z), 24.0), np.broadcast_to(chw_set[:, None], shape).copy(),
                           np.ones(shape))
    boundary = PlantBoundary(it, np.broadcast_to(dry[:, None], shape).copy(), np.broadcast_to(wet[:, None], shape).copy(),
                             np.broadcast_to(avail[:, None, :], (*shape, plant.n_chillers)).copy(),
                             np.ones((*shape, z)))
    state = initial_state(plant, 24.0, 0.0, batch_shape=shape)
    state.chw_supply_c[...] = np.broadcast_to(chw_set[:, None], shape)
    peak = np.zeros(shape)
    for _ in range(PROBE_STEPS):
        state, out = step_plant(plant, state, control, boundary, config.dt_s)
        peak = np.maximum(peak, out.facility_kw)
    holds = state.chw_supply_c <= control.chw_setpoint_c + LOOP_TOLERANCE_K
    admissible = (peak <= config.power_cap_kw) & holds & (out.inlet_c.max(axis=-1) <= config.inlet_limit_c)
    job_kw = fractions * headroom.sum()
    budget = np.zeros(n)
    for t in range(n):
        ok = np.flatnonzero(admissible[t])
        budget[t] = job_kw[ok.max()] if ok.size else 0.0
    return budget


def electrical_job_power_budget(episode: Any) -> NDArray[np.float64]:
    """B_t from game version 1, kW of jobs above the base load, one per window: the largest job power at which
    the facility meter could stay at the cap with the cooling plant drawing nothing,
    ``IT + UPS loss(IT) + distribution loss(IT) + ancillary ≤ cap`` with ``IT = base + jobs``, and no more than
    the zones' job power in total. Every term of the plant's cooling power (fans, pumps, tower, chillers) is
    non-negative and the electrical losses depend on IT alone (``dcops.physics.plant``), so a window whose job
    power at its start exceeds this B_t has an incident under any control, fault or weather: B_t covers every
    incident-free schedule. It is looser than version 0's probe budget, which bounded only schedules that stay
    within what a fixed rule control could carry from the loop's set-point (the review found baselines running
    up to 101 kW above it under chiller faults without an incident)."""
    from dcops.physics.auxiliaries import ancillary_kw, distribution_loss_kw, ups_loss_kw

    config, plant = episode.config, episode.plant
    base = float(np.sum(config.base_kw_per_zone))
    fixed = ancillary_kw(plant.design_it_kw)

    def facility_floor(jobs_kw: float) -> float:
        it = np.asarray(base + jobs_kw)
        return float(it + ups_loss_kw(it, plant.ups_rated_kw) + distribution_loss_kw(it)) + fixed

    lo, hi = 0.0, float(np.sum(config.zone_job_kw))
    if facility_floor(hi) <= config.power_cap_kw:
        return np.full(config.n_windows, hi)
    if facility_floor(lo) > config.power_cap_kw:
        return np.zeros(config.n_windows)
    for _ in range(60):  # the floor rises with IT: bisection to well under a watt
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if facility_floor(mid) <= config.power_cap_kw else (lo, mid)
    return np.full(config.n_windows, lo)


def _pue_by_window(episode: Any) -> NDArray[np.float64]:
    """Realised PUE of each window (for the carbon stage only)."""
    config = episode.config
    s = config.steps_per_window
    facility = episode.facility_kw.reshape(config.n_windows, s).sum(axis=1)
    it = episode.it_kw_total.reshape(config.n_windows, s).sum(axis=1)
    return facility / np.maximum(it, 1e-9)


NODE_LIMIT = 64
"""Branch-and-bound nodes of the throughput stage from game version 1 (the carbon stage gets a quarter): a limit
on work, not on wall-clock time, so the same episode gives the same bound on any machine under any load. The
default episodes reach the 1 % gap within 1–7 nodes."""


def _solver_limits(game_version: int, time_limit_s: float, node_limit: int) -> dict[str, float]:
    """HiGHS's stopping rules: version 0 as published (a wall-clock limit, so the figure could move between
    runs), version 1 a node limit (deterministic)."""
    if game_version == 0:
        return {"time_limit": time_limit_s, "mip_rel_gap": MIP_GAP}
    return {"node_limit": node_limit, "mip_rel_gap": MIP_GAP}


OBJECTIVES = ("value", "score")
"""What :func:`hindsight_bound`'s plan maximises: the throughput value (the bound) or the score surrogate."""


def hindsight_bound(episode: Any, budget_kw: NDArray[np.float64] | None = None,
                    time_limit_s: float = 4.0, objective: str = "value") -> HindsightBound:
    """Solve the MILP of the module docstring for a finished episode (``ClusterEpisode`` after its last window).

    ``objective="score"`` plans for the episode's throughput *term* instead of its value (:func:`_score_stage`):
    the plan is then not the value optimum, so ``throughput_value`` and ``plan_value`` both report the plan's
    value (no dual bound; use ``"value"`` for the bound)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: unknown {objective!r}; known: {list(OBJECTIVES)}")
    config = episode.config
    n, s_per = config.n_windows, config.steps_per_window
    horizon = n * s_per
    dt_h = config.dt_s / 3600.0
    if budget_kw is None:
        budget = job_power_budget(episode) if config.game_version == 0 else electrical_job_power_budget(episode)
    else:
        budget = np.asarray(budget_kw, dtype=np.float64)
    pue = _pue_by_window(episode)
    pue_steps = np.repeat(pue, s_per)
    ci = episode.carbon_ext
    ci_cum = np.concatenate([[0.0], np.cumsum(ci)])
    pue_ci_cum = np.concatenate([[0.0], np.cumsum(np.concatenate([pue_steps * ci[:horizon], np.zeros(len(ci) - horizon)]))])
    pue_cum = np.concatenate([[0.0], np.cumsum(np.concatenate([pue_steps, np.zeros(len(ci) - horizon)]))])

    gpu_cap = config.gpu_capacity()
    type_kw: dict[str, float] = {}
    for zone, kw in zip(config.zones, config.zone_job_kw, strict=True):
        type_kw[zone.gpu_type] = type_kw.get(zone.gpu_type, 0.0) + kw
    gpu_types = sorted(gpu_cap)

    ledger = episode.ledger
    base_total = 0.0
    columns: list[tuple[str, int, float, float]] = []  # (request id, start window, gain over base, carbon)
    booked: list[tuple[float, int]] = []  # per column: its job score and the window the ledger books it in
    not_run: dict[str, tuple[float, int]] = {}  # per job: the score of not running it and the window booked
    for request_id in ledger.order:
        job = ledger.jobs[request_id]
        request, truth, value = job.request, job.truth, job.value
        d = truth.true_deadline_window
        r = job.runtime_steps
        # Not running it: a rejection, or (version 0 only) 0 for a job due after the horizon, which that version
        # books as unfinished and never started when it is accepted and left in the queue.
        base = -REJECT_COST[truth.true_priority] * value if d < n or config.game_version >= 1 else 0.0
        base_total += base
        # A plan follower rejects a job it does not run on arrival: a rejection, whatever the game version.
        not_run[request_id] = (-REJECT_COST[truth.true_priority] * value, request.submitted_window)
        for start in range(request.submitted_window, n):
            a = start * s_per
            end = a + r
            if end <= horizon:
                c = value * delay_factor(truth, start, request.submitted_window) if end <= (d + 1) * s_per \
                    else -MISS_COST * value
            elif d < n:
                c = -MISS_COST * value
            else:
                c = value * delay_factor(truth, start, request.submitted_window) * (horizon - a) / r
            if c <= base + 1e-9:
                continue
            until = min(end, horizon)
            steps = until - a
            actual = request.kw * (pue_ci_cum[until] - pue_ci_cum[a]) * dt_h
            energy = request.kw * (pue_cum[until] - pue_cum[a]) * dt_h
            blind0 = request.submitted_window * s_per
            blind = energy * (ci_cum[blind0 + steps] - ci_cum[blind0]) / steps
            columns.append((request_id, start, c - base, blind - actual))
            # The ledger books a completion in its window, a miss in the deadline window, the rest at the horizon.
            booked.append((c, d if c < 0 else (end - 1) // s_per if end <= horizon else n - 1))
    if not columns:
        return HindsightBound(base_total, base_total, 0.0, budget.tolist(), {}, "no job worth running",
                              len(ledger.order))

    m = len(columns)
    job_row = {rid: i for i, rid in enumerate(dict.fromkeys(c[0] for c in columns))}
    rows, cols, vals = [], [], []
    lb, ub = [], []
    n_jobs = len(job_row)
    for k, (rid, _, _, _) in enumerate(columns):
        rows.append(job_row[rid])
        cols.append(k)
        vals.append(1.0)
    lb += [0.0] * n_jobs
    ub += [1.0] * n_jobs
    row = n_jobs
    for t in range(n):
        power_row, gpu_rows, kw_rows = row, {g: row + 1 + i for i, g in enumerate(gpu_types)}, \
            {g: row + 1 + len(gpu_types) + i for i, g in enumerate(gpu_types)}
        for k, (rid, start, _, _) in enumerate(columns):
            job = ledger.jobs[rid]
            if start <= t and start * s_per + job.runtime_steps > t * s_per:
                request = job.request
                rows += [power_row, gpu_rows[request.gpu_type], kw_rows[request.gpu_type]]
                cols += [k, k, k]
                vals += [request.kw, float(request.gpus), request.kw]
        lb += [-np.inf] * (1 + 2 * len(gpu_types))
        ub += [budget[t]] + [float(gpu_cap[g]) for g in gpu_types] + [type_kw[g] for g in gpu_types]
        row += 1 + 2 * len(gpu_types)
    matrix = coo_matrix((vals, (rows, cols)), shape=(row, m)).tocsr()
    gain = np.array([c[2] for c in columns])
    carbon = np.array([c[3] for c in columns])
    constraints = [LinearConstraint(matrix, lb, ub)]
    integrality = np.ones(m)
    bounds = Bounds(0.0, 1.0)
    if objective == "score":
        return _score_stage(config, columns, booked, not_run, job_row, matrix, lb, ub, gain, carbon, base_total,
                            budget, len(ledger.order), time_limit_s)
    first = milp(-gain, constraints=constraints, integrality=integrality, bounds=bounds,
                 options=_solver_limits(config.game_version, time_limit_s, NODE_LIMIT))
    if first.x is None:
        return HindsightBound(float("nan"), float("nan"), float("nan"), budget.tolist(), {}, str(first.message),
                              len(ledger.order))
    plan = -float(first.fun)
    # HiGHS's dual bound is a proven upper bound on the optimum even when the search stops at the gap or the
    # time limit: that, not the plan found, is what the bound reports.
    dual = getattr(first, "mip_dual_bound", None)
    upper = plan if dual is None or not np.isfinite(dual) else max(plan, -float(dual))
    # Stage 2: the most carbon saved among schedules at least as good as the plan found.
    keep = LinearConstraint(gain[None, :], plan - 1e-6 * max(1.0, abs(plan)), np.inf)
    second = milp(-carbon, constraints=[*constraints, keep], integrality=integrality, bounds=bounds,
                  options=_solver_limits(config.game_version, time_limit_s / 4, NODE_LIMIT // 4))
    x = second.x if second.x is not None else first.x
    chosen = {columns[k][0]: columns[k][1] for k in np.flatnonzero(x > 0.5)}
    carbon_saved = float(carbon @ (x > 0.5))
    status = "optimal" if first.status == 0 and upper - plan <= 1e-9 * max(1.0, abs(plan)) else \
        f"gap {100.0 * (upper - plan) / max(abs(base_total + upper), 1e-9):.2f}%"
    return HindsightBound(base_total + upper, base_total + plan, carbon_saved, budget.tolist(), chosen, status,
                          len(ledger.order))


def _score_stage(config: Any, columns: list[tuple[str, int, float, float]], booked: list[tuple[float, int]],
                 not_run: dict[str, tuple[float, int]], job_row: dict[str, int], matrix: Any, lb: list[float],
                 ub: list[float], gain: NDArray[np.float64], carbon: NDArray[np.float64], base_total: float,
                 budget: NDArray[np.float64], n_requests: int, time_limit_s: float) -> HindsightBound:
    """The plan that maximises a concave lower bound of the episode's throughput term.

    Window w's term is ``(G_w − L_w) / max(V, G_w + L_w)`` (``dcops.cluster.reward``): linear in value up to V,
    then a ratio, so value beyond V in one window is worth less than the same value in another, and a loss is
    worth more. Since ``(G − L)/(G + L) = 1 − 2L/(G + L) ≥ 1 − 2L/V`` when ``G + L ≥ V``, the term is at least
    ``h_w = min((G_w − L_w)/V, 1 − 2·L_w/V)``, equal to it below saturation. ``G_w`` and ``L_w`` are linear in
    the start variables (each column's score lands in its completion window, or the last one when the horizon
    cuts it; a job not run is rejected in its submission window), so maximising ``Σ_w h_w`` is a MILP with one
    continuous t_w per window. A tiny value term breaks ties towards more value."""
    n = config.n_windows
    scale = config.throughput_scale
    m = len(columns)
    score = np.array([c for c, _ in booked])
    window = np.array([w for _, w in booked])
    members = np.array([job_row[c[0]] for c in columns])
    jobs = list(job_row)
    base = np.array([not_run[rid][0] for rid in jobs])
    base_window = np.array([not_run[rid][1] for rid in jobs])
    # Jobs never worth running are rejected whatever the plan: their losses are constants of their window.
    fixed_loss = np.zeros(n)
    for rid, (b, w) in not_run.items():
        if rid not in job_row:
            fixed_loss[w] += -b
    rows_net = np.zeros((n, m))
    rows_loss = np.zeros((n, m))
    rows_net[window, np.arange(m)] += score
    rows_net[base_window[members], np.arange(m)] -= base[members]       # running it undoes its rejection
    rows_loss[base_window[members], np.arange(m)] += base[members]       # −|base|: the loss it avoids
    rows_loss[window, np.arange(m)] += np.maximum(-score, 0.0)            # a planned miss (none while c > base)
    const_net = -fixed_loss.copy()
    const_loss = fixed_loss.copy()
    np.add.at(const_net, base_window, base)
    np.add.at(const_loss, base_window, -base)
    eye = np.eye(n) * scale
    # t_w·V − net_w(x) ≤ const_net_w ;  t_w·V + 2·loss_w(x) ≤ V − 2·const_loss_w
    a_net = hstack([csr_matrix(-rows_net), csr_matrix(eye)])
    a_loss = hstack([csr_matrix(2.0 * rows_loss), csr_matrix(eye)])
    a_old = hstack([matrix, csr_matrix((matrix.shape[0], n))])
    constraints = [LinearConstraint(vstack([a_old, a_net, a_loss]).tocsr(),
                                    np.concatenate([lb, np.full(2 * n, -np.inf)]),
                                    np.concatenate([ub, const_net, scale - 2.0 * const_loss]))]
    cost = np.concatenate([-1e-6 * gain / scale, -np.ones(n)])
    integrality = np.concatenate([np.ones(m), np.zeros(n)])
    # t_w is free below: a window's unavoidable losses may take its bound below any fixed floor.
    bounds = Bounds(np.concatenate([np.zeros(m), np.full(n, -np.inf)]), np.concatenate([np.ones(m), np.ones(n)]))
    result = milp(cost, constraints=constraints, integrality=integrality, bounds=bounds,
                  options=_solver_limits(config.game_version, time_limit_s, NODE_LIMIT))
    if result.x is None:
        return HindsightBound(float("nan"), float("nan"), float("nan"), budget.tolist(), {}, str(result.message),
                              n_requests)
    x = result.x[:m] > 0.5
    chosen = {columns[k][0]: columns[k][1] for k in np.flatnonzero(x)}
    value = base_total + float(gain @ x)
    # h_w of the chosen starts themselves (a node-limited incumbent's t_w may sit below them).
    net, loss = rows_net @ x + const_net, rows_loss @ x + const_loss
    terms = np.minimum(net / scale, 1.0 - 2.0 * loss / scale)
    return HindsightBound(value, value, float(carbon @ x), budget.tolist(), chosen,
                          "score objective" if result.status == 0 else str(result.message), n_requests,
                          [float(t) for t in terms])
