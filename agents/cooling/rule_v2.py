"""The tuned rule for plant v2: how a competent operator runs every plant-side control.

Rules (each parameter a number an operator would set; ``dcops tune-rule-v2`` grid-searches them on tuning seeds):

- **Supply air** at ``supply_c`` in every zone; **chilled water** as warm as that allows:
  ``supply_c − design coil approach − chw_margin_k`` (warmer water: higher chiller COP, more economiser hours;
  with per-zone supply set-points, as the PID's, from the coldest).
- **Winter mode**: while the outdoor wet-bulb is below ``free_wet_bulb_c`` (±0.5 K of hysteresis), when the
  tower alone can make the water, supply air at ``free_supply_c`` with airflow ``free_airflow_margin``: cold air
  costs nothing on free cooling and less of it saves fan power.
- **Airflow** matched to the IT load × ``airflow_margin``, plus a proportional trim of ``fan_gain`` per kelvin
  that a zone's reported inlet sits above ``inlet_target_c`` (the load telemetry is noisy and the nameplate
  airflow is not the truth, so open-loop matching alone is not safe). The IT load is the reported one where the
  hall has load telemetry; where it has none, the air-side estimate ``m·c_p·(T_return − T_supply)`` from the
  nameplate airflow at the current fan speed (what a BMS computes from its air sensors).
- **Condenser-water reset**: the tower fan (integral action on the reported condenser water) holds it at
  wet-bulb + ``tower_approach_k`` while chillers carry load (a wider approach saves fan power and costs lift);
  while the economiser carries all of it, only as cold as full free cooling needs (``econ_margin_k`` below the
  chilled-water set-point less the HX approach), so the fan is not run for cold water nobody uses.
- **Staging by chiller load**: the estimated plant load (reported IT × 1.05 for fans and pumps) less what the
  economiser carried last step, over one chiller's capacity; stage up when the running units would exceed
  ``stage_up_plr``, down when one fewer would stay below ``stage_down_plr``, none while the economiser carries
  everything (the plant's minimum run and off times apply on top).
- **Chilled-water pump** sized for a ``chw_delta_t_k`` rise at the estimated load.
- **Economiser** always enabled (it carries what the tower water can).
- **Fault response**: with a chiller lost, stage every available unit and drop the chilled water to
  ``fault_chw_c`` so the loop's mass is pre-cooled while capacity lasts.
- **Storage** (where the plant has a tank): discharge at full flow while a chiller is lost, and at
  ``tank_discharge_flow`` while the price is at or above ``tank_discharge_price``; otherwise, while the price is
  at or below ``tank_charge_price`` and the tank is warmer than ``tank_target_c``, charge it at
  ``tank_charge_flow`` with the chilled water no warmer than the target less 1 K.

Everything after the air side (supply air and airflow) is :meth:`RuleV2Controller.plant_setpoints`, which the plant
v2 PID (:mod:`dcops.agents.cooling.pid_v2`) calls under its own air-side loops.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.physics.constants import CP_AIR_KJ_PER_KG_K, CP_WATER_KJ_PER_KG_K
from dcops.physics.v2.interface import (
    CHW_SETPOINT_RANGE_C,
    FAN_SPEED_RANGE,
    PUMP_SPEED_RANGE,
    TOWER_FAN_RANGE,
    TelemetryV2,
    encode_setpoints,
)
from dcops.physics.v2.types import AirflowUncertainty, PlantV2Config

COIL_DESIGN_APPROACH_K = 3.0
"""The coils' design approach (supply air over chilled water at design flows), from the nameplate."""
HX_APPROACH_K = 1.5
"""The economiser heat exchanger's approach, from the nameplate."""
TUNED_FILE = "rule_v2_tuned.json"


@dataclass(frozen=True)
class ControllerContextV2:
    """Nameplate facts of a v2 plant an operator knows (never the live truth)."""

    zone_design_it_kw: NDArray[np.float64]
    zone_weights: NDArray[np.float64]
    crah_max_airflow_kg_s: NDArray[np.float64]
    server_delta_t_k: float
    n_chillers: int
    chiller_capacity_kw: float
    chw_design_flow_kg_s: float
    dt_s: float
    load_telemetry: bool = True
    tank_max_flow_kg_s: float = 0.0
    objective: str = "energy"
    nameplate: PlantV2Config | None = None
    """The whole nameplate plant (design documents: sizes, curves, the nameplate's own bypass and recirculation,
    never the episode's drawn ones), for a controller that carries a model of its plant; None where unknown."""
    airflow: AirflowUncertainty | None = None
    """The task's published airflow survey: the ranges each zone's bypass and recirculation are drawn from (None:
    the nameplate is the truth)."""

    @property
    def n_zones(self) -> int:
        return int(self.zone_design_it_kw.size)

    @property
    def has_tank(self) -> bool:
        return self.tank_max_flow_kg_s > 0.0

    @classmethod
    def from_plant(cls, plant: PlantV2Config, zone_weights: Any, dt_s: float, load_telemetry: bool = True,
                   objective: str = "energy", airflow: AirflowUncertainty | None = None) -> ControllerContextV2:
        """The nameplate of ``plant`` (pass the task's nameplate, never an episode's drawn plant), the airflow
        survey and what the operator is asked to minimise."""
        tank = plant.tank.max_flow_kg_s if plant.tank.installed else 0.0
        return cls(np.asarray(plant.zone_design_it_kw, dtype=np.float64), np.asarray(zone_weights, dtype=np.float64),
                   np.asarray(plant.crah_max_airflow_kg_s, dtype=np.float64), plant.server_delta_t_k,
                   plant.n_chillers, plant.chiller.reference_capacity_kw, plant.chw_design_flow_kg_s, dt_s,
                   load_telemetry, tank, objective, plant, airflow)


@dataclass
class RuleV2Controller:
    """The plant v2 rule (module docstring). Parameters are operator set-points; state is the tower integrator."""

    supply_c: float = 22.0
    chw_margin_k: float = 1.0
    airflow_margin: float = 1.05
    inlet_target_c: float = 25.5
    fan_gain: float = 0.1
    tower_approach_k: float = 4.0
    stage_up_plr: float = 0.9
    stage_down_plr: float = 0.6
    chw_delta_t_k: float = 6.0
    econ_margin_k: float = 1.0
    fault_chw_c: float = 7.0
    free_wet_bulb_c: float = -100.0
    free_supply_c: float = 18.0
    free_airflow_margin: float = 0.8
    tank_target_c: float = 8.0
    tank_charge_price: float = 0.10
    tank_discharge_price: float = 0.20
    tank_charge_flow: float = 0.5
    tank_discharge_flow: float = 0.5
    name: str = "rule_v2"

    def reset(self, context: ControllerContextV2) -> None:
        self.context = context
        self._tower = 0.7
        self._staged = float(context.n_chillers)
        self._winter = False

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        ctx = self.context
        t = TelemetryV2.parse(telemetry, ctx.n_zones)
        it_kw = it_load_kw(t, ctx)
        if self._winter:
            self._winter = t.wet_bulb_c < self.free_wet_bulb_c + 0.5
        else:
            self._winter = t.wet_bulb_c < self.free_wet_bulb_c - 0.5
        supply_c = self.free_supply_c if self._winter else self.supply_c
        margin = self.free_airflow_margin if self._winter else self.airflow_margin
        server_air = it_kw / (CP_AIR_KJ_PER_KG_K * ctx.server_delta_t_k)
        fans = margin * server_air / ctx.crah_max_airflow_kg_s
        fans = fans + self.fan_gain * np.maximum(t.inlet_c - self.inlet_target_c, 0.0)
        fans = np.clip(fans, *FAN_SPEED_RANGE)
        return self.plant_setpoints(t, it_kw, fans, np.full(ctx.n_zones, supply_c))

    def plant_setpoints(self, t: TelemetryV2, it_kw: NDArray[np.float64], fans: NDArray[np.float64],
                        supply: NDArray[np.float64]) -> NDArray[np.float32]:
        """The set-point vector for the air side ``fans`` and ``supply`` (°C) chosen by this rule or by another
        air-side controller (:class:`~dcops.agents.cooling.pid_v2.PIDV2Controller`), with every plant-side control
        of the rule: chilled water reset from the coldest supply set-point, condenser water, storage, staging,
        pump and the chiller-trip response (module docstring). ``it_kw``: :func:`it_load_kw` of ``t``."""
        ctx = self.context
        chw = float(supply.min()) - COIL_DESIGN_APPROACH_K - self.chw_margin_k

        # Condenser-water reset: integral action toward the target.
        free_cooling = t.economiser_fraction >= 0.999
        target = t.wet_bulb_c + self.tower_approach_k
        if free_cooling:
            target = max(target, chw - HX_APPROACH_K - self.econ_margin_k)
        self._tower = float(np.clip(self._tower + 0.05 * (t.cw_supply_c - target), *TOWER_FAN_RANGE))

        tank_flow, charge_kw = self._tank(t)
        if tank_flow > 0.0:
            chw = min(chw, self.tank_target_c - 1.0)
        load_kw = 1.05 * float(it_kw.sum())
        chiller_kw = (load_kw + charge_kw) * (1.0 - t.economiser_fraction)
        per_unit = ctx.chiller_capacity_kw
        staged = self._staged
        if free_cooling:
            staged = 0.0
        elif chiller_kw > self.stage_up_plr * staged * per_unit:
            staged = min(staged + 1.0, float(ctx.n_chillers))
        elif staged > 1 and chiller_kw < self.stage_down_plr * (staged - 1.0) * per_unit:
            staged -= 1.0
        if t.chillers_available < 1.0 - 1e-6 and not free_cooling:
            staged = float(ctx.n_chillers)
            chw = self.fault_chw_c
        self._staged = staged
        pump = load_kw / (CP_WATER_KJ_PER_KG_K * self.chw_delta_t_k) / ctx.chw_design_flow_kg_s
        return encode_setpoints(fans, supply, float(np.clip(chw, *CHW_SETPOINT_RANGE_C)), True, self._tower, staged,
                                float(np.clip(pump, *PUMP_SPEED_RANGE)), tank_flow)

    def _tank(self, t: TelemetryV2) -> tuple[float, float]:
        """The tank flow (module docstring) and the charging load it adds, kW."""
        ctx = self.context
        if not ctx.has_tank:
            return 0.0, 0.0
        if t.tank_temp_c < t.chw_return_c - 0.5 and (
                t.chillers_available < 1.0 - 1e-6 or t.price_per_kwh >= self.tank_discharge_price):
            return (-1.0 if t.chillers_available < 1.0 - 1e-6 else -self.tank_discharge_flow), 0.0
        if t.price_per_kwh <= self.tank_charge_price and t.tank_temp_c > self.tank_target_c:
            span = max(t.tank_temp_c - (self.tank_target_c - 1.0), 0.0)
            return self.tank_charge_flow, self.tank_charge_flow * ctx.tank_max_flow_kg_s * CP_WATER_KJ_PER_KG_K * span
        return 0.0, 0.0

    @classmethod
    def tuned(cls, target: str = "eval_family_v1") -> RuleV2Controller:
        """The rule with the parameters ``dcops tune-rule-v2`` found for ``target`` (a v1 cooling task id,
        ``eval_family_v1``, or one case of the family, ``eval_family_v1/<site>/<season>/<fault>``: a ceiling for the
        rule's structure, since it knows its case in advance).

        :raises KeyError: for a target that was never tuned (the message lists the tuned ones)."""
        tuned = _tuned()
        if target not in tuned:
            raise KeyError(f"no tuned plant v2 rule for {target!r}; tuned: {', '.join(sorted(tuned))}")
        return cls(**tuned[target]["params"])

    def parameters(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "name"}


def it_load_kw(t: TelemetryV2, context: ControllerContextV2) -> NDArray[np.float64]:
    """The IT load per zone, kW: reported, or estimated from the air side where the hall has no meters
    (``m·c_p·(T_return − T_supply)`` with the nameplate airflow at the current fan speed)."""
    if context.load_telemetry:
        return t.load_fraction * context.zone_design_it_kw
    airflow = t.fan_speed * context.crah_max_airflow_kg_s
    return np.maximum(airflow * CP_AIR_KJ_PER_KG_K * (t.return_c - t.supply_c), 0.0)


@cache
def _tuned() -> dict[str, Any]:
    path = resources.files("dcops.agents.cooling").joinpath(TUNED_FILE)
    return json.loads(path.read_text())["families"] if path.is_file() else {}


def controller_context_v2(env: Any) -> ControllerContextV2:
    """The nameplate facts of a v1 cooling env's plant (the task's nameplate plant, never the episode's truth)."""
    spec = env.unwrapped.task
    return ControllerContextV2.from_plant(spec.plant, spec.zone_weights, spec.dt_s, spec.load_telemetry,
                                          spec.objective, spec.airflow)


def run_controller_v2(env: Any, controller: Any, seed: int) -> dict[str, Any]:
    """Play one episode of a v1 cooling env with a v2 controller; return the final info's score and summary."""
    observation, _ = env.reset(seed=seed)
    controller.reset(controller_context_v2(env))
    done = False
    info: dict[str, Any] = {}
    while not done:
        observation, _, done, _, info = env.step(controller.act(observation))
    return {"score": float(info["score"]), **info["summary"]}
