"""Faults: chiller trips, CRAH fan failures and sensor drift, scheduled at a time or drawn from a seed.

A fault list is turned once, at reset, into per-step arrays (:class:`FaultTimeline`) so that the physics step only
indexes them:

- :class:`ChillerTrip`: the chiller's availability ramps linearly from 1 to 0 over ``ramp_s`` starting at
  ``start_s`` (compressor unloading and coast-down); after ``duration_s`` (if given) it restarts and ramps back
  to 1 over ``restart_ramp_s``. Availability is sampled at each step's middle.
- :class:`FanFailure`: a fraction of a zone's CRAH fan units stops (airflow and fan power scale with the units
  still running) for ``duration_s`` or until the end.
- :class:`SensorDrift`: a zone's inlet-temperature sensor reads ``rate_k_per_h`` × hours since ``start_s`` off
  the truth (negative rates read low, the dangerous case). The truth is unaffected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class ChillerTrip:
    """Chiller ``chiller`` trips at ``start_s`` (seconds from episode start)."""

    start_s: float
    chiller: int = 0
    ramp_s: float = 180.0
    duration_s: float | None = None
    restart_ramp_s: float = 600.0


@dataclass(frozen=True)
class FanFailure:
    """A fraction ``units_lost`` of zone ``zone``'s CRAH fan units fails at ``start_s``."""

    start_s: float
    zone: int
    units_lost: float = 0.5
    duration_s: float | None = None


@dataclass(frozen=True)
class SensorDrift:
    """Zone ``zone``'s inlet sensor drifts at ``rate_k_per_h`` K/h from ``start_s``."""

    start_s: float
    zone: int
    rate_k_per_h: float = -1.0


Fault = ChillerTrip | FanFailure | SensorDrift


@dataclass(frozen=True)
class FaultTimeline:
    """Per-step fault effects: chiller availability (n_steps, n_chillers), fan units alive (n_steps, Z) and
    inlet-sensor offsets at each step's end (n_steps, Z), K."""

    chiller_available: NDArray[np.float64]
    fan_units_alive: NDArray[np.float64]
    inlet_sensor_offset_k: NDArray[np.float64]


def _window(t: NDArray[np.float64], start: float, duration: float | None) -> NDArray[np.bool_]:
    end = np.inf if duration is None else start + duration
    return (t >= start) & (t < end)


def build_timeline(
    faults: tuple[Fault, ...] | list[Fault], n_steps: int, dt_s: float, n_zones: int, n_chillers: int
) -> FaultTimeline:
    """Turn a fault list into per-step arrays; raise ``ValueError`` naming a fault that points nowhere."""
    mid = (np.arange(n_steps) + 0.5) * dt_s
    end = (np.arange(n_steps) + 1.0) * dt_s
    chillers = np.ones((n_steps, n_chillers))
    fans = np.ones((n_steps, n_zones))
    offsets = np.zeros((n_steps, n_zones))
    for fault in faults:
        if isinstance(fault, ChillerTrip):
            if not 0 <= fault.chiller < n_chillers:
                raise ValueError(f"ChillerTrip.chiller={fault.chiller} but the plant has {n_chillers} chillers")
            down = np.clip((mid - fault.start_s) / max(fault.ramp_s, 1e-9), 0.0, 1.0)
            availability = 1.0 - down
            if fault.duration_s is not None:
                restart = fault.start_s + fault.duration_s
                back = np.clip((mid - restart) / max(fault.restart_ramp_s, 1e-9), 0.0, 1.0)
                availability = np.where(mid >= restart, back, availability)
            chillers[:, fault.chiller] = np.minimum(chillers[:, fault.chiller], availability)
        elif isinstance(fault, FanFailure):
            if not 0 <= fault.zone < n_zones:
                raise ValueError(f"FanFailure.zone={fault.zone} but the plant has {n_zones} zones")
            if not 0.0 <= fault.units_lost <= 1.0:
                raise ValueError(f"FanFailure.units_lost must be in [0, 1], got {fault.units_lost}")
            lost = np.where(_window(mid, fault.start_s, fault.duration_s), fault.units_lost, 0.0)
            fans[:, fault.zone] = np.minimum(fans[:, fault.zone], 1.0 - lost)
        elif isinstance(fault, SensorDrift):
            if not 0 <= fault.zone < n_zones:
                raise ValueError(f"SensorDrift.zone={fault.zone} but the plant has {n_zones} zones")
            offsets[:, fault.zone] += fault.rate_k_per_h * np.maximum(end - fault.start_s, 0.0) / 3600.0
        else:
            raise TypeError(f"not a fault: {fault!r}")
    return FaultTimeline(chillers, fans, offsets)


def random_faults(
    rng: np.random.Generator,
    horizon_s: float,
    n_zones: int,
    n_chillers: int,
    chiller_trip_probability: float = 0.3,
    fan_failure_probability: float = 0.2,
    sensor_drift_probability: float = 0.3,
) -> list[Fault]:
    """Draw a fault list from a seed: each kind occurs at most once, at a uniform time in the first 80 %."""
    faults: list[Fault] = []
    if rng.random() < chiller_trip_probability:
        faults.append(
            ChillerTrip(
                start_s=float(rng.uniform(0.1, 0.8) * horizon_s),
                chiller=int(rng.integers(n_chillers)),
                duration_s=float(rng.uniform(0.5, 2.0) * 3600.0),
            )
        )
    if rng.random() < fan_failure_probability:
        faults.append(
            FanFailure(
                start_s=float(rng.uniform(0.1, 0.8) * horizon_s),
                zone=int(rng.integers(n_zones)),
                units_lost=float(rng.choice([0.25, 0.5])),
                duration_s=float(rng.uniform(0.5, 3.0) * 3600.0),
            )
        )
    if rng.random() < sensor_drift_probability:
        faults.append(
            SensorDrift(
                start_s=float(rng.uniform(0.0, 0.5) * horizon_s),
                zone=int(rng.integers(n_zones)),
                rate_k_per_h=float(rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.5)),
            )
        )
    return faults
