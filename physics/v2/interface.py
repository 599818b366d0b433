"""Plant v2's control-room interface: the set-point vector a controller writes and the telemetry it reads.

Set-point vector, length 2·Z + 6 (physical units)::

    [fan_speed × Z (0.2–1), supply_setpoint_c × Z (15–27 °C), chw_setpoint_c (5–20 °C), economiser_on (0–1),
     tower_fan_speed (0.2–1), chillers_staged (0–N, rounded), chw_pump_speed (0.3–1),
     tank_flow (−1 discharge … +1 charge; no effect where the plant has no storage tank)]

Telemetry vector, length 5·Z + 27: for each zone ``inlet_c, return_c, load_fraction, fan_speed, supply_c``
(reported: the temperature sensors carry noise, bias and drift, the load telemetry multiplicative noise, or 0
where a task has no load telemetry), then the plant values of :data:`PLANT_FIELDS`: reported chilled-water
supply, return, condenser-water and tank temperatures, the rest as the control system knows them, and the
forecasts a site gets (wet-bulb, grid carbon and total IT load 1 h and 3 h ahead, with errors that grow with the
lead; the published tariff's price 1 h and 3 h ahead, exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.physics.v2.types import PlantV2Control

FAN_SPEED_RANGE = (0.2, 1.0)
SUPPLY_SETPOINT_RANGE_C = (15.0, 27.0)
CHW_SETPOINT_RANGE_C = (5.0, 20.0)
TOWER_FAN_RANGE = (0.2, 1.0)
PUMP_SPEED_RANGE = (0.3, 1.0)
TANK_FLOW_RANGE = (-1.0, 1.0)
PLANT_SETPOINTS = ("chw_setpoint_c", "economiser_on", "tower_fan_speed", "chillers_staged", "chw_pump_speed",
                   "tank_flow")

ZONE_FIELDS = ("inlet_c", "return_c", "load_fraction", "fan_speed", "supply_c")
PLANT_FIELDS = (
    "chw_supply_c", "chw_return_c", "cw_supply_c", "chillers_available", "chillers_on", "economiser_fraction",
    "tower_fan_speed", "chw_pump_speed", "dry_bulb_c", "wet_bulb_c", "carbon_kg_per_kwh", "price_per_kwh",
    "hour_sin", "hour_cos", "progress", "cooling_over_design_it", "pue",
    "tank_temp_c", "tank_flow", "wet_bulb_1h_c", "wet_bulb_3h_c", "carbon_1h_kg_per_kwh", "carbon_3h_kg_per_kwh",
    "price_1h_per_kwh", "price_3h_per_kwh", "load_1h_fraction", "load_3h_fraction",
)
_ZONE_LOW = (-50.0, -50.0, 0.0, 0.0, -50.0)
_ZONE_HIGH = (150.0, 150.0, 2.0, 1.0, 150.0)
_PLANT_LOW = (-50.0, -50.0, -50.0, 0.0, 0.0, 0.0, 0.0, 0.0, -60.0, -60.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, 0.0,
              -50.0, -1.0, -60.0, -60.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
_PLANT_HIGH = (150.0, 150.0, 150.0, 1.0, 16.0, 1.0, 1.0, 1.0, 60.0, 60.0, 2.0, 10.0, 1.0, 1.0, 1.0, 10.0, 10.0,
               150.0, 1.0, 60.0, 60.0, 2.0, 2.0, 10.0, 10.0, 2.0, 2.0)
if not len(PLANT_FIELDS) == len(_PLANT_LOW) == len(_PLANT_HIGH):
    raise ImportError("plant v2 telemetry fields and bounds are out of step")


@cache
def setpoint_bounds(n_zones: int, n_chillers: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds of the set-point vector (cached, read-only)."""
    low = np.concatenate([np.full(n_zones, FAN_SPEED_RANGE[0]), np.full(n_zones, SUPPLY_SETPOINT_RANGE_C[0]),
                          [CHW_SETPOINT_RANGE_C[0], 0.0, TOWER_FAN_RANGE[0], 0.0, PUMP_SPEED_RANGE[0],
                           TANK_FLOW_RANGE[0]]])
    high = np.concatenate([np.full(n_zones, FAN_SPEED_RANGE[1]), np.full(n_zones, SUPPLY_SETPOINT_RANGE_C[1]),
                           [CHW_SETPOINT_RANGE_C[1], 1.0, TOWER_FAN_RANGE[1], float(n_chillers), PUMP_SPEED_RANGE[1],
                            TANK_FLOW_RANGE[1]]])
    low.setflags(write=False)
    high.setflags(write=False)
    return low, high


def setpoint_field_names(n_zones: int) -> list[str]:
    """Field name of each set-point vector entry (used in error messages)."""
    names = [f"fan_speed[{i}]" for i in range(n_zones)] + [f"supply_setpoint_c[{i}]" for i in range(n_zones)]
    return names + list(PLANT_SETPOINTS)


def decode_setpoints(action: Any, n_zones: int, n_chillers: int) -> PlantV2Control:
    """Validate a set-point vector, clip it to its bounds and return a :class:`PlantV2Control`.

    :raises ValueError: wrong size, non-numeric, or a NaN/inf entry (the message names the field).
    """
    expected = 2 * n_zones + len(PLANT_SETPOINTS)
    try:
        a = np.asarray(action, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"action must be a numeric array of shape ({expected},), got {action!r}") from None
    if a.size != expected:
        raise ValueError(f"action must have {expected} values (fan_speed×{n_zones}, supply_setpoint_c×{n_zones}, "
                         f"{', '.join(PLANT_SETPOINTS)}), got {a.size}")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise ValueError(f"action field {setpoint_field_names(n_zones)[bad[0]]} is not finite: {a[bad[0]]}")
    low, high = setpoint_bounds(n_zones, n_chillers)
    a = np.minimum(np.maximum(a, low), high)
    z = 2 * n_zones
    return PlantV2Control(a[:n_zones], a[n_zones:z], *(np.float64(v) for v in a[z:]))


def encode_setpoints(fan_speed: Any, supply_setpoint_c: Any, chw_setpoint_c: float, economiser_on: bool,
                     tower_fan_speed: float, chillers_staged: float, chw_pump_speed: float,
                     tank_flow: float = 0.0) -> NDArray[np.float32]:
    """Build a set-point vector (float32, as the action space expects)."""
    return np.concatenate([np.asarray(fan_speed, dtype=np.float64), np.asarray(supply_setpoint_c, dtype=np.float64),
                           [float(chw_setpoint_c), 1.0 if economiser_on else 0.0, float(tower_fan_speed),
                            float(chillers_staged), float(chw_pump_speed), float(tank_flow)]]).astype(np.float32)


def telemetry_bounds(n_zones: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Lower and upper bounds of the telemetry vector."""
    low = np.array(list(_ZONE_LOW) * n_zones + list(_PLANT_LOW), dtype=np.float32)
    high = np.array(list(_ZONE_HIGH) * n_zones + list(_PLANT_HIGH), dtype=np.float32)
    return low, high


@dataclass(frozen=True)
class TelemetryV2:
    """A parsed v2 telemetry vector: zone arrays (Z,) and the plant values of :data:`PLANT_FIELDS`."""

    inlet_c: NDArray[np.float64]
    return_c: NDArray[np.float64]
    load_fraction: NDArray[np.float64]
    fan_speed: NDArray[np.float64]
    supply_c: NDArray[np.float64]
    chw_supply_c: float
    chw_return_c: float
    cw_supply_c: float
    chillers_available: float
    chillers_on: float
    economiser_fraction: float
    tower_fan_speed: float
    chw_pump_speed: float
    dry_bulb_c: float
    wet_bulb_c: float
    carbon_kg_per_kwh: float
    price_per_kwh: float
    hour_sin: float
    hour_cos: float
    progress: float
    cooling_over_design_it: float
    pue: float
    tank_temp_c: float
    tank_flow: float
    wet_bulb_1h_c: float
    wet_bulb_3h_c: float
    carbon_1h_kg_per_kwh: float
    carbon_3h_kg_per_kwh: float
    price_1h_per_kwh: float
    price_3h_per_kwh: float
    load_1h_fraction: float
    load_3h_fraction: float

    @classmethod
    def parse(cls, vector: Any, n_zones: int) -> TelemetryV2:
        v = np.asarray(vector, dtype=np.float64).reshape(-1)
        expected = len(ZONE_FIELDS) * n_zones + len(PLANT_FIELDS)
        if v.size != expected:
            raise ValueError(f"telemetry must have {expected} values for {n_zones} zones, got {v.size}")
        zones = v[: len(ZONE_FIELDS) * n_zones].reshape(n_zones, len(ZONE_FIELDS)).T.copy()
        return cls(*zones, *v[len(ZONE_FIELDS) * n_zones:].tolist())


if tuple(TelemetryV2.__dataclass_fields__) != ZONE_FIELDS + PLANT_FIELDS:
    raise ImportError("TelemetryV2's fields are out of step with ZONE_FIELDS + PLANT_FIELDS")


def build_telemetry(zone_values: tuple[NDArray[np.float64], ...], plant_values: list[float],
                    low: NDArray[np.float32], high: NDArray[np.float32]) -> NDArray[np.float32]:
    """Assemble and clip a telemetry vector from the ``ZONE_FIELDS`` arrays and the ``PLANT_FIELDS`` values."""
    zones = np.stack(zone_values, axis=1).reshape(-1)
    vector = np.concatenate([zones, np.asarray(plant_values, dtype=np.float64)])
    return np.minimum(np.maximum(vector, low), high).astype(np.float32)
