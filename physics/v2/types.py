"""Plant v2's data: configuration, state, set-points, boundary conditions and step outputs (units in names).

The equations are in :mod:`dcops.physics.v2.plant`; the components in ``chiller``, ``tower``, ``coil`` and
``servers``. Arrays have a trailing zone axis ``(..., Z)`` for zone quantities and none for plant quantities, so
one config describes one plant or a batch alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from dcops.physics.constants import (
    AIR_DENSITY_KG_PER_M3,
    CP_AIR_KJ_PER_KG_K,
    CP_WATER_KJ_PER_KG_K,
    KW_PER_TON_REFRIGERATION,
)
from dcops.physics.plant_types import Array
from dcops.physics.v2.chiller import AHRI_CONDENSER_RANGE_K, LiftChiller
from dcops.physics.v2.coil import design_ntu
from dcops.physics.v2.servers import ServerThermalModel
from dcops.physics.v2.storage import ChilledWaterTank
from dcops.physics.v2.tower import VariableSpeedTower

NEVER_STAGED_S = 1e9
"""Stage timer of a plant that has not changed its staging yet (every change allowed)."""


@dataclass(frozen=True)
class PlantV2Config:
    """A data hall and its v2 plant. Build one with :meth:`default` (sized like plant v0's default), which sizes
    every field without a default. The fields with defaults are the same for every size:

    :param n_chillers: identical chillers.
    :param min_run_s: a chiller staged on runs at least this long before it may be staged off (30 min), and
    :param min_off_s: one staged off stays off at least this long (15 min): the compressor's anti-cycling
        timers.
    :param server_delta_t_k: air temperature rise across the servers at design, K (12 K, as plant v0's).
    :param min_recirculation: share of server inlet air that is recirculated hot air even with ample airflow.
    :param pump_min_speed: the pumps' minimum speed, fraction of design flow.
    :param hx_approach_k: the economiser heat exchanger's approach, K.
    """

    zone_design_it_kw: Array
    zone_thermal_mass_kj_per_k: Array
    zone_envelope_ua_kw_per_k: Array
    crah_max_airflow_kg_s: Array
    crah_fan_max_kw: Array
    coil_ua_design_kw_per_k: Array
    coil_air_capacity_design_kw_per_k: Array
    coil_water_capacity_design_kw_per_k: Array
    chiller: LiftChiller
    tower: VariableSpeedTower
    chw_design_flow_kg_s: float
    chw_pump_design_kw: float
    cw_flow_per_chiller_kg_s: float
    cw_pump_per_chiller_kw: float
    loop_thermal_mass_kj_per_k: float
    ups_rated_kw: float
    servers: ServerThermalModel = field(default_factory=ServerThermalModel)
    tank: ChilledWaterTank = field(default_factory=ChilledWaterTank)
    zone_bypass_fraction: Array | None = None
    zone_min_recirculation: Array | None = None
    n_chillers: int = 2
    min_run_s: float = 1800.0
    min_off_s: float = 900.0
    server_delta_t_k: float = 12.0
    min_recirculation: float = 0.02
    pump_min_speed: float = 0.3
    hx_approach_k: float = 1.5
    economiser_installed: bool = True

    def __post_init__(self) -> None:
        # Per-zone airflow imperfections: none by default (the nameplate), ``min_recirculation`` everywhere.
        z = self.zone_design_it_kw.shape[-1]
        for name, default in (("zone_bypass_fraction", 0.0), ("zone_min_recirculation", self.min_recirculation)):
            value = getattr(self, name)
            array = np.full(z, default) if value is None else np.asarray(value, dtype=np.float64)
            if array.shape != (z,) or not np.all((array >= 0.0) & (array < 1.0)):
                raise ValueError(f"PlantV2Config.{name} needs {z} values in [0, 1), got {value!r}")
            object.__setattr__(self, name, array)

    @property
    def n_zones(self) -> int:
        return int(self.zone_design_it_kw.shape[-1])

    @property
    def design_it_kw(self) -> float:
        return float(self.zone_design_it_kw.sum())

    @classmethod
    def default(cls, n_zones: int = 4, zone_design_it_kw: float | list[float] | Array = 250.0, n_chillers: int = 2,
                chiller_capacity_fraction: float = 0.6, rated_cop: float = 5.5,
                thermal_mass_kj_per_k_per_kw: float = 20.0, loop_mass_kj_per_k_per_kw: float = 35.0,
                airflow_margin: float = 1.3, fan_pressure_kpa: float = 0.5, fan_efficiency: float = 0.6,
                coil_design_approach_k: float = 3.0, chw_design_delta_t_k: float = 6.0,
                storage_minutes: float = 0.0, **overrides: object) -> PlantV2Config:
        """A v2 plant with plant v0's hall (zones, CRAHs, masses) and sizing ratios.

        Chillers: ``n_chillers`` × ``chiller_capacity_fraction`` of the design cooling load (1.1 × IT), rated
        COP ``rated_cop`` at AHRI conditions. Chilled water: design flow for a ``chw_design_delta_t_k`` rise at
        design load, pump 1.2 % of design cooling. Condenser water: 3 gpm/ton per chiller (5.56 K range),
        pumps 1.5 % of rejection. Tower: the design rejection at the CTI point, fans 0.2 kW/ton. Coils: the
        ε-NTU coil that makes supply air ``coil_design_approach_k`` above the chilled water at design flows.
        Storage (none by default): a mixed chilled-water tank that carries the design cooling load for
        ``storage_minutes`` over an 8 K span (``storage.ChilledWaterTank.sized``), its pump priced like the loop's.
        """
        design = np.atleast_1d(np.asarray(zone_design_it_kw, dtype=np.float64))
        if design.size == 0:
            raise ValueError("zone_design_it_kw must give at least one zone's design IT load")
        if design.size == 1:
            design = np.full(n_zones, float(design[0]))
        if np.any(design <= 0) or n_chillers < 1:
            raise ValueError("zone_design_it_kw must be positive and n_chillers at least 1")
        total = float(design.sum())
        server_delta_t_k = float(overrides.get("server_delta_t_k", cls.server_delta_t_k))  # type: ignore[arg-type]
        design_airflow = design / (CP_AIR_KJ_PER_KG_K * server_delta_t_k)
        max_airflow = airflow_margin * design_airflow
        design_cooling = 1.1 * total
        chiller = LiftChiller(reference_capacity_kw=chiller_capacity_fraction * design_cooling, rated_cop=rated_cop)
        unit_rejection = chiller.reference_capacity_kw * (1.0 + 1.0 / rated_cop)
        rejection = n_chillers * unit_rejection
        ntu, _ = design_ntu(server_delta_t_k, coil_design_approach_k, chw_design_delta_t_k)
        air_cap = design_airflow * CP_AIR_KJ_PER_KG_K
        chw_flow = design_cooling / (CP_WATER_KJ_PER_KG_K * chw_design_delta_t_k)
        pump_kw_per_kg_s = 0.012 * design_cooling / chw_flow
        values: dict[str, object] = dict(
            zone_design_it_kw=design,
            zone_thermal_mass_kj_per_k=thermal_mass_kj_per_k_per_kw * design,
            zone_envelope_ua_kw_per_k=0.002 * design,
            crah_max_airflow_kg_s=max_airflow,
            crah_fan_max_kw=max_airflow / AIR_DENSITY_KG_PER_M3 * fan_pressure_kpa / fan_efficiency,
            coil_ua_design_kw_per_k=ntu * np.minimum(air_cap, chw_flow * CP_WATER_KJ_PER_KG_K * design / total),
            coil_air_capacity_design_kw_per_k=air_cap,
            coil_water_capacity_design_kw_per_k=chw_flow * CP_WATER_KJ_PER_KG_K * design / total,
            chiller=chiller,
            tower=VariableSpeedTower(design_rejection_kw=rejection,
                                     design_fan_kw=0.2 / KW_PER_TON_REFRIGERATION * rejection),
            chw_design_flow_kg_s=chw_flow,
            chw_pump_design_kw=0.012 * design_cooling,
            tank=ChilledWaterTank.sized(design_cooling, storage_minutes, pump_kw_per_kg_s),
            cw_flow_per_chiller_kg_s=unit_rejection / (CP_WATER_KJ_PER_KG_K * AHRI_CONDENSER_RANGE_K),
            cw_pump_per_chiller_kw=0.015 * unit_rejection,
            loop_thermal_mass_kj_per_k=loop_mass_kj_per_k_per_kw * total,
            ups_rated_kw=1.25 * total,
            n_chillers=n_chillers,
        )
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def with_(self, **changes: object) -> PlantV2Config:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass
class PlantV2State:
    """Dynamic state (°C, units, s).

    :param zone_temp_c: zone air/IT temperatures (..., Z).
    :param chw_supply_c: chilled-water loop temperature (...).
    :param cw_supply_c: condenser water leaving the tower (...): what the chillers and the economiser see.
    :param chillers_on: chillers staged on (...), a whole number 0..N.
    :param stage_timer_s: seconds since staging last changed (...).
    :param last_stage_direction: +1 after a stage-up, −1 after a stage-down, 0 before any (...).
    :param tank_temp_c: chilled-water storage tank temperature (...); unused where the plant has no tank.
    """

    zone_temp_c: Array
    chw_supply_c: Array
    cw_supply_c: Array
    chillers_on: Array
    stage_timer_s: Array
    last_stage_direction: Array
    tank_temp_c: Array

    def copy(self) -> PlantV2State:
        return PlantV2State(*(np.array(v, dtype=np.float64, copy=True) for v in (
            self.zone_temp_c, self.chw_supply_c, self.cw_supply_c, self.chillers_on, self.stage_timer_s,
            self.last_stage_direction, self.tank_temp_c)))


@dataclass(frozen=True)
class PlantV2Control:
    """Set-points for one step.

    :param fan_speed: CRAH fan speed per zone, 0–1.
    :param supply_setpoint_c: supply-air set-point per zone, °C (the coil may not reach it).
    :param chw_setpoint_c: chilled-water supply set-point, °C.
    :param economiser_on: waterside economiser enabled (> 0.5).
    :param tower_fan_speed: cooling-tower fan speed, 0–1 (air flow ratio; free convection below 0.2).
    :param chillers_staged: chillers requested on, rounded to a whole number in 0..N; minimum run and off times
        may hold the previous staging.
    :param chw_pump_speed: chilled-water pump speed (flow fraction of design), held to [pump_min_speed, 1].
    :param tank_flow: storage tank flow, −1 (full discharge) to +1 (full charge); no effect without a tank.
    """

    fan_speed: Array
    supply_setpoint_c: Array
    chw_setpoint_c: Array
    economiser_on: Array
    tower_fan_speed: Array
    chillers_staged: Array
    chw_pump_speed: Array
    tank_flow: Array


class PlantV2Outputs(NamedTuple):
    """Everything one v2 step produced: zone fields (..., Z), plant fields (...); powers are step means (kW)."""

    supply_air_c: Array
    coil_floor_c: Array
    inlet_start_c: Array
    inlet_c: Array
    return_air_c: Array
    recirculation: Array
    airflow_kg_s: Array
    fan_kw: Array
    coil_kw: Array
    zone_it_kw: Array
    chw_supply_c: Array
    chw_return_c: Array
    cw_supply_c: Array
    cw_step_c: Array
    tower_approach_k: Array
    economiser_fraction: Array
    economiser_kw: Array
    chillers_on: Array
    chiller_part_load: Array
    chiller_load_kw: Array
    chiller_capacity_kw: Array
    chiller_kw: Array
    chw_pump_kw: Array
    tank_discharge_kw: Array
    tank_charge_kw: Array
    tank_pump_kw: Array
    tank_temp_c: Array
    cw_pump_kw: Array
    tower_kw: Array
    rejected_kw: Array
    ups_loss_kw: Array
    electrical_loss_kw: Array
    cooling_kw: Array
    facility_kw: Array
    pue: Array
    heat_removed_kj: Array
    it_nominal_kw: Array
    it_kw: Array
    heat_in_kj: Array
    envelope_loss_kj: Array
    heat_stored_kj: Array

def initial_state_v2(config: PlantV2Config, zone_temp_c: float = 30.0, chw_supply_c: float = 10.0,
                     cw_supply_c: float = 25.0, chillers_on: float | None = None, tank_temp_c: float | None = None,
                     batch_shape: tuple[int, ...] = ()) -> PlantV2State:
    """A state with every zone at ``zone_temp_c`` (default a warm hall, 30 °C), the loops at theirs (10 °C chilled,
    25 °C condenser), ``chillers_on`` staged (all by default), no staging change yet and the tank (if any) at
    ``tank_temp_c`` (default: the chilled water, fully charged)."""
    def plant(value: float) -> Array:
        return np.full(batch_shape, float(value))

    zones = np.full((*batch_shape, config.n_zones), float(zone_temp_c))
    staged = config.n_chillers if chillers_on is None else chillers_on
    tank = chw_supply_c if tank_temp_c is None else tank_temp_c
    return PlantV2State(zones, plant(chw_supply_c), plant(cw_supply_c), plant(staged), plant(NEVER_STAGED_S),
                        plant(0.0), plant(tank))


@dataclass(frozen=True)
class AirflowUncertainty:
    """How a hall's true airflow differs from its nameplate, drawn per episode and per zone.

    :param bypass_range: the fraction of CRAH air that returns without reaching a server (leaks through cable
        cut-outs, gaps and misplaced perforated tiles), uniform in this range. Surveys of uncontained rooms found
        far more (Upsite Technologies' audits: about half the supply air bypassing on average); the default
        range, 0–20 %, is a reasonably contained hall.
    :param recirculation_range: the floor of hot-air recirculation into the server inlets whatever the airflow
        (the nameplate: ``min_recirculation``), uniform in this range (default 2–8 %).
    """

    bypass_range: tuple[float, float] = (0.0, 0.2)
    recirculation_range: tuple[float, float] = (0.02, 0.08)

    def __post_init__(self) -> None:
        for name in ("bypass_range", "recirculation_range"):
            lo, hi = getattr(self, name)
            if not 0.0 <= lo <= hi < 1.0:
                raise ValueError(f"AirflowUncertainty.{name} needs 0 <= low <= high < 1, got {(lo, hi)!r}")

    def draw(self, config: PlantV2Config, rng: np.random.Generator) -> PlantV2Config:
        """The true plant of one episode: ``config`` with per-zone bypass and recirculation drawn."""
        z = config.n_zones
        return config.with_(zone_bypass_fraction=rng.uniform(*self.bypass_range, size=z),
                            zone_min_recirculation=rng.uniform(*self.recirculation_range, size=z))
