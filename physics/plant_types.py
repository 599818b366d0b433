"""The cooling plant's data: its configuration, state, set-points, boundary conditions and step outputs.

These are the types that :mod:`dcops.physics.plant` (the array step) and :mod:`dcops.physics.single_plant`
(the same step in Python floats) both read and write; they live here, below both, so that neither step module
imports the other's. Units are in the field names (°C, kW, kJ, kg/s); the equations are in ``plant``'s manual.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from dcops.physics.chiller import CHILLER_TYPES, ChillerCurves
from dcops.physics.constants import AIR_DENSITY_KG_PER_M3, CP_AIR_KJ_PER_KG_K, KW_PER_TON_REFRIGERATION

Array = NDArray[np.float64]


@dataclass(frozen=True)
class PlantConfig:
    """Static description of a data hall and its cooling plant. Build one with :meth:`default`, which sizes every
    field without a default from the zones' design IT load.

    Zone arrays are shaped (Z,). Units are in the names. The fields with defaults are the hall's physical
    constants, the same for every size:

    :param server_delta_t_k: air temperature rise across the servers, K (12 K, a typical rise; 10–20 K are
        common); the servers draw ``m_IT = Q_IT / (cp·ΔT)`` of air, and :meth:`default` sizes the CRAHs on it.
    :param min_recirculation: share of server inlet air that is recirculated hot air even with ample airflow.
    :param coil_approach_k: the CRAH coil's approach, supply air over chilled water, K.
    :param chw_design_delta_t_k: chilled-water rise from supply to return at design load and flow, K (6 K,
        about 11 °F, the usual design); below the pumps' minimum speed the rise shrinks with the load.
    :param tower_approach_k: cooling-tower approach to the wet-bulb, K.
    :param hx_approach_k: the economiser heat exchanger's approach, K.
    :param pump_min_speed: the pumps' minimum speed, fraction of design flow.
    """

    zone_design_it_kw: Array
    zone_thermal_mass_kj_per_k: Array
    zone_envelope_ua_kw_per_k: Array
    crah_max_airflow_kg_s: Array
    crah_fan_max_kw: Array
    chiller_curves: ChillerCurves
    n_chillers: int
    chiller_reference_capacity_kw: float
    loop_thermal_mass_kj_per_k: float
    economiser_installed: bool
    design_cooling_kw: float
    tower_fan_design_kw: float
    chw_pump_design_kw: float
    cw_pump_design_kw: float
    ups_rated_kw: float
    server_delta_t_k: float = 12.0
    min_recirculation: float = 0.02
    coil_approach_k: float = 3.0
    chw_design_delta_t_k: float = 6.0
    tower_approach_k: float = 3.5
    hx_approach_k: float = 1.5
    pump_min_speed: float = 0.3

    @property
    def n_zones(self) -> int:
        return int(self.zone_design_it_kw.shape[-1])

    @property
    def design_it_kw(self) -> float:
        return float(self.zone_design_it_kw.sum())

    @property
    def design_rejection_kw(self) -> float:
        """Heat the tower rejects at design: cooling load plus compressor power at the reference COP."""
        return self.design_cooling_kw * (1.0 + 1.0 / self.chiller_curves.reference_cop)

    @classmethod
    def default(
        cls,
        n_zones: int = 4,
        zone_design_it_kw: float | list[float] | Array = 250.0,
        chiller: str = "centrifugal",
        economiser: bool = True,
        n_chillers: int = 2,
        chiller_capacity_fraction: float = 0.6,
        thermal_mass_kj_per_k_per_kw: float = 20.0,
        loop_mass_kj_per_k_per_kw: float = 35.0,
        airflow_margin: float = 1.3,
        fan_pressure_kpa: float = 0.5,
        fan_efficiency: float = 0.6,
        **overrides: object,
    ) -> PlantConfig:
        """A plant sized from the zones' design IT load with typical engineering ratios.

        :param n_zones: number of zones (ignored when ``zone_design_it_kw`` is a list).
        :param zone_design_it_kw: design IT load per zone, kW (one value for all, or one per zone).
        :param chiller: ``"centrifugal"`` (DOE-2 5.50 COP) or ``"reciprocating"`` (DOE-2 3.67 COP).
        :param economiser: whether a waterside economiser is installed.
        :param n_chillers: identical chillers, each ``chiller_capacity_fraction`` of the design cooling load
            (default 2 × 60 %: N+1 at part of the load, so one trip under peak load leaves a shortfall).
        :param thermal_mass_kj_per_k_per_kw: zone heat capacity per kW of design IT (10–30 is typical).
        :param loop_mass_kj_per_k_per_kw: chilled-water loop heat capacity per kW of design IT (35 ≈ 8 L/kW).
        :param airflow_margin: CRAH maximum airflow over the servers' design airflow.
        :param fan_pressure_kpa: CRAH fan total pressure, kPa; with ``fan_efficiency`` sets fan power.
        :param overrides: any other :class:`PlantConfig` field.
        """
        design = np.atleast_1d(np.asarray(zone_design_it_kw, dtype=np.float64))
        if design.size == 0:
            raise ValueError("zone_design_it_kw must give at least one zone's design IT load")
        if design.size == 1:
            design = np.full(n_zones, float(design[0]))
        if np.any(design <= 0):
            raise ValueError("zone_design_it_kw must be positive")
        total = float(design.sum())
        server_delta_t_k = float(overrides.get("server_delta_t_k", cls.server_delta_t_k))  # type: ignore[arg-type]
        design_airflow = design / (CP_AIR_KJ_PER_KG_K * server_delta_t_k)
        max_airflow = airflow_margin * design_airflow
        fan_max_kw = max_airflow / AIR_DENSITY_KG_PER_M3 * fan_pressure_kpa / fan_efficiency
        design_cooling = 1.1 * total  # IT plus fan heat, with a little margin
        curves = CHILLER_TYPES[chiller]
        rejection = design_cooling * (1.0 + 1.0 / curves.reference_cop)
        values: dict[str, object] = dict(
            zone_design_it_kw=design,
            zone_thermal_mass_kj_per_k=thermal_mass_kj_per_k_per_kw * design,
            zone_envelope_ua_kw_per_k=0.002 * design,
            crah_max_airflow_kg_s=max_airflow,
            crah_fan_max_kw=fan_max_kw,
            chiller_curves=curves,
            n_chillers=n_chillers,
            chiller_reference_capacity_kw=chiller_capacity_fraction * design_cooling,
            loop_thermal_mass_kj_per_k=loop_mass_kj_per_k_per_kw * total,
            economiser_installed=economiser,
            design_cooling_kw=design_cooling,
            tower_fan_design_kw=0.2 / KW_PER_TON_REFRIGERATION * rejection,
            chw_pump_design_kw=0.012 * design_cooling,
            cw_pump_design_kw=0.015 * rejection,
            ups_rated_kw=1.25 * total,
        )
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def legacy(cls, **overrides: object) -> PlantConfig:
        """A legacy plant: no economiser, reciprocating chillers (DOE-2 3.67 COP)."""
        base: dict[str, object] = {"chiller": "reciprocating", "economiser": False}
        base.update(overrides)
        return cls.default(**base)  # type: ignore[arg-type]

    def with_(self, **changes: object) -> PlantConfig:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass
class PlantState:
    """Dynamic state: zone temperatures (..., Z) and chilled-water supply temperature (...), °C."""

    zone_temp_c: Array
    chw_supply_c: Array

    def copy(self) -> PlantState:
        return PlantState(self.zone_temp_c.copy(), self.chw_supply_c.copy())


@dataclass(frozen=True)
class PlantControl:
    """Set-points for one step.

    :param fan_speed: CRAH fan speed per zone, fraction of maximum (clipped to [0, 1]).
    :param supply_setpoint_c: supply-air set-point per zone, °C (the coil may not reach it, see module doc).
    :param chw_setpoint_c: chilled-water supply set-point, °C.
    :param economiser_on: integrated waterside economiser enabled, a 0–1 setting that is on above 0.5 (ignored if
        none is installed).
    """

    fan_speed: Array
    supply_setpoint_c: Array
    chw_setpoint_c: Array
    economiser_on: Array


@dataclass(frozen=True)
class PlantBoundary:
    """Conditions imposed on the plant for one step.

    :param it_kw: IT load per zone, kW (..., Z).
    :param outdoor_dry_bulb_c: outdoor dry-bulb, °C (...).
    :param outdoor_wet_bulb_c: outdoor wet-bulb, °C (...).
    :param chiller_available: availability of each chiller, 0–1 (..., n_chillers); a trip ramps it to 0.
    :param fan_units_alive: fraction of each zone's CRAH fan units running, 0–1 (..., Z).
    """

    it_kw: Array
    outdoor_dry_bulb_c: Array
    outdoor_wet_bulb_c: Array
    chiller_available: Array
    fan_units_alive: Array


class PlantOutputs(NamedTuple):
    """Everything one step produced. Zone fields are (..., Z); plant fields (...). Powers are step means."""

    supply_air_c: Array
    inlet_start_c: Array
    inlet_c: Array
    return_air_c: Array
    recirculation: Array
    airflow_kg_s: Array
    fan_kw: Array
    coil_kw: Array
    chw_supply_c: Array
    chw_return_c: Array
    condenser_water_c: Array
    economiser_fraction: Array
    economiser_kw: Array
    chiller_load_kw: Array
    chiller_capacity_kw: Array
    chiller_kw: Array
    chw_pump_kw: Array
    cw_pump_kw: Array
    tower_kw: Array
    ups_loss_kw: Array
    electrical_loss_kw: Array
    it_kw: Array
    cooling_kw: Array
    facility_kw: Array
    pue: Array
    heat_in_kj: Array
    heat_removed_kj: Array
    envelope_loss_kj: Array
    heat_stored_kj: Array


def initial_state(config: PlantConfig, zone_temp_c: float | Array = 30.0, chw_supply_c: float | Array = 10.0,
                  batch_shape: tuple[int, ...] = ()) -> PlantState:
    """A state with every zone at ``zone_temp_c`` and the loop at ``chw_supply_c`` (°C)."""
    zones = np.broadcast_to(np.asarray(zone_temp_c, dtype=np.float64), (*batch_shape, config.n_zones)).copy()
    loop = np.broadcast_to(np.asarray(chw_supply_c, dtype=np.float64), batch_shape).copy()
    return PlantState(zones, loop)
