"""The tuned rule for plant v2: how a competent operator runs every plant-side control.

Rules (each parameter a number an operator would set; ``dcops tune-rule-v2`` grid-searches them on tuning seeds):

- **Supply air** at ``supply_c`` in every zone; **chilled water** as warm as that allows:
  ``supply_c − design coil approach − chw_margin_k`` (warmer water: higher chiller COP, more economiser hours).
- **Airflow** matched to the reported IT load × ``airflow_margin``, plus a proportional trim of ``fan_gain`` per
  kelvin that a zone's reported inlet sits above ``inlet_target_c`` (the load telemetry is noisy, so open-loop
  matching alone is not safe).
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
from dcops.physics.v2.types import PlantV2Config

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

    @property
    def n_zones(self) -> int:
        return int(self.zone_design_it_kw.size)

    @classmethod
    def from_plant(cls, plant: PlantV2Config, zone_weights: Any, dt_s: float) -> ControllerContextV2:
        return cls(np.asarray(plant.zone_design_it_kw, dtype=np.float64), np.asarray(zone_weights, dtype=np.float64),
                   np.asarray(plant.crah_max_airflow_kg_s, dtype=np.float64), plant.server_delta_t_k,
                   plant.n_chillers, plant.chiller.reference_capacity_kw, plant.chw_design_flow_kg_s, dt_s)


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
    name: str = "rule_v2"

    def reset(self, context: ControllerContextV2) -> None:
        self.context = context
        self._tower = 0.7
        self._staged = float(context.n_chillers)

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        ctx = self.context
        t = TelemetryV2.parse(telemetry, ctx.n_zones)
        it_kw = t.load_fraction * ctx.zone_design_it_kw
        server_air = it_kw / (CP_AIR_KJ_PER_KG_K * ctx.server_delta_t_k)
        fans = self.airflow_margin * server_air / ctx.crah_max_airflow_kg_s
        fans = fans + self.fan_gain * np.maximum(t.inlet_c - self.inlet_target_c, 0.0)
        fans = np.clip(fans, *FAN_SPEED_RANGE)
        supply = np.full(ctx.n_zones, self.supply_c)
        chw = self.supply_c - COIL_DESIGN_APPROACH_K - self.chw_margin_k

        # Condenser-water reset: integral action toward the target.
        free_cooling = t.economiser_fraction >= 0.999
        target = t.wet_bulb_c + self.tower_approach_k
        if free_cooling:
            target = max(target, chw - HX_APPROACH_K - self.econ_margin_k)
        self._tower = float(np.clip(self._tower + 0.05 * (t.cw_supply_c - target), *TOWER_FAN_RANGE))

        load_kw = 1.05 * float(it_kw.sum())
        chiller_kw = load_kw * (1.0 - t.economiser_fraction)
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
                                float(np.clip(pump, *PUMP_SPEED_RANGE)))

    @classmethod
    def tuned(cls, family: str = "eval_family_v1") -> RuleV2Controller:
        """The rule with the parameters ``dcops tune-rule-v2`` found for ``family`` (defaults otherwise)."""
        return cls(**_tuned().get(family, {}).get("params", {}))

    def parameters(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "name"}


@cache
def _tuned() -> dict[str, Any]:
    path = resources.files("dcops.agents.cooling").joinpath(TUNED_FILE)
    return json.loads(path.read_text())["families"] if path.is_file() else {}


def controller_context_v2(env: Any) -> ControllerContextV2:
    """The nameplate facts of a v1 cooling env's plant."""
    spec = env.unwrapped.task
    return ControllerContextV2.from_plant(spec.plant, spec.zone_weights, spec.dt_s)


def run_controller_v2(env: Any, controller: Any, seed: int) -> dict[str, Any]:
    """Play one episode of a v1 cooling env with a v2 controller; return the final info's score and summary."""
    observation, _ = env.reset(seed=seed)
    controller.reset(controller_context_v2(env))
    done = False
    info: dict[str, Any] = {}
    while not done:
        observation, _, done, _, info = env.step(controller.act(observation))
    return {"score": float(info["score"]), **info["summary"]}
