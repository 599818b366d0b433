"""The Gymnasium environment the PPO cooling policy trains in: randomised plants, climates, seasons, loads, faults.

===================  =====================================================================================
Creation             ``CoolingTrainEnv()`` (randomised scenarios) or ``CoolingTrainEnv(spec_source=f)`` with
                     ``f(rng) -> CoolingTaskSpec`` (e.g. the evaluation family, for validation)
Action               ``Box(-1, 1, (3,))``: supply-air set-point, inlet target, chilled-water margin, mapped to the
                     plant's set-points by ``dcops.agents.cooling.ppo.SupervisoryLayer`` (the PPO controller's own)
Observation          ``Box(-1000, 1000, (25,))`` float32: the features of ``dcops.agents.cooling.ppo`` computed from
                     the *reported* telemetry (sensor noise, bias and drift included), the zones' airflow trims
                     and the previous action
Episode              ``n_steps`` control steps of 300 s (default 144, 12 h); ``terminated`` at the end
===================  =====================================================================================

**Scenarios** (:class:`TrainingScenarios`, one drawn per reset from the environment's seeded generator):

- plant: ``PlantConfig.default`` with 1–6 zones of 150–350 kW each (unequal zones), two chillers of 60 % of
  design cooling or (20 %) three of 45 %;
- climate: one of the 8 built-in sites (``TypicalDayClimate``, with its seeded day-to-day anomalies), a start
  date uniform over the year (every season) and a start hour uniform over the day;
- IT load: a pattern among steady, ramp, diurnal and spikes with a random low (25–60 % of design) and high
  (up to 95 %), noise and zone spread;
- faults: ``dcops.physics.faults.random_faults`` (chiller trip 35 %, CRAH fan failure 15 %, inlet-sensor drift
  25 % of episodes);
- initial zone temperature 22–30 °C and chilled-water loop 8–18 °C;
- or, half the time, a case of the evaluation family (``dcops.training.cooling.evaluate.case_spec``: 4 climates ×
  January / July × no fault / chiller trip, 24 h) with an episode seed of 10,000 or more, never one of the
  family's evaluation (0, 1, 2, …), tuning (1000+) or validation (2000+) seeds. The rule-based baseline was
  tuned on the family too (on its tuning seeds), so both controllers have seen the family's conditions.

**Reward** (why: the goal is the least cooling energy with the inlets kept safe; the energy term is what is
minimised, the thermal terms are constraints strong enough that no energy saving buys a violation). For each
step, with the *true* inlet temperatures (the simulator knows them; the policy never sees them) and the fraction
of the step each zone spent above 27 °C (f27), above 32 °C (f32) and below 18 °C (f18), averaged over zones::

    energy_k  = cooling_kW / reference_kW(IT_kW, wet-bulb)          (≈ 1 for a well-run plant, any weather)
    thermal_k = min(10, mean_z(12·f27 + 120·f32 + 4·max(0, T_inlet,z − 26.75 K) + 1·f18))
    reward_k  = −(2·energy_k + thermal_k)

``reference_kW`` (:func:`reference_cooling_kw`) is 3 % of the IT power at wet-bulbs up to 11 °C (free cooling),
rising linearly to 19 % at 22 °C. It depends only on the weather and the IT load, which no action changes, so it
rescales the energy term per step without rewarding any action for the weather: it makes a 10 % saving worth
the same on a January night as on a July afternoon (as the evaluation's per-case percentages count it), where a
plain cooling/IT ratio would make winter savings invisible next to summer ones.

Worked example: IT 1000 kW at a wet-bulb of 22 °C (reference 190 kW), cooling 190 kW, every inlet at 26 °C:
−2.0. One zone of four at 27.5 °C for the whole step adds (12 + 4·0.75)/4 = 3.75, i.e. −5.75: a violation costs
more than the whole step's cooling. The margin term starts 0.25 K below the 27 °C limit so that the sensor noise
(≈0.15 K) does not push the true inlet over it. The cap at 10 (five times a normal step's energy term) keeps the
rare unrecoverable fault (a fan failure at full load) from dominating the return's variance, which would drown
the energy signal; any violation still costs more than any energy saving.

**Arguments**: ``scenarios`` (:class:`TrainingScenarios`), ``spec_source`` (replaces the random scenarios),
``reward`` (:class:`RewardWeights`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.base import ControllerContext
from dcops.agents.cooling.ppo import N_ACTIONS, N_FEATURES, TRAINED_DT_S, FeatureBuilder, SupervisoryLayer
from dcops.cooling_env import CoolingEnv, CoolingTaskSpec
from dcops.physics.faults import random_faults
from dcops.physics.interface import Telemetry
from dcops.physics.it_load import LOAD_PATTERNS, LoadProfile
from dcops.physics.plant import PlantConfig
from dcops.physics.profiles import SITE_ALIASES

SpecSource = Callable[[np.random.Generator], CoolingTaskSpec]


def reference_cooling_kw(it_kw: float, wet_bulb_c: float) -> float:
    """A rough cooling power for the conditions, kW: 3 % of the IT power with full free cooling (wet-bulb ≤ 11 °C),
    rising linearly to 19 % at a wet-bulb of 22 °C and above (what a well-run economiser plant draws; it only
    sets the scale of the energy term, see :class:`RewardWeights`)."""
    return it_kw * (0.03 + 0.16 * min(max((wet_bulb_c - 11.0) / 11.0, 0.0), 1.0))


@dataclass(frozen=True)
class RewardWeights:
    """Weights of the training reward (module doc). Temperatures in °C, margin weight per K."""

    energy: float = 2.0
    above_27: float = 12.0
    above_32: float = 120.0
    margin_c: float = 26.75
    margin_per_k: float = 4.0
    below_18: float = 1.0
    max_thermal: float = 10.0

    def cost(self, cooling_kw: float, reference_kw: float, inlet_end_c: NDArray[np.float64],
             f27: NDArray[np.float64], f32: NDArray[np.float64], f18: NDArray[np.float64]) -> tuple[float, float]:
        """(energy term, thermal term) of one step; the reward is minus their sum."""
        energy = self.energy * (cooling_kw / reference_kw if reference_kw > 0 else 0.0)
        thermal = float(np.mean(
            self.above_27 * f27 + self.above_32 * f32
            + self.margin_per_k * np.maximum(inlet_end_c - self.margin_c, 0.0) + self.below_18 * f18
        ))
        return energy, min(thermal, self.max_thermal)


@dataclass(frozen=True)
class TrainingScenarios:
    """Ranges the training scenarios are drawn from (module doc)."""

    sites: tuple[str, ...] = tuple(SITE_ALIASES)
    n_steps: int = 144
    zone_counts: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    zone_design_kw: tuple[float, float] = (150.0, 350.0)
    three_chiller_probability: float = 0.2
    load_low: tuple[float, float] = (0.25, 0.6)
    load_span: tuple[float, float] = (0.1, 0.4)
    load_max: float = 0.95
    chiller_trip_probability: float = 0.35
    fan_failure_probability: float = 0.15
    sensor_drift_probability: float = 0.25
    initial_zone_temp_c: tuple[float, float] = (22.0, 30.0)
    initial_chw_c: tuple[float, float] = (8.0, 18.0)
    evaluation_family_probability: float = 0.5

    def sample(self, rng: np.random.Generator) -> CoolingTaskSpec:
        """One random scenario as a :class:`CoolingTaskSpec`."""
        if rng.random() < self.evaluation_family_probability:
            from dcops.training.cooling.evaluate import all_cases, case_spec

            cases = all_cases()
            return case_spec(cases[int(rng.integers(len(cases)))])
        z = int(rng.choice(self.zone_counts))
        design = rng.uniform(*self.zone_design_kw, size=z).round(0)
        if rng.random() < self.three_chiller_probability:
            plant = PlantConfig.default(n_zones=z, zone_design_it_kw=design, n_chillers=3,
                                        chiller_capacity_fraction=0.45)
        else:
            plant = PlantConfig.default(n_zones=z, zone_design_it_kw=design)
        site = str(rng.choice(self.sites))
        start = datetime(2026, 1, 1) + timedelta(days=int(rng.integers(365)), hours=int(rng.integers(24)))
        low = float(rng.uniform(*self.load_low))
        high = min(low + float(rng.uniform(*self.load_span)), self.load_max)
        load = LoadProfile(
            pattern=str(rng.choice(LOAD_PATTERNS)), low=low, high=high, noise=float(rng.uniform(0.01, 0.04)),
            zone_spread=float(rng.uniform(0.0, 0.08)), peak_hour=float(rng.uniform(12.0, 18.0)),
            spike_probability=float(rng.uniform(0.02, 0.08)),
        )
        horizon_s = self.n_steps * TRAINED_DT_S
        faults = random_faults(
            rng, horizon_s, z, plant.n_chillers, self.chiller_trip_probability, self.fan_failure_probability,
            self.sensor_drift_probability,
        )
        return CoolingTaskSpec(
            task_id="training/cooling_random",
            plant=plant,
            zone_names=tuple(f"zone{i}" for i in range(z)),
            zone_weights=(1.0,) * z,
            n_steps=self.n_steps,
            dt_s=TRAINED_DT_S,
            climate=site,
            start=start,
            load=load,
            faults=tuple(faults),
            initial_zone_temp_c=float(rng.uniform(*self.initial_zone_temp_c)),
            initial_chw_c=float(rng.uniform(*self.initial_chw_c)),
        )


class CoolingTrainEnv(gym.Env):
    """PPO's view of a cooling plant (full manual in the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, scenarios: TrainingScenarios | None = None, spec_source: SpecSource | None = None,
                 reward: RewardWeights | None = None) -> None:
        self.scenarios = scenarios or TrainingScenarios()
        self.spec_source: SpecSource = spec_source or self.scenarios.sample
        self.reward_weights = reward or RewardWeights()
        self.layer = SupervisoryLayer()
        self.action_space = gym.spaces.Box(-1.0, 1.0, (N_ACTIONS,), dtype=np.float32)
        # Features are reductions of the clipped telemetry (°C, fractions), so ±1000 bounds them all.
        self.observation_space = gym.spaces.Box(-1000.0, 1000.0, (N_FEATURES,), dtype=np.float32)
        self._features = FeatureBuilder()
        self.inner: CoolingEnv | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        spec = self.spec_source(self.np_random)
        if abs(spec.dt_s - TRAINED_DT_S) > 1e-9:
            raise ValueError(f"training scenarios must use {TRAINED_DT_S} s steps, got {spec.dt_s}")
        self.inner = CoolingEnv(spec, diagnostics=True)  # the training reward scores the true inlets
        # Episode seeds from 10,000 up: never an evaluation, tuning or validation seed of the evaluation family.
        telemetry, info = self.inner.reset(seed=int(self.np_random.integers(10_000, 2**31 - 1)))
        self.layer.reset(ControllerContext.from_plant(spec.plant, spec.zone_weights, spec.dt_s))
        self._features.reset()
        self._last_action = np.zeros(N_ACTIONS)
        self._telemetry = Telemetry.parse(telemetry, spec.plant.n_zones)
        return self._observe(), info

    def _observe(self) -> NDArray[np.float32]:
        return self._features(self._telemetry, self._last_action, self.layer.trim_max).astype(np.float32)

    def step(self, action: Any):
        if self.inner is None:
            raise RuntimeError("call reset() before step()")
        action = np.minimum(np.maximum(np.asarray(action, dtype=np.float64).reshape(N_ACTIONS), -1.0), 1.0)
        setpoints = self.layer.setpoints(action, self._telemetry)
        below_18_before = self.inner.totals.minutes_below_18.copy()
        telemetry, _, terminated, truncated, info = self.inner.step(setpoints)
        minutes = self.inner.task.dt_s / 60.0
        f18 = (self.inner.totals.minutes_below_18 - below_18_before) / minutes
        reference_kw = reference_cooling_kw(info["it_kw"], self._telemetry.wet_bulb_c)
        energy, thermal = self.reward_weights.cost(
            info["cooling_kw"], reference_kw, info["inlet_c"], info["violation_minutes_27"] / minutes,
            info["violation_minutes_32"] / minutes, f18,
        )
        info["energy_cost"] = energy
        info["thermal_cost"] = thermal
        self._last_action = action
        self._telemetry = Telemetry.parse(telemetry, self.inner.task.plant.n_zones)
        return self._observe(), -(energy + thermal), terminated, truncated, info

