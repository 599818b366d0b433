"""PI control of the air side on plant v2, as building-management systems do it; the plant side is the tuned rule's.

Plant v0's PID (:mod:`dcops.agents.cooling.pid`) carried to plant v2. Two loops per zone, each a discrete PI with
conditional-integration anti-windup (:class:`~dcops.agents.cooling.pid.PILoop`: the integral freezes while the
output is saturated in the direction the error pushes it):

- **Supply-air reset** on the zone's *reported* inlet: ``supply = supply_bias_c − (kp·e + ki·∫e dt)``,
  e = inlet − ``target_inlet_c`` (K; the integral in K·h), clipped to 15–27 °C. A warmer inlet lowers the
  supply set-point. The loop trusts its sensor: a drifting inlet sensor makes it cool the zone for real.
- **Airflow** holds the CRAH air temperature rise (reported return − supply) at ``target_delta_t_k``:
  ``fan = fan_bias + kp_fan·(ΔT − target) + ki_fan·∫(ΔT − target) dt``, clipped to 0.2–1. A wider rise (too
  little air) opens the fans.

Everything after the air side is the tuned rule's (:meth:`RuleV2Controller.plant_setpoints
<dcops.agents.cooling.rule_v2.RuleV2Controller.plant_setpoints>`, the composed ``plant`` rule's parameters):
chilled water reset from the coldest supply set-point (``min(supply) − coil approach − chw_margin_k``),
condenser-water reset on the tower fan, staging by chiller load, the chilled-water pump, the economiser, storage
and the chiller-trip response. The rule's air-side parameters (supply air, airflow margin, inlet trim, winter
mode) are never read.

Gains: :meth:`PIDV2Controller.tuned` reads those ``dcops tune-pid-v2`` chose by a small grid on tuning seeds 1000+
(:mod:`dcops.training.cooling.tune_pid_v2`; ``agents/cooling/pid_v2_tuned.json``), with the plant side of the rule
tuned for the same target. The class defaults are v0's gains with a 25 °C inlet target.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.pid import PILoop
from dcops.agents.cooling.rule_v2 import ControllerContextV2, RuleV2Controller, it_load_kw
from dcops.physics.v2.interface import FAN_SPEED_RANGE, SUPPLY_SETPOINT_RANGE_C, TelemetryV2

TUNED_FILE = "pid_v2_tuned.json"


@dataclass
class PIDV2Controller:
    """Supply-air reset on the reported inlet and airflow on the CRAH ΔT (module docstring); gains per K and per
    K·h. ``plant``: the rule whose plant-side controls run under these loops (its air-side parameters unused)."""

    target_inlet_c: float = 25.0
    supply_bias_c: float = 21.0
    kp: float = 0.5
    ki: float = 2.0
    target_delta_t_k: float = 11.0
    fan_bias: float = 0.6
    kp_fan: float = 0.02
    ki_fan: float = 0.1
    plant: RuleV2Controller = field(default_factory=RuleV2Controller)
    name: str = "pid_v2"

    def reset(self, context: ControllerContextV2) -> None:
        self.context = context
        # The supply loop acts against the error (warm inlet → colder supply): negative gains.
        self._supply = PILoop(self.supply_bias_c, -self.kp, -self.ki, 0.0, *SUPPLY_SETPOINT_RANGE_C)
        self._fans = PILoop(self.fan_bias, self.kp_fan, self.ki_fan, 0.0, *FAN_SPEED_RANGE)
        self._supply.reset(context.n_zones)
        self._fans.reset(context.n_zones)
        self.plant.reset(context)

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        ctx = self.context
        t = TelemetryV2.parse(telemetry, ctx.n_zones)
        dt_h = ctx.dt_s / 3600.0
        supply = self._supply.update(t.inlet_c - self.target_inlet_c, dt_h)
        fans = self._fans.update((t.return_c - t.supply_c) - self.target_delta_t_k, dt_h)
        return self.plant.plant_setpoints(t, it_load_kw(t, ctx), fans, supply)

    def gains(self) -> dict[str, float]:
        """The loops' parameters (what ``dcops tune-pid-v2`` searches), without the plant rule."""
        return {k: v for k, v in asdict(self).items() if k not in ("plant", "name")}

    @classmethod
    def tuned(cls, target: str = "eval_family_v1") -> PIDV2Controller:
        """The PID with the gains ``dcops tune-pid-v2`` found for ``target`` (a v1 cooling task id or
        ``eval_family_v1``) over the plant side of :meth:`RuleV2Controller.tuned(target) <RuleV2Controller.tuned>`.

        :raises KeyError: for a target that was never tuned (the message lists the tuned ones)."""
        tuned = _tuned()
        if target not in tuned:
            raise KeyError(f"no tuned plant v2 PID for {target!r}; tuned: {', '.join(sorted(tuned))}")
        return cls(**tuned[target]["gains"], plant=RuleV2Controller.tuned(target))


@cache
def _tuned() -> dict[str, Any]:
    path = resources.files("dcops.agents.cooling").joinpath(TUNED_FILE)
    return json.loads(path.read_text())["targets"] if path.is_file() else {}
