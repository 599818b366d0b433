"""Server power against inlet temperature: fans that speed up and silicon that leaks as inlets warm.

Why: if IT power ignores the inlet, running every inlet at 26.9 °C is free and every optimum sits on the 27 °C
limit. Real servers spend more as inlets warm (ASHRAE TC 9.9, *Thermal Guidelines for Data Processing
Environments*, 2011 white paper, the server power increase against inlet temperature: a few per cent at 27 °C and
roughly 7–20 % at 35 °C over 20 °C across vendors; SustainDC models the same coupling), so the inlet temperature
has an interior optimum where the cooling saved equals the IT power added.

The server's own power at inlet T (°C), as a multiple of its power at a cool inlet::

    u(T)   = clip(u_min + (T − T_knee) · (1 − u_min) / (T_full − T_knee), u_min, 1)    server fan speed
    fans   = k_fan · (u³ − u_min³)                                                   cube law above idle speed
    leak   = k_leak · (exp((T − T_ref) / θ) − 1)                                     leakage, doubling per θ·ln 2
    P(T)   = P_nominal · (1 + max(leak, 0) + fans)

Defaults: u_min 0.3, T_knee 25 °C, T_full 37 °C, k_fan 0.08 (server fans at full speed about 8 % of the
server's power), k_leak 0.05 at T_ref 20 °C with θ = 20 K: +2.5 % at 27 °C and +11 % at 35 °C. All of it is heat
in the zone and counted as IT power. Above ``throttle_c`` (45 °C, the ASHRAE A4 allowable maximum) servers
throttle, so the multiplier holds its 45 °C value (at most about 1.2): no runaway of heat feeding leakage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerThermalModel:
    """Parameters of the server power multiplier (module docstring; temperatures °C, fractions of P_nominal)."""

    fan_idle_speed: float = 0.3
    fan_knee_c: float = 25.0
    fan_full_speed_c: float = 37.0
    fan_power_fraction: float = 0.08
    leakage_fraction: float = 0.05
    leakage_reference_c: float = 20.0
    leakage_scale_k: float = 20.0
    throttle_c: float = 45.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.fan_idle_speed < 1.0 or self.fan_full_speed_c <= self.fan_knee_c:
            raise ValueError("ServerThermalModel needs 0 <= fan_idle_speed < 1 and fan_full_speed_c > fan_knee_c")
        if self.leakage_scale_k <= 0 or self.fan_power_fraction < 0 or self.leakage_fraction < 0:
            raise ValueError("ServerThermalModel fractions must be >= 0 and leakage_scale_k > 0")


def server_power_multiplier(xp: Any, model: ServerThermalModel, inlet_c: Any) -> Any:
    """P(T) / P_nominal (module docstring): 1 at cool inlets, rising with the inlet temperature."""
    u_min = model.fan_idle_speed
    slope = (1.0 - u_min) / (model.fan_full_speed_c - model.fan_knee_c)
    u = xp.clip(u_min + (inlet_c - model.fan_knee_c) * slope, u_min, 1.0)
    fans = model.fan_power_fraction * (u * u * u - u_min * u_min * u_min)
    x = xp.clip((xp.minimum(inlet_c, model.throttle_c) - model.leakage_reference_c) / model.leakage_scale_k, 0.0, 50.0)
    leak = model.leakage_fraction * xp.expm1(x)
    return 1.0 + leak + fans
