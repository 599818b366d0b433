"""A compact plant-level parametrisation of plant v2's set-points, shared by the clairvoyant bound's planner and
the controllers that learn from it.

Eight numbers per step::

    u = (airflow margin, supply-air set-point °C, chilled-water set-point °C, tower fan speed, chillers staged,
         chilled-water pump speed, economiser on (≥ 0.5), tank flow)

Every zone's fans are ``margin`` × the airflow its servers draw (the IT load over c_p·ΔT_server) divided by what
reaches them (1 − the zone's bypass fraction), over the CRAH's rated airflow; so zones are matched one by one and
the same eight numbers run 1 to N zones. Which load and which bypass are used is the caller's knowledge: the bound
uses the truth, an operator its readings and an identified or nameplate airflow.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.v2.interface import (
    CHW_SETPOINT_RANGE_C,
    FAN_SPEED_RANGE,
    PUMP_SPEED_RANGE,
    SUPPLY_SETPOINT_RANGE_C,
    TANK_FLOW_RANGE,
    TOWER_FAN_RANGE,
    encode_setpoints,
)
from dcops.physics.v2.types import PlantV2Config, PlantV2Control

MARGIN_RANGE = (0.6, 1.6)
"""Fan airflow over the airflow the servers need, after bypass."""
PARAMETER_NAMES = ("airflow_margin", "supply_c", "chw_setpoint_c", "tower_fan_speed", "chillers_staged",
                   "chw_pump_speed", "economiser_on", "tank_flow")


def parameter_ranges(plant: PlantV2Config) -> NDArray[np.float64]:
    """(8, 2) low and high of each parameter on ``plant`` (no tank: its flow is 0)."""
    tank = TANK_FLOW_RANGE if plant.tank.installed else (0.0, 0.0)
    return np.array([MARGIN_RANGE, SUPPLY_SETPOINT_RANGE_C, CHW_SETPOINT_RANGE_C, TOWER_FAN_RANGE,
                     (0.0, float(plant.n_chillers)), PUMP_SPEED_RANGE, (0.0, 1.0), tank])


def server_airflow_kg_s(it_kw: NDArray[np.float64], plant: PlantV2Config) -> NDArray[np.float64]:
    """The air the servers of each zone draw at an IT load (kW): load over c_p·ΔT_server, kg/s."""
    return np.asarray(it_kw, dtype=np.float64) / (CP_AIR_KJ_PER_KG_K * plant.server_delta_t_k)


def parameter_controls(u: NDArray[np.float64], server_air_kg_s: NDArray[np.float64],
                       plant: PlantV2Config) -> PlantV2Control:
    """Parameters (B, 8) to a batched plant control, fans matched to ``server_air_kg_s`` (Z,) through ``plant``'s
    bypass."""
    air = server_air_kg_s / (1.0 - plant.zone_bypass_fraction) / plant.crah_max_airflow_kg_s
    fans = np.clip(u[:, :1] * air[None, :], *FAN_SPEED_RANGE)
    supply = np.repeat(u[:, 1:2], server_air_kg_s.size, axis=1)
    return PlantV2Control(fans, supply, u[:, 2], np.where(u[:, 6] >= 0.5, 1.0, 0.0), u[:, 3], np.round(u[:, 4]),
                          u[:, 5], u[:, 7])


def parameter_setpoints(u: NDArray[np.float64], server_air_kg_s: NDArray[np.float64],
                        plant: PlantV2Config) -> NDArray[np.float32]:
    """One parameter vector (8,) to the env's set-point action."""
    c = parameter_controls(np.asarray(u, dtype=np.float64)[None], server_air_kg_s, plant)
    return encode_setpoints(c.fan_speed[0], c.supply_setpoint_c[0], float(c.chw_setpoint_c[0]),
                            bool(c.economiser_on[0] > 0.5), float(c.tower_fan_speed[0]),
                            float(c.chillers_staged[0]), float(c.chw_pump_speed[0]), float(c.tank_flow[0]))
