"""PI(D) control on inlet temperature, as building-management systems do it (supply-air reset).

Two loops per zone, each a discrete PI(D) with anti-windup (the integral freezes while its output is
saturated in the direction the error pushes):

- Inlet loop: the supply-air set-point is reset so the zone's *reported* inlet temperature tracks
  ``target_inlet_c``: ``supply = supply_bias − (kp·e + ki·∫e dt + kd·Δe)``, e = inlet − target (K, K·h).
- Airflow loop: fan speed holds the CRAH air temperature rise (reported return − supply) at ``target_delta_t_k``:
  ``fan = fan_bias + kp_fan·(ΔT − target) + ki_fan·∫(ΔT − target) dt``.

Chilled water follows the coldest supply set-point (``min(supply) − coil approach − 1 K``) and the economiser is
on. The controller trusts its sensors: a drifting inlet sensor makes it warm the supply air for real.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.base import ControllerContext
from dcops.physics.interface import (
    CHW_SETPOINT_RANGE_C,
    FAN_SPEED_RANGE,
    SUPPLY_SETPOINT_RANGE_C,
    Telemetry,
    encode_setpoints,
)


@dataclass
class PILoop:
    """One discrete PI(D) loop over a vector of zones with conditional-integration anti-windup."""

    bias: float
    kp: float
    ki: float
    kd: float
    low: float
    high: float

    def reset(self, n: int) -> None:
        self.integral = np.zeros(n)
        self.last_error: NDArray[np.float64] | None = None

    def update(self, error: NDArray[np.float64], dt_h: float) -> NDArray[np.float64]:
        derivative = np.zeros_like(error) if self.last_error is None else error - self.last_error
        self.last_error = error
        candidate = self.integral + error * dt_h
        raw = self.bias + self.kp * error + self.ki * candidate + self.kd * derivative
        pushing_up = (raw > self.high) & (error > 0) if self.kp >= 0 else (raw > self.high) & (error < 0)
        pushing_down = (raw < self.low) & (error < 0) if self.kp >= 0 else (raw < self.low) & (error > 0)
        self.integral = np.where(pushing_up | pushing_down, self.integral, candidate)
        out = self.bias + self.kp * error + self.ki * self.integral + self.kd * derivative
        return np.minimum(np.maximum(out, self.low), self.high)


@dataclass
class PIDController:
    """Supply-air reset on reported inlet temperature plus airflow on CRAH ΔT (gains per K and per K·h)."""

    target_inlet_c: float = 24.0
    supply_bias_c: float = 21.0
    kp: float = 0.5
    ki: float = 2.0
    kd: float = 0.0
    target_delta_t_k: float = 11.0
    fan_bias: float = 0.6
    kp_fan: float = 0.02
    ki_fan: float = 0.1
    name: str = "pid"

    def reset(self, context: ControllerContext) -> None:
        self.context = context
        # The supply loop acts against the error (hot inlet → colder supply): negative gains.
        self._supply = PILoop(self.supply_bias_c, -self.kp, -self.ki, -self.kd, *SUPPLY_SETPOINT_RANGE_C)
        self._fans = PILoop(self.fan_bias, self.kp_fan, self.ki_fan, 0.0, *FAN_SPEED_RANGE)
        self._supply.reset(context.n_zones)
        self._fans.reset(context.n_zones)

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        ctx = self.context
        t = Telemetry.parse(telemetry, ctx.n_zones)
        dt_h = ctx.dt_s / 3600.0
        supply = self._supply.update(t.inlet_c - self.target_inlet_c, dt_h)
        fans = self._fans.update((t.return_c - t.supply_c) - self.target_delta_t_k, dt_h)
        chw = float(np.clip(supply.min() - ctx.coil_approach_k - 1.0, *CHW_SETPOINT_RANGE_C))
        return encode_setpoints(fans, supply, chw, economiser_on=True)
