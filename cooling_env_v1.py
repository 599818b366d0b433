"""Cooling tasks on plant v2 (``_v1``): every plant-side control, storage, price and carbon, forecasts, uncertainty.

===================  =====================================================================================
Creation             ``dcops.make_env("cooling/single_zone_recovery_v1" | "cooling/multi_zone_sensor_drift_v1" |
                     "cooling/cascading_chiller_failure_v1" | "cooling/daily_operations_v1", **overrides)``,
                     or ``CoolingEnvV1(evaluation_case_spec(site, season, fault))`` for the evaluation family
Agent                one cooling operator
Action               ``Box(2·Z + 6)``, physical units (``dcops.physics.v2.interface``): fan speed per zone
                     [0.2, 1], supply-air set-point per zone [15, 27] °C, chilled-water set-point [5, 20] °C,
                     economiser (on ≥ 0.5), tower fan speed [0.2, 1], chillers staged [0, N] (rounded; minimum
                     run 30 min and off 15 min), chilled-water pump speed [0.3, 1], storage tank flow [−1, 1]
                     (−1 full discharge, +1 full charge; no effect where the task has no tank)
Observation          ``Box(5·Z + 27)`` float32 of *reported* values and forecasts (``dcops.physics.v2.interface``)
Episode              ``n_steps`` control steps of ``dt_s`` = 300 s; ``terminated`` at the end
===================  =====================================================================================

The plant is :mod:`dcops.physics.v2` (lift chillers, a YorkCalc variable-speed tower, ε-NTU coils, server power
rising with inlet temperature, an optional mixed chilled-water storage tank); weather, grid carbon, IT load,
faults and temperature sensors are plant v0's models. What is new for the operator, besides the controls:

- **the nameplate is not the truth**: each episode draws every zone's bypass airflow and hot-air recirculation
  floor (``airflow``: :class:`~dcops.physics.v2.types.AirflowUncertainty`), which no observation reports, so
  airflow matched to the nameplate is not exact and inlets must be watched;
- **telemetry is imperfect**: the IT load telemetry is noisy (multiplicative, ``load_noise`` std per reading) or
  absent (``load_telemetry=False``: the load fields read 0), so open-loop control from load is not exact;
  temperature sensors carry noise, bias and (task-dependent) drift;
- **forecasts with error** (``forecasts``: :class:`~dcops.physics.forecast.ForecastModel`): wet-bulb, grid
  carbon and total IT load 1 h and 3 h ahead, errors growing with the lead; the tariff's price ahead, exact;
- the condenser water is a state the tower sets; electricity has a time-of-use price
  (``dcops.physics.v2.tariff``); fault times are drawn at random per episode.

**Objective** (``objective``: ``energy``, ``cost`` or ``carbon``): per step ``o_k`` = the energy the cooling
decisions cost, kWh: the cooling plant (CRAH fans, pumps, tower, chillers) *plus* the server fan and leakage
energy that warm inlets add to the IT load (``it_kw − it_nominal_kw``; without it every optimum would sit on the
27 °C inlet limit), × the price ($/kWh) or × the grid intensity (kg/kWh). It is compared with a yardstick
``r_k`` that no action changes: the same conversion of :func:`reference_cooling_kw` (a fraction of the IT power
that rises with the wet-bulb), so a 10 % saving counts the same on a January night as on a July afternoon.

**Reward** per step, with zone weights w (Σw = 1) and the fraction of the step each zone's *true* inlet spent
above 27 °C (f27), above 32 °C (f32) and below 18 °C (f18)::

    violation_k = Σ_z w_z · (f27_z + 4·f32_z + f18_z)
    reward_k    = −(violation_k + 0.5 · o_k / r̄)        r̄ = the episode's mean yardstick per step

so the return is −(Σ violation + 0.5 · n · Σo / Σr): the same objective ratio the score counts, with cheap and
dear hours weighted by their price (a per-step ratio o_k / r_k would cancel the price).

**Final score** in [0, 1] (``info["score"]`` at the last step)::

    T = max(0, 1 − mean_k violation_k)
    E = clip(0.5 − 0.4 · log2(Σ o_k / Σ r_k), 0, 1)      0.5 at the yardstick, 1 at 42 % of it, 0 at 2.4×
    score = T · (0.4 + 0.6 · E)

so a 10 % cut in the objective moves the score by about 0.036 (at T = 1) wherever it is made (plant v0's tasks:
0.015–0.02), and energy never buys back a thermal violation.

**Tasks** (``dcops.make_env(task_id)``; the v0 tasks of ``dcops.cooling_env`` are unchanged):

- ``cooling/single_zone_recovery_v1``: one 250 kW zone at 36 °C after a chilled-water excursion (loop at
  27 °C, one chiller of two running) on a June afternoon in Leesburg, while a wave of work ramps the load from
  50 to 95 %; 2 h. Recovering fast takes cold water, both chillers and full fans at the worst lift; recovering
  slowly spends zone-minutes above 27 °C; holding one setting either wastes the first hour or falls short in
  the second. A real trade-off, on a score that weighs both.
- ``cooling/multi_zone_sensor_drift_v1``: three zones (300/250/200 kW, weights 3 : 2 : 1), a spring day in
  Leesburg (partial free cooling), diurnal load 45–95 %, **no load telemetry**, one zone's inlet sensor drifting
  low by 0.5–1.2 K/h from 0.5–3 h (zone drawn per seed); 12 h. Only the return-air sensors (which do not drift),
  the supply air and the fans tell the truth about a zone: a controller must cross-check them.
- ``cooling/cascading_chiller_failure_v1``: four zones (weights 4 : 4 : 2 : 1) on a July day in Dallas at
  40–95 % load, three chillers of 45 % each and a 30-minute chilled-water tank that starts spent (26 °C); one
  chiller trips at a random time between 1 h and 6 h (for 30–90 min) and a second 5–30 min later (for 20–45
  min); 8 h. The trip cannot be read off the clock: keeping the tank charged (at the cost of charging it) and
  spending it through the trip is what protects the critical zones.
- ``cooling/daily_operations_v1``: a summer day in northern Virginia, four zones, every control, a 2 h tank
  that starts the night spent (24 °C), the time-of-use tariff with a **cost** objective, a chiller trip at a
  random time on half the days; 24 h.
- ``evaluation_case_spec(site, season, fault)``: the v0 evaluation family (4 climates × January/July ×
  normal/chiller trip) on plant v2, for the bound and the learned controllers (not registered).

**Info**: ``it_kw``, ``cooling_kw``, ``facility_kw``, ``pue``, ``zone_ids``, ``carbon_g``, ``cost_usd``,
``chiller_capacity_kw``, ``time``; at the end ``score`` and ``summary``. With ``diagnostics=True`` the evaluator
diagnostics of ``dcops.boundary`` (true ``inlet_c``, ``violation_minutes_27/32``, true ``chw_supply_c``, the
``faults`` at reset); :meth:`CoolingEnvV1.evaluator_truth` gives an evaluator (the clairvoyant bound) the true
state, the true plant (its drawn airflow) and the whole episode's boundary conditions. Neither reaches a policy.

**Arguments** (keyword overrides of the task's :class:`CoolingTaskSpecV1`, unknown names refused): ``n_steps``,
``dt_s``, ``climate``, ``grid_region``, ``start``, ``start_jitter_days``, ``load``, ``faults`` (a tuple or a
callable ``rng -> faults``), ``plant`` (:class:`~dcops.physics.v2.types.PlantV2Config`; its ``tank`` is the
storage), ``sensor_model``, ``load_noise`` (0.05), ``load_telemetry`` (True), ``airflow`` (an
:class:`~dcops.physics.v2.types.AirflowUncertainty`, or None for the nameplate), ``forecasts`` (a
:class:`~dcops.physics.forecast.ForecastModel` with two leads), ``objective``, ``tariff``,
``initial_zone_temp_c``, ``initial_chw_c``, ``initial_tank_c`` (default: the chilled water, fully charged),
``initial_chillers_on`` (default: all); plus ``render_mode`` (``"ansi"``) and ``diagnostics``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from dcops.boundary import split_info
from dcops.cooling_env import drift_one_zone, fraction_above
from dcops.physics.carbon import carbon_source
from dcops.physics.faults import ChillerTrip, Fault, build_timeline
from dcops.physics.forecast import ForecastModel, forecast, unit_ar1
from dcops.physics.it_load import LoadProfile
from dcops.physics.plant_types import PlantBoundary
from dcops.physics.sensors import SensorModel, draw_errors
from dcops.physics.v2.interface import (
    PLANT_SETPOINTS,
    TelemetryV2,
    build_telemetry,
    decode_setpoints,
    setpoint_bounds,
    telemetry_bounds,
)
from dcops.physics.v2.plant import step_plant_v2
from dcops.physics.v2.tariff import FLAT, TimeOfUseTariff
from dcops.physics.v2.types import (
    AirflowUncertainty,
    PlantV2Config,
    PlantV2Control,
    PlantV2Outputs,
    PlantV2State,
    initial_state_v2,
)
from dcops.physics.weather import weather_source

RECOMMENDED_RANGE_C = (18.0, 27.0)
ALLOWABLE_MAX_C = 32.0
_THRESHOLDS_C = np.array([[RECOMMENDED_RANGE_C[1]], [ALLOWABLE_MAX_C], [RECOMMENDED_RANGE_C[0]]])
OBJECTIVES = ("energy", "cost", "carbon")
OBJECTIVE_WEIGHT = 0.5
FaultSource = tuple[Fault, ...] | Callable[[np.random.Generator], list[Fault]]


def reference_cooling_kw(it_kw: Any, wet_bulb_c: Any) -> Any:
    """The yardstick cooling power, kW: 3.5 % of the IT power at wet-bulbs up to 5 °C (free cooling), rising
    linearly to 15 % at 25 °C and above (chillers against warm condenser water). Weather and IT load only; set
    near what the tuned rule spends on the evaluation family, so E ≈ 0.5 for it and neither end saturates."""
    x = np.clip((np.asarray(wet_bulb_c, dtype=np.float64) - 5.0) / 20.0, 0.0, 1.0)
    return np.asarray(it_kw, dtype=np.float64) * (0.035 + 0.115 * x)


def score_from_totals(mean_violation: float, objective: float, reference: float) -> float:
    """The final score of the module docstring from the mean violation and the summed objective and yardstick."""
    thermal = max(0.0, 1.0 - mean_violation)
    ratio = objective / reference if reference > 0 else 1.0
    energy = min(max(0.5 - 0.4 * math.log2(max(ratio, 1e-9)), 0.0), 1.0)
    return thermal * (0.4 + 0.6 * energy)


@dataclass(frozen=True)
class CoolingTaskSpecV1:
    """Everything that defines a v1 cooling task (the module docstring gives each field's meaning)."""

    task_id: str
    plant: PlantV2Config
    zone_names: tuple[str, ...]
    zone_weights: tuple[float, ...]
    n_steps: int = 288
    dt_s: float = 300.0
    climate: Any = "leesburg"
    grid_region: Any = None
    start: datetime = datetime(2026, 7, 15, 0, 0)
    start_jitter_days: int = 0
    load: LoadProfile = field(default_factory=LoadProfile)
    faults: FaultSource = ()
    sensor_model: SensorModel = field(default_factory=SensorModel)
    load_noise: float = 0.05
    load_telemetry: bool = True
    airflow: AirflowUncertainty | None = field(default_factory=AirflowUncertainty)
    forecasts: ForecastModel = field(default_factory=ForecastModel)
    objective: str = "energy"
    tariff: TimeOfUseTariff = field(default_factory=TimeOfUseTariff)
    initial_zone_temp_c: float = 26.0
    initial_chw_c: float = 10.0
    initial_tank_c: float | None = None
    initial_chillers_on: float | None = None

    def __post_init__(self) -> None:
        z = self.plant.n_zones
        if len(self.zone_names) != z or len(self.zone_weights) != z:
            raise ValueError(f"zone_names and zone_weights need {z} entries (one per plant zone)")
        if self.n_steps < 1 or self.dt_s <= 0:
            raise ValueError("n_steps must be >= 1 and dt_s > 0")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if not (math.isfinite(self.load_noise) and self.load_noise >= 0):
            raise ValueError(f"load_noise must be a finite number >= 0, got {self.load_noise!r}")
        if len(self.forecasts.leads_h) != 2:
            raise ValueError(f"forecasts.leads_h must hold two leads (the telemetry's 1 h and 3 h slots), "
                             f"got {self.forecasts.leads_h!r}")
        if self.initial_chillers_on is not None and not 0 <= self.initial_chillers_on <= self.plant.n_chillers:
            raise ValueError(f"initial_chillers_on must be in [0, {self.plant.n_chillers}], "
                             f"got {self.initial_chillers_on!r}")


@dataclass
class EpisodeTotalsV1:
    """Running totals (kWh, g, $, minutes per zone)."""

    it_kwh: float = 0.0
    cooling_kwh: float = 0.0
    facility_kwh: float = 0.0
    carbon_g: float = 0.0
    cooling_carbon_g: float = 0.0
    cost_usd: float = 0.0
    cooling_cost_usd: float = 0.0
    server_overhead_kwh: float = 0.0
    objective: float = 0.0
    reference: float = 0.0
    violation_sum: float = 0.0
    steps: int = 0
    minutes_above_27: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    minutes_above_32: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    minutes_below_18: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def as_dict(self) -> dict[str, Any]:
        return {
            "it_kwh": self.it_kwh, "cooling_kwh": self.cooling_kwh, "facility_kwh": self.facility_kwh,
            "pue": self.facility_kwh / self.it_kwh if self.it_kwh > 0 else 0.0,
            "carbon_kg": self.carbon_g / 1000.0, "cooling_carbon_kg": self.cooling_carbon_g / 1000.0,
            "cost_usd": self.cost_usd, "cooling_cost_usd": self.cooling_cost_usd,
            "server_overhead_kwh": self.server_overhead_kwh,
            "objective": self.objective, "reference": self.reference,
            "minutes_above_27": self.minutes_above_27.tolist(), "minutes_above_32": self.minutes_above_32.tolist(),
            "minutes_below_18": self.minutes_below_18.tolist(),
            "mean_violation": self.violation_sum / self.steps if self.steps else 0.0,
        }


@dataclass(frozen=True)
class EvaluatorTruth:
    """What only an evaluator may use (the clairvoyant bound): the true state now and the episode's conditions.

    ``plant`` is the episode's true plant (the drawn bypass and recirculation). Arrays are per step ``k`` of the
    episode: ``it_kw`` (n, Z), ``dry_bulb_c`` / ``wet_bulb_c`` / ``price`` / ``carbon_g_per_kwh`` (n,),
    ``chiller_available`` (n, N), ``fan_units_alive`` (n, Z)."""

    plant: PlantV2Config
    state: PlantV2State
    step: int
    it_kw: NDArray[np.float64]
    dry_bulb_c: NDArray[np.float64]
    wet_bulb_c: NDArray[np.float64]
    chiller_available: NDArray[np.float64]
    fan_units_alive: NDArray[np.float64]
    price: NDArray[np.float64]
    carbon_g_per_kwh: NDArray[np.float64]


class CoolingEnvV1(gym.Env):
    """A v1 cooling task over plant v2 (full manual in the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}
    plant_setpoints = PLANT_SETPOINTS
    """The plant-level set-points, in order, after the per-zone fan speeds and supply-air set-points."""
    telemetry = TelemetryV2
    """The parser of this environment's observation vector (``TelemetryV2.parse(vector, n_zones)``)."""

    def __init__(self, spec: CoolingTaskSpecV1, render_mode: str | None = None, diagnostics: bool = False) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.task = spec
        self.render_mode = render_mode
        self.diagnostics = bool(diagnostics)
        z, n = spec.plant.n_zones, spec.plant.n_chillers
        self._weights = np.asarray(spec.zone_weights, dtype=np.float64) / float(np.sum(spec.zone_weights))
        self._weather = weather_source(spec.climate)
        self._carbon = carbon_source(spec.grid_region, spec.climate)
        low, high = setpoint_bounds(z, n)
        self.action_space = gym.spaces.Box(low=low.astype(np.float32), high=high.astype(np.float32), dtype=np.float32)
        self._obs_low, self._obs_high = telemetry_bounds(z)
        self.observation_space = gym.spaces.Box(low=self._obs_low, high=self._obs_high, dtype=np.float32)
        self.zone_ids = list(spec.zone_names)
        self._state: PlantV2State | None = None

    # ------------------------------------------------------------------ episode set-up
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        spec, rng = self.task, self.np_random
        jitter = int(rng.integers(0, spec.start_jitter_days + 1)) if spec.start_jitter_days else 0
        self.start = spec.start + timedelta(days=jitter)
        n, dt, z = spec.n_steps, spec.dt_s, spec.plant.n_zones
        leads = spec.forecasts.lead_steps(dt)
        # Boundary conditions run past the episode's end by the longest lead, so every forecast has its truth.
        extended = n + 1 + max(leads)
        mid = np.arange(extended) * dt + dt / 2.0
        weather = self._weather.series(self.start, mid, rng)
        self._dry, self._wet = weather.dry_bulb_c[:n], weather.wet_bulb_c[:n]
        carbon_g = self._carbon.series(self.start, mid, rng)
        self._carbon_g = carbon_g[:n]
        price = spec.tariff.series(self.start, mid)
        self._price = price[:n]
        start_hour = self.start.hour + self.start.minute / 60.0
        it_kw = spec.load.generate(rng, spec.plant.zone_design_it_kw, extended, dt, start_hour)
        self._it_kw = it_kw[:n]
        faults = spec.faults(rng) if callable(spec.faults) else list(spec.faults)
        self.faults = tuple(faults)
        self._timeline = build_timeline(faults, n, dt, z, spec.plant.n_chillers)
        self._inlet_errors = draw_errors(spec.sensor_model, rng, n + 1, z)
        self._return_errors = draw_errors(spec.sensor_model, rng, n + 1, z)
        self._water_errors = draw_errors(spec.sensor_model, rng, n + 1, 4)  # chw supply and return, condenser, tank
        self._load_noise = 1.0 + spec.load_noise * rng.standard_normal((n + 1, z))
        self._forecasts = self._draw_forecasts(rng, weather.wet_bulb_c, carbon_g / 1000.0, price,
                                               it_kw.sum(axis=1) / spec.plant.design_it_kw, leads)
        self._true_plant = spec.airflow.draw(spec.plant, rng) if spec.airflow is not None else spec.plant
        hours = start_hour + (np.arange(n + 1) * dt) / 3600.0
        self._hour_sin, self._hour_cos = np.sin(2 * np.pi * hours / 24.0), np.cos(2 * np.pi * hours / 24.0)
        self._reference_kw = reference_cooling_kw(self._it_kw.sum(axis=1), self._wet)
        self._mean_reference = float(np.mean(self._reference_kw * dt / 3600.0 * self._per_kwh_series()))

        plant = self._true_plant
        self._state = initial_state_v2(plant, spec.initial_zone_temp_c, spec.initial_chw_c,
                                       cw_supply_c=float(self._wet[0]) + 5.0, chillers_on=spec.initial_chillers_on,
                                       tank_temp_c=spec.initial_tank_c)
        self._step = 0
        self.totals = EpisodeTotalsV1(minutes_above_27=np.zeros(z), minutes_above_32=np.zeros(z),
                                      minutes_below_18=np.zeros(z))
        self._control = PlantV2Control(np.full(z, 0.6), np.full(z, 20.0), np.float64(spec.initial_chw_c),
                                       np.float64(1.0), np.float64(0.6), np.float64(self._state.chillers_on),
                                       np.float64(0.7), np.float64(0.0))
        self._last: PlantV2Outputs | None = None
        inlet = self._state.zone_temp_c.copy()  # before the first step the inlets are read from the zones
        observation = self._observe(inlet, self._it_kw[0], supply=np.full(z, 20.0), chw_return=spec.initial_chw_c,
                                    econ=0.0, cooling_kw=0.0, pue=0.0, reading=0)
        info = {"inlet_c": inlet, "zone_ids": self.zone_ids, "faults": [repr(f) for f in self.faults],
                "time": self.start.isoformat()}
        return observation, self._shown(info)

    def _draw_forecasts(self, rng: np.random.Generator, wet_bulb_c: NDArray[np.float64],
                        carbon_kg: NDArray[np.float64], price: NDArray[np.float64], load: NDArray[np.float64],
                        leads: tuple[int, ...]) -> NDArray[np.float64]:
        """Every reading's forecasts (n + 1, 4·L), in the order of the telemetry: wet-bulb, carbon, price and load
        at each lead (``dcops.physics.forecast``); the tariff is published, so its forecast is exact."""
        model, n, dt = self.task.forecasts, self.task.n_steps + 1, self.task.dt_s
        if not self.task.load_telemetry:  # a hall without load meters has no load forecast either
            load = np.zeros_like(load)
        quantities = ((wet_bulb_c, model.wet_bulb_sigma_k, False), (carbon_kg, model.carbon_sigma_fraction, True),
                      (price, 0.0, True), (load, model.load_sigma_fraction, True))
        out = np.empty((n, len(quantities) * len(leads)))
        for j, (lead, hours) in enumerate(zip(leads, model.leads_h, strict=True)):
            for q, (truth, sigma, relative) in enumerate(quantities):
                errors = unit_ar1(rng, n, dt, model.correlation_hours) if sigma > 0.0 else np.zeros(n)
                out[:, q * len(leads) + j] = forecast(truth, n, lead, sigma * math.sqrt(hours), errors, relative)
        return out

    def boundary(self, k: int) -> PlantBoundary:
        """The plant's boundary conditions at step ``k`` (true IT load, weather, faults)."""
        return PlantBoundary(self._it_kw[k], self._dry[k], self._wet[k], self._timeline.chiller_available[k],
                             self._timeline.fan_units_alive[k])

    def evaluator_truth(self) -> EvaluatorTruth:
        """The true state and the whole episode's conditions, for evaluators only (module docstring)."""
        if self._state is None:
            raise RuntimeError("call reset() before evaluator_truth()")
        return EvaluatorTruth(self._true_plant, self._state.copy(), self._step, self._it_kw, self._dry, self._wet,
                              self._timeline.chiller_available, self._timeline.fan_units_alive, self._price,
                              self._carbon_g)

    def _per_kwh_series(self) -> NDArray[np.float64]:
        """What one kWh at each step counts in the objective (1, $/kWh or kg/kWh), per step."""
        objective = self.task.objective
        if objective == "energy":
            return np.ones(self.task.n_steps)
        return self._price.copy() if objective == "cost" else self._carbon_g / 1000.0

    @property
    def mean_reference(self) -> float:
        """r̄: the episode's mean yardstick per step (objective units), the reward's normaliser."""
        return self._mean_reference

    # ------------------------------------------------------------------ stepping
    def decode_action(self, action: Any) -> PlantV2Control:
        """Validate and clip an action to the box; raise ``ValueError`` naming the problem field."""
        return decode_setpoints(action, self.task.plant.n_zones, self.task.plant.n_chillers)

    @property
    def has_tank(self) -> bool:
        return self.task.plant.tank.installed

    def step(self, action: Any):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self._step >= self.task.n_steps:
            raise RuntimeError("episode is over; call reset()")
        control = self.decode_action(action)
        spec, k = self.task, self._step
        self._state, out = step_plant_v2(self._true_plant, self._state, control, self.boundary(k), spec.dt_s)
        self._control, self._last, self._step = control, out, k + 1

        f27, f32, f18 = fraction_above(out.inlet_start_c, out.inlet_c, _THRESHOLDS_C)
        f18 = 1.0 - f18
        violation = float(self._weights @ (f27 + 4.0 * f32 + f18))
        hours = spec.dt_s / 3600.0
        cooling_kw, it_kw, facility_kw = float(out.cooling_kw), float(out.it_kw), float(out.facility_kw)
        per_kwh = 1.0 if spec.objective == "energy" else (
            float(self._price[k]) if spec.objective == "cost" else float(self._carbon_g[k]) / 1000.0)
        decision_kw = cooling_kw + it_kw - float(out.it_nominal_kw)
        objective = decision_kw * hours * per_kwh
        reference = float(self._reference_kw[k]) * hours * per_kwh
        reward = -(violation + OBJECTIVE_WEIGHT * objective / max(self._mean_reference, 1e-12))
        price, carbon = float(self._price[k]), float(self._carbon_g[k])

        t = self.totals
        t.it_kwh += it_kw * hours
        t.cooling_kwh += cooling_kw * hours
        t.facility_kwh += facility_kw * hours
        t.carbon_g += facility_kw * hours * carbon
        t.cooling_carbon_g += cooling_kw * hours * carbon
        t.cost_usd += facility_kw * hours * price
        t.cooling_cost_usd += cooling_kw * hours * price
        t.server_overhead_kwh += (it_kw - float(out.it_nominal_kw)) * hours
        t.objective += objective
        t.reference += reference
        t.violation_sum += violation
        t.steps += 1
        minutes = spec.dt_s / 60.0
        t.minutes_above_27 += f27 * minutes
        t.minutes_above_32 += f32 * minutes
        t.minutes_below_18 += f18 * minutes

        terminated = self._step >= spec.n_steps
        observation = self._observe(out.inlet_c, out.zone_it_kw, out.supply_air_c, float(out.chw_return_c),
                                    float(out.economiser_fraction), cooling_kw, float(out.pue), reading=k + 1)
        info = {
            "it_kw": it_kw, "cooling_kw": cooling_kw, "facility_kw": facility_kw, "pue": float(out.pue),
            "inlet_c": out.inlet_c.copy(), "zone_ids": self.zone_ids, "carbon_g": facility_kw * hours * carbon,
            "cost_usd": facility_kw * hours * price, "violation_minutes_27": f27 * minutes,
            "violation_minutes_32": f32 * minutes, "chiller_capacity_kw": float(out.chiller_capacity_kw),
            "chw_supply_c": float(out.chw_supply_c),
            "time": (self.start + timedelta(seconds=(k + 1) * spec.dt_s)).isoformat(),
        }
        if terminated:
            info["score"] = self.score()
            info["summary"] = self.totals.as_dict()
        return observation, reward, terminated, False, self._shown(info)

    def score(self) -> float:
        """The final score in [0, 1] of the episode so far (module docstring)."""
        t = self.totals
        return score_from_totals(t.violation_sum / t.steps if t.steps else 0.0, t.objective, t.reference)

    # ------------------------------------------------------------------ observation
    def _observe(self, inlet_true: NDArray[np.float64], zone_it_kw: NDArray[np.float64], supply: NDArray[np.float64],
                 chw_return: float, econ: float, cooling_kw: float, pue: float, reading: int) -> NDArray[np.float32]:
        spec, state = self.task, self._state
        assert state is not None
        k = min(reading, spec.n_steps - 1)
        drift = self._timeline.inlet_sensor_offset_k[reading - 1] if reading > 0 else 0.0
        inlet = self._inlet_errors.report(reading, inlet_true, drift)
        ret = self._return_errors.report(reading, state.zone_temp_c)
        water = self._water_errors.report(reading, np.array([float(state.chw_supply_c), chw_return,
                                                             float(state.cw_supply_c), float(state.tank_temp_c)]))
        if spec.load_telemetry:
            load = np.asarray(zone_it_kw) / spec.plant.zone_design_it_kw * self._load_noise[reading]
        else:
            load = np.zeros(spec.plant.n_zones)
        c = self._control
        plant_values = [
            water[0], water[1], water[2], self._timeline.chiller_available[k].sum() / spec.plant.n_chillers,
            float(state.chillers_on), econ, float(c.tower_fan_speed), float(c.chw_pump_speed), self._dry[k],
            self._wet[k], self._carbon_g[k] / 1000.0, self._price[k], self._hour_sin[reading],
            self._hour_cos[reading], reading / spec.n_steps, cooling_kw / spec.plant.design_it_kw, pue,
            water[3] if self.has_tank else 0.0, float(c.tank_flow) if self.has_tank else 0.0,
            *self._forecasts[reading].tolist(),
        ]
        return build_telemetry((inlet, ret, load, c.fan_speed, supply), plant_values, self._obs_low, self._obs_high)

    def _shown(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` without the evaluator diagnostics of ``dcops.boundary`` unless made with ``diagnostics``."""
        return info if self.diagnostics else split_info("cooling", info)[0]

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._state is None:
            return "cooling env v1 (not reset)"
        out = self._last
        lines = [f"{self.task.task_id}  step {self._step}/{self.task.n_steps}"]
        for i, name in enumerate(self.zone_ids):
            lines.append(f"  {name:<12} zone {self._state.zone_temp_c[i]:5.1f} °C")
        lines.append(f"  chilled water {float(self._state.chw_supply_c):5.1f} °C  condenser water "
                     f"{float(self._state.cw_supply_c):5.1f} °C  chillers on {float(self._state.chillers_on):.0f}")
        if out is not None:
            lines.append(f"  IT {float(out.it_kw):7.1f} kW  cooling {float(out.cooling_kw):6.1f} kW  "
                         f"PUE {float(out.pue):.3f}")
        lines.append(f"  score so far {self.score():.3f}")
        return "\n".join(lines)


# ---------------------------------------------------------------------- tasks
_ENV_ARGUMENTS = ("render_mode", "diagnostics")


def _spec_with(spec: CoolingTaskSpecV1, overrides: dict[str, Any]) -> CoolingTaskSpecV1:
    unknown = set(overrides) - set(CoolingTaskSpecV1.__dataclass_fields__) - set(_ENV_ARGUMENTS)
    if unknown:
        raise TypeError(f"unknown cooling task option(s): {sorted(unknown)}")
    return replace(spec, **{k: v for k, v in overrides.items() if k not in _ENV_ARGUMENTS})


def _make(spec: CoolingTaskSpecV1, overrides: dict[str, Any]) -> CoolingEnvV1:
    return CoolingEnvV1(_spec_with(spec, overrides), overrides.get("render_mode"), bool(overrides.get("diagnostics")))


def single_zone_recovery_spec() -> CoolingTaskSpecV1:
    """One 250 kW zone at 36 °C after a chilled-water excursion (loop at 27 °C, one chiller running), the load
    ramping from 50 to 95 %; 2 h."""
    return CoolingTaskSpecV1(
        task_id="cooling/single_zone_recovery_v1",
        plant=PlantV2Config.default(n_zones=1, zone_design_it_kw=250.0),
        zone_names=("hall",),
        zone_weights=(1.0,),
        n_steps=24,
        climate="leesburg",
        start=datetime(2026, 6, 10, 13, 0),
        start_jitter_days=20,
        load=LoadProfile(pattern="ramp", low=0.5, high=0.95, noise=0.02),
        tariff=FLAT,
        initial_zone_temp_c=36.0,
        initial_chw_c=27.0,
        initial_chillers_on=1.0,
    )


def multi_zone_sensor_drift_spec() -> CoolingTaskSpecV1:
    """Three zones, a spring day in Leesburg, no load telemetry, one inlet sensor drifting low; 12 h."""
    return CoolingTaskSpecV1(
        task_id="cooling/multi_zone_sensor_drift_v1",
        plant=PlantV2Config.default(zone_design_it_kw=[300.0, 250.0, 200.0]),
        zone_names=("critical", "production", "batch"),
        zone_weights=(3.0, 2.0, 1.0),
        n_steps=144,
        climate="leesburg",
        start=datetime(2026, 5, 1, 6, 0),
        start_jitter_days=30,
        load=LoadProfile(pattern="diurnal", low=0.45, high=0.95, noise=0.03, peak_hour=15.0),
        faults=drift_one_zone,  # plant v0's drift, drawn the same way
        load_telemetry=False,
        tariff=FLAT,
        initial_zone_temp_c=26.0,
        initial_chw_c=12.0,
    )


def _random_cascade(rng: np.random.Generator) -> list[Fault]:
    """A chiller trips at a uniform time in 1–6 h for 30–90 min; a second 5–30 min later for 20–45 min."""
    first = float(rng.uniform(1.0, 6.0) * 3600.0)
    units = rng.permutation(3)
    return [
        ChillerTrip(start_s=first, chiller=int(units[0]), ramp_s=180.0,
                    duration_s=float(rng.uniform(30.0, 90.0) * 60.0)),
        ChillerTrip(start_s=first + float(rng.uniform(5.0, 30.0) * 60.0), chiller=int(units[1]), ramp_s=180.0,
                    duration_s=float(rng.uniform(20.0, 45.0) * 60.0)),
    ]


def cascading_chiller_failure_spec() -> CoolingTaskSpecV1:
    """Dallas in July, three 45 % chillers, a 30-minute tank that starts spent, two trips at random times; 8 h."""
    return CoolingTaskSpecV1(
        task_id="cooling/cascading_chiller_failure_v1",
        plant=PlantV2Config.default(n_zones=4, zone_design_it_kw=250.0, n_chillers=3, chiller_capacity_fraction=0.45,
                                    storage_minutes=30.0),
        zone_names=("critical_a", "critical_b", "production", "batch"),
        zone_weights=(4.0, 4.0, 2.0, 1.0),
        n_steps=96,
        climate="dallas",
        start=datetime(2026, 7, 10, 10, 0),
        start_jitter_days=20,
        load=LoadProfile(pattern="diurnal", low=0.4, high=0.95, noise=0.02, peak_hour=15.0),
        faults=_random_cascade,
        tariff=FLAT,
        initial_zone_temp_c=26.0,
        initial_chw_c=10.0,
        initial_tank_c=26.0,
    )


def _random_trip(rng: np.random.Generator) -> list[Fault]:
    """Half the days: one of the chillers trips at a uniform time between 06:00 and 20:00 for 1–3 h."""
    if rng.random() >= 0.5:
        return []
    return [ChillerTrip(start_s=float(rng.uniform(6.0, 20.0) * 3600.0), chiller=int(rng.integers(2)), ramp_s=180.0,
                        duration_s=float(rng.uniform(1.0, 3.0) * 3600.0), restart_ramp_s=600.0)]


def daily_operations_spec() -> CoolingTaskSpecV1:
    """A summer day in northern Virginia on a time-of-use tariff, every control, a 2 h tank, a chiller trip half
    the days; 24 h."""
    return CoolingTaskSpecV1(
        task_id="cooling/daily_operations_v1",
        plant=PlantV2Config.default(n_zones=4, zone_design_it_kw=250.0, storage_minutes=120.0),
        zone_names=("critical_a", "critical_b", "production", "batch"),
        zone_weights=(2.0, 2.0, 1.0, 1.0),
        n_steps=288,
        climate="leesburg",
        start=datetime(2026, 6, 1, 0, 0),
        start_jitter_days=110,
        load=LoadProfile(pattern="diurnal", low=0.45, high=0.9, noise=0.02, zone_spread=0.05, peak_hour=15.0),
        faults=_random_trip,
        objective="cost",
        initial_tank_c=24.0,
    )


def make_single_zone_recovery(**overrides: Any) -> CoolingEnvV1:
    return _make(single_zone_recovery_spec(), overrides)


def make_multi_zone_sensor_drift(**overrides: Any) -> CoolingEnvV1:
    return _make(multi_zone_sensor_drift_spec(), overrides)


def make_cascading_chiller_failure(**overrides: Any) -> CoolingEnvV1:
    return _make(cascading_chiller_failure_spec(), overrides)


def make_daily_operations(**overrides: Any) -> CoolingEnvV1:
    return _make(daily_operations_spec(), overrides)


TASK_SPECS: dict[str, Callable[[], CoolingTaskSpecV1]] = {
    "cooling/single_zone_recovery_v1": single_zone_recovery_spec,
    "cooling/multi_zone_sensor_drift_v1": multi_zone_sensor_drift_spec,
    "cooling/cascading_chiller_failure_v1": cascading_chiller_failure_spec,
    "cooling/daily_operations_v1": daily_operations_spec,
}
"""The registered v1 cooling tasks (``dcops.registry``) and their specs."""


# ---------------------------------------------------------------------- the evaluation family on plant v2
EVAL_SITES = ("phoenix", "seattle", "chicago", "atlanta")
SEASONS = {"january": datetime(2026, 1, 8, 0, 0), "july": datetime(2026, 7, 8, 0, 0)}
FAULT_CASES = ("normal", "chiller_trip")


def _family_trip(rng: np.random.Generator) -> list[Fault]:
    """One of the two chillers trips at a seeded time between 08:00 and 18:00 and restarts 2 h later."""
    return [ChillerTrip(start_s=float(rng.uniform(8.0, 18.0) * 3600.0), chiller=int(rng.integers(2)), ramp_s=180.0,
                        duration_s=2 * 3600.0, restart_ramp_s=600.0)]


def evaluation_case_spec(site: str, season: str, fault: str, objective: str = "energy") -> CoolingTaskSpecV1:
    """One case of the v0 evaluation family (4 climates × January/July × normal/chiller trip) on plant v2."""
    if site not in EVAL_SITES or season not in SEASONS or fault not in FAULT_CASES:
        raise ValueError(f"unknown case {site}/{season}/{fault}: sites {EVAL_SITES}, seasons {tuple(SEASONS)}, "
                         f"faults {FAULT_CASES}")
    return CoolingTaskSpecV1(
        task_id=f"cooling/eval_family_v1/{site}/{season}/{fault}",
        plant=PlantV2Config.default(n_zones=4, zone_design_it_kw=250.0),
        zone_names=("zone_0", "zone_1", "zone_2", "zone_3"),
        zone_weights=(1.0, 1.0, 1.0, 1.0),
        n_steps=288,
        climate=site,
        start=SEASONS[season],
        start_jitter_days=14,
        load=LoadProfile(pattern="diurnal", low=0.45, high=0.75, noise=0.02, zone_spread=0.05, peak_hour=15.0),
        faults=_family_trip if fault == "chiller_trip" else (),
        objective=objective,
    )
