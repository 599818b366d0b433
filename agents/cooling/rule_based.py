"""The tuned rule-based controller: how a competent operator runs the plant.

Rules, each a fixed number an operator would set (defaults tuned with ``dcops tune-rule`` on training seeds):

- Supply air at a fixed set-point ``supply_c`` in every zone (inlets sit just above it when airflow is enough).
- Chilled water as warm as the supply set-point allows (``supply_c − coil approach − chw_margin_k``, within
  the 5–18 °C range): warmer water raises chiller COP and lengthens economiser hours.
- Airflow matched to the IT load (containment practice): fan speed = ``airflow_margin`` × the servers' airflow
  over the CRAH maximum, so recirculation stays at its floor without over-blowing.
- Waterside economiser enabled whenever the wet-bulb makes it useful (it is free when it is not).
- Fault response (an operator's chiller-trip procedure): when chiller units are lost, drop the chilled-water
  set-point to ``fault_chw_c`` so the remaining capacity pre-cools the loop's thermal mass; once the loop is
  within ``triage_margin_k`` of limiting the supply air, starve the ``triage_zones`` least critical zones of
  airflow (minimum fan speed: their heat stays in their own mass instead of warming the shared loop) and keep
  the others at ``fault_airflow_margin`` × their servers' airflow.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.base import ControllerContext
from dcops.physics.interface import CHW_SETPOINT_RANGE_C, FAN_SPEED_RANGE, Telemetry, encode_setpoints


@dataclass
class RuleBasedController:
    """Fixed set-points plus economiser, airflow matched to load, and a chiller-fault response."""

    supply_c: float = 24.0
    chw_margin_k: float = 1.0
    airflow_margin: float = 1.1
    fault_chw_c: float = 5.0
    fault_airflow_margin: float = 1.2
    triage_margin_k: float = 2.0
    triage_zones: int = 1
    name: str = "rule"

    def reset(self, context: ControllerContext) -> None:
        self.context = context

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        ctx = self.context
        t = Telemetry.parse(telemetry, ctx.n_zones)
        fans = ctx.matched_fan_speed(t.load_fraction, self.airflow_margin)
        chw = self.supply_c - ctx.coil_approach_k - self.chw_margin_k
        supply = np.full(ctx.n_zones, self.supply_c)
        if t.chillers_available < 1.0 - 1e-6:
            chw = self.fault_chw_c
            fans = ctx.matched_fan_speed(t.load_fraction, self.fault_airflow_margin)
            loop_limits_supply = t.chw_supply_c + ctx.coil_approach_k > self.supply_c - self.triage_margin_k
            if loop_limits_supply and self.triage_zones > 0:
                least_critical = np.argsort(ctx.zone_weights, kind="stable")[: self.triage_zones]
                least_critical = least_critical[ctx.zone_weights[least_critical] < ctx.zone_weights.max()]
                fans[least_critical] = FAN_SPEED_RANGE[0]
        fans = np.clip(fans, *FAN_SPEED_RANGE)
        chw = float(np.clip(chw, *CHW_SETPOINT_RANGE_C))
        return encode_setpoints(fans, supply, chw, economiser_on=True)

    @classmethod
    def for_task(cls, task_id: str) -> RuleBasedController:
        """The controller with the parameters ``dcops tune-rule`` found for ``task_id`` (defaults otherwise)."""
        params = _tuned_parameters().get(task_id, {}).get("params", {})
        return cls(**params)


@cache
def _tuned_parameters() -> dict[str, Any]:
    path = resources.files("dcops.agents.cooling").joinpath("rule_tuned.json")
    if not path.is_file():
        return {}
    return json.loads(path.read_text())["tasks"]
