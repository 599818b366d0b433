"""Chilled-water thermal storage: a fully mixed tank on the chilled-water loop (optional).

Why: with storage, cooling can be made when it is cheap (cold nights, off-peak prices, spare chiller capacity)
and spent when it is dear or short (an afternoon peak, a chiller trip). Without it the only stores are the hall's
and the loop's thermal mass, a few minutes' worth; with a tank a controller faces a real scheduling problem.

The model is EnergyPlus's ``ThermalStorage:ChilledWater:Mixed`` (Engineering Reference, "Chilled Water Thermal
Storage: Mixed"): one well-mixed volume of water at ``T_tank`` (°C), a *use side* through which the loop's warm
return water is cooled (discharge), a *source side* through which the chillers cool tank water (charge), each with
a heat-exchange effectiveness ε, and a shell loss to the ambient air::

    C_t · dT_tank/dt = ε·m_use·c_p·(T_return − T_tank) − ε·m_src·c_p·(T_tank − T_chw) + UA·(T_amb − T_tank)

with C_t = ρ·V·c_p. The control ``tank_flow`` in [−1, 1] sets the flow through the tank as a fraction of
``max_flow_kg_s``: negative discharges (use side), positive charges (source side). Within a step the inlet
temperatures are held, so each side relaxes the tank exponentially toward its inlet (exact for the step)::

    q_side = C_t · (1 − e^(−ε·m·c_p·Δt / C_t)) · (T_inlet − T_tank)          kJ over the step

which can never carry the tank past the water it exchanges with. Discharge only cools the loop when the return
is warmer than the tank; charge only cools the tank when the chilled water is colder than it. The charge heat is
heat the chillers (or the economiser) must remove, after the loop's own need; a plant short of capacity charges
less. The shell loss uses the start-of-step temperature (it is below 0.1 % of the capacity per step).

Shell UA: a vertical cylinder with height = diameter, wholly exposed, insulated to ``shell_u_w_per_m2_k``
(0.3 W/m²·K is about 100 mm of polyurethane foam). For tanks of 35–70 m³ that gives a standing loss of about
2–2.6 % of the 8 K charge per day at 20 K to the air, inside the 1–5 %/day the ASHRAE Handbook (HVAC
Applications, "Thermal Storage") gives for chilled-water tanks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dcops.physics.constants import CP_WATER_KJ_PER_KG_K

WATER_DENSITY_KG_PER_M3 = 1000.0
DESIGN_CHARGE_DELTA_T_K = 8.0
"""The temperature span a chilled-water tank is designed to store (ASHRAE: 6–10 K for stratified tanks)."""


@dataclass(frozen=True)
class ChilledWaterTank:
    """A mixed chilled-water tank (module docstring). ``volume_m3 = 0`` means no tank.

    :param volume_m3: water volume, m³.
    :param max_flow_kg_s: flow through the tank at ``|tank_flow| = 1``, kg/s.
    :param effectiveness: heat-exchange effectiveness of the use and source sides (1 for a direct connection).
    :param shell_u_w_per_m2_k: insulation U-value of the shell, W/m²·K.
    :param pump_kw: pump power at full tank flow, kW (affinity law: ∝ |tank_flow|³); its heat goes into the loop.
    """

    volume_m3: float = 0.0
    max_flow_kg_s: float = 0.0
    effectiveness: float = 1.0
    shell_u_w_per_m2_k: float = 0.3
    pump_kw: float = 0.0

    def __post_init__(self) -> None:
        for name in ("volume_m3", "max_flow_kg_s", "shell_u_w_per_m2_k", "pump_kw"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"ChilledWaterTank.{name} must be a finite number >= 0, got {value!r}")
        if not 0.0 < self.effectiveness <= 1.0:
            raise ValueError(f"ChilledWaterTank.effectiveness must be in (0, 1], got {self.effectiveness!r}")

    @property
    def installed(self) -> bool:
        return self.volume_m3 > 0.0 and self.max_flow_kg_s > 0.0

    @property
    def capacity_kj_per_k(self) -> float:
        """C_t = ρ·V·c_p, kJ/K."""
        return WATER_DENSITY_KG_PER_M3 * self.volume_m3 * CP_WATER_KJ_PER_KG_K

    @property
    def shell_ua_kw_per_k(self) -> float:
        """UA of the shell: a cylinder with height = diameter (area 1.5·π·d², d = (4V/π)^(1/3)), kW/K."""
        if self.volume_m3 <= 0.0:
            return 0.0
        diameter = (4.0 * self.volume_m3 / math.pi) ** (1.0 / 3.0)
        return self.shell_u_w_per_m2_k * 1.5 * math.pi * diameter * diameter / 1000.0

    @property
    def design_capacity_kwh(self) -> float:
        """Cooling the tank stores over :data:`DESIGN_CHARGE_DELTA_T_K`, kWh thermal."""
        return self.capacity_kj_per_k * DESIGN_CHARGE_DELTA_T_K / 3600.0

    @classmethod
    def sized(cls, design_cooling_kw: float, minutes: float, pump_kw_per_kg_s: float) -> ChilledWaterTank:
        """A tank that carries ``design_cooling_kw`` for ``minutes`` over the design charge span, with a flow
        that can deliver the design load over that span, and its pump priced like the loop's."""
        if minutes <= 0.0:
            return cls()
        volume = design_cooling_kw * minutes * 60.0 / (
            WATER_DENSITY_KG_PER_M3 * CP_WATER_KJ_PER_KG_K * DESIGN_CHARGE_DELTA_T_K)
        flow = design_cooling_kw / (CP_WATER_KJ_PER_KG_K * DESIGN_CHARGE_DELTA_T_K)
        return cls(volume_m3=volume, max_flow_kg_s=flow, pump_kw=pump_kw_per_kg_s * flow)


def side_heat_kj(xp: Any, tank: ChilledWaterTank, flow_fraction: Any, inlet_c: Any, tank_c: Any, dt_s: float) -> Any:
    """Heat one side moves into the tank over a step, kJ (negative: out of the tank), for a flow fraction in
    [0, 1] and the water entering that side at ``inlet_c`` (module docstring: the exact exponential relaxation)."""
    rate = tank.effectiveness * tank.max_flow_kg_s * CP_WATER_KJ_PER_KG_K / tank.capacity_kj_per_k
    share = -xp.expm1(-rate * flow_fraction * dt_s)
    return tank.capacity_kj_per_k * share * (inlet_c - tank_c)
