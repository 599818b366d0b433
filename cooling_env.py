"""Cooling tasks: single-agent Gymnasium environments that run the cooling plant of a data hall.

===================  =====================================================================================
Creation             ``dcops.make_env("cooling/single_zone_recovery" | "cooling/multi_zone_sensor_drift" |
                     "cooling/cascading_chiller_failure", **overrides)``
Agent                one cooling operator
Action               ``Box(2·Z + 2)``, physical units: fan speed per zone [0.2, 1], supply-air set-point per
                     zone [15, 27] °C, chilled-water set-point [5, 18] °C, economiser mode [0, 1] (on ≥ 0.5)
Observation          ``Box(5·Z + 11)`` float32 of *reported* (sensor) values, layout below
Episode              fixed length (``n_steps`` control steps of ``dt_s`` = 300 s); ``terminated`` at the end
===================  =====================================================================================

**Observations.** Per zone z (5 values, zones in order): reported inlet and return-air temperatures (°C), IT load
(fraction of design), fan speed (fraction), supply-air temperature (°C). Then the plant (11 values): reported
chilled-water supply temperature (°C), fraction of chiller units available, economiser fraction of the last step,
outdoor dry-bulb and wet-bulb (°C) and grid carbon intensity (kgCO2/kWh) at the middle of the step about to be taken,
sin and cos of the local hour at its end, episode progress (0–1), cooling power over design IT power, and PUE of the
last step. Sensors carry seeded noise, calibration bias and (task-dependent) drift; the true inlets reach no policy
(with ``diagnostics=True`` an evaluator gets them in ``info["inlet_c"]``); values are clipped to the observation box.
Reset draws: day jitter, weather, carbon, load, faults, then inlet, return-air, chilled-water sensors (biases, noise).

**Actions.** Values outside the box are clipped to it; an action of the wrong shape or with NaN/inf raises
``ValueError`` naming the field, and the episode is left unchanged (the step is not taken).

**Rewards.** For each step, with zone weights w (task priorities, Σw normalised to 1) and the fraction of the
step each zone's true inlet spent above 27 °C (f27), above 32 °C (f32) and below 18 °C (f18) (linear between
the step's start and end temperatures)::

    violation_k = Σ_z w_z · (f27_z + 4·f32_z + f18_z)            in [0, 6]
    overhead_k  = cooling_kW / IT_kW                               cooling power per unit of IT power
    reward_k    = −(violation_k + 0.8 · overhead_k)

Worked example: zone weights (0.5, 0.5), zone 0 spends the whole step above 27 °C but below 32 °C, cooling
uses 200 kW for 1000 kW of IT: reward = −(0.5·1 + 0.8·0.2) = −0.66.

**Final score** in [0, 1], in ``info["score"]`` at the last step (and ``env.unwrapped.score()`` any time)::

    T = max(0, 1 − mean_k violation_k)                              thermal score
    E = clip(1 − (cooling kWh / IT kWh) / 0.5, 0, 1)                energy score (0 at 50 % overhead)
    score = T · (0.6 + 0.4 · E)

so energy can never buy back a thermal violation.

**Info** (every step): ``it_kw``, ``cooling_kw`` (fans + pumps + tower + chiller), ``facility_kw``, ``pue``,
``zone_ids``, ``carbon_g`` (this step's facility emissions, g), ``chiller_capacity_kw``, ``time`` (ISO local
time); at the end also ``score`` and ``summary`` (episode totals). The evaluator diagnostics, computed from
private truth (``dcops.boundary``), are added only with ``diagnostics=True``: ``inlet_c`` (true, per zone),
``violation_minutes_27`` / ``violation_minutes_32`` (this step, per zone), ``chw_supply_c`` (true), and
``faults`` at reset (the episode's fault schedule).

**Arguments** (keyword overrides of the task's :class:`CoolingTaskSpec`): ``n_steps``, ``dt_s``, ``climate``
(``phoenix``, ``seattle``, … or a weather source), ``grid_region``, ``start`` (datetime), ``load``
(:class:`~dcops.physics.it_load.LoadProfile`), ``faults`` (a tuple of faults or a callable ``rng -> faults``),
``plant`` (:class:`~dcops.physics.plant.PlantConfig`), ``sensor_model``, ``initial_zone_temp_c``,
``initial_chw_c``, ``start_jitter_days``; plus ``render_mode`` (``"ansi"``) and ``diagnostics`` (False: add the
evaluator diagnostics above to ``info``; the evaluations, the training environment and the server, which
withholds them from its clients until the episode ends, set it).

The three tasks (factories below) differ in plant, zones, weather and faults:

- ``cooling/single_zone_recovery`` (easy): one zone, overheated after a chilled-water excursion (loop at
  26 °C, so the supply air is at 29 °C; zone at 38 °C); steady load; 2 h. Bring the inlet into 18–27 °C fast and without waste.
- ``cooling/multi_zone_sensor_drift`` (medium): three zones of weights 3 : 2 : 1, a diurnal load of 45–95 % in a
  spring day in Leesburg VA (partial free cooling), and one zone's inlet sensor drifting low by 0.5–1.2 K/h
  from the first hours (which zone: drawn per seed). The return-air sensors do not drift; 12 h.
- ``cooling/cascading_chiller_failure`` (hard): four zones of weights 4 : 4 : 2 : 1 on a July afternoon in
  Dallas (no free cooling) at 40–95 % load (peak at 15:00) on three chillers of 45 % each; one chiller trips (ramp 3 min) at
  about 2 h and restarts after 60 min, a second trips 15 min later and restarts after 30 min; 8 h. For about
  30 minutes the plant is far short of capacity: pre-cool the loop, protect the critical zones, triage the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from dcops.boundary import split_info
from dcops.physics.carbon import carbon_source
from dcops.physics.faults import ChillerTrip, Fault, SensorDrift, build_timeline
from dcops.physics.interface import (
    PLANT_SETPOINTS,
    Telemetry,
    build_telemetry,
    decode_setpoints,
    setpoint_bounds,
    telemetry_bounds,
)
from dcops.physics.it_load import LoadProfile
from dcops.physics.plant import (
    PlantBoundary,
    PlantConfig,
    PlantControl,
    PlantOutputs,
    PlantState,
    air_side,
    initial_state,
    step_plant,
)
from dcops.physics.sensors import SensorModel, draw_errors
from dcops.physics.weather import weather_source
from dcops.physics.zones import inlet_temperature_c

RECOMMENDED_RANGE_C = (18.0, 27.0)
ALLOWABLE_MAX_C = 32.0
_THRESHOLDS_C = np.array([[RECOMMENDED_RANGE_C[1]], [ALLOWABLE_MAX_C], [RECOMMENDED_RANGE_C[0]]])
OVERHEAD_WEIGHT = 0.8
OVERHEAD_AT_ZERO_ENERGY_SCORE = 0.5

FaultSource = tuple[Fault, ...] | Callable[[np.random.Generator], list[Fault]]


@dataclass(frozen=True)
class CoolingTaskSpec:
    """Everything that defines a cooling task (see the module docstring for the meaning of each field)."""

    task_id: str
    plant: PlantConfig
    zone_names: tuple[str, ...]
    zone_weights: tuple[float, ...]
    n_steps: int = 144
    dt_s: float = 300.0
    climate: Any = "leesburg"
    grid_region: Any = None
    start: datetime = datetime(2026, 7, 15, 6, 0)
    start_jitter_days: int = 0
    load: LoadProfile = field(default_factory=LoadProfile)
    faults: FaultSource = ()
    sensor_model: SensorModel = field(default_factory=SensorModel)
    initial_zone_temp_c: float = 30.0
    initial_chw_c: float = 12.0

    def __post_init__(self) -> None:
        z = self.plant.n_zones
        if len(self.zone_names) != z or len(self.zone_weights) != z:
            raise ValueError(f"zone_names and zone_weights need {z} entries (one per plant zone)")
        if self.n_steps < 1 or self.dt_s <= 0:
            raise ValueError("n_steps must be >= 1 and dt_s > 0")


@dataclass
class EpisodeTotals:
    """Running totals of an episode (energies in kWh, carbon in g, minutes per zone)."""

    it_kwh: float = 0.0
    cooling_kwh: float = 0.0
    facility_kwh: float = 0.0
    carbon_g: float = 0.0
    violation_sum: float = 0.0
    steps: int = 0
    minutes_above_27: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    minutes_above_32: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    minutes_below_18: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    max_rate_k_per_h: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "it_kwh": self.it_kwh,
            "cooling_kwh": self.cooling_kwh,
            "facility_kwh": self.facility_kwh,
            "pue": self.facility_kwh / self.it_kwh if self.it_kwh > 0 else 0.0,
            "carbon_kg": self.carbon_g / 1000.0,
            "minutes_above_27": self.minutes_above_27.tolist(),
            "minutes_above_32": self.minutes_above_32.tolist(),
            "minutes_below_18": self.minutes_below_18.tolist(),
            "max_inlet_rate_k_per_h": self.max_rate_k_per_h,
            "mean_violation": self.violation_sum / self.steps if self.steps else 0.0,
        }


def fraction_above(
    start: NDArray[np.float64], end: NDArray[np.float64], threshold: float | NDArray[np.float64]
) -> NDArray[np.float64]:
    """Fraction of a step a linearly varying temperature spends above ``threshold`` (0–1); thresholds shaped
    (K, 1) give K rows at once."""
    lo = np.minimum(start, end)
    hi = np.maximum(start, end)
    span = hi - lo
    partial = (hi - threshold) / np.maximum(span, 1e-12)
    return np.where(lo >= threshold, 1.0, np.where(hi <= threshold, 0.0, np.minimum(np.maximum(partial, 0.0), 1.0)))


def thermal_and_energy_score(mean_violation: float, cooling_kwh: float, it_kwh: float) -> float:
    """The final score formula of the module docstring."""
    thermal = max(0.0, 1.0 - mean_violation)
    overhead = cooling_kwh / it_kwh if it_kwh > 0 else OVERHEAD_AT_ZERO_ENERGY_SCORE
    energy = min(max(1.0 - overhead / OVERHEAD_AT_ZERO_ENERGY_SCORE, 0.0), 1.0)
    return thermal * (0.6 + 0.4 * energy)


class CoolingEnv(gym.Env):
    """A cooling task over the plant physics (full manual in the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}
    plant_setpoints = PLANT_SETPOINTS
    """The plant-level set-points, in order, after the per-zone fan speeds and supply-air set-points."""
    telemetry = Telemetry
    """The parser of this environment's observation vector (``Telemetry.parse(vector, n_zones)``)."""

    def __init__(self, spec: CoolingTaskSpec, render_mode: str | None = None, diagnostics: bool = False) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.task = spec
        self.render_mode = render_mode
        self.diagnostics = bool(diagnostics)
        z = spec.plant.n_zones
        self._weights = np.asarray(spec.zone_weights, dtype=np.float64) / float(np.sum(spec.zone_weights))
        self._weather = weather_source(spec.climate)
        self._carbon = carbon_source(spec.grid_region, spec.climate)
        low, high = setpoint_bounds(z)
        self.action_space = gym.spaces.Box(low=low.astype(np.float32), high=high.astype(np.float32), dtype=np.float32)
        self._obs_low, self._obs_high = telemetry_bounds(z)
        self.observation_space = gym.spaces.Box(low=self._obs_low, high=self._obs_high, dtype=np.float32)
        self.zone_ids = list(spec.zone_names)
        self._state: PlantState | None = None

    # ------------------------------------------------------------------ episode set-up
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        spec = self.task
        rng = self.np_random
        jitter_days = int(rng.integers(0, spec.start_jitter_days + 1)) if spec.start_jitter_days else 0
        self.start = spec.start + timedelta(days=jitter_days)
        n, dt = spec.n_steps, spec.dt_s
        starts = np.arange(n) * dt
        weather = self._weather.series(self.start, starts + dt / 2.0, rng)
        self._dry_bulb = weather.dry_bulb_c
        self._wet_bulb = weather.wet_bulb_c
        self._carbon_g_per_kwh = self._carbon.series(self.start, starts + dt / 2.0, rng)
        start_hour = self.start.hour + self.start.minute / 60.0
        self._it_kw = spec.load.generate(rng, spec.plant.zone_design_it_kw, n, dt, start_hour)
        faults = spec.faults(rng) if callable(spec.faults) else list(spec.faults)
        self.faults = tuple(faults)
        self._timeline = build_timeline(faults, n, dt, spec.plant.n_zones, spec.plant.n_chillers)
        z = spec.plant.n_zones
        self._inlet_errors = draw_errors(spec.sensor_model, rng, n + 1, z)
        self._return_errors = draw_errors(spec.sensor_model, rng, n + 1, z)
        self._chw_errors = draw_errors(spec.sensor_model, rng, n + 1, 1)
        hours = start_hour + (starts + dt) / 3600.0
        self._hour_sin = np.sin(2.0 * np.pi * hours / 24.0)
        self._hour_cos = np.cos(2.0 * np.pi * hours / 24.0)

        self._state = initial_state(spec.plant, spec.initial_zone_temp_c, spec.initial_chw_c)
        self._step = 0
        self._last_outputs: PlantOutputs | None = None
        self.totals = EpisodeTotals(
            minutes_above_27=np.zeros(z), minutes_above_32=np.zeros(z), minutes_below_18=np.zeros(z)
        )
        # Before the first step the plant runs the neutral control below (a mid-range operating point).
        self._control = PlantControl(
            fan_speed=np.full(z, 0.6), supply_setpoint_c=np.full(z, 20.0),
            chw_setpoint_c=np.asarray(spec.initial_chw_c), economiser_on=np.asarray(1.0),
        )
        boundary = self._boundary(0)
        _, _, supply, recirculation = air_side(spec.plant, self._state, self._control, boundary)
        inlet = inlet_temperature_c(supply, self._state.zone_temp_c, recirculation)
        observation = self._observe(inlet, supply, econ_fraction=0.0, cooling_kw=0.0, pue=0.0, reading=0)
        return observation, self._info_reset(inlet)

    def _boundary(self, k: int) -> PlantBoundary:
        return PlantBoundary(
            it_kw=self._it_kw[k],
            outdoor_dry_bulb_c=self._dry_bulb[k],
            outdoor_wet_bulb_c=self._wet_bulb[k],
            chiller_available=self._timeline.chiller_available[k],
            fan_units_alive=self._timeline.fan_units_alive[k],
        )

    # ------------------------------------------------------------------ stepping
    def decode_action(self, action: Any) -> PlantControl:
        """Validate and clip an action to the box; raise ``ValueError`` naming the problem field."""
        return decode_setpoints(action, self.task.plant.n_zones)

    def step(self, action: Any):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self._step >= self.task.n_steps:
            raise RuntimeError("episode is over; call reset()")
        control = self.decode_action(action)
        spec = self.task
        k = self._step
        boundary = self._boundary(k)
        self._state, out = step_plant(spec.plant, self._state, control, boundary, spec.dt_s)
        self._control = control
        self._last_outputs = out
        self._step = k + 1

        minutes = spec.dt_s / 60.0
        f27, f32, f18 = fraction_above(out.inlet_start_c, out.inlet_c, _THRESHOLDS_C)
        f18 = 1.0 - f18
        violation = float(self._weights @ (f27 + 4.0 * f32 + f18))
        it_kw = float(out.it_kw)
        cooling_kw = float(out.cooling_kw)
        overhead = cooling_kw / it_kw if it_kw > 0 else 0.0
        reward = -(violation + OVERHEAD_WEIGHT * overhead)

        hours = spec.dt_s / 3600.0
        facility_kwh = float(out.facility_kw) * hours
        carbon_g = facility_kwh * float(self._carbon_g_per_kwh[k])
        t = self.totals
        t.it_kwh += it_kw * hours
        t.cooling_kwh += cooling_kw * hours
        t.facility_kwh += facility_kwh
        t.carbon_g += carbon_g
        t.violation_sum += violation
        t.steps += 1
        t.minutes_above_27 += f27 * minutes
        t.minutes_above_32 += f32 * minutes
        t.minutes_below_18 += f18 * minutes
        rate = float(np.max(np.abs(out.inlet_c - out.inlet_start_c))) / hours
        t.max_rate_k_per_h = max(t.max_rate_k_per_h, rate)

        terminated = self._step >= spec.n_steps
        observation = self._observe(
            out.inlet_c, out.supply_air_c, float(out.economiser_fraction), cooling_kw, float(out.pue), reading=k + 1
        )
        info = {
            "it_kw": it_kw,
            "cooling_kw": cooling_kw,
            "facility_kw": float(out.facility_kw),
            "pue": float(out.pue),
            "inlet_c": out.inlet_c.copy(),
            "zone_ids": self.zone_ids,
            "carbon_g": carbon_g,
            "violation_minutes_27": f27 * minutes,
            "violation_minutes_32": f32 * minutes,
            "chiller_capacity_kw": float(out.chiller_capacity_kw),
            "chw_supply_c": float(out.chw_supply_c),
            "time": (self.start + timedelta(seconds=(k + 1) * spec.dt_s)).isoformat(),
        }
        if terminated:
            info["score"] = self.score()
            info["summary"] = self.totals.as_dict()
        return observation, reward, terminated, False, self._shown(info)

    def score(self) -> float:
        """The final score in [0, 1] of the episode so far (formula in the module docstring)."""
        t = self.totals
        mean_violation = t.violation_sum / t.steps if t.steps else 0.0
        return thermal_and_energy_score(mean_violation, t.cooling_kwh, t.it_kwh)

    # ------------------------------------------------------------------ observation
    def _observe(
        self, inlet_true: NDArray[np.float64], supply: NDArray[np.float64], econ_fraction: float,
        cooling_kw: float, pue: float, reading: int,
    ) -> NDArray[np.float32]:
        spec = self.task
        k = min(reading, spec.n_steps - 1)
        drift = self._timeline.inlet_sensor_offset_k[reading - 1] if reading > 0 else 0.0
        state = self._state
        assert state is not None
        inlet = self._inlet_errors.report(reading, inlet_true, drift)
        ret = self._return_errors.report(reading, state.zone_temp_c)
        chw = self._chw_errors.report(reading, state.chw_supply_c[None])[0]
        plant_values = [
            chw,
            self._timeline.chiller_available[k].sum() / spec.plant.n_chillers,
            econ_fraction,
            self._dry_bulb[k],
            self._wet_bulb[k],
            self._carbon_g_per_kwh[k] / 1000.0,
            self._hour_sin[k],
            self._hour_cos[k],
            reading / spec.n_steps,
            cooling_kw / spec.plant.design_it_kw,
            pue,
        ]
        return build_telemetry(
            inlet, ret, self._it_kw[k] / spec.plant.zone_design_it_kw, self._control.fan_speed, supply,
            plant_values, self._obs_low, self._obs_high,
        )

    def _info_reset(self, inlet: NDArray[np.float64]) -> dict[str, Any]:
        return self._shown({
            "inlet_c": inlet.copy(),
            "zone_ids": self.zone_ids,
            "faults": [repr(f) for f in self.faults],
            "time": self.start.isoformat(),
        })

    def _shown(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` as the policy gets it: without the evaluator diagnostics of ``dcops.boundary`` (true inlets,
        violation minutes, true chilled water, the fault list) unless the env was made with ``diagnostics``."""
        return info if self.diagnostics else split_info("cooling", info)[0]

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._state is None:
            return "cooling env (not reset)"
        out = self._last_outputs
        lines = [f"{self.task.task_id}  step {self._step}/{self.task.n_steps}"]
        for i, name in enumerate(self.zone_ids):
            inlet = float(out.inlet_c[i]) if out is not None else float("nan")
            lines.append(f"  {name:<12} inlet {inlet:5.1f} °C  zone {self._state.zone_temp_c[i]:5.1f} °C")
        lines.append(f"  chilled water {float(self._state.chw_supply_c):5.1f} °C")
        if out is not None:
            lines.append(f"  IT {float(out.it_kw):7.1f} kW  cooling {float(out.cooling_kw):6.1f} kW  PUE {float(out.pue):.3f}")
        lines.append(f"  score so far {self.score():.3f}")
        return "\n".join(lines)


# ---------------------------------------------------------------------- the three tasks
_ENV_ARGUMENTS = ("render_mode", "diagnostics")
"""Arguments of :class:`CoolingEnv` itself, not of the task spec."""


def _spec_with(spec: CoolingTaskSpec, overrides: dict[str, Any]) -> CoolingTaskSpec:
    unknown = set(overrides) - set(CoolingTaskSpec.__dataclass_fields__) - set(_ENV_ARGUMENTS)
    if unknown:
        raise TypeError(f"unknown cooling task option(s): {sorted(unknown)}")
    return replace(spec, **{k: v for k, v in overrides.items() if k not in _ENV_ARGUMENTS})


def _make(spec: CoolingTaskSpec, overrides: dict[str, Any]) -> CoolingEnv:
    return CoolingEnv(_spec_with(spec, overrides), overrides.get("render_mode"), bool(overrides.get("diagnostics")))


def single_zone_recovery_spec() -> CoolingTaskSpec:
    """Easy: one 250 kW zone recovering from a chilled-water excursion (2 h from 13:00, a day in 10–30 June)."""
    return CoolingTaskSpec(
        task_id="cooling/single_zone_recovery",
        plant=PlantConfig.default(n_zones=1, zone_design_it_kw=250.0),
        zone_names=("hall",),
        zone_weights=(1.0,),
        n_steps=24,
        climate="leesburg",
        start=datetime(2026, 6, 10, 13, 0),
        start_jitter_days=20,
        load=LoadProfile(pattern="steady", low=0.8, high=0.9, noise=0.01),
        initial_zone_temp_c=38.0,
        initial_chw_c=26.0,
    )


def drift_one_zone(rng: np.random.Generator) -> list[Fault]:
    """One of the three zones' inlet sensor drifts low (the dangerous direction), 0.5–1.2 K/h from 0.5–3 h in."""
    return [
        SensorDrift(
            start_s=float(rng.uniform(0.5, 3.0) * 3600.0),
            zone=int(rng.integers(3)),
            rate_k_per_h=-float(rng.uniform(0.5, 1.2)),
        )
    ]


def multi_zone_sensor_drift_spec() -> CoolingTaskSpec:
    """Medium: three zones of weights 3:2:1, diurnal load, one drifting inlet sensor (12 h from 06:00, 1–31 May)."""
    return CoolingTaskSpec(
        task_id="cooling/multi_zone_sensor_drift",
        plant=PlantConfig.default(zone_design_it_kw=[300.0, 250.0, 200.0]),
        zone_names=("critical", "production", "batch"),
        zone_weights=(3.0, 2.0, 1.0),
        n_steps=144,
        climate="leesburg",
        start=datetime(2026, 5, 1, 6, 0),
        start_jitter_days=30,
        load=LoadProfile(pattern="diurnal", low=0.45, high=0.95, noise=0.03, peak_hour=15.0),
        faults=drift_one_zone,
        initial_zone_temp_c=32.0,
        initial_chw_c=12.0,
    )


def _cascading_trips(rng: np.random.Generator) -> list[Fault]:
    """Chiller 0 trips at about 2 h (± 20 min) and restarts after 60 min; chiller 1 follows 15 min later and
    restarts after 30 min: for about 30 minutes one chiller of three carries a peak load."""
    first = float(2.0 * 3600.0 + rng.uniform(-1200.0, 1200.0))
    return [
        ChillerTrip(start_s=first, chiller=0, ramp_s=180.0, duration_s=60 * 60.0),
        ChillerTrip(start_s=first + 15 * 60.0, chiller=1, ramp_s=180.0, duration_s=30 * 60.0),
    ]


def cascading_chiller_failure_spec() -> CoolingTaskSpec:
    """Hard: four zones (4:4:2:1), Dallas July afternoon, two chillers trip in cascade (8 h from 11:00, 10–30 July)."""
    return CoolingTaskSpec(
        task_id="cooling/cascading_chiller_failure",
        plant=PlantConfig.default(n_zones=4, zone_design_it_kw=250.0, n_chillers=3, chiller_capacity_fraction=0.45),
        zone_names=("critical_a", "critical_b", "production", "batch"),
        zone_weights=(4.0, 4.0, 2.0, 1.0),
        n_steps=96,
        climate="dallas",
        start=datetime(2026, 7, 10, 11, 0),
        start_jitter_days=20,
        load=LoadProfile(pattern="diurnal", low=0.4, high=0.95, noise=0.02, peak_hour=15.0),
        faults=_cascading_trips,
        initial_zone_temp_c=30.0,
        initial_chw_c=10.0,
    )


TASKS = ("cooling/cascading_chiller_failure", "cooling/multi_zone_sensor_drift", "cooling/single_zone_recovery")
"""The plant v0 cooling tasks (the v1 tasks on plant v2 are in ``dcops.cooling_env_v1``)."""


def make_single_zone_recovery(**overrides: Any) -> CoolingEnv:
    return _make(single_zone_recovery_spec(), overrides)


def make_multi_zone_sensor_drift(**overrides: Any) -> CoolingEnv:
    return _make(multi_zone_sensor_drift_spec(), overrides)


def make_cascading_chiller_failure(**overrides: Any) -> CoolingEnv:
    return _make(cascading_chiller_failure_spec(), overrides)


# ---------------------------------------------------------------------- running a controller
@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one controller episode: final score, summed reward and the episode totals."""

    task_id: str
    controller: str
    seed: int
    score: float
    total_reward: float
    summary: dict[str, Any]


def controller_context(env: CoolingEnv) -> Any:
    """The nameplate facts of ``env``'s plant for a controller (``dcops.agents.cooling.ControllerContext``)."""
    from dcops.agents.cooling.base import ControllerContext

    spec = env.unwrapped.task
    return ControllerContext.from_plant(spec.plant, spec.zone_weights, spec.dt_s)


def run_controller(env: gym.Env, controller: Any, seed: int, progress: Any = None) -> EpisodeResult:
    """Play one whole episode of ``env`` with ``controller`` from ``seed``; ``progress`` is called per step."""
    observation, _ = env.reset(seed=seed)
    controller.reset(controller_context(env))
    total = 0.0
    info: dict[str, Any] = {}
    terminated = truncated = False
    while not (terminated or truncated):
        observation, reward, terminated, truncated, info = env.step(controller.act(observation))
        total += float(reward)
        if progress is not None:
            progress(info)
    return EpisodeResult(
        task_id=env.unwrapped.task.task_id,
        controller=getattr(controller, "name", type(controller).__name__),
        seed=seed,
        score=float(info["score"]),
        total_reward=total,
        summary=info["summary"],
    )
