"""How the cluster episode gets plant set-points each physics step: the plant-controller protocol and adapters.

The cluster layer does not import ``dcops.agents``; ``dcops.env`` hands it one of these:

- :class:`TelemetryController` wraps any cooling controller of ``dcops.agents.cooling`` (``reset(context)``,
  ``act(telemetry) -> set-points``): each step it builds the telemetry vector exactly as the cooling tasks do
  (reported sensor values, ``dcops.physics.interface``), calls ``act`` and decodes the set-points.
- :class:`RuleFastPath` makes the same decisions as ``RuleBasedController`` with the same parameters, bit for
  bit (the float32 round trip of telemetry and set-points included; ``tests/cluster`` checks it step by step),
  without building telemetry: with no chiller fault its set-points depend only on the IT load, which changes
  only at window boundaries and job ends, so they are computed once per window for all its steps.
- :class:`HeldSetpoints` holds set-points chosen once per window by a ``cooling`` agent.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from dcops.physics.compiled_plant import jit_available
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.faults import FaultTimeline
from dcops.physics.interface import (
    CHW_SETPOINT_RANGE_C,
    FAN_SPEED_RANGE,
    decode_setpoint_values,
    decode_setpoints,
)
from dcops.physics.plant import PlantConfig, PlantControl, PlantState

_MIN_FAN_32 = float(np.float32(FAN_SPEED_RANGE[0]))


class PlantView(Protocol):
    """What a plant controller may read of the episode that runs it (``dcops.cluster.episode.ClusterEpisode``
    is one): the plant, the fault timeline, and the reported readings a telemetry controller would see.

    Declared here so that the controllers depend on this small interface, not on the episode module (which
    imports them)."""

    plant: PlantConfig
    timeline: FaultTimeline

    def telemetry(self, k: int, it_row: NDArray[np.float64]) -> NDArray[np.float32]:
        """The cooling telemetry vector before global step ``k`` with the load ``it_row`` (kW per zone)."""
        ...

    def telemetry_values(self, k: int, it_row: NDArray[np.float64]) -> list[float]:
        """:meth:`telemetry` as Python floats (the float32 values of the vector)."""
        ...

    def reported_chw_c(self, k: int, state: PlantState) -> float:
        """The chilled-water supply temperature the sensors report before step ``k``, °C."""
        ...


class PlantController(Protocol):
    """What the episode calls: ``reset`` once, ``begin_window`` with the window's IT load (S, Z) and its first
    global step, then ``control`` before each step ``i`` of the window (0..S-1) with the plant state."""

    name: str

    def reset(self, episode: PlantView) -> None: ...

    def begin_window(self, it_kw: NDArray[np.float64], first_step: int) -> None: ...

    def control(self, i: int, state: PlantState) -> PlantControl: ...


class TelemetryController:
    """Any telemetry-in, set-points-out controller (``dcops.agents.cooling``), stepped through telemetry."""

    def __init__(self, controller: Any, context: Any) -> None:
        self.controller = controller
        self.context = context
        self.name = getattr(controller, "name", type(controller).__name__)
        # A controller that can act on Python floats (``act_values``: the telemetry's float32 values in, the
        # set-points' out; the PPO controller) is stepped without building either vector, to the same bits.
        self._act_values = getattr(controller, "act_values", None)

    def reset(self, episode: PlantView) -> None:
        self.episode = episode
        self.controller.reset(self.context)
        # A controller with a compiled form (``compiled()``: the PPO controller; None where it has none) steps the
        # episode through it when numba is there (``dcops.cluster.compiled_window``; the same bits as ``control``).
        make = getattr(self.controller, "compiled", None)
        self.compiled_actor = make() if make is not None and jit_available() else None

    def begin_window(self, it_kw: NDArray[np.float64], first_step: int) -> None:
        self._it = it_kw
        self._first = first_step

    def control(self, i: int, state: PlantState) -> PlantControl:
        episode = self.episode
        if self._act_values is not None:
            values = self._act_values(episode.telemetry_values(self._first + i, self._it[i]))
            return decode_setpoint_values(values, episode.plant.n_zones)
        telemetry = episode.telemetry(self._first + i, self._it[i])
        return decode_setpoints(self.controller.act(telemetry), episode.plant.n_zones)


class RuleFastPath:
    """``RuleBasedController``'s rules evaluated on the physics state directly (see the module docstring).

    :param params: the rule controller's parameters (``dataclasses.asdict(RuleBasedController())`` minus name).
    :param zone_weights: zone criticality weights (the triage rule starves the least critical zones).
    """

    def __init__(self, zone_weights: NDArray[np.float64] | None = None, **params: Any) -> None:
        self.supply_c = float(params.get("supply_c", 24.0))
        self.chw_margin_k = float(params.get("chw_margin_k", 1.0))
        self.airflow_margin = float(params.get("airflow_margin", 1.1))
        self.fault_chw_c = float(params.get("fault_chw_c", 5.0))
        self.fault_airflow_margin = float(params.get("fault_airflow_margin", 1.2))
        self.triage_margin_k = float(params.get("triage_margin_k", 2.0))
        self.triage_zones = int(params.get("triage_zones", 1))
        self.name = str(params.get("name", "rule"))
        self.zone_weights = None if zone_weights is None else np.asarray(zone_weights, dtype=np.float64)

    def reset(self, episode: PlantView) -> None:
        self.episode = episode
        plant = episode.plant
        z = plant.n_zones
        weights = self.zone_weights if self.zone_weights is not None else np.ones(z)
        self._design = plant.zone_design_it_kw
        self._air_cp_dt = CP_AIR_KJ_PER_KG_K * plant.server_delta_t_k
        self._max_airflow = plant.crah_max_airflow_kg_s
        self._approach = plant.coil_approach_k
        least = np.argsort(weights, kind="stable")[: self.triage_zones]
        self._triage = least[weights[least] < weights.max()] if self.triage_zones > 0 else least[:0]
        self._supply = np.full(z, float(np.float32(self.supply_c)))
        chw = float(np.clip(self.supply_c - self._approach - self.chw_margin_k, *CHW_SETPOINT_RANGE_C))
        self._chw_normal = np.asarray(float(np.float32(chw)))
        self._chw_fault = np.asarray(float(np.float32(np.clip(self.fault_chw_c, *CHW_SETPOINT_RANGE_C))))
        self._econ = np.asarray(1.0)
        # The telemetry's chillers-available fraction is float32; the rule compares it with 1 − 1e-6.
        available = (episode.timeline.chiller_available.sum(axis=1) / plant.n_chillers).astype(np.float32)
        self._fault_steps = available < 1.0 - 1e-6
        self.compiled_actor = _RuleActor(self) if jit_available() else None

    def _fans(self, server_airflow: NDArray[np.float64], margin: float) -> NDArray[np.float64]:
        # The same operations in the same order as ControllerContext.matched_fan_speed, so bits agree.
        fans = np.minimum(np.maximum(margin * server_airflow / self._max_airflow, FAN_SPEED_RANGE[0]), FAN_SPEED_RANGE[1])
        return fans.astype(np.float32).astype(np.float64)

    def begin_window(self, it_kw: NDArray[np.float64], first_step: int) -> None:
        steps = it_kw.shape[0]
        # Telemetry carries the load fraction as float32, clipped to its box [0, 2].
        load32 = np.minimum(np.maximum(it_kw / self._design, 0.0), 2.0).astype(np.float32).astype(np.float64)
        server_airflow = load32 * self._design / self._air_cp_dt
        fans_normal = self._fans(server_airflow, self.airflow_margin)
        self._fault = self._fault_steps[first_step : first_step + steps].tolist()
        self._first = first_step
        if any(self._fault):
            self._fans_fault = self._fans(server_airflow, self.fault_airflow_margin)
        # One PlantControl per run of equal loads: the load changes only where a job ends.
        changed = [True, *np.any(load32[1:] != load32[:-1], axis=1).tolist()]
        controls: list[PlantControl | None] = []
        current: PlantControl | None = None
        for i in range(steps):
            if self._fault[i]:
                controls.append(None)
                current = None
                continue
            if changed[i] or current is None:
                current = PlantControl(fans_normal[i], self._supply, self._chw_normal, self._econ)
            controls.append(current)
        self._controls = controls
        if self.compiled_actor is not None:
            self.compiled_actor.begin_window()

    def control(self, i: int, state: PlantState) -> PlantControl:
        control = self._controls[i]
        if control is not None:
            return control
        return self.fault_control(i, self.episode.reported_chw_c(self._first + i, state))

    def fault_control(self, i: int, chw_reading_c: float) -> PlantControl:
        """The fault procedure's set-points at step ``i`` of the window, given the reported chilled water (°C)."""
        fans = self._fans_fault[i].copy()
        if self._triage.size and chw_reading_c + self._approach > self.supply_c - self.triage_margin_k:
            fans[self._triage] = _MIN_FAN_32
        return PlantControl(fans, self._supply, self._chw_fault, self._econ)


class _RuleActor:
    """:class:`RuleFastPath`'s compiled actor (``dcops.cluster.compiled_window``): its set-points for the window's
    steps in turn, as a decoded set-point vector. The telemetry's chilled-water field is the reading the fault
    procedure's triage compares (``ClusterEpisode.reported_chw_c``: the same sum, clip and float32)."""

    def __init__(self, rule: RuleFastPath) -> None:
        self.rule = rule
        self._step = 0
        self._chw_field = 5 * rule.episode.plant.n_zones

    def begin_window(self) -> None:
        self._step = 0
        self._vectors: dict[int, NDArray[np.float64]] = {}  # one vector per PlantControl (a run of equal loads)

    def load_state(self) -> None:
        """Nothing to take: the rule's state is the window's set-points, made in ``begin_window``."""

    def store_state(self) -> None:
        """Nothing to hand back."""

    def act(self, telemetry: NDArray[np.float64]) -> NDArray[np.float64]:
        i, rule = self._step, self.rule
        self._step = i + 1
        control = rule._controls[i]
        if control is None:
            return _vector(rule.fault_control(i, float(telemetry[self._chw_field])))
        vector = self._vectors.get(id(control))
        if vector is None:
            vector = self._vectors[id(control)] = _vector(control)
        return vector


def _vector(control: PlantControl) -> NDArray[np.float64]:
    return np.concatenate([control.fan_speed, control.supply_setpoint_c,
                           [float(control.chw_setpoint_c), float(control.economiser_on)]])


class HeldSetpoints:
    """Set-points a ``cooling`` agent chose for the whole window (``set`` them before the window runs)."""

    name = "agent"

    def __init__(self) -> None:
        self._control: PlantControl | None = None

    def reset(self, episode: PlantView) -> None:
        self.episode = episode
        z = episode.plant.n_zones
        # Until the agent's first action: the plant's neutral mid-range operating point.
        self._control = PlantControl(np.full(z, 0.6), np.full(z, 22.0), np.asarray(14.0), np.asarray(1.0))

    def set(self, action: Any) -> None:
        """Decode and clip an action vector (``dcops.physics.interface`` layout); raise ``ValueError`` if
        malformed (the env catches it and keeps the previous set-points)."""
        self._control = decode_setpoints(action, self.episode.plant.n_zones)

    def begin_window(self, it_kw: NDArray[np.float64], first_step: int) -> None:
        return None

    def control(self, i: int, state: PlantState) -> PlantControl:
        assert self._control is not None
        return self._control
