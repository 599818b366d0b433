"""The rolling planner: a public-information scheduler that re-plans the rest of the episode every window.

Where the baselines take requests greedily in one window, this one solves, every window, a small mixed-integer
programme (HiGHS through ``scipy.optimize.milp``) over the requests pending *now* and the windows left, with the
same columns and constraints as the truth planner's hindsight MILP (``dcops.cluster.hindsight``) but on what
the public view states:

* a request's value is ``v̂ = 2^L̂ · kW · stated runtime`` with the expected priority level ``L̂ = stated level −
  p · posterior_levels`` (p the team's ``gaming_posterior``, as ``oversight_aware`` reads it), its rejection
  cost ``ρ(L̂)·v̂`` (ρ = 0, 0.1, 0.3, 0.5 interpolated between levels), its delay factor that of its *stated*
  flexibility, and a start is a column only where the job would end by its *stated* deadline (or, due after the
  horizon, is cut by it and scores the fraction done);
* the power row of the current window is :class:`~dcops.agents.schedulers.base.Capacity`'s (the planning
  estimate with the safety ``margin``, committed jobs taken out) and its GPU and zone-power rows are what the
  zones have free; later windows get the same job budget less the running jobs until their stated end, and every
  GPU type's whole capacity less theirs;
* the objective is the score's, not the value's: every window's throughput term ``(G − L)/max(V, G + L)``
  saturates at the window scale V (``(cap/1.3 − base load) · window h · 2.5``, ``ClusterConfig.throughput_scale``),
  so the plan maximises the concave lower bound ``Σ_w min((G_w − L_w)/V, 1 − 2 L_w/V)`` of the truth planner's
  score objective, the running jobs' expected completions and this window's rejections included as constants.

Only the current window's part of the plan is played: a request planned to start now is ACCEPTED if it fits
power and a zone (else deferred while its stated deadline allows, as the baselines do), every other request is
DEFERRED to the next window while its stated deadline allows it to wait (and re-planned then, with the arrivals
of that window), else REJECTED. It remembers the requests it has seen in the episode (to value the running jobs'
completions), and forgets them at window 0. Two simplifications, on purpose: the plan counts a request it does
not run as rejected now (ρ̂·v̂ in this window), though it is played as a deferral while it can wait; and it knows
no future arrivals, so the windows ahead look free to it.

What it is for: the ladder's ``rolling_planner`` rung asks whether *planning* on public information pays in this
game; the evaluator-only ``present_truth_planner`` (``dcops.evaluation.truth_planner``) plays the same planner on
the truth of the requests already submitted, so the two rungs and the truth planner split the truth planner's
lead into what the stated fields hide and what only the future arrivals could tell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.schedulers.base import (
    PRIORITY_LEVEL,
    Capacity,
    accept,
    can_wait,
    defer,
    reject,
    window_hours,
    windows_needed,
)
from dcops.cluster.reward import REJECT_COST, waiting_factor

REJECT_COST_BY_LEVEL = tuple(REJECT_COST[p] for p in sorted(REJECT_COST, key=lambda p: p.value))
"""ρ of ``dcops.cluster.reward`` for LOW … CRITICAL (interpolated at a fractional expected level)."""
VALUE_TIE_BREAK = 1e-6
"""Weight of the plan's value (over V) beside the score bound (as in ``dcops.cluster.hindsight``): a tie-break
towards more value."""
NODE_LIMIT = 200
"""Branch-and-bound nodes per window's programme: a limit on work, so a window's decisions never depend on the
machine's speed."""
SOLVER_OPTIONS = {"node_limit": NODE_LIMIT, "mip_rel_gap": 1e-3, "presolve": False, "disp": False}
"""HiGHS's options. Presolve is off: these programmes are small (a few hundred columns), and 20 oversubscribed
episodes played in 53 s without it against 72 s with it. (HiGHS 1.x may still print a stray debug line,
``transformNewIntegerFeasibleSolution``, to stdout when it repairs an incumbent: ERGO-Code/HiGHS#2783; harmless.)"""


def stated_delay_factor(request: dict[str, Any], start_window: int) -> float:
    """The reward's delay factor (``dcops.cluster.reward.waiting_factor``) on the request's *stated* flexibility."""
    return waiting_factor(request["carbon_flexible"], start_window, request["submitted_window"])


def fraction_by_horizon(request: dict[str, Any], start_window: int, n_windows: int, window_h: float) -> float:
    """Fraction of the request's stated runtime done by the end of the episode if it starts at ``start_window``."""
    return min(1.0, (n_windows - start_window) * window_h / max(request["duration_h"], 1e-9))


def window_scale(view: dict[str, Any]) -> float:
    """V of ``ClusterConfig.throughput_scale`` from the view: the job power the cap admits at a PUE of 1.3 for one
    window at the mean priority weight 2.5, value units. A config's ``value_scale`` override is not in the view,
    so under one (the headroom sweep's variants) the plan's V is this default, not the game's."""
    nominal_kw = max(view["power_cap_kw"] / 1.3 - view["plant"]["base_load_kw"], 1.0)
    return nominal_kw * window_hours(view) * 2.5


@dataclass
class RollingPlanner:
    """The scheduler of the module docstring."""

    name: str = "rolling_planner"
    margin: float = 0.05
    """Safety margin of the power estimate (the family searches all settled at 0.046–0.052)."""
    posterior_levels: float = 0.5
    """Priority levels a sure gamer's stated level is discounted by (``oversight_aware`` uses 1)."""
    _seen: dict[str, tuple[dict[str, Any], float, float]] = field(default_factory=dict, init=False, repr=False,
                                                                  compare=False)

    def estimate(self, request: dict[str, Any], view: dict[str, Any]) -> tuple[float, float]:
        """``(v̂, ρ̂·v̂)``: the request's expected value and rejection cost (module docstring)."""
        team = view.get("teams", {}).get(request["team"], {})
        posterior = float(team.get("gaming_posterior", 0.0) or 0.0)
        level = max(0.0, PRIORITY_LEVEL[request["priority"]] - posterior * self.posterior_levels)
        value = 2.0 ** level * request["kw"] * request["duration_h"]
        rho = float(np.interp(level, (0.0, 1.0, 2.0, 3.0), REJECT_COST_BY_LEVEL))
        return value, rho * value

    def plan(self, view: dict[str, Any]) -> dict[str, int]:
        """Request id → planned start window, for the pending requests the plan runs (the others it would let
        wait or reject). Every pending request is valued on this window's view (the posterior moves), and
        remembered with that value (forgotten at window 0) to value it when it runs: a running job is not in
        the view's pending list any more."""
        if view["window"] == 0:
            self._seen = {}
        for request in view["pending"]:
            self._seen[request["request_id"]] = (request, *self.estimate(request, view))
        if not view["pending"]:
            return {}
        starts = self._plan(view, Capacity(view, self.margin), window_hours(view))
        return {view["pending"][i]["request_id"]: start for i, start in starts.items()}

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        """The window's decisions: ACCEPT what the plan starts now while it fits, DEFER to the next window what
        can still wait, REJECT the rest (module docstring)."""
        window = view["window"]
        starts = self.plan(view)
        capacity = Capacity(view, self.margin)
        window_h = window_hours(view)
        decisions = []
        last = view["n_windows"]
        for request in sorted(view["pending"], key=lambda r: (starts.get(r["request_id"], last), -r["kw"],
                                                               r["request_id"])):
            rid = request["request_id"]
            if starts.get(rid) == window and capacity.admit(request):
                decisions.append(accept(rid))
            elif can_wait(request, view, window_h):
                decisions.append(defer(rid, window + 1))
            else:
                decisions.append(reject(rid))
        return decisions

    def _held(self, view: dict[str, Any], type_index: dict[str, int],
              window_h: float) -> tuple[NDArray[np.float64], ...]:
        """Per window from now: the job power, GPUs and job power per GPU type that running and queued jobs hold,
        and the expected value of the running jobs' completions, by the window it is booked in; and per GPU type
        the running jobs' power (which the zones' free power leaves out of the type's whole capacity)."""
        window, n = view["window"], view["n_windows"]
        horizon = n - window
        zone_type = {z["name"]: z["gpu_type"] for z in view["zones"]}
        held_kw = np.zeros(horizon)
        held_gpus = np.zeros((horizon, len(type_index)))
        held_type_kw = np.zeros((horizon, len(type_index)))
        gained = np.zeros(horizon)  # expected value of the running jobs' completions, by window booked
        running_kw = np.zeros(len(type_index))
        for job in view["running"]:
            j = type_index[zone_type[job["zone"]]]
            running_kw[j] += job["kw"]
            # A job can run past its stated end (the true runtime differs): it then ends this window at the
            # earliest, as far as the plan can tell.
            end = max(job["stated_end_window"], window)
            last = min(n - 1, end) - window
            held_kw[:last + 1] += job["kw"]
            held_gpus[:last + 1, j] += job["gpus"]
            held_type_kw[:last + 1, j] += job["kw"]
            seen = self._seen.get(job["request_id"])
            if seen is not None:
                request, value, _ = seen
                done = value * stated_delay_factor(request, job["started_window"])
                if end <= n - 1:
                    gained[end - window] += done
                else:
                    gained[-1] += done * fraction_by_horizon(request, job["started_window"], n, window_h)
        for job in view["queued"]:  # accepted, waiting for a zone: it holds its power from now on
            seen = self._seen.get(job["request_id"])
            last = min(n - 1, window + windows_needed(seen[0], window_h) - 1) - window if seen is not None else 0
            held_kw[1:last + 1] += job["kw"]  # this window's rows are Capacity's, which counts it already
            held_gpus[1:last + 1, type_index[job["gpu_type"]]] += job["gpus"]
            held_type_kw[1:last + 1, type_index[job["gpu_type"]]] += job["kw"]
        return held_kw, held_gpus, held_type_kw, gained, running_kw

    def _columns(self, pending: list[dict[str, Any]], window: int, n: int,
                 window_h: float) -> tuple[list[tuple[int, int, float, int, int]], NDArray[np.float64]]:
        """The plan's columns, ``(request index, start window, expected score, window booked − now, windows
        held)`` for every start that ends by the stated deadline (or is cut by the horizon of a job due after
        it), and each request's expected rejection cost."""
        columns: list[tuple[int, int, float, int, int]] = []  # (request, start, score, booked window, windows)
        reject_cost = np.zeros(len(pending))
        for i, request in enumerate(pending):
            _, value, reject_cost[i] = self._seen[request["request_id"]]
            k = windows_needed(request, window_h)
            for start in range(window, n):
                end = start + k - 1
                if end <= n - 1:
                    if end > request["deadline_window"]:
                        break
                    score, booked = value * stated_delay_factor(request, start), end
                elif request["deadline_window"] >= n:
                    score = value * stated_delay_factor(request, start) * fraction_by_horizon(request, start, n,
                                                                                               window_h)
                    booked = n - 1
                else:
                    break
                columns.append((i, start, score, booked - window, k))
        return columns, reject_cost

    def _plan(self, view: dict[str, Any], capacity: Capacity, window_h: float) -> dict[int, int]:
        """Index of each pending request the plan starts → its start window (every pending request remembered)."""
        from scipy.optimize import Bounds, LinearConstraint, milp  # here: the package's import stays light
        from scipy.sparse import coo_matrix, csr_matrix, hstack, vstack

        window, n = view["window"], view["n_windows"]
        pending = view["pending"]
        horizon = n - window
        types = sorted({z["gpu_type"] for z in view["zones"]})
        type_index = {g: j for j, g in enumerate(types)}
        gpus_total = np.array([sum(z["gpus_total"] for z in view["zones"] if z["gpu_type"] == g) for g in types], float)
        held_kw, held_gpus, held_type_kw, gained, running_kw = self._held(view, type_index, window_h)
        kw_total = np.array([sum(z["job_kw_free"] for z in view["zones"] if z["gpu_type"] == g) for g in types],
                            float) + running_kw
        lost = np.zeros(horizon)
        columns, reject_cost = self._columns(pending, window, n, window_h)
        lost[0] += reject_cost.sum()  # rejections now, undone by every request the plan runs
        if not columns:
            return {}
        m = len(columns)
        rows, cols, vals, upper = [], [], [], []
        for c, (i, *_) in enumerate(columns):
            rows.append(i)
            cols.append(c)
            vals.append(1.0)
        upper += [1.0] * len(pending)
        row = len(pending)
        free_gpus = np.zeros(len(types))
        free_kw = np.zeros(len(types))
        for zone, gpu_type in enumerate(capacity.zone_type):
            free_gpus[type_index[gpu_type]] += capacity.free_gpus[zone]
            free_kw[type_index[gpu_type]] += capacity.free_kw[zone]
        for u in range(horizon):
            if u == 0:
                upper += [max(capacity.power_kw, 0.0), *free_gpus, *free_kw]
            else:
                upper += [max(capacity.job_budget_kw - held_kw[u], 0.0),
                          *np.maximum(gpus_total - held_gpus[u], 0.0), *np.maximum(kw_total - held_type_kw[u], 0.0)]
            for c, (i, start, _, _, k) in enumerate(columns):
                if start - window <= u < start - window + k:
                    request = pending[i]
                    j = type_index[request["gpu_type"]]
                    rows += [row, row + 1 + j, row + 1 + len(types) + j]
                    cols += [c, c, c]
                    vals += [request["kw"], float(request["gpus"]), request["kw"]]
            row += 1 + 2 * len(types)
        resources = coo_matrix((vals, (rows, cols)), shape=(row, m)).tocsr()
        net = np.zeros((horizon, m))
        loss = np.zeros((horizon, m))
        for c, (i, _, score, booked, _) in enumerate(columns):
            net[booked, c] += score
            net[0, c] += reject_cost[i]
            loss[0, c] -= reject_cost[i]
        scale = window_scale(view)
        eye = csr_matrix(np.eye(horizon) * scale)
        # t_u·V − net_u(x) ≤ G_u − L_u ;  t_u·V + 2·loss_u(x) ≤ V − 2·L_u
        matrix = vstack([hstack([resources, csr_matrix((row, horizon))]),
                         hstack([csr_matrix(-net), eye]), hstack([csr_matrix(2.0 * loss), eye])]).tocsr()
        bound = np.concatenate([upper, gained - lost, scale - 2.0 * lost])
        gain = np.array([score + reject_cost[i] for i, _, score, _, _ in columns])
        cost = np.concatenate([-VALUE_TIE_BREAK * gain / scale, -np.ones(horizon)])
        result = milp(cost, constraints=[LinearConstraint(matrix, -np.inf, bound)],
                      integrality=np.concatenate([np.ones(m), np.zeros(horizon)]),
                      bounds=Bounds(np.concatenate([np.zeros(m), np.full(horizon, -np.inf)]), np.ones(m + horizon)),
                      options=SOLVER_OPTIONS)
        if result.x is None:  # no incumbent within the node limit: plan nothing, so every request waits or goes
            return {}
        chosen = np.flatnonzero(result.x[:m] > 0.5)
        return {columns[c][0]: columns[c][1] for c in chosen}
