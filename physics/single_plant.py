"""One plant stepped in Python floats: the same arithmetic as :func:`dcops.physics.plant.step_plant`, bit for bit.

Why: an unbatched plant has 1–7 zones, so each numpy operation of the array code works on a handful of numbers
and costs its fixed call overhead (about 0.5 µs) for a few nanoseconds of arithmetic; a step is about a hundred
such calls. The cluster environment and the cooling tasks step one plant at a time (18 steps per admission
window), so this path does the same operations on Python floats, zone by zone, about five times faster.

Exactness: every operation is the one the array code does, in the same order (IEEE-754 ``+ − × ÷`` give the same
double either way; ``max``/``min`` are written as numpy's ``maximum``/``minimum`` choose for finite inputs; sums
over zones and chillers run left to right from 0.0, which is numpy's order below 8 terms; ``expm1`` is numpy's,
on the zones' values at once). ``tests/physics/test_single_plant.py`` checks every output field for equality
(not closeness) against the array path over random plants, controls and boundaries.

:func:`dcops.physics.plant.step_plant` calls :func:`step_single_plant` for an unbatched plant whose inputs have
the plain shapes (zone arrays ``(Z,)``, plant values 0-d, chillers ``(N,)``) and at most 7 zones and chillers; it
returns ``None`` (and the array path runs) for anything else, including any non-finite input or result, where
numpy's NaN and overflow rules apply.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dcops.physics.auxiliaries import ANCILLARY_FRACTION, DISTRIBUTION_LOSS_FRACTION, UPS_LOSS_COEFFICIENTS
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.plant_types import PlantBoundary, PlantConfig, PlantControl, PlantOutputs, PlantState

MAX_TERMS = 7
"""Largest zone or chiller count stepped here (numpy sums 8 or more terms pairwise, in another order)."""

_SERIES_LIMIT = 1e-4  # as dcops.physics.zones
_F64 = np.float64
_F64_DTYPE = np.dtype(np.float64)
_ND = np.ndarray
_EXPM1 = math.expm1


class _Constants:
    """A plant configuration's arrays as Python lists and its derived figures, computed once per config."""

    def __init__(self, config: PlantConfig) -> None:
        self.z = config.n_zones
        self.shape = (self.z,)
        self.max_air = config.crah_max_airflow_kg_s.tolist()
        self.fan_max = config.crah_fan_max_kw.tolist()
        self.ua = config.zone_envelope_ua_kw_per_k.tolist()
        self.cap = config.zone_thermal_mass_kj_per_k.tolist()
        self.server_air_cp = CP_AIR_KJ_PER_KG_K * config.server_delta_t_k
        self.design_it = float(config.zone_design_it_kw.sum())
        self.design_rejection = config.design_rejection_kw
        self.curves = config.chiller_curves
        self.dt_over_cap: dict[float, list[float]] = {}
        self.ok = (self.z <= MAX_TERMS and config.n_chillers <= MAX_TERMS
                   and all(len(v) == self.z for v in (self.max_air, self.fan_max, self.ua, self.cap)))


def _constants(config: PlantConfig) -> _Constants:
    cached = config.__dict__.get("_single_plant_constants")
    if cached is None:
        cached = _Constants(config)
        object.__setattr__(config, "_single_plant_constants", cached)  # frozen dataclass: a private cache
    return cached


def _zone_values(a: Any, z: int) -> list[float] | None:
    """A zone input as Z floats: a float64 array (Z,), or one value for every zone; None otherwise."""
    if isinstance(a, np.ndarray):
        if a.dtype.char != "d":
            return None
        if a.shape == (z,):
            return a.tolist()
        return [float(a)] * z if a.shape == () else None
    return [float(a)] * z if isinstance(a, float) else None


def _plant_value(a: Any) -> float | None:
    """A plant input as a float: a Python or numpy float64, or a 0-d float64 array; None otherwise."""
    if a.__class__ is _F64 or isinstance(a, float):
        return float(a)
    if isinstance(a, np.ndarray) and a.shape == () and a.dtype.char == "d":
        return float(a)
    return None


def step_single_plant(config: PlantConfig, state: PlantState, control: PlantControl, boundary: PlantBoundary,
                      dt_s: float) -> tuple[PlantState, PlantOutputs] | None:
    """Step one unbatched plant (module docstring), or return None where the array path must run."""
    k = _constants(config)
    if not k.ok:
        return None
    z = k.z
    zt, fs, ss, itk, al = (state.zone_temp_c, control.fan_speed, control.supply_setpoint_c, boundary.it_kw,
                           boundary.fan_units_alive)
    shape, nd, f64 = k.shape, _ND, _F64_DTYPE
    if (zt.__class__ is nd and fs.__class__ is nd and ss.__class__ is nd and itk.__class__ is nd and al.__class__ is nd
            and zt.shape == shape and fs.shape == shape and ss.shape == shape and itk.shape == shape
            and al.shape == shape and zt.dtype is f64 and fs.dtype is f64 and ss.dtype is f64 and itk.dtype is f64
            and al.dtype is f64):  # the usual case: plain (Z,) float64 arrays
        zone0, fan_set, supply_set, it, alive = zt.tolist(), fs.tolist(), ss.tolist(), itk.tolist(), al.tolist()
    else:
        zone0, fan_set, supply_set, it, alive = (_zone_values(a, z) for a in (zt, fs, ss, itk, al))
    chw0 = _plant_value(state.chw_supply_c)
    chw_set = _plant_value(control.chw_setpoint_c)
    econ_on = _plant_value(control.economiser_on)
    dry = _plant_value(boundary.outdoor_dry_bulb_c)
    wet = _plant_value(boundary.outdoor_wet_bulb_c)
    chillers = boundary.chiller_available
    if (zone0 is None or fan_set is None or supply_set is None or it is None or alive is None or chw0 is None
            or chw_set is None or econ_on is None or dry is None or wet is None
            or not isinstance(chillers, np.ndarray) or chillers.ndim != 1 or chillers.dtype.char != "d"):
        return None
    chiller_list = chillers.tolist()
    if len(chiller_list) > MAX_TERMS:
        return None
    inputs = sum(zone0) + sum(fan_set) + sum(supply_set) + sum(it) + sum(alive) + sum(chiller_list)
    if not math.isfinite(inputs + chw0 + chw_set + econ_on + dry + wet + dt_s):
        return None
    try:
        return _step(config, k, zone0, fan_set, supply_set, it, alive, chw0, chw_set, econ_on, dry, wet,
                     chiller_list, float(dt_s))
    except (ArithmeticError, ValueError):
        return None


def _step(config: PlantConfig, k: _Constants, zone0: list[float], fan_set: list[float], supply_set: list[float],
          it: list[float], alive: list[float], chw0: float, chw_set: float, econ_on: float, dry: float, wet: float,
          chiller_list: list[float], dt_s: float) -> tuple[PlantState, PlantOutputs] | None:
    cp = CP_AIR_KJ_PER_KG_K
    coil_floor = chw0 + config.coil_approach_k
    min_recirc = config.min_recirculation
    server_air_cp = k.server_air_cp
    dt_over_cap = k.dt_over_cap.get(dt_s)
    if dt_over_cap is None:
        dt_over_cap = k.dt_over_cap[dt_s] = [dt_s / c for c in k.cap]
    expm1 = _EXPM1

    # 1–2. Per zone: air side (plant.air_side), fan power (auxiliaries.fan_power_kw) and the exact zone update
    # (zones.zone_update, zones.exponential_factors); sums run left to right as numpy's do.
    supply, inlet_start, inlet, zone1, recirc, airflow, fan_kw, coil_kw = rows = [[0.0] * k.z for _ in range(8)]
    loop_load = fan_total = it_total = envelope_total = stored = 0.0
    for i, (max_air, fan_max, ua, cap, t0, f, sp, q_it, a) in enumerate(zip(
            k.max_air, k.fan_max, k.ua, k.cap, zone0, fan_set, supply_set, it, alive, strict=True)):
        f = f if f >= 0.0 else 0.0
        s = f if f <= 1.0 else 1.0
        m = max_air * a * s
        ts = sp if sp >= coil_floor else coil_floor
        demand = q_it / server_air_cp
        short = demand - m
        short = short if short >= 0.0 else 0.0
        r = short / (demand if demand >= 1e-9 else 1e-9)
        r = r if r >= min_recirc else min_recirc
        fan = fan_max * a * s * s * s
        mcp = m * cp
        x = (mcp + ua) * dt_over_cap[i]
        if x < _SERIES_LIMIT:
            phi = 1.0 - x / 2.0 + x * x / 6.0
            psi = 0.5 - x / 6.0 + x * x / 24.0
        else:
            phi = -expm1(-x) / x
            psi = (1.0 - phi) / x
        drift = (q_it + mcp * (ts - t0) + ua * (dry - t0)) / cap * dt_s
        t1 = t0 + drift * phi
        mean = t0 + drift * psi
        coil = mcp * (mean - ts) + fan
        supply[i] = ts
        inlet_start[i] = ts + r * (t0 - ts)
        inlet[i] = ts + r * (t1 - ts)
        zone1[i] = t1
        recirc[i] = r
        airflow[i] = m
        fan_kw[i] = fan
        coil_kw[i] = coil
        loop_load += coil
        fan_total += fan
        it_total += q_it
        envelope_total += ua * (mean - dry)
        stored += (t1 - t0) * cap

    # 3. Chilled-water loop.
    load_fraction = (loop_load if loop_load >= 0.0 else 0.0) / config.design_cooling_kw
    pump_min = config.pump_min_speed
    flow_fraction = load_fraction if load_fraction >= pump_min else pump_min
    f = flow_fraction if flow_fraction >= pump_min else pump_min
    chw_pump = config.chw_pump_design_kw * f * f * f
    heat_in = (loop_load + chw_pump) * dt_s
    removal = heat_in + config.loop_thermal_mass_kj_per_k * (chw0 - chw_set)
    removal = removal if removal >= 0.0 else 0.0
    chw_return = chw0 + config.chw_design_delta_t_k * load_fraction / flow_fraction
    if config.economiser_installed:
        econ_water = wet + config.tower_approach_k + config.hx_approach_k
        span = chw_return - chw_set
        if span > 1e-6:
            p = (chw_return - econ_water) / span
            p = p if p >= 0.0 else 0.0
            econ = (p if p <= 1.0 else 1.0) + 0.0
        else:
            econ = 1.0 if econ_water <= chw_set else 0.0
        econ = econ * (1.0 if econ_on > 0.5 else 0.0)
    else:
        econ = 0.0
    econ_kj = econ * removal

    # 4. Chillers (chiller.curve_modifiers, chiller.chiller_power_kw).
    curves = k.curves
    condenser = wet + config.tower_approach_k
    leaving = chw_set if chw_set >= chw0 else chw0
    lo, hi = curves.chw_leaving_range_c
    cx = leaving if leaving >= lo else lo
    cx = cx if cx <= hi else hi
    lo, hi = curves.condenser_entering_range_c
    cy = condenser if condenser >= lo else lo
    cy = cy if cy <= hi else hi
    a, b, c, d, e, g = curves.capft
    capft = a + cx * (b + c * cx + g * cy) + cy * (d + e * cy)
    a, b, c, d, e, g = curves.eirft
    eirft = a + cx * (b + c * cx + g * cy) + cy * (d + e * cy)
    unit_capacity = config.chiller_reference_capacity_kw * capft
    units_available = 0.0
    for u in chiller_list:
        units_available += u
    capacity = unit_capacity * units_available
    wanted = (removal - econ_kj) / dt_s
    chiller_load = wanted if wanted <= capacity else capacity
    units_on = float(math.ceil(chiller_load / unit_capacity - 1e-9))
    units_on = units_on if units_on <= units_available else units_available
    running = unit_capacity * (units_on if units_on >= 0.0 else 0.0)
    safe = running if running >= 1e-9 else 1e-9
    plr = chiller_load / safe
    plr = plr if plr <= 1.0 else 1.0
    cycling = plr / curves.min_part_load_ratio
    cycling = cycling if cycling <= 1.0 else 1.0
    pp = plr if plr >= curves.min_unloading_ratio else curves.min_unloading_ratio
    a, b, c = curves.eirfplr
    chiller_kw = safe / curves.reference_cop * eirft * (a + pp * (b + c * pp)) * cycling
    chiller_kw = chiller_kw * (1.0 if running > 0.0 else 0.0)
    heat_removed = econ_kj + chiller_load * dt_s
    chw1 = chw0 + (heat_in - heat_removed) / config.loop_thermal_mass_kj_per_k

    # 5. Heat rejection, pumps, UPS, totals.
    rejected = heat_removed / dt_s + chiller_kw
    rejection_fraction = rejected / k.design_rejection
    q = rejection_fraction if rejection_fraction <= 1.5 else 1.5
    tower = config.tower_fan_design_kw * q * q
    f = rejection_fraction if rejection_fraction >= pump_min else pump_min
    cw_pump = config.cw_pump_design_kw * f * f * f * (1.0 if rejected > 0.0 else 0.0)
    ua_, ub_, uc_ = UPS_LOSS_COEFFICIENTS
    rated = config.ups_rated_kw
    xu = it_total / rated
    ups = rated * (ua_ + xu * (ub_ + uc_ * xu))
    electrical = ups + DISTRIBUTION_LOSS_FRACTION * it_total + ANCILLARY_FRACTION * k.design_it
    cooling = fan_total + chw_pump + cw_pump + tower + chiller_kw
    facility = it_total + electrical + cooling
    pue = facility / (it_total if it_total >= 1e-9 else 1e-9) * (1.0 if it_total > 0.0 else 0.0)
    stored = stored + (chw1 - chw0) * config.loop_thermal_mass_kj_per_k
    if not math.isfinite(facility + chw1 + stored + loop_load + heat_removed + envelope_total):
        return None
    # One array for the eight zone fields (rows are views: one allocation instead of eight).
    zone_block = np.array(rows)
    supply_a, inlet_start_a, inlet_a, zone1_a, recirc_a, airflow_a, fan_a, coil_a = zone_block
    outputs = PlantOutputs(
        supply_air_c=supply_a,
        inlet_start_c=inlet_start_a,
        inlet_c=inlet_a,
        return_air_c=zone1_a,
        recirculation=recirc_a,
        airflow_kg_s=airflow_a,
        fan_kw=fan_a,
        coil_kw=coil_a,
        chw_supply_c=_F64(chw1),
        chw_return_c=_F64(chw_return),
        condenser_water_c=_F64(condenser),
        economiser_fraction=_F64(econ),
        economiser_kw=_F64(econ_kj / dt_s),
        chiller_load_kw=_F64(chiller_load),
        chiller_capacity_kw=_F64(capacity),
        chiller_kw=_F64(chiller_kw),
        chw_pump_kw=_F64(chw_pump),
        cw_pump_kw=_F64(cw_pump),
        tower_kw=_F64(tower),
        ups_loss_kw=_F64(ups),
        electrical_loss_kw=_F64(electrical),
        it_kw=_F64(it_total),
        cooling_kw=_F64(cooling),
        facility_kw=_F64(facility),
        pue=_F64(pue),
        heat_in_kj=_F64((it_total + fan_total + chw_pump) * dt_s),
        heat_removed_kj=_F64(heat_removed),
        envelope_loss_kj=_F64(envelope_total * dt_s),
        heat_stored_kj=_F64(stored),
    )
    return PlantState(zone1_a, _F64(chw1)), outputs
