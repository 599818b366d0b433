"""The clairvoyant bound of the plant v2 cooling tasks: receding-horizon control with perfect foresight.

At every step the planner knows what no policy does: the true plant state (zone and loop temperatures, staging
timers), the true IT load of every zone for the rest of the episode, the weather, the prices and carbon, and the
fault schedule. It chooses the step's set-points by the cross-entropy method over a compact parametrisation:

    u = (airflow margin, supply-air set-point, chilled-water set-point, tower fan speed, chillers staged,
         chilled-water pump speed, economiser on, tank flow)

(fans per zone = margin × the *true* airflow the zone's servers draw, over the zone's *true* bypass, so every
zone is matched exactly), each candidate held for ``horizon`` steps and simulated on the episode's true plant
(``step_plant_v2`` on a batch of all candidates) against the true future boundary conditions; the cost is the
environment's own objective plus a violation penalty ``VIOLATION_WEIGHT`` times the reward's (so the planner
never trades an excursion for energy). The first step of the best candidate is applied to the real environment,
which scores the episode as it scores any controller.

Storage needs foresight longer than any affordable horizon (a tank charged at night pays in the afternoon), so
a candidate is also credited with the cooling its horizon leaves in the tank: the change in stored cold
(kWh thermal) over a plant COP, priced at the mean objective price still to come (so cold made below it is worth
storing and cold spent above it worth spending), and worth :data:`TRIP_PREMIUM` times as much while every chiller
runs and a trip is still ahead (the planner knows the fault schedule). A mis-valuation can only make the bound's
episode worse, never flatter it: the episode is scored by the environment.

The bound's episode is the best-scoring of several planners (:data:`PLANNERS`: two horizons and search sizes,
each with every COP of :data:`STORED_COOLING_COPS` where there is a tank): the best of achievable episodes is
achievable.

Why this is a bound and what kind: it is an achievable episode, played by the environment's rules, with perfect
information and on-line optimisation; a better optimiser (longer horizons, per-zone set-points, trajectory
optimisation) could only do better, so its saving against the tuned rule is a *lower* estimate of the headroom
the plant leaves a controller. It is an evaluator: it reads :meth:`CoolingEnvV1.evaluator_truth`, which no policy
gets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dcops.agents.cooling.airflow_identification import AirflowIdentifier
from dcops.agents.cooling.imitation_v2 import (
    ImitationFeatures,
    sensed_boundary,
    sensed_state,
    start_parameters,
)
from dcops.agents.cooling.plant_parameters_v2 import (
    parameter_controls,
    parameter_ranges,
    parameter_setpoints,
    server_airflow_kg_s,
)
from dcops.agents.cooling.rule_v2 import controller_context_v2
from dcops.cooling_env import fraction_above
from dcops.cooling_env_v1 import OBJECTIVE_WEIGHT, CoolingEnvV1, EvaluatorTruth, reference_cooling_kw
from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.interface import (
    TelemetryV2,
)
from dcops.physics.v2.plant import step_plant_v2
from dcops.physics.v2.types import PlantV2Config, PlantV2State

VIOLATION_WEIGHT = 20.0
"""The planner's violation penalty over the reward's (1 per weighted zone-step above 27 °C)."""
STORED_COOLING_COPS = (6.0, 12.0, 20.0, math.inf)
"""Plant COPs tried for the value of stored cold (one clairvoyant episode each, the best kept; ``inf``: stored
cold is worth nothing beyond the horizon)."""
TRIP_PREMIUM = 3.0
"""How much more stored cold is worth while a chiller trip is still ahead."""


@dataclass(frozen=True)
class BoundSettings:
    """Planner settings: horizon (steps each candidate is held), candidates per iteration, CEM iterations,
    elite count."""

    horizon: int = 6
    samples: int = 96
    iterations: int = 3
    elite: int = 12
    stored_cooling_cop: float = math.inf
    inlet_margin_k: float = 0.0
    """Plan as if every inlet were this much warmer (K): a safety margin for a planner on a sensed state and an
    identified plant (the bound's is 0: it knows the true inlets)."""


PLANNERS = (BoundSettings(), BoundSettings(horizon=12, samples=192, iterations=4, elite=16))
"""The planners the bound tries: the CEM defaults (30 min ahead) and a longer, larger search (1 h ahead). Neither
dominates the other case by case (the search is stochastic and a longer hold is a coarser plan)."""


def _tile(state: PlantV2State, b: int) -> PlantV2State:
    return PlantV2State(np.repeat(state.zone_temp_c[None], b, axis=0),
                        *(np.full(b, float(v)) for v in (state.chw_supply_c, state.cw_supply_c, state.chillers_on,
                                                          state.stage_timer_s, state.last_stage_direction,
                                                          state.tank_temp_c)))


def _stored_cold_value(env: CoolingEnvV1, truth: EvaluatorTruth, per_kwh: np.ndarray, k: int, cop: float,
                       reference: float, trips_known: bool = True) -> float:
    """Objective units (the reward's scale) per kJ of cold left in the tank (module docstring); the trip premium
    only where the planner knows the fault schedule (``trips_known``)."""
    rest = slice(k, env.task.n_steps)
    value = float(np.mean(per_kwh[rest])) / cop / 3600.0
    available = truth.chiller_available[rest].sum(axis=1)
    if trips_known and available[0] >= truth.plant.n_chillers - 1e-9 and np.any(available < available[0] - 1e-9):
        value *= TRIP_PREMIUM
    return OBJECTIVE_WEIGHT * value / reference


def _violation(start: np.ndarray, end: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The reward's violation term for a batch of zone inlets (B, Z) over one step (linear in time)."""
    f27, f32, f18 = (fraction_above(start, end, t) for t in (27.0, 32.0, 18.0))
    return (f27 + 4.0 * f32 + (1.0 - f18)) @ weights


@dataclass(frozen=True)
class Knowledge:
    """What the planner is given, one switch per kind of hidden truth (the defaults: the clairvoyant bound).

    :param plant: ``"true"``: the episode's true plant (its drawn bypass and recirculation); ``"nameplate"``: the
        nameplate (``env.task.plant``, what a controller's context carries); ``"identified"``: the nameplate with
        each zone's airflow fitted online to the inlet readings (``dcops.agents.cooling.airflow_identification``).
        The plant planned on also matches the fans to the servers' airflow.
    :param state: the true zone, chilled-water, condenser-water and tank temperatures; off, the sensors' readings
        of them in the latest observation (return air for the zone, the water sensors; the chillers on and the
        staging timers are the planner's own doing, so they stay known).
    :param conditions: the true IT load, weather, carbon and faults over the horizon; off, the present as the
        latest observation reports it, held over the horizon (``imitation_v2.sensed_boundary``: the zone load
        metered, or estimated from the air side where the hall has no meters; the weather and carbon now; the
        chillers available as the reported fraction; every fan unit alive, since no telemetry reports fan
        faults), and the yardstick of the present priced at the published tariff's mean. The tariff is
        published, so its prices stay known either way.

    With the plant identified and the other two off the planner uses only what a controller could have (the
    observation, the nameplate and the task's published airflow ranges): a model-predictive operator, not a
    bound, which measures how much of the bound's headroom is reachable without the hidden truth.
    """

    plant: str = "true"
    state: bool = True
    conditions: bool = True

    def __post_init__(self) -> None:
        if self.plant not in ("true", "nameplate", "identified"):
            raise ValueError(f"Knowledge.plant must be 'true', 'nameplate' or 'identified', got {self.plant!r}")


CLAIRVOYANT = Knowledge()
KNOWLEDGE_LADDER = {
    "clairvoyant bound": CLAIRVOYANT,
    "nameplate plant": Knowledge(plant="nameplate"),
    "identified plant": Knowledge(plant="identified"),
    "operator MPC (observation only)": Knowledge(plant="identified", state=False, conditions=False),
}
"""The bound with its truths withdrawn (``dcops cooling-bound-knowledge``): the plant, then the state and the
future as well."""
SINGLE_PLANNER_COP = 12.0
"""A planner without the whole truth plays one planner (``PLANNERS[0]``), never the best-scoring of a portfolio
(which only hindsight can pick), valuing stored cold at this plant COP where there is a tank."""


@dataclass(frozen=True)
class PlanningView:
    """What one planning step works from, under a :class:`Knowledge`."""

    plant: PlantV2Config
    state: PlantV2State
    server_air_kg_s: np.ndarray
    boundaries: list[PlantBoundary]
    per_kwh: np.ndarray
    reference: float
    cold_value: float


def planning_view(env: CoolingEnvV1, settings: BoundSettings, knowledge: Knowledge,
                   observation: np.ndarray | None, identifier: AirflowIdentifier | None = None) -> PlanningView:
    """What the planner works from at the env's current step under ``knowledge`` (:class:`Knowledge`):
    ``observation`` is the latest one (needed where the state or the conditions are withdrawn), ``identifier``
    the airflow fit (needed on the identified plant)."""
    spec, truth = env.task, env.evaluator_truth()
    k = truth.step
    steps = range(k, min(k + settings.horizon, spec.n_steps))
    seen = None
    if not (knowledge.state and knowledge.conditions):
        if observation is None:
            raise ValueError("a planner without the true state or conditions needs the latest observation")
        seen = TelemetryV2.parse(observation, spec.plant.n_zones)
    plant = {"true": truth.plant, "nameplate": spec.plant}.get(knowledge.plant)
    if plant is None:
        if identifier is None:
            raise ValueError("a planner on the identified plant needs its AirflowIdentifier")
        plant = identifier.plant()
    state = truth.state
    if not knowledge.state:  # the controller's sensed state, with the staging its own commands set
        assert seen is not None
        state = replace(sensed_state(seen, spec.plant.n_chillers), chillers_on=state.chillers_on,
                        stage_timer_s=state.stage_timer_s, last_stage_direction=state.last_stage_direction)
    carbon = truth.carbon_g_per_kwh / 1000.0
    if knowledge.conditions:
        it_kw = truth.it_kw[k]
        boundaries = [PlantBoundary(truth.it_kw[j], truth.dry_bulb_c[j], truth.wet_bulb_c[j],
                                    truth.chiller_available[j], truth.fan_units_alive[j]) for j in steps]
    else:
        assert seen is not None
        now = sensed_boundary(seen, controller_context_v2(env))  # the load metered or estimated, faults reported
        it_kw = now.it_kw
        boundaries = [now for _ in steps]
        carbon = np.full_like(carbon, seen.carbon_kg_per_kwh)
    per_kwh = {"energy": np.ones_like(truth.price), "cost": truth.price, "carbon": carbon}[spec.objective]
    reference = env.mean_reference
    if not knowledge.conditions:  # the episode's mean yardstick needs its future: the present's instead, priced
        assert seen is not None  # at the mean of the published tariff (or the carbon now)
        reference = max(float(reference_cooling_kw(it_kw.sum(), seen.wet_bulb_c)) * spec.dt_s / 3600.0
                        * float(np.mean(per_kwh)), 1e-12)
    cold_value = 0.0
    if plant.tank.installed and math.isfinite(settings.stored_cooling_cop):
        cold_value = _stored_cold_value(env, truth, per_kwh, k, settings.stored_cooling_cop, reference,
                                        trips_known=knowledge.conditions)
    server_air = server_airflow_kg_s(it_kw, plant)
    return PlanningView(plant, state, server_air, boundaries, per_kwh, reference, cold_value)


def plan_step(env: CoolingEnvV1, mean: np.ndarray, settings: BoundSettings, rng: np.random.Generator,
              knowledge: Knowledge = CLAIRVOYANT, observation: np.ndarray | None = None) -> np.ndarray:
    """The best candidate parameters for the env's current step (the CEM of the module docstring), planned on
    what ``knowledge`` gives (``observation``: the latest one, needed where the state or conditions are not
    known)."""
    return cem_search(env, planning_view(env, settings, knowledge, observation), mean, settings, rng)


def cem_search(env: CoolingEnvV1, view: PlanningView, mean: np.ndarray, settings: BoundSettings,
            rng: np.random.Generator) -> np.ndarray:
    """The cross-entropy search of one step over ``view``."""
    spec, plant, k = env.task, view.plant, env.evaluator_truth().step
    ranges = parameter_ranges(plant)
    low, high = ranges[:, 0], ranges[:, 1]
    weights = np.asarray(spec.zone_weights, dtype=np.float64) / float(np.sum(spec.zone_weights))
    hours = spec.dt_s / 3600.0
    std = 0.2 * (high - low)
    best_u, best_cost = mean, np.inf
    for _ in range(settings.iterations):
        u = rng.normal(mean, std, size=(settings.samples, mean.size))
        u[0] = mean
        u = np.clip(u, low, high)
        control = parameter_controls(u, view.server_air_kg_s, plant)
        state = _tile(view.state, settings.samples)
        cost = np.zeros(settings.samples)
        for j, boundary in enumerate(view.boundaries, start=k):
            state, out = step_plant_v2(plant, state, control, boundary, spec.dt_s)
            decision_kw = out.cooling_kw + out.it_kw - out.it_nominal_kw
            cost += OBJECTIVE_WEIGHT * decision_kw * hours * view.per_kwh[j] / view.reference
            cost += VIOLATION_WEIGHT * _violation(out.inlet_start_c + settings.inlet_margin_k,
                                                  out.inlet_c + settings.inlet_margin_k, weights)
        if view.cold_value:
            cost -= view.cold_value * plant.tank.capacity_kj_per_k * (float(view.state.tank_temp_c)
                                                                      - state.tank_temp_c)
        order = np.argsort(cost)
        if cost[order[0]] < best_cost:
            best_cost, best_u = float(cost[order[0]]), u[order[0]].copy()
        elite = u[order[: settings.elite]]
        mean, std = elite.mean(axis=0), np.maximum(elite.std(axis=0), 0.02 * (high - low))
    return best_u


def clairvoyant_episode(env: CoolingEnvV1, seed: int, settings: BoundSettings | None = None,
                        knowledge: Knowledge = CLAIRVOYANT) -> dict[str, Any]:
    """The bound's episode: the clairvoyant planner with each of :data:`PLANNERS` (or ``settings`` alone), and with
    each of :data:`STORED_COOLING_COPS` where the plant has a tank, the best-scoring episode kept (a maximum over
    achievable episodes is itself achievable); return the env's final score and summary. With less
    ``knowledge`` one planner (``settings``, or ``PLANNERS[0]``; :data:`SINGLE_PLANNER_COP`) plans on what it
    gives (:class:`Knowledge`): an ablation of the bound, not a bound."""
    if knowledge != CLAIRVOYANT:  # hindsight may pick among clairvoyant episodes only
        single = settings if settings is not None else PLANNERS[0]
        if env.task.plant.tank.installed and not math.isfinite(single.stored_cooling_cop):
            single = replace(single, stored_cooling_cop=SINGLE_PLANNER_COP)
        return _planned_episode(env, seed, single, knowledge)
    portfolio = [settings] if settings is not None else list(PLANNERS)
    if env.task.plant.tank.installed:
        portfolio = [replace(s, stored_cooling_cop=cop) for s in portfolio for cop in STORED_COOLING_COPS]
    return max((_planned_episode(env, seed, s, knowledge) for s in portfolio), key=lambda e: e["score"])


def _planned_episode(env: CoolingEnvV1, seed: int, settings: BoundSettings, knowledge: Knowledge) -> dict[str, Any]:
    """Play one episode with the planner on ``knowledge``; return the env's final score and summary. On an
    identified plant the airflow is fitted exactly as the imitation controller fits it
    (:class:`~dcops.agents.cooling.imitation_v2.ImitationFeatures`: sensed state and boundary, the control
    played)."""
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    estimator = None
    if knowledge.plant == "identified":
        estimator = ImitationFeatures()
        estimator.reset(controller_context_v2(env))
    mean = start_parameters(env.task.plant)
    info: dict[str, Any] = {}
    done = False
    while not done:
        telemetry = estimator.observe(observation)[0] if estimator is not None else None
        view = planning_view(env, settings, knowledge, observation,
                             estimator.identifier if estimator is not None else None)
        u = cem_search(env, view, mean, settings, rng)
        action = parameter_setpoints(u, view.server_air_kg_s, view.plant)
        if estimator is not None and telemetry is not None:
            estimator.record(action, telemetry)
        observation, _, done, _, info = env.step(action)
        mean = u
    return {"score": float(info["score"]), **info["summary"]}
