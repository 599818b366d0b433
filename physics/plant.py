"""The cooling plant: zones, CRAHs, chilled-water loop, chillers, economiser, tower, pumps and UPS.

One call to :func:`step_plant` advances the whole plant by one control interval. Arrays have a trailing zone
axis (``(..., Z)``) for zone quantities and no trailing axis for plant quantities, so the same code steps one
plant (``(Z,)``) or a batch of plants (``(B, Z)``) without a Python loop.

Heat path (all kW or kJ)::

    IT heat ─► zone air/IT mass (C_z) ─► CRAH coil ─┐
    CRAH fan heat (added in the air stream, taken   ├─► chilled-water loop (C_loop) ─► economiser HX ─┐
      by the coil with the supply air)  ────────────┘    + chilled-water pump heat  └─► chillers ──────┴─► tower
    zone ◄─► outdoors through the envelope (UA)

Per step (Δt seconds, inputs held constant over it):

1. Supply air ``T_s = max(T_s,set, T_chw + coil approach)``: the coil cannot make air colder than the
   chilled water plus its approach. Airflow ``m = m_max · a · s`` (a = fraction of fan units alive).
2. Zone temperatures by the exact exponential update (``dcops.physics.zones``); inlet temperatures from the
   recirculation mix.
3. The loop receives the coil heat, the fan heat and the chilled-water pump heat. The plant tries to remove that
   heat plus whatever brings the loop back to its setpoint (``C_loop · (T_chw − T_chw,set)``); the economiser
   carries its fraction and the chillers the rest, up to their available capacity ``Q_ref · CAPFT · units``.
   Any shortfall warms the loop (``C_loop · ΔT_chw = heat in − heat removed``).
   The loop temperature seen by the coils is the one at the start of the step (a one-step lag that is stable
   for ``Δt · Σ m·cp / C_loop < 1``, about 0.4 at the defaults; exact whenever the plant holds its setpoint).
4. Chiller capacity and power from the DOE-2 EIR curves at the leaving chilled water (the set-point, or the
   loop temperature while a warm loop is pulled down) and the condenser water (wet-bulb + tower approach), with
   as many units staged on as the load needs.
5. Pumps, tower fans, electrical losses (UPS, distribution, ancillary); facility power and PUE.

Energy is conserved exactly: ``Σ C_z·ΔT_z + C_loop·ΔT_chw = (IT + fans + CHW pump)·Δt − envelope − removed``;
the outputs carry each term so tests can check it every step.
"""

from __future__ import annotations

import numpy as np

from dcops.physics.auxiliaries import (
    ancillary_kw,
    distribution_loss_kw,
    fan_power_kw,
    pump_power_kw,
    tower_fan_power_kw,
    ups_loss_kw,
)
from dcops.physics.chiller import chiller_power_kw, curve_modifiers
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.economiser import condenser_water_c, economiser_fraction
from dcops.physics.plant_types import (
    Array,
    PlantBoundary,
    PlantConfig,
    PlantControl,
    PlantOutputs,
    PlantState,
    initial_state,
)
from dcops.physics.single_plant import step_single_plant
from dcops.physics.zones import (
    inlet_temperature_c,
    recirculation_fraction,
    server_airflow_kg_s,
    zone_update,
)


def air_side(
    config: PlantConfig, state: PlantState, control: PlantControl, boundary: PlantBoundary
) -> tuple[Array, Array, Array, Array]:
    """Instantaneous air side for a control: (fan speed clipped, airflow kg/s, supply air °C, recirculation).

    The coil cannot make air colder than the chilled water plus its approach, so the supply air is
    ``max(T_s,set, T_chw + coil approach)``; airflow is ``m_max · units alive · speed``.
    """
    speed = np.minimum(np.maximum(control.fan_speed, 0.0), 1.0)
    airflow = config.crah_max_airflow_kg_s * boundary.fan_units_alive * speed
    supply = np.maximum(control.supply_setpoint_c, state.chw_supply_c[..., None] + config.coil_approach_k)
    recirculation = recirculation_fraction(
        airflow, server_airflow_kg_s(boundary.it_kw, config.server_delta_t_k), config.min_recirculation
    )
    return speed, airflow, supply, recirculation


def step_plant(
    config: PlantConfig, state: PlantState, control: PlantControl, boundary: PlantBoundary, dt_s: float
) -> tuple[PlantState, PlantOutputs]:
    """Advance the plant by ``dt_s`` seconds; return the new state and the step's outputs (see module doc).

    An unbatched plant is stepped in Python floats by ``dcops.physics.single_plant`` (the same arithmetic to
    the bit, several times faster for a handful of zones); batches, and any input it declines, by
    :func:`step_plant_arrays`."""
    if state.zone_temp_c.ndim == 1:
        single = step_single_plant(config, state, control, boundary, dt_s)
        if single is not None:
            return single
    return step_plant_arrays(config, state, control, boundary, dt_s)


def step_plant_arrays(
    config: PlantConfig, state: PlantState, control: PlantControl, boundary: PlantBoundary, dt_s: float
) -> tuple[PlantState, PlantOutputs]:
    """:func:`step_plant` in numpy arrays, for one plant ``(Z,)`` or a batch ``(..., Z)`` alike."""
    # 1. Airflow, fan power and supply air.
    speed, airflow, supply, recirculation = air_side(config, state, control, boundary)
    fan_kw = fan_power_kw(config.crah_fan_max_kw, speed, boundary.fan_units_alive)
    chw0 = state.chw_supply_c

    # 2. Zones (exact).
    it_kw = boundary.it_kw
    outdoor = boundary.outdoor_dry_bulb_c[..., None]
    zone0 = state.zone_temp_c
    zone1, zone_mean = zone_update(
        zone0, it_kw, airflow, supply, config.zone_envelope_ua_kw_per_k, outdoor,
        config.zone_thermal_mass_kj_per_k, dt_s,
    )
    coil_air_kw = airflow * CP_AIR_KJ_PER_KG_K * (zone_mean - supply)
    envelope_kw = config.zone_envelope_ua_kw_per_k * (zone_mean - outdoor)

    # 3. Chilled-water loop.
    coil_kw = coil_air_kw + fan_kw  # the coil also takes the fan heat
    loop_load_kw = coil_kw.sum(axis=-1)
    load_fraction = np.maximum(loop_load_kw, 0.0) / config.design_cooling_kw
    flow_fraction = np.maximum(load_fraction, config.pump_min_speed)
    chw_pump_kw = pump_power_kw(config.chw_pump_design_kw, flow_fraction, config.pump_min_speed)
    heat_in_kj = (loop_load_kw + chw_pump_kw) * dt_s
    chw_set = control.chw_setpoint_c
    removal_target_kj = np.maximum(heat_in_kj + config.loop_thermal_mass_kj_per_k * (chw0 - chw_set), 0.0)

    wet_bulb = boundary.outdoor_wet_bulb_c
    chw_return = chw0 + config.chw_design_delta_t_k * load_fraction / flow_fraction
    if config.economiser_installed:
        econ_fraction = economiser_fraction(
            wet_bulb, chw_set, chw_return, config.tower_approach_k, config.hx_approach_k
        ) * (control.economiser_on > 0.5)
    else:
        econ_fraction = np.zeros_like(chw0)
    economiser_kj = econ_fraction * removal_target_kj

    # 4. Chillers.
    condenser = condenser_water_c(wet_bulb, config.tower_approach_k)
    curves = config.chiller_curves
    # Chillers leave water at their set-point, or warmer while they pull a warm loop down (capacity-limited).
    leaving = np.maximum(chw_set, chw0)
    capft, eirft = curve_modifiers(curves, leaving, condenser)
    unit_capacity_kw = config.chiller_reference_capacity_kw * capft
    units_available = boundary.chiller_available.sum(axis=-1)
    capacity_kw = unit_capacity_kw * units_available
    chiller_load_kw = np.minimum((removal_target_kj - economiser_kj) / dt_s, capacity_kw)
    units_on = np.minimum(np.ceil(chiller_load_kw / unit_capacity_kw - 1e-9), units_available)
    running_capacity_kw = unit_capacity_kw * np.maximum(units_on, 0.0)
    chiller_kw = chiller_power_kw(curves, chiller_load_kw, running_capacity_kw, eirft)
    heat_removed_kj = economiser_kj + chiller_load_kw * dt_s
    chw1 = chw0 + (heat_in_kj - heat_removed_kj) / config.loop_thermal_mass_kj_per_k

    # 5. Heat rejection, pumps, UPS, totals.
    rejected_kw = heat_removed_kj / dt_s + chiller_kw
    rejection_fraction = rejected_kw / config.design_rejection_kw
    tower_kw = tower_fan_power_kw(config.tower_fan_design_kw, rejection_fraction)
    # The condenser pump runs only while heat is rejected (a boolean factor is cheaper than np.where here).
    cw_pump_kw = pump_power_kw(config.cw_pump_design_kw, rejection_fraction, config.pump_min_speed) * (rejected_kw > 0.0)
    it_total = it_kw.sum(axis=-1)
    ups_kw = ups_loss_kw(it_total, config.ups_rated_kw)
    electrical_kw = ups_kw + distribution_loss_kw(it_total) + ancillary_kw(config.design_it_kw)
    cooling_kw = fan_kw.sum(axis=-1) + chw_pump_kw + cw_pump_kw + tower_kw + chiller_kw
    facility_kw = it_total + electrical_kw + cooling_kw
    pue = facility_kw / np.maximum(it_total, 1e-9) * (it_total > 0.0)  # reported as 0 with no IT load

    stored_kj = ((zone1 - zone0) * config.zone_thermal_mass_kj_per_k).sum(axis=-1) + (
        chw1 - chw0
    ) * config.loop_thermal_mass_kj_per_k
    outputs = PlantOutputs(
        supply_air_c=supply,
        inlet_start_c=inlet_temperature_c(supply, zone0, recirculation),
        inlet_c=inlet_temperature_c(supply, zone1, recirculation),
        return_air_c=zone1,
        recirculation=recirculation,
        airflow_kg_s=airflow,
        fan_kw=fan_kw,
        coil_kw=coil_kw,
        chw_supply_c=chw1,
        chw_return_c=chw_return,
        condenser_water_c=condenser,
        economiser_fraction=econ_fraction,
        economiser_kw=economiser_kj / dt_s,
        chiller_load_kw=chiller_load_kw,
        chiller_capacity_kw=capacity_kw,
        chiller_kw=chiller_kw,
        chw_pump_kw=chw_pump_kw,
        cw_pump_kw=cw_pump_kw,
        tower_kw=tower_kw,
        ups_loss_kw=ups_kw,
        electrical_loss_kw=electrical_kw,
        it_kw=it_total,
        cooling_kw=cooling_kw,
        facility_kw=facility_kw,
        pue=pue,
        heat_in_kj=(it_total + fan_kw.sum(axis=-1) + chw_pump_kw) * dt_s,
        heat_removed_kj=heat_removed_kj,
        envelope_loss_kj=envelope_kw.sum(axis=-1) * dt_s,
        heat_stored_kj=stored_kj,
    )
    return PlantState(zone1, chw1), outputs


# The plant's data types live in ``plant_types`` (below this module and ``single_plant``); they are part of
# the plant's interface, so they are imported from here as well.
__all__ = [
    "Array", "PlantBoundary", "PlantConfig", "PlantControl", "PlantOutputs", "PlantState", "air_side",
    "initial_state", "step_plant", "step_plant_arrays",
]
