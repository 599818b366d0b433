"""A learned plant v2 controller that imitates the observation-only planner: airflow identified online, a policy
network choosing the plant's eight parameters, the fans matched zone by zone.

Why this shape, measured (``dcops cooling-bound-knowledge``): the clairvoyant bound's planner, given only what a
controller sees, still saves 12.7 % per case against the family-tuned rule on the evaluation family, while the
PPO supervisor of the rule saves none; and the one hidden truth that matters is each zone's airflow (bypass and
recirculation), which the planner recovers by fitting its plant to the inlet readings. A memoryless policy on
the current telemetry cannot know its zones' bypass; a planner is too slow for every step of training and for
the cluster. So the controller keeps the planner's estimator and its parametrisation and learns the planner's
choices:

1. :class:`~dcops.agents.cooling.airflow_identification.AirflowIdentifier` fits each zone's airflow to the
   inlets the telemetry reports, stepping the nameplate plant (``ControllerContextV2.nameplate``) from the
   *sensed* state (return air, the water sensors, the chillers reported on) with the control the controller
   applied and the load it measured (metered, or estimated from the air side);
2. the features: the PPO controller's reduced telemetry (:data:`~dcops.agents.cooling.ppo_v2.FEATURE_NAMES_V2`),
   the fitted airflow (:data:`AIRFLOW_FEATURES`) and the previous parameters;
3. :class:`~dcops.agents.cooling.ppo.NumpyPolicy` maps them to the eight parameters of
   :mod:`dcops.agents.cooling.plant_parameters_v2` in [−1, 1] (affine to each parameter's range on this plant);
4. the fans are matched to each zone's measured load through its fitted bypass.

**Shield** as the PPO controller's: at a reported inlet of ``shield_inlet_c`` the family-tuned rule plays the
step. The weights come from ``dcops train-cooling-imitation`` (:mod:`dcops.training.cooling.imitation_v2`):
behaviour cloning of the planner, then DAgger rounds in which the network drives and the planner labels the
states it reaches. No torch at run time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.airflow_identification import AirflowIdentifier
from dcops.agents.cooling.plant_parameters_v2 import (
    parameter_ranges,
    parameter_setpoints,
    server_airflow_kg_s,
)
from dcops.agents.cooling.ppo import NumpyPolicy
from dcops.agents.cooling.ppo_v2 import FEATURE_NAMES_V2, SHIELD_INLET_C, FeatureBuilderV2
from dcops.agents.cooling.rule_v2 import ControllerContextV2, RuleV2Controller, it_load_kw
from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.interface import TelemetryV2, decode_setpoints
from dcops.physics.v2.types import PlantV2Config, PlantV2State

AIRFLOW_FEATURES = ("bypass_mean", "bypass_max", "bypass_min", "recirculation_mean", "recirculation_max",
                    "fan_need_max", "fan_need_mean")
"""The fitted airflow's summary over zones, and the fan speed each zone needs at margin 1 (its measured servers'
air over what reaches them, over the CRAH's rating)."""
N_PARAMETERS = 8
N_FEATURES_IMITATION = len(FEATURE_NAMES_V2) + len(AIRFLOW_FEATURES) + N_PARAMETERS
WEIGHTS_FILE = "weights/imitation_v2.npz"
START_PARAMETERS = (1.05, 22.0, 16.0, 0.6, None, 0.6, 1.0, 0.0)
"""Where every episode's parameters start (the planner's too; ``None``: every chiller staged)."""


def start_parameters(plant: PlantV2Config) -> NDArray[np.float64]:
    """:data:`START_PARAMETERS` on ``plant`` (physical units)."""
    return np.array([plant.n_chillers if v is None else v for v in START_PARAMETERS], dtype=np.float64)


def normalise_parameters(u: NDArray[np.floating], plant: PlantV2Config) -> NDArray[np.float64]:
    """Physical parameters (8,) or (B, 8) to [−1, 1] on ``plant`` (a range of zero width maps to 0)."""
    ranges = parameter_ranges(plant)
    width = ranges[:, 1] - ranges[:, 0]
    safe = np.where(width > 0.0, width, 1.0)
    return np.where(width > 0.0, 2.0 * (np.asarray(u, dtype=np.float64) - ranges[:, 0]) / safe - 1.0, 0.0)


def physical_parameters(a: NDArray[np.floating], plant: PlantV2Config) -> NDArray[np.float64]:
    """The inverse of :func:`normalise_parameters`, ``a`` clipped to [−1, 1]."""
    ranges = parameter_ranges(plant)
    a = np.clip(np.asarray(a, dtype=np.float64), -1.0, 1.0)
    return ranges[:, 0] + (a + 1.0) / 2.0 * (ranges[:, 1] - ranges[:, 0])


def sensed_state(t: TelemetryV2, n_chillers: int) -> PlantV2State:
    """The plant state as the sensors report it (return air for the zones; staging timers unknown, so free)."""
    return PlantV2State(np.asarray(t.return_c, dtype=np.float64).copy(), np.float64(t.chw_supply_c),
                        np.float64(t.cw_supply_c), np.float64(round(t.chillers_on)), np.float64(1e9),
                        np.float64(0.0), np.float64(t.tank_temp_c))


def sensed_boundary(t: TelemetryV2, context: ControllerContextV2) -> PlantBoundary:
    """The boundary as the telemetry reports it: the zones' load (metered or the air side's estimate), the
    weather, the chillers available (reported as a fraction), every fan unit alive (no telemetry says otherwise)."""
    n = context.n_chillers
    available = np.clip(t.chillers_available * n - np.arange(n), 0.0, 1.0)  # a ramping chiller stays partial
    return PlantBoundary(it_load_kw(t, context), np.float64(t.dry_bulb_c), np.float64(t.wet_bulb_c), available,
                         np.ones(context.n_zones))


@dataclass
class ImitationFeatures:
    """The controller's estimator and features (module docstring, steps 1–2); shared by the controller and the
    training loop, so what the network is trained on is what it is run on."""

    features: FeatureBuilderV2 = field(default_factory=FeatureBuilderV2)
    context: ControllerContextV2 = field(init=False)
    plant: PlantV2Config = field(init=False)
    """The nameplate plant (the model the airflow fit adjusts)."""
    identifier: AirflowIdentifier = field(init=False)
    previous: NDArray[np.float64] = field(init=False)
    """The last parameters chosen (physical units): a feature of the next step."""

    def reset(self, context: ControllerContextV2) -> None:
        if context.nameplate is None:
            raise ValueError("the imitation controller needs ControllerContextV2.nameplate (its plant model)")
        self.context, self.plant = context, context.nameplate
        self.identifier = AirflowIdentifier.from_survey(self.plant, context.airflow)
        self.features.reset(context)
        self.previous = start_parameters(self.plant)
        self._last: tuple[PlantV2State, Any, PlantBoundary] | None = None

    def observe(self, telemetry: NDArray[np.floating]) -> tuple[TelemetryV2, NDArray[np.float64]]:
        """Fit the airflow to this reading (the previous step's outcome) and return the parsed telemetry and the
        policy's features."""
        t = TelemetryV2.parse(telemetry, self.context.n_zones)
        if self._last is not None:
            self.identifier.update(*self._last, self.context.dt_s, np.asarray(t.inlet_c, dtype=np.float64))
        fitted = self.identifier.plant()
        need = self.fan_need(t, fitted)
        airflow = [float(fitted.zone_bypass_fraction.mean()), float(fitted.zone_bypass_fraction.max()),
                   float(fitted.zone_bypass_fraction.min()), float(fitted.zone_min_recirculation.mean()),
                   float(fitted.zone_min_recirculation.max()), float(need.max()), float(need.mean())]
        base = self.features(t, normalise_parameters(self.previous, self.plant))
        n_base = len(FEATURE_NAMES_V2)
        return t, np.concatenate([base[:n_base], airflow, base[n_base:]])

    def fan_need(self, t: TelemetryV2, plant: PlantV2Config) -> NDArray[np.float64]:
        """Each zone's fan speed at margin 1 on ``plant``: its measured servers' air over what reaches them."""
        return server_airflow_kg_s(it_load_kw(t, self.context), plant) / (
            1.0 - plant.zone_bypass_fraction) / self.context.crah_max_airflow_kg_s

    def actuate(self, u: NDArray[np.floating], t: TelemetryV2) -> NDArray[np.float32]:
        """The set-points of physical parameters ``u`` (fans matched through the fitted airflow); remembered for
        the next fit."""
        u = np.clip(np.asarray(u, dtype=np.float64), *parameter_ranges(self.plant).T)
        fitted = self.identifier.plant()
        action = parameter_setpoints(u, server_airflow_kg_s(it_load_kw(t, self.context), fitted), fitted)
        self.record(action, t)
        self.previous = u
        return action

    def record(self, action: NDArray[np.floating], t: TelemetryV2) -> None:
        """Remember the step about to be played (sensed state, the control, the sensed boundary) for the next fit."""
        control = decode_setpoints(action, self.context.n_zones, self.context.n_chillers)
        self._last = (sensed_state(t, self.context.n_chillers), control, sensed_boundary(t, self.context))


def shipped_policy_imitation() -> NumpyPolicy:
    path = resources.files("dcops.agents.cooling").joinpath(WEIGHTS_FILE)
    with path.open("rb") as handle:
        return NumpyPolicy.from_npz(handle, N_FEATURES_IMITATION, N_PARAMETERS)


@dataclass
class ImitationControllerV2:
    """The controller of the module docstring behind the v2 controller protocol (``reset``, ``act``).

    :param policy: a :class:`NumpyPolicy` with :data:`N_FEATURES_IMITATION` inputs and 8 outputs; None loads the
        shipped weights.
    :param shield_inlet_c: at a reported inlet this warm (°C) the family-tuned rule plays the step (``inf``: no
        shield).
    """

    policy: NumpyPolicy | None = None
    name: str = "imitation_v2"
    shield_inlet_c: float = SHIELD_INLET_C

    def __post_init__(self) -> None:
        if self.policy is None:
            self.policy = shipped_policy_imitation()
        self.estimator = ImitationFeatures()
        self.shield = RuleV2Controller.tuned("eval_family_v1")

    @classmethod
    def from_file(cls, path: str | Path) -> ImitationControllerV2:
        record = Path(path).with_suffix(".json")
        shield = json.loads(record.read_text()).get("shield_inlet_c", SHIELD_INLET_C) if record.is_file() else (
            SHIELD_INLET_C)
        return cls(NumpyPolicy.from_npz(path, N_FEATURES_IMITATION, N_PARAMETERS), shield_inlet_c=float(shield))

    def reset(self, context: ControllerContextV2) -> None:
        self.estimator.reset(context)
        self.shield.reset(context)

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        """The step's set-points. On a shield step the rule's set-points are played and recorded for the airflow
        fit, and the network's unplayed parameters still become its next "previous parameters" feature (as the
        PPO controller's last action does)."""
        assert self.policy is not None
        t, features = self.estimator.observe(telemetry)
        fallback = self.shield.act(telemetry)  # every step, so the rule's own state stays current
        u = physical_parameters(self.policy.act(features), self.estimator.plant)
        if float(np.max(t.inlet_c)) >= self.shield_inlet_c:
            self.estimator.record(fallback, t)
            self.estimator.previous = u
            return fallback
        return self.estimator.actuate(u, t)
