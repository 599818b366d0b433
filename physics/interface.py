"""The control-room interface of a plant: what a controller reads (telemetry) and writes (set-points).

Both are flat float vectors so that RL libraries can use them directly; this module owns their layout, bounds
and conversions, shared by the environments (which produce telemetry and accept set-points) and the
controllers in ``dcops.agents`` (which consume telemetry and produce set-points).

Set-point vector, length 2·Z + 2 (physical units)::

    [fan_speed × Z (0.2–1), supply_setpoint_c × Z (15–27 °C), chw_setpoint_c (5–18 °C), economiser_on (0–1)]

Telemetry vector, length 5·Z + 11: for each zone ``inlet_c, return_c, load_fraction, fan_speed, supply_c``
(reported inlet and return-air temperatures carry sensor errors), then ``chw_supply_c`` (reported),
``chillers_available`` (fraction of units), ``economiser_fraction``, ``dry_bulb_c``, ``wet_bulb_c``,
``carbon_kg_per_kwh``, ``hour_sin``, ``hour_cos``, ``progress`` (0–1), ``cooling_over_design_it``, ``pue``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.physics.plant import PlantControl

FAN_SPEED_RANGE = (0.2, 1.0)
SUPPLY_SETPOINT_RANGE_C = (15.0, 27.0)
CHW_SETPOINT_RANGE_C = (5.0, 18.0)

PLANT_SETPOINTS = ("chw_setpoint_c", "economiser_on")
ZONE_FIELDS = ("inlet_c", "return_c", "load_fraction", "fan_speed", "supply_c")
PLANT_FIELDS = (
    "chw_supply_c", "chillers_available", "economiser_fraction", "dry_bulb_c", "wet_bulb_c",
    "carbon_kg_per_kwh", "hour_sin", "hour_cos", "progress", "cooling_over_design_it", "pue",
)
_ZONE_LOW = (-50.0, -50.0, 0.0, 0.0, -50.0)
_ZONE_HIGH = (150.0, 150.0, 2.0, 1.0, 150.0)
_PLANT_LOW = (-50.0, 0.0, 0.0, -60.0, -60.0, 0.0, -1.0, -1.0, 0.0, 0.0, 0.0)
_PLANT_HIGH = (150.0, 1.0, 1.0, 60.0, 60.0, 2.0, 1.0, 1.0, 1.0, 10.0, 10.0)


@cache
def setpoint_bounds(n_zones: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds of the set-point vector (cached, read-only)."""
    low = np.concatenate([np.full(n_zones, FAN_SPEED_RANGE[0]), np.full(n_zones, SUPPLY_SETPOINT_RANGE_C[0]),
                          [CHW_SETPOINT_RANGE_C[0], 0.0]])
    high = np.concatenate([np.full(n_zones, FAN_SPEED_RANGE[1]), np.full(n_zones, SUPPLY_SETPOINT_RANGE_C[1]),
                           [CHW_SETPOINT_RANGE_C[1], 1.0]])
    low.setflags(write=False)
    high.setflags(write=False)
    return low, high


def setpoint_field_names(n_zones: int) -> list[str]:
    """Field name of each set-point vector entry (used in error messages)."""
    names = [f"fan_speed[{i}]" for i in range(n_zones)] + [f"supply_setpoint_c[{i}]" for i in range(n_zones)]
    return names + list(PLANT_SETPOINTS)


def decode_setpoints(action: Any, n_zones: int) -> PlantControl:
    """Validate a set-point vector, clip it to its bounds and return a :class:`PlantControl`.

    :raises ValueError: wrong size, non-numeric, or a NaN/inf entry (the message names the field).
    """
    expected = 2 * n_zones + 2
    try:
        a = np.asarray(action, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"action must be a numeric array of shape ({expected},), got {action!r}") from None
    if a.size != expected:
        raise ValueError(
            f"action must have {expected} values (fan_speed×{n_zones}, supply_setpoint_c×{n_zones}, "
            f"chw_setpoint_c, economiser_on), got {a.size}"
        )
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise ValueError(f"action field {setpoint_field_names(n_zones)[bad[0]]} is not finite: {a[bad[0]]}")
    low, high = setpoint_bounds(n_zones)
    a = np.minimum(np.maximum(a, low), high)
    return PlantControl(
        fan_speed=a[:n_zones],
        supply_setpoint_c=a[n_zones : 2 * n_zones],
        chw_setpoint_c=np.asarray(a[2 * n_zones]),
        economiser_on=np.asarray(a[2 * n_zones + 1]),
    )


def decode_setpoint_values(values: list[float], n_zones: int) -> PlantControl:
    """:func:`decode_setpoints` for a set-point vector given as Python floats (a controller's
    ``act_values``): the same checks, clip and :class:`PlantControl`, without numpy's per-call cost on a vector
    of a few values (the cluster episode decodes one every physics step).

    :raises ValueError: as :func:`decode_setpoints` (it builds the message).
    """
    if len(values) != 2 * n_zones + 2 or not math.isfinite(sum(values)):
        return decode_setpoints(values, n_zones)  # raises, naming the field (or decodes a finite overflow)
    low, high = _setpoint_bound_lists(n_zones)
    # np.minimum(np.maximum(v, low), high) for finite values (conditional expressions: no call per value).
    clipped = [lo if v < lo else (hi if v > hi else v) for v, lo, hi in zip(values, low, high, strict=True)]
    return PlantControl(
        fan_speed=np.array(clipped[:n_zones]),
        supply_setpoint_c=np.array(clipped[n_zones : 2 * n_zones]),
        chw_setpoint_c=np.asarray(clipped[2 * n_zones]),
        economiser_on=np.asarray(clipped[2 * n_zones + 1]),
    )


@cache
def _setpoint_bound_lists(n_zones: int) -> tuple[list[float], list[float]]:
    low, high = setpoint_bounds(n_zones)
    return low.tolist(), high.tolist()


def encode_setpoints(
    fan_speed: NDArray[np.float64], supply_setpoint_c: NDArray[np.float64], chw_setpoint_c: float, economiser_on: bool
) -> NDArray[np.float32]:
    """Build a set-point vector (float32, as the action space expects)."""
    return np.concatenate(
        [np.asarray(fan_speed, dtype=np.float64), np.asarray(supply_setpoint_c, dtype=np.float64),
         [float(chw_setpoint_c), 1.0 if economiser_on else 0.0]]
    ).astype(np.float32)


def zone_sum(values: list[float]) -> float:
    """Sum of a few floats in numpy's order, so a Python-float computation gives the same bits as ``array.sum()``:
    left to right from 0.0 below 8 terms (numpy's pairwise summation starts there), numpy itself above."""
    if len(values) < 8:
        total = 0.0
        for value in values:
            total += value
        return total
    return float(np.sum(np.asarray(values, dtype=np.float64)))


def telemetry_bounds(n_zones: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Lower and upper bounds of the telemetry vector."""
    low = np.array(list(_ZONE_LOW) * n_zones + list(_PLANT_LOW), dtype=np.float32)
    high = np.array(list(_ZONE_HIGH) * n_zones + list(_PLANT_HIGH), dtype=np.float32)
    return low, high


@dataclass(frozen=True)
class Telemetry:
    """A parsed telemetry vector: zone arrays (Z,) and plant scalars, names as in the module docstring."""

    inlet_c: NDArray[np.float64]
    return_c: NDArray[np.float64]
    load_fraction: NDArray[np.float64]
    fan_speed: NDArray[np.float64]
    supply_c: NDArray[np.float64]
    chw_supply_c: float
    chillers_available: float
    economiser_fraction: float
    dry_bulb_c: float
    wet_bulb_c: float
    carbon_kg_per_kwh: float
    hour_sin: float
    hour_cos: float
    progress: float
    cooling_over_design_it: float
    pue: float

    @classmethod
    def parse(cls, vector: Any, n_zones: int) -> Telemetry:
        v = np.asarray(vector, dtype=np.float64).reshape(-1)
        expected = len(ZONE_FIELDS) * n_zones + len(PLANT_FIELDS)
        if v.size != expected:
            raise ValueError(f"telemetry must have {expected} values for {n_zones} zones, got {v.size}")
        # One transposed copy: each zone field is a contiguous row of it (the telemetry vector is not shared).
        zones = v[: len(ZONE_FIELDS) * n_zones].reshape(n_zones, len(ZONE_FIELDS)).T.copy()
        return cls(*zones, *v[len(ZONE_FIELDS) * n_zones :].tolist())


def build_telemetry(
    inlet_c: NDArray[np.float64], return_c: NDArray[np.float64], load_fraction: NDArray[np.float64],
    fan_speed: NDArray[np.float64], supply_c: NDArray[np.float64], plant_values: NDArray[np.float64] | list[float],
    low: NDArray[np.float32], high: NDArray[np.float32],
) -> NDArray[np.float32]:
    """Assemble and clip a telemetry vector from zone arrays and the plant values in ``PLANT_FIELDS`` order."""
    n_zone_values = len(ZONE_FIELDS) * len(inlet_c)
    vector = np.empty(n_zone_values + len(PLANT_FIELDS))
    zones = vector[:n_zone_values].reshape(-1, len(ZONE_FIELDS))
    zones[:, 0] = inlet_c
    zones[:, 1] = return_c
    zones[:, 2] = load_fraction
    zones[:, 3] = fan_speed
    zones[:, 4] = supply_c
    vector[n_zone_values:] = plant_values
    return np.minimum(np.maximum(vector, low), high).astype(np.float32)
