"""Carbon-aware greedy: shift stated-flexible work to the cleanest window its stated deadline allows.

For each request stated carbon-flexible, find the window from now until the last one in which starting still
meets its stated deadline, with the lowest forecast grid carbon intensity; if that window is at least
``min_saving`` (10 %) cleaner than now, DEFER the request to it. Everything else is admitted greedily in order of
stated priority (then arrival), as in :class:`~dcops.agents.schedulers.base.GreedyScheduler`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.agents.schedulers.base import (
    PRIORITY_WEIGHT,
    Capacity,
    GreedyScheduler,
    defer,
    window_hours,
    windows_needed,
)


@dataclass
class CarbonAwareScheduler(GreedyScheduler):
    name: str = "carbon_greedy"
    min_saving: float = 0.10

    def key(self, request: dict[str, Any], view: dict[str, Any]) -> tuple[Any, ...]:
        return (-PRIORITY_WEIGHT[request["priority"]], request["submitted_window"], request["request_id"])

    def cleaner_window(self, request: dict[str, Any], view: dict[str, Any], window_h: float) -> int | None:
        forecast = view["carbon_forecast_g_per_kwh"]
        now = view["window"]
        latest = min(view["n_windows"] - 1, request["deadline_window"] - windows_needed(request, window_h) + 1)
        if latest <= now:
            return None
        best = min(range(now + 1, latest + 1), key=lambda w: forecast[w])
        return best if forecast[best] <= (1.0 - self.min_saving) * forecast[now] else None

    def decide_one(self, request: dict[str, Any], view: dict[str, Any], capacity: Capacity,
                   window_h: float) -> dict[str, Any]:
        if request["carbon_flexible"]:
            target = self.cleaner_window(request, view, window_hours(view))
            if target is not None:
                return defer(request["request_id"], target)
        return super().decide_one(request, view, capacity, window_h)
