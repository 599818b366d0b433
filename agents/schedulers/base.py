"""What the baseline schedulers share: reading capacity from the public view, and the decision template.

Schedulers take the structured public view (``info["scheduler"]["view"]``, ``dcops.cluster.observation``) and
return structured decisions (``[{"request_id", "decision", "defer_to_window"}]``). They see only what the
operator sees.

:class:`Capacity` tracks, while a scheduler decides a window, what is left to admit:

- power: the planning estimate of ``dcops.cluster.power`` with a safety margin (default 3 %): ``min(cap ·
  (1 − m) / planning PUE, chiller capacity · (1 − m) / 1.03) − base load − committed job power``, where
  committed includes jobs accepted earlier that still wait for a zone;
- zones: free GPUs and free job power per zone, after the waiting jobs take theirs (first-fit like the
  allocator, most free power first).

:class:`GreedyScheduler` is the template: order the pending requests by a policy key, ACCEPT each one that fits
both power and a zone now; for the others, DEFER to the next window if the stated deadline still allows
finishing after one more window's wait (and a next window exists), else REJECT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dcops.cluster.power import COIL_HEAT_FACTOR, MIN_PLANNING_PUE

PRIORITY_LEVEL = {"LOW": 0, "MEDIUM": 1, "HIGH": 2, "CRITICAL": 3}
PRIORITY_WEIGHT = {"LOW": 1.0, "MEDIUM": 2.0, "HIGH": 4.0, "CRITICAL": 8.0}


class Capacity:
    """Power and zone capacity left in the current window (see the module docstring)."""

    def __init__(self, view: dict[str, Any], margin: float = 0.03) -> None:
        plant = view["plant"]
        cap = view["power_cap_kw"]
        pue = max(plant["planning_pue"], MIN_PLANNING_PUE)
        safe_it = min(cap * (1.0 - margin) / pue, plant["cooling_capacity_kw"] * (1.0 - margin) / COIL_HEAT_FACTOR)
        self.job_budget_kw = safe_it - plant["base_load_kw"]
        """Job power the planning estimate admits in all, running jobs included, kW."""
        self.power_kw = self.job_budget_kw - plant["committed_job_kw"]
        self.zone_type = [z["gpu_type"] for z in view["zones"]]
        self.free_gpus = [z["gpus_free"] for z in view["zones"]]
        self.free_kw = [z["job_kw_free"] for z in view["zones"]]
        for job in view["queued"]:  # accepted earlier, they take their zones first
            zone = self._zone(job["gpu_type"], job["gpus"], job["kw"])
            if zone is not None:
                self._take(zone, job["gpus"], job["kw"])

    def _zone(self, gpu_type: str, gpus: int, kw: float) -> int | None:
        best, best_kw = None, -1.0
        for i, zone_type in enumerate(self.zone_type):
            if zone_type == gpu_type and self.free_gpus[i] >= gpus and self.free_kw[i] >= kw - 1e-9 and self.free_kw[i] > best_kw:
                best, best_kw = i, self.free_kw[i]
        return best

    def _take(self, zone: int, gpus: int, kw: float) -> None:
        self.free_gpus[zone] -= gpus
        self.free_kw[zone] -= kw

    def shortfall(self, request: dict[str, Any]) -> str | None:
        """Why the request would not fit now: ``"power"``, ``"zone"`` (no zone of its GPU type with the GPUs and
        job power free), or None when it fits (:meth:`admit` would take it)."""
        if request["kw"] > self.power_kw + 1e-9:
            return "power"
        if self._zone(request["gpu_type"], request["gpus"], request["kw"]) is None:
            return "zone"
        return None

    def admit(self, request: dict[str, Any]) -> bool:
        """Reserve the request if it fits power and a zone now; say whether it did."""
        if request["kw"] > self.power_kw + 1e-9:
            return False
        zone = self._zone(request["gpu_type"], request["gpus"], request["kw"])
        if zone is None:
            return False
        self._take(zone, request["gpus"], request["kw"])
        self.power_kw -= request["kw"]
        return True


def windows_needed(request: dict[str, Any], window_h: float) -> int:
    return max(1, math.ceil(request["duration_h"] / window_h - 1e-9))


def can_wait(request: dict[str, Any], view: dict[str, Any], window_h: float, windows: int = 1) -> bool:
    """Whether starting ``windows`` later still meets the stated deadline, and that window exists."""
    target = view["window"] + windows
    if target >= view["n_windows"]:
        return False
    return target + windows_needed(request, window_h) - 1 <= request["deadline_window"]


def accept(request_id: str) -> dict[str, Any]:
    return {"request_id": request_id, "decision": "ACCEPT"}


def reject(request_id: str) -> dict[str, Any]:
    return {"request_id": request_id, "decision": "REJECT"}


def defer(request_id: str, window: int) -> dict[str, Any]:
    return {"request_id": request_id, "decision": "DEFER", "defer_to_window": window}


def window_hours(view: dict[str, Any]) -> float:
    """Length of a window, h (12 h / 8 windows by default), from the view's times."""
    return float(view.get("window_h", 1.5))


@dataclass
class GreedyScheduler:
    """Order by :meth:`key`, accept what fits now, defer what can wait, reject the rest."""

    name: str = "greedy"
    margin: float = 0.03

    def key(self, request: dict[str, Any], view: dict[str, Any]) -> tuple[Any, ...]:
        return (request["submitted_window"], request["request_id"])

    def eligible(self, request: dict[str, Any], view: dict[str, Any]) -> bool:
        """Whether the policy would run the request at all (others are rejected at once)."""
        return True

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        capacity = Capacity(view, self.margin)
        window_h = window_hours(view)
        decisions = []
        for request in sorted(view["pending"], key=lambda r: self.key(r, view)):
            decisions.append(self.decide_one(request, view, capacity, window_h))
        return decisions

    def decide_one(self, request: dict[str, Any], view: dict[str, Any], capacity: Capacity,
                   window_h: float) -> dict[str, Any]:
        rid = request["request_id"]
        if not self.eligible(request, view):
            return reject(rid)
        if capacity.admit(request):
            return accept(rid)
        if self.waitable(request, view, window_h):
            return defer(rid, view["window"] + 1)
        return reject(rid)

    def waitable(self, request: dict[str, Any], view: dict[str, Any], window_h: float) -> bool:
        """Whether a request that does not fit now may be deferred a window (by its stated deadline)."""
        return can_wait(request, view, window_h)
