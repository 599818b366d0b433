"""Plant v2's step: the hall, the water side, staged lift chillers, a variable-speed tower and the economiser.

One call to :func:`step_plant_v2` advances the plant by one control interval (inputs held over it). The
equations are written once (``_zone_equations`` for each zone, ``_plant_equations`` for the plant) over a
numeric backend: Python floats zone by zone for one plant, numpy arrays for a batch (``dcops.physics.v2.backend``).

Per step (Δt seconds):

1. **Air side, per zone.** Airflow ``m = m_max · a · s`` through the CRAH; a fraction ``b`` (the zone's bypass,
   0 on the nameplate) returns to it without reaching a server, so ``m·(1 − b)`` cools the servers. The coil
   (``coil``) can make supply air no colder than its ε-NTU floor, which depends on the airflow, the
   chilled-water flow (pump speed) and the loop temperature; the supply is ``max(T_s,set, floor)``.
   Recirculation as in v0, with a per-zone floor (hot air that leaks round the racks whatever the airflow).
   **Server power** (``servers``) rises with the inlet temperature at the start of the step: fans and leakage
   are heat in the zone and count as IT power.
2. **Zones** by the exact exponential update (as v0).
3. **Chilled-water loop.** The pump's speed sets the flow (power ∝ speed³, affinity law) and so the return
   temperature ``T_chw + (Q_coils + Q_pumps) / (m_w · c_p)``. The plant removes the coil and pump heat plus what
   returns the loop to its set-point; the **economiser** pre-cools the return water toward the condenser water
   leaving the tower plus the HX approach (so it takes at most the water flow's heat down to that temperature,
   whatever the set-point), the chillers the rest down to the set-point, up to the capacity of the units running
   and what the evaporator flow carries. With a **storage tank**
   (``storage``; optional) a discharge cools the return water in the tank before the plant sees it, and a charge
   adds the heat to take out of the tank to what the plant must remove, served after the loop's own need.
4. **Chillers** (``chiller``): the staging request, held by minimum run (after a stage-up) and minimum off
   (after a stage-down) times and by the units available (trips), sets the units running; they share the load
   equally, at the lift between the leaving chilled water and the condenser water. A staged unit with no load
   false-loads at its minimum part load; an under-staged plant cannot carry the load and the loop warms.
5. **Heat rejection** (``tower``): condenser pumps run per chiller running (one for the economiser alone); the
   tower rejects the economiser heat, the chiller load and the compressor power in the step, quasi-steady: it
   returns water at wet-bulb + YorkCalc approach at its fan speed. The economiser and the chillers' lift see the
   mean of the last step's condenser water and the tower's answer to the heat they would reject at it (one
   predictor-corrector pass), and the tower's answer to what they then reject is the next step's condenser water.
6. Electrical losses (UPS, distribution, ancillary, as v0), facility power and PUE.

Energy: ``Σ C_z·ΔT_z + C_loop·ΔT_chw + C_tank·ΔT_tank = (IT + CRAH fans + CHW and tank pumps)·Δt − envelope −
removed`` every step (the envelope includes the tank shell's gain), and the tower rejects ``removed + compressor
power``; the outputs carry each term.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dcops.physics.auxiliaries import ancillary_kw, distribution_loss_kw, ups_loss_kw
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K, CP_WATER_KJ_PER_KG_K
from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.backend import ARRAYS, FLOATS
from dcops.physics.v2.chiller import unit_power_kw
from dcops.physics.v2.coil import coil_supply_floor_c
from dcops.physics.v2.servers import server_power_multiplier
from dcops.physics.v2.storage import side_heat_kj
from dcops.physics.v2.tower import approach_at_range, tower_fan_kw, tower_polynomial
from dcops.physics.v2.types import PlantV2Config, PlantV2Control, PlantV2Outputs, PlantV2State

_SERIES_LIMIT = 1e-4  # below this x the series forms of φ and ψ are exact to double precision
ZONE_OUTPUTS = ("supply_air_c", "coil_floor_c", "inlet_start_c", "inlet_c", "return_air_c", "recirculation",
                "airflow_kg_s", "fan_kw", "coil_kw", "zone_it_kw")
PLANT_OUTPUTS = ("chw_supply_c", "chw_return_c", "cw_supply_c", "cw_step_c", "tower_approach_k", "economiser_fraction",
                 "economiser_kw", "chillers_on", "chiller_part_load", "chiller_load_kw", "chiller_capacity_kw",
                 "chiller_kw", "chw_pump_kw", "tank_discharge_kw", "tank_charge_kw", "tank_pump_kw", "tank_temp_c",
                 "cw_pump_kw", "tower_kw", "rejected_kw", "ups_loss_kw",
                 "electrical_loss_kw", "cooling_kw", "facility_kw", "pue", "heat_removed_kj")
TOTAL_OUTPUTS = ("it_nominal_kw", "it_kw", "heat_in_kj", "envelope_loss_kj", "heat_stored_kj")
if ZONE_OUTPUTS + PLANT_OUTPUTS + TOTAL_OUTPUTS != PlantV2Outputs._fields:  # outputs are built by position
    raise ImportError("PlantV2Outputs' fields are out of step with plant v2's output order")


def _zone_equations(xp: Any, config: PlantV2Config, max_air: Any, fan_max: Any, ua: Any, cap: Any, coil_ua: Any,
                    coil_air_cap: Any, coil_water_cap: Any, bypass: Any, min_recirculation: Any, t0: Any,
                    fan_set: Any, supply_set: Any, it_nominal: Any, alive: Any, chw0: Any, dry: Any, pump_speed: Any,
                    dt_s: float) -> tuple[Any, ...]:
    """One zone (or every zone at once on arrays): the ``ZONE_OUTPUTS`` plus envelope loss (kW) and stored heat
    (kJ)."""
    maximum, where = xp.maximum, xp.where
    s = xp.clip(fan_set, 0.0, 1.0)
    m = max_air * alive * s
    served = m * (1.0 - bypass)  # bypass air returns to the CRAH at the supply temperature: no heat, no cooling
    mcp = served * CP_AIR_KJ_PER_KG_K
    floor = coil_supply_floor_c(xp, t0, chw0, m * CP_AIR_KJ_PER_KG_K, coil_water_cap * pump_speed, coil_ua,
                                coil_air_cap)
    ts = maximum(supply_set, floor)
    demand = it_nominal / (CP_AIR_KJ_PER_KG_K * config.server_delta_t_k)
    r = maximum(maximum(demand - served, 0.0) / maximum(demand, 1e-9), min_recirculation)
    inlet0 = ts + r * (t0 - ts)
    q_it = it_nominal * server_power_multiplier(xp, config.servers, inlet0)
    fan = fan_max * alive * s * s * s
    x = (mcp + ua) * (dt_s / cap)
    small = x < _SERIES_LIMIT
    if xp.any(small):  # φ and ψ by their series where x is tiny (no airflow, no envelope), exact elsewhere
        xs = maximum(x, _SERIES_LIMIT)
        phi_exact = -xp.expm1(-xs) / xs
        phi = where(small, 1.0 - x / 2.0 + x * x / 6.0, phi_exact)
        psi = where(small, 0.5 - x / 6.0 + x * x / 24.0, (1.0 - phi_exact) / xs)
    else:
        phi = -xp.expm1(-x) / x
        psi = (1.0 - phi) / x
    drift = (q_it + mcp * (ts - t0) + ua * (dry - t0)) / cap * dt_s
    t1 = t0 + drift * phi
    mean = t0 + drift * psi
    coil = mcp * (mean - ts) + fan
    inlet1 = ts + r * (t1 - ts)
    return ts, floor, inlet0, inlet1, t1, r, m, fan, coil, q_it, ua * (mean - dry), (t1 - t0) * cap


def _plant_equations(xp: Any, config: PlantV2Config, eta: float, fr0: float, loop_load: Any, it_total: Any,
                     fan_total: Any, chw0: Any, cw0: Any, staged0: Any, timer0: Any, direction0: Any, tank0: Any,
                     control: tuple[Any, ...], dry: Any, wet: Any, units_available: Any,
                     dt_s: float) -> tuple[Any, ...]:
    """The water side, chillers, tower and totals for one plant (or a batch on arrays): the ``PLANT_OUTPUTS``,
    then the new staging, stage timer and stage direction and the tank shell's heat gain (kJ)."""
    chw_set, econ_on, tower_speed, staged_request, pump, tank_flow = control  # pump speed already held to range
    chw_pump = config.chw_pump_design_kw * pump * pump * pump
    water_cap = config.chw_design_flow_kg_s * CP_WATER_KJ_PER_KG_K * pump
    tank = config.tank
    if tank.installed:
        discharge, charge = xp.clip(-tank_flow, 0.0, 1.0), xp.clip(tank_flow, 0.0, 1.0)
        through = discharge + charge  # one of them is 0
        tank_pump = tank.pump_kw * through * through * through
    else:
        tank_pump = 0.0 * chw0  # zero, shaped like the plant's values (a float or the batch's array)
    heat_in_kw = loop_load + chw_pump + tank_pump
    chw_return = chw0 + xp.maximum(heat_in_kw, 0.0) / water_cap  # the pumps' heat is in the water too
    heat_in = heat_in_kw * dt_s
    if tank.installed:
        discharged = xp.maximum(side_heat_kj(xp, tank, discharge, chw_return, tank0, dt_s), 0.0)
        to_charge = xp.maximum(-side_heat_kj(xp, tank, charge, chw_set, tank0, dt_s), 0.0)
        shell_kj = tank.shell_ua_kw_per_k * (dry - tank0) * dt_s
        loop_need = xp.maximum(heat_in - discharged + config.loop_thermal_mass_kj_per_k * (chw0 - chw_set), 0.0)
        removal = loop_need + to_charge
    else:
        discharged = shell_kj = to_charge = tank_pump
        removal = loop_need = xp.maximum(heat_in + config.loop_thermal_mass_kj_per_k * (chw0 - chw_set), 0.0)

    # Staging with minimum run and off times.
    n = config.n_chillers
    request = xp.clip(xp.floor(staged_request + 0.5), 0.0, float(n))
    if xp.any(request != staged0):
        rising = xp.where(request > staged0, 1.0, 0.0)
        falling = xp.where(request < staged0, 1.0, 0.0)
        # Up is held right after a stage-down (minimum off), down right after a stage-up (minimum run).
        up_ok = xp.maximum(xp.where(direction0 >= 0.0, 1.0, 0.0), xp.where(timer0 >= config.min_off_s, 1.0, 0.0))
        down_ok = xp.maximum(xp.where(direction0 <= 0.0, 1.0, 0.0), xp.where(timer0 >= config.min_run_s, 1.0, 0.0))
        changed = rising * up_ok + falling * down_ok
        staged = staged0 + changed * (request - staged0)
        timer = changed * dt_s + (1.0 - changed) * xp.minimum(timer0 + dt_s, 1e9)
        direction = direction0 + changed * (rising - falling - direction0)
    else:  # no plant asks for a change (the usual step): the same result, without the arithmetic
        staged, timer, direction = staged0, xp.minimum(timer0 + dt_s, 1e9), direction0
    running = xp.minimum(staged, units_available)
    capacity = config.chiller.reference_capacity_kw * running
    enabled = xp.where(econ_on > 0.5, 1.0 if config.economiser_installed else 0.0, 0.0)
    leaving = xp.maximum(chw_set, chw0)
    # The chillers cool what the economiser left down to the set-point: no more than the evaporator flow carries
    # (the loop's flow, plus the tank's charge through its own side), and no more than the units running make.
    evaporator_kj = water_cap * (chw_return - chw_set) * dt_s + to_charge
    econ_limit_kj = water_cap * dt_s * enabled
    # Condenser water flows through the chillers running, or one pump's worth (the economiser's, or the basin's
    # circulation): the same flow whatever the economiser does, so the tower's curve in range is set once.
    flowing_units = xp.maximum(running, 1.0)
    range_per_kw = 1.0 / (flowing_units * (config.cw_flow_per_chiller_kg_s * CP_WATER_KJ_PER_KG_K))
    tower = tower_polynomial(xp, fr0, wet, flowing_units / n, tower_speed)

    def reject(cw: Any) -> tuple[Any, ...]:
        """Economiser, chillers and tower with condenser water at ``cw`` (°C) through the step.

        The economiser pre-cools the loop's return toward the condenser water plus the HX approach: at most the
        water flow's heat down to that temperature (a set-point below it buys nothing more)."""
        econ_kj = xp.minimum(econ_limit_kj * xp.maximum(chw_return - (cw + config.hx_approach_k), 0.0), removal)
        chiller_load = xp.clip(xp.minimum(removal - econ_kj, xp.maximum(evaporator_kj - econ_kj, to_charge)) / dt_s,
                               0.0, capacity)
        plr = chiller_load / xp.maximum(capacity, 1e-9)
        chiller_kw = running * unit_power_kw(xp, config.chiller, eta, plr, leaving, cw)
        rejected = econ_kj / dt_s + chiller_load + chiller_kw
        approach = xp.maximum(approach_at_range(xp, tower, rejected * range_per_kw), 0.0)
        return econ_kj, chiller_load, plr, chiller_kw, rejected, approach

    # The tower is quasi-steady: the condenser water it returns answers the heat it is given. One predictor-
    # corrector pass: the step runs at the mean of the last step's condenser water and the tower's answer to the
    # heat this step would reject at it, so no step rejects heat at a temperature its tower would not hold (with
    # the last step's water alone, an idle tower's cold basin let the economiser dump a full load every other
    # step at no fan cost).
    predicted = wet + reject(cw0)[-1]
    cw_step = 0.5 * (cw0 + predicted)
    econ_kj, chiller_load, plr, chiller_kw, rejected, approach = reject(cw_step)
    cw_units = xp.maximum(running, xp.where(econ_kj > 0.0, 1.0, 0.0))  # condenser pumps running
    idle = xp.where(cw_step + config.hx_approach_k <= chw_set, enabled, 0.0)
    econ = xp.where(removal > 1e-9, econ_kj / xp.maximum(removal, 1e-9), idle)
    heat_removed = econ_kj + chiller_load * dt_s
    if tank.installed:  # the loop is served first, the tank charges with what is left
        loop_removed = xp.minimum(heat_removed, loop_need)
        charged = heat_removed - loop_removed
        chw1 = chw0 + (heat_in - discharged - loop_removed) / config.loop_thermal_mass_kj_per_k
        tank1 = tank0 + (discharged - charged + shell_kj) / tank.capacity_kj_per_k
    else:
        charged = tank_pump
        chw1 = chw0 + (heat_in - heat_removed) / config.loop_thermal_mass_kj_per_k
        tank1 = tank0
    cw1 = wet + approach
    circulating = xp.where(cw_units > 0.0, 1.0, 0.0)
    tower_kw = tower_fan_kw(xp, config.tower.design_fan_kw, tower_speed) * circulating
    cw_pump = config.cw_pump_per_chiller_kw * cw_units

    ups = ups_loss_kw(it_total, config.ups_rated_kw)
    electrical = ups + distribution_loss_kw(it_total) + ancillary_kw(config.design_it_kw)
    cooling = fan_total + chw_pump + tank_pump + cw_pump + tower_kw + chiller_kw
    facility = it_total + electrical + cooling
    pue = xp.where(it_total > 0.0, facility / xp.maximum(it_total, 1e-9), 0.0)  # 0 with no IT load
    return (chw1, chw_return, cw1, cw_step, approach, econ, econ_kj / dt_s, running, plr, chiller_load, capacity, chiller_kw,
            chw_pump, discharged / dt_s, charged / dt_s, tank_pump, tank1, cw_pump, tower_kw, rejected, ups, electrical,
            cooling, facility, pue, heat_removed, staged, timer, direction, shell_kj)


def _constants(config: PlantV2Config) -> tuple[float, float, list[list[float]]]:
    """(η, FR_water,0, per-zone constants as lists), computed once per config (a private cache on it)."""
    cached = config.__dict__.get("_v2_constants")
    if cached is None:
        zone_lists = [a.tolist() for a in _zone_constant_arrays(config)]
        cached = (config.chiller.carnot_efficiency, config.tower.design_water_flow_ratio, zone_lists)
        object.__setattr__(config, "_v2_constants", cached)  # frozen dataclass: a private cache
    return cached


def _zone_constant_arrays(config: PlantV2Config) -> tuple[Any, ...]:
    """The per-zone constants in ``_zone_equations``' order."""
    return (config.crah_max_airflow_kg_s, config.crah_fan_max_kw, config.zone_envelope_ua_kw_per_k,
            config.zone_thermal_mass_kj_per_k, config.coil_ua_design_kw_per_k,
            config.coil_air_capacity_design_kw_per_k, config.coil_water_capacity_design_kw_per_k,
            config.zone_bypass_fraction, config.zone_min_recirculation)


def _is_single(config: PlantV2Config, state: PlantV2State, control: PlantV2Control, boundary: PlantBoundary) -> bool:
    """Whether the inputs describe one plant: zone inputs of shape (Z,), plant inputs 0-d, chillers (N,)."""
    z = (config.n_zones,)
    for a in (state.zone_temp_c, control.fan_speed, control.supply_setpoint_c, boundary.it_kw,
              boundary.fan_units_alive):
        if getattr(a, "shape", None) != z:
            return False
    for v in (state.chw_supply_c, state.cw_supply_c, state.chillers_on, state.stage_timer_s,
              state.last_stage_direction, state.tank_temp_c, control.chw_setpoint_c, control.economiser_on,
              control.tower_fan_speed, control.chillers_staged, control.chw_pump_speed, control.tank_flow,
              boundary.outdoor_dry_bulb_c,
              boundary.outdoor_wet_bulb_c):
        if getattr(v, "ndim", 0) != 0:
            return False
    return getattr(boundary.chiller_available, "ndim", 0) == 1


def step_plant_v2(config: PlantV2Config, state: PlantV2State, control: PlantV2Control, boundary: PlantBoundary,
                  dt_s: float) -> tuple[PlantV2State, PlantV2Outputs]:
    """Advance the plant by ``dt_s`` seconds (module docstring): one plant on floats, a batch on arrays.

    Zone inputs are ``(..., Z)`` (or broadcastable), plant inputs ``(...)``, chiller availability ``(..., N)``."""
    if dt_s <= 0 or not math.isfinite(dt_s):
        raise ValueError(f"dt_s must be a positive finite number of seconds, got {dt_s!r}")
    if _is_single(config, state, control, boundary):
        return _step_single(config, state, control, boundary, float(dt_s))
    return _step_arrays(config, state, control, boundary, float(dt_s))


def _plant_inputs(state: PlantV2State, control: PlantV2Control) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return ((state.chw_supply_c, state.cw_supply_c, state.chillers_on, state.stage_timer_s,
             state.last_stage_direction, state.tank_temp_c),
            (control.chw_setpoint_c, control.economiser_on, control.tower_fan_speed, control.chillers_staged,
             control.chw_pump_speed, control.tank_flow))


def _step_single(config: PlantV2Config, state: PlantV2State, control: PlantV2Control, boundary: PlantBoundary,
                 dt_s: float) -> tuple[PlantV2State, PlantV2Outputs]:
    eta, fr0, zone_constants = _constants(config)
    plant_state, plant_control = _plant_inputs(state, control)
    chw0, cw0, staged0, timer0, direction0, tank0 = [float(v) for v in plant_state]
    plant_control = tuple([float(v) for v in plant_control])
    dry = float(boundary.outdoor_dry_bulb_c)
    wet = float(boundary.outdoor_wet_bulb_c)
    pump = FLOATS.clip(plant_control[4], config.pump_min_speed, 1.0)
    plant_control = (*plant_control[:4], pump, plant_control[5])
    zone_inputs = [a.tolist() for a in (
        state.zone_temp_c, control.fan_speed, control.supply_setpoint_c, boundary.it_kw, boundary.fan_units_alive)]
    rows = []
    loop_load = fan_total = it_total = it_nominal = envelope = stored = 0.0
    for values in zip(*zone_constants, *zone_inputs, strict=True):
        row = _zone_equations(FLOATS, config, *values, chw0, dry, pump, dt_s)
        rows.append(row)
        loop_load += row[8]
        fan_total += row[7]
        it_total += row[9]
        it_nominal += values[12]  # the zone's nominal IT power, after the 9 zone constants and 3 inputs
        envelope += row[10]
        stored += row[11]
    units_available = 0.0
    for u in np.asarray(boundary.chiller_available, dtype=np.float64).tolist():
        units_available += u
    plant = _plant_equations(FLOATS, config, eta, fr0, loop_load, it_total, fan_total, chw0, cw0, staged0, timer0,
                             direction0, tank0, plant_control, dry, wet, units_available, dt_s)
    zone_block = np.array(rows).T[:10]  # (10, Z): ZONE_OUTPUTS
    return _assemble(config, zone_block, plant, chw0, tank0, it_nominal, it_total, fan_total, envelope, stored,
                     dt_s, np.float64)


def _step_arrays(config: PlantV2Config, state: PlantV2State, control: PlantV2Control, boundary: PlantBoundary,
                 dt_s: float) -> tuple[PlantV2State, PlantV2Outputs]:
    eta, fr0, _ = _constants(config)
    xp = ARRAYS
    (chw0, cw0, staged0, timer0, direction0, tank0), plant_control = (
        tuple(np.asarray(v, dtype=np.float64) for v in group) for group in _plant_inputs(state, control))
    dry = np.asarray(boundary.outdoor_dry_bulb_c, dtype=np.float64)
    wet = np.asarray(boundary.outdoor_wet_bulb_c, dtype=np.float64)
    pump = xp.clip(plant_control[4], config.pump_min_speed, 1.0)
    plant_control = (*plant_control[:4], pump, plant_control[5])
    it_nominal_z = np.asarray(boundary.it_kw, dtype=np.float64)
    row = _zone_equations(
        xp, config, *_zone_constant_arrays(config), np.asarray(state.zone_temp_c, dtype=np.float64),
        np.asarray(control.fan_speed, dtype=np.float64), np.asarray(control.supply_setpoint_c, dtype=np.float64),
        it_nominal_z, np.asarray(boundary.fan_units_alive, dtype=np.float64), chw0[..., None], dry[..., None],
        pump[..., None], dt_s)
    shape = np.broadcast_shapes(*(np.shape(a) for a in row))
    row = tuple(a if np.shape(a) == shape else np.broadcast_to(a, shape) for a in row)
    add = np.add.reduce  # sums over the zone axis (faster than ndarray.sum on small arrays)
    loop_load, fan_total, it_total = add(row[8], axis=-1), add(row[7], axis=-1), add(row[9], axis=-1)
    units_available = add(np.asarray(boundary.chiller_available, dtype=np.float64), axis=-1)
    plant = _plant_equations(xp, config, eta, fr0, loop_load, it_total, fan_total, chw0, cw0, staged0, timer0,
                             direction0, tank0, plant_control, dry, wet, units_available, dt_s)
    it_nominal = add(np.broadcast_to(it_nominal_z, shape), axis=-1)
    zone_block = [a if a.flags.writeable else a.copy() for a in row[:10]]  # broadcast views are read-only
    return _assemble(config, zone_block, plant, chw0, tank0, it_nominal, it_total, fan_total,
                     add(row[10], axis=-1), add(row[11], axis=-1), dt_s, np.asarray)


_CHW_PUMP, _TANK_PUMP, _TANK_TEMP = (PLANT_OUTPUTS.index(n) for n in ("chw_pump_kw", "tank_pump_kw", "tank_temp_c"))


def _assemble(config: PlantV2Config, zone_block: Any, plant: tuple[Any, ...], chw0: Any, tank0: Any,
              it_nominal: Any, it_total: Any, fan_total: Any, envelope_kw: Any, zone_stored_kj: Any, dt_s: float,
              wrap: Any) -> tuple[PlantV2State, PlantV2Outputs]:
    """The new state and the outputs (built by position: ``ZONE_OUTPUTS``, ``PLANT_OUTPUTS``, ``TOTAL_OUTPUTS``),
    plant values wrapped by ``wrap`` (np.float64 for one plant)."""
    chw1, tank1, shell_kj = plant[0], plant[_TANK_TEMP], plant[-1]
    stored = zone_stored_kj + (chw1 - chw0) * config.loop_thermal_mass_kj_per_k
    if config.tank.installed:
        stored = stored + (tank1 - tank0) * config.tank.capacity_kj_per_k
    plant_values = [wrap(v) for v in plant[:-1]]
    pumps = plant[_CHW_PUMP] + plant[_TANK_PUMP]
    outputs = PlantV2Outputs(
        *zone_block, *plant_values[:-3], wrap(it_nominal), wrap(it_total),
        wrap((it_total + fan_total + pumps) * dt_s), wrap(envelope_kw * dt_s - shell_kj), wrap(stored))
    staged, timer, direction = plant_values[-3:]
    state = PlantV2State(np.array(zone_block[4], dtype=np.float64), plant_values[0], plant_values[2], staged, timer,
                         direction, plant_values[_TANK_TEMP])
    return state, outputs
