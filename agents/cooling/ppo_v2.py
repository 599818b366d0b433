"""The PPO cooling controller for plant v2: a learned supervisor that sets the tuned rule's set-points every step.

The policy was trained with stable-baselines3 PPO (``dcops train-cooling-v2``, :mod:`dcops.training.cooling.ppo_v2`)
and exported to ``weights/ppo_cooling_v2.npz`` (arrays only, read with ``np.load(allow_pickle=False)``) and
``weights/ppo_cooling_v2.json`` (the recipe, seeds, steps, wall time, versions, validation figures). The runtime
needs those files and numpy; ``ppo_cooling_v2.zip`` and ``ppo_cooling_v2_vecnormalize.pkl`` beside them are SB3's
own checkpoint and normalisation statistics for users of SB3 (:mod:`dcops.training.cooling.sb3_v2`).

**Architecture.** Why: the tuned plant v2 rule (:mod:`dcops.agents.cooling.rule_v2`) already knows how to run every
control — airflow matched to the load with an inlet trim, chilled-water and condenser-water reset, staging by
load, the pump by ΔT, the trip response. What a fixed rule cannot do is move its set-points with the hour, the
weather and prices to come, the state of the loop, the tank and the faults. So the policy chooses, every control
step, the set-points an operator would otherwise fix once, and the rule does the rest:

1. :class:`FeatureBuilderV2` reduces the *reported* telemetry (``dcops.physics.v2.interface``) over zones into
   :data:`FEATURE_NAMES_V2` (so the same weights run 1 to N zones), with what the operator knows of the task
   (load meters or not, a tank or not, the objective) and the policy's previous action.
2. :class:`~dcops.agents.cooling.ppo.NumpyPolicy` (shared with plant v0's controller): frozen ``VecNormalize``
   statistics, the actor's tanh MLP, the Gaussian's mean clipped to [−1, 1].
3. :class:`SupervisorV2`: the actions to the rule's parameters (:data:`ACTION_RANGES`, affine) and the tank flow;
   the rule — with the evaluation family's tuned staging, trip response, economiser settings and winter mode (its
   winter set-points moved with the policy's), its price-driven tank rule off (the policy decides the tank) —
   turns them into the set-point vector.

At the family-tuned rule's parameters (and no tank flow) the controller *is* that rule; training starts there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.ppo import NumpyPolicy
from dcops.agents.cooling.rule_v2 import ControllerContextV2, RuleV2Controller, it_load_kw
from dcops.physics.v2.interface import PLANT_SETPOINTS, TelemetryV2

FEATURE_NAMES_V2: tuple[str, ...] = (
    "inlet_max_c", "inlet_mean_c", "inlet_min_c", "return_max_c", "return_mean_c", "supply_mean_c",
    "load_mean", "load_estimate_mean", "load_estimate_max", "fan_speed_mean",
    "chw_supply_c", "chw_return_c", "cw_supply_c", "chillers_available", "chillers_on_fraction",
    "economiser_fraction", "tower_fan_speed", "chw_pump_speed",
    "dry_bulb_c", "wet_bulb_c", "wet_bulb_1h_c", "wet_bulb_3h_c",
    "carbon_kg_per_kwh", "price_per_kwh", "price_1h_per_kwh", "price_3h_per_kwh", "load_1h_fraction",
    "load_3h_fraction", "hour_sin", "hour_cos", "cooling_over_design_it",
    "has_load_telemetry", "has_tank", "tank_minus_return_k", "objective_cost", "objective_carbon",
    "inlet_max_change_k", "chw_supply_change_k", "inlet_minus_supply_max_k",
)
"""The policy's inputs before the previous action (reported values, °C, fractions, $/kWh, kg/kWh)."""
ACTION_RANGES: dict[str, tuple[float, float]] = {
    "supply_c": (15.0, 27.0),
    "airflow_margin": (0.6, 1.4),
    "inlet_target_c": (23.0, 27.5),
    "chw_margin_k": (0.0, 8.0),
    "tower_approach_k": (2.0, 15.0),
    "chw_delta_t_k": (4.0, 15.0),
    "tank_flow": (-1.0, 1.0),
}
"""Each action's physical range: the rule's parameter it sets (or the tank flow), affine in [−1, 1]."""
ACTION_NAMES_V2 = tuple(ACTION_RANGES)
N_ACTIONS_V2 = len(ACTION_NAMES_V2)
N_FEATURES_V2 = len(FEATURE_NAMES_V2) + N_ACTIONS_V2
BASE_RULE = "eval_family_v1"
"""The tuned rule the supervisor drives (its staging, trip response and economiser settings)."""
TRAINED_DT_S = 300.0
SHIELD_INLET_C = 30.0
"""The reported inlet (°C) at which :class:`PPOControllerV2` hands the step to the rule (its **Shield**); chosen
on the validation seeds by ``dcops.training.cooling.ppo_v2.choose_shield``."""

WEIGHTS_PACKAGE = "dcops.agents.cooling"
WEIGHTS_NPZ_V2 = "weights/ppo_cooling_v2.npz"
WEIGHTS_JSON_V2 = "weights/ppo_cooling_v2.json"
_TANK_INDEX = PLANT_SETPOINTS.index("tank_flow")


def physical_action(action: NDArray[np.floating]) -> dict[str, float]:
    """The physical values of a normalised action (each clipped to [−1, 1] first)."""
    a = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
    return {name: low + (float(x) + 1.0) * 0.5 * (high - low)
            for (name, (low, high)), x in zip(ACTION_RANGES.items(), a, strict=True)}


def normalised_action(values: dict[str, float]) -> NDArray[np.float64]:
    """The normalised action of physical values (the inverse of :func:`physical_action` inside the ranges)."""
    return np.array([2.0 * (values[name] - low) / (high - low) - 1.0 for name, (low, high) in ACTION_RANGES.items()])


def base_rule() -> RuleV2Controller:
    """The rule the supervisor drives: the family-tuned one with its price-driven tank rule off (the policy sets
    the tank flow itself). Its winter mode stays on: the supervisor moves the winter set-points with the policy's
    (:class:`SupervisorV2`), so at the rule's action the controller is the whole family rule, winter included."""
    return replace(RuleV2Controller.tuned(BASE_RULE), tank_charge_price=-np.inf, tank_discharge_price=np.inf,
                   name="ppo_v2")


def rule_action() -> NDArray[np.float64]:
    """The normalised action at which the supervisor reproduces the base rule (no tank flow)."""
    rule = base_rule()
    return normalised_action({**{name: getattr(rule, name) for name in ACTION_NAMES_V2[:-1]}, "tank_flow": 0.0})


class FeatureBuilderV2:
    """Reported telemetry (and the previous action) to the policy's features (module doc). Stateful: it keeps the
    previous step's max inlet and chilled-water supply; call :meth:`reset` at the start of each episode."""

    def reset(self, context: ControllerContextV2) -> None:
        self.context = context
        self._previous: tuple[float, float] | None = None
        objective = context.objective
        self._task = [float(context.load_telemetry), float(context.has_tank), float(objective == "cost"),
                      float(objective == "carbon")]

    def __call__(self, t: TelemetryV2, previous_action: NDArray[np.floating]) -> NDArray[np.float64]:
        ctx = self.context
        n = ctx.n_zones
        design = ctx.zone_design_it_kw
        estimate = it_load_kw(t, ctx) / design
        inlet_max = float(t.inlet_c.max())
        current = (inlet_max, t.chw_supply_c)
        previous = self._previous if self._previous is not None else current
        self._previous = current
        has_load, has_tank, cost, carbon = self._task
        return np.array([
            inlet_max, float(t.inlet_c.sum()) / n, float(t.inlet_c.min()), float(t.return_c.max()),
            float(t.return_c.sum()) / n, float(t.supply_c.sum()) / n,
            float((t.load_fraction * design).sum() / design.sum()), float((estimate * design).sum() / design.sum()),
            float(estimate.max()), float(t.fan_speed.sum()) / n,
            t.chw_supply_c, t.chw_return_c, t.cw_supply_c, t.chillers_available, t.chillers_on / ctx.n_chillers,
            t.economiser_fraction, t.tower_fan_speed, t.chw_pump_speed,
            t.dry_bulb_c, t.wet_bulb_c, t.wet_bulb_1h_c, t.wet_bulb_3h_c,
            t.carbon_kg_per_kwh, t.price_per_kwh, t.price_1h_per_kwh, t.price_3h_per_kwh, t.load_1h_fraction,
            t.load_3h_fraction, t.hour_sin, t.hour_cos, t.cooling_over_design_it,
            has_load, has_tank, (t.tank_temp_c - t.chw_return_c) if has_tank else 0.0, cost, carbon,
            inlet_max - previous[0], t.chw_supply_c - previous[1], float((t.inlet_c - t.supply_c).max()),
            *np.asarray(previous_action, dtype=np.float64).tolist(),
        ])


class SupervisorV2:
    """The policy's actions to the plant's set-point vector through the base rule (module doc, step 3).

    The rule's winter mode (supply air ``free_supply_c`` and airflow ``free_airflow_margin`` while the wet-bulb is
    below ``free_wet_bulb_c``) switches its set-points discontinuously, which a policy's mean cannot start from. So
    the policy's supply air and airflow margin set both modes at once: the winter values keep the tuned rule's
    offsets from the summer ones (−4 K and −0.05 for the family rule), and the policy, which sees the wet-bulb,
    moves them with the weather. Why, measured: a supervisor with the winter mode off started below the family
    rule in every January case and its PPO never learnt the winter savings (−2.6 … −11.5 % per January case)."""

    def reset(self, context: ControllerContextV2) -> None:
        self.rule = base_rule()
        self.rule.reset(context)
        self.winter_supply_offset_k = self.rule.free_supply_c - self.rule.supply_c
        self.winter_airflow_offset = self.rule.free_airflow_margin - self.rule.airflow_margin

    def setpoints(self, action: NDArray[np.floating], telemetry: NDArray[np.floating],
                  rule_tank: bool = False) -> NDArray[np.float32]:
        """The set-points of ``action``; the tank flow is the action's, or with ``rule_tank`` the base rule's own
        (it discharges the tank while a chiller is lost; its price rules are off)."""
        values = physical_action(action)
        for name in ACTION_NAMES_V2[:-1]:
            setattr(self.rule, name, values[name])
        self.rule.free_supply_c = values["supply_c"] + self.winter_supply_offset_k
        self.rule.free_airflow_margin = values["airflow_margin"] + self.winter_airflow_offset
        setpoints = self.rule.act(telemetry)
        if not rule_tank:
            setpoints[-len(PLANT_SETPOINTS) + _TANK_INDEX] = values["tank_flow"]
        return setpoints


@cache
def shipped_policy_v2() -> NumpyPolicy:
    """The committed plant v2 policy (package data), loaded once."""
    ref = resources.files(WEIGHTS_PACKAGE).joinpath(WEIGHTS_NPZ_V2)
    if not ref.is_file():
        raise FileNotFoundError(f"no shipped plant v2 PPO weights at {WEIGHTS_PACKAGE}/{WEIGHTS_NPZ_V2}; "
                                "run `dcops train-cooling-v2` to make them")
    with ref.open("rb") as handle:
        return NumpyPolicy.from_npz(handle, N_FEATURES_V2, N_ACTIONS_V2)


def shipped_metadata_v2() -> dict[str, Any]:
    """Recipe, seeds, steps, wall time, versions and validation figures of the shipped policy."""
    ref = resources.files(WEIGHTS_PACKAGE).joinpath(WEIGHTS_JSON_V2)
    return json.loads(ref.read_text()) if ref.is_file() else {}


@dataclass
class PPOControllerV2:
    """The plant v2 PPO controller behind the v2 controller protocol (``reset(ControllerContextV2)``, ``act``).

    **Shield**: in a step where a *reported* inlet is at or above ``shield_inlet_c``, the controller plays the
    base rule (:func:`base_rule`) instead of the policy: its set-points at :func:`rule_action`, its own tank
    decision included (full discharge while a chiller is lost), so near the 32 °C limit the family-tuned rule is
    in charge (a fallback to a known controller, as the shielding literature calls it). The policy still sees its
    own last action as usual. The shield is a run-time layer only: the training environment has none, so ``dcops
    train-cooling-v2`` reproduces the shipped weights, and SB3's ``predict`` (:mod:`dcops.training.cooling.sb3_v2`)
    gives the unshielded policy's actions.

    :param policy: a :class:`NumpyPolicy` with :data:`N_FEATURES_V2` inputs; None loads the shipped weights.
    :param shield_inlet_c: the shield's threshold, °C (``inf``: no shield); :meth:`from_file` reads the one
        chosen for those weights from the ``.json`` beside them.
    """

    policy: NumpyPolicy | None = None
    name: str = "ppo_v2"
    shield_inlet_c: float = SHIELD_INLET_C

    def __post_init__(self) -> None:
        if self.policy is None:
            self.policy = shipped_policy_v2()
        self.features = FeatureBuilderV2()
        self.supervisor = SupervisorV2()

    @classmethod
    def from_file(cls, path: str | Path) -> PPOControllerV2:
        """The policy in ``path`` (an ``.npz``) with the shield its record chose (``shield`` in the ``.json``
        beside it, written by ``dcops train-cooling-v2``), or :data:`SHIELD_INLET_C` when it has none."""
        record = Path(path).with_suffix(".json")
        shield = json.loads(record.read_text()).get("shield", {}) if record.is_file() else {}
        return cls(NumpyPolicy.from_npz(path, N_FEATURES_V2, N_ACTIONS_V2),
                   shield_inlet_c=float(shield.get("shield_inlet_c", SHIELD_INLET_C)))

    def reset(self, context: ControllerContextV2) -> None:
        if abs(context.dt_s - TRAINED_DT_S) > 1e-6:
            raise ValueError(f"the plant v2 PPO policy was trained at {TRAINED_DT_S:.0f} s control steps; "
                             f"this plant steps every {context.dt_s:.0f} s")
        self.context = context
        self.features.reset(context)
        self.supervisor.reset(context)
        self.last_action = rule_action()

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        assert self.policy is not None
        t = TelemetryV2.parse(telemetry, self.context.n_zones)
        action = self.policy.act(self.features(t, self.last_action))
        self.last_action = action
        if float(t.inlet_c.max()) >= self.shield_inlet_c:
            return self.supervisor.setpoints(rule_action(), telemetry, rule_tank=True)
        return self.supervisor.setpoints(action, telemetry)
