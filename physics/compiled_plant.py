"""One plant step compiled with numba: the arithmetic of :mod:`dcops.physics.single_plant`, to the bit.

Why: the cluster environment steps its plant 18 times per admission window, each step between two calls of a
cooling controller. In Python floats a step costs about 16 µs, almost all of it interpreter overhead on a
handful of numbers; compiled, the arithmetic costs well under a microsecond and the call about one. Loops that
step a plant from compiled code or with few Python calls between steps (``dcops.cluster.compiled_window``) use
:func:`plant_kernel`; :func:`dcops.physics.plant.step_plant` stays the reference and the path of everything else.

Exactness: the kernel does every operation of ``single_plant._step`` in the same order on IEEE-754 doubles
(numba does not contract ``a·b + c`` into a fused multiply-add or reorder without ``fastmath``, which is off);
``expm1`` is the C library's, as there; a division by zero raises ``ZeroDivisionError`` as Python's does
(numba's ``python`` error model), and a ``ceil`` of a non-finite value raises ``ValueError``, so the caller
declines exactly the steps the float path declines and runs :func:`~dcops.physics.plant.step_plant` there.
``tests/physics/test_compiled_plant.py`` checks every output field, byte for byte, against the float path, and
every case of ``tests/physics/test_single_plant.py`` checks it too. One difference is left: the float path's input
check adds each input with Python's ``sum``, which is compensated from Python 3.12 on, so inputs near ±1e308 that
overflow in one order and not in the other may be declined by one path only (no plant input is near that).

numba is imported when a kernel is first asked for (it is not part of ``import dcops``); ``DCOPS_JIT=0`` in the
environment, or numba missing, turns the compiled paths off (:func:`jit_available`), and every caller then
takes the Python path, which gives the same bits.
"""

from __future__ import annotations

import math
import os
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.physics.auxiliaries import ANCILLARY_FRACTION, DISTRIBUTION_LOSS_FRACTION, UPS_LOSS_COEFFICIENTS
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.plant_types import PlantConfig, PlantControl, PlantOutputs, PlantState
from dcops.physics.single_plant import MAX_TERMS

JIT_ENV = "DCOPS_JIT"
"""Environment variable: ``0`` turns every compiled path off (the Python paths give the same bits)."""

ZONE_ROWS = ("supply_air_c", "inlet_start_c", "inlet_c", "return_air_c", "recirculation", "airflow_kg_s", "fan_kw",
             "coil_kw")
"""The rows of the kernel's zone output (8, Z): the zone fields of ``PlantOutputs``, in its order."""
PLANT_ROWS = PlantOutputs._fields[len(ZONE_ROWS):]
"""The entries of the kernel's plant output (21,): the plant fields of ``PlantOutputs``, in its order."""

# Indices into the packed constants (``pack_plant``).
_CP, _APPROACH, _MIN_RECIRC, _SERVER_AIR_CP, _DESIGN_COOLING, _PUMP_MIN, _CHW_PUMP, _LOOP_MASS, _CHW_DT = range(9)
_ECON, _TOWER_APPROACH, _HX_APPROACH, _LEAVE_LO, _LEAVE_HI, _COND_LO, _COND_HI = range(9, 16)
_CAPFT, _EIRFT = 16, 22  # six coefficients each
_REF_CAPACITY, _MIN_PLR, _MIN_UNLOAD, _EIRFPLR, _REF_COP = 28, 29, 30, 31, 34  # EIRFPLR: three coefficients
_DESIGN_REJECTION, _TOWER_FAN, _CW_PUMP, _UPS, _UPS_RATED, _DISTRIBUTION, _ANCILLARY, _DESIGN_IT = (
    35, 36, 37, 38, 41, 42, 43, 44)  # UPS: three coefficients
_N_CONSTANTS = 45
_SERIES_LIMIT = 1e-4  # as dcops.physics.zones


def jit_available() -> bool:
    """Whether the compiled paths run: numba importable and ``DCOPS_JIT`` not ``0`` (read at each call)."""
    if os.environ.get(JIT_ENV, "1").strip() == "0":
        return False
    return _numba() is not None


@cache
def _numba() -> Any:
    try:
        import numba
    except ImportError:  # an optional speed-up: the Python paths give the same bits
        return None
    return numba


def compiled(function: Any) -> Any:
    """``function`` compiled by numba (nopython, Python's error model, cached on disk), once per process."""
    return _compile(function)


@cache
def _compile(function: Any) -> Any:
    numba = _numba()
    if numba is None:
        raise RuntimeError("numba is not installed; check jit_available() first")
    options = {"error_model": "python", "nogil": True}
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:  # no writable place for numba's cache (a read-only install): compile in each process
        return numba.njit(cache=False, **options)(function)


def pack_plant(config: PlantConfig) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The plant's constants for :func:`plant_kernel`: per-zone rows (max airflow kg/s, fan kW, envelope UA kW/K,
    thermal mass kJ/K) as (4, Z) and the plant's scalars (45,), computed as ``single_plant`` computes them;
    None for a plant the float path does not step (more than ``MAX_TERMS`` zones or chillers)."""
    z = config.n_zones
    if z > MAX_TERMS or config.n_chillers > MAX_TERMS:
        return None
    zones = np.array([config.crah_max_airflow_kg_s, config.crah_fan_max_kw, config.zone_envelope_ua_kw_per_k,
                      config.zone_thermal_mass_kj_per_k], dtype=np.float64)
    if zones.shape != (4, z):
        return None
    curves = config.chiller_curves
    scalars = [
        CP_AIR_KJ_PER_KG_K, config.coil_approach_k, config.min_recirculation,
        CP_AIR_KJ_PER_KG_K * config.server_delta_t_k, config.design_cooling_kw, config.pump_min_speed,
        config.chw_pump_design_kw, config.loop_thermal_mass_kj_per_k, config.chw_design_delta_t_k,
        1.0 if config.economiser_installed else 0.0, config.tower_approach_k, config.hx_approach_k,
        *curves.chw_leaving_range_c, *curves.condenser_entering_range_c, *curves.capft, *curves.eirft,
        config.chiller_reference_capacity_kw, curves.min_part_load_ratio, curves.min_unloading_ratio,
        *curves.eirfplr, curves.reference_cop, config.design_rejection_kw, config.tower_fan_design_kw,
        config.cw_pump_design_kw, *UPS_LOSS_COEFFICIENTS, config.ups_rated_kw, DISTRIBUTION_LOSS_FRACTION,
        ANCILLARY_FRACTION, float(config.zone_design_it_kw.sum()),
    ]
    assert len(scalars) == _N_CONSTANTS
    return zones, np.array(scalars, dtype=np.float64)


def plant_kernel(zones: Any, c: Any, zone0: Any, chw0: float, fan_set: Any, supply_set: Any, chw_set: float,
                 econ_on: float, it: Any, alive: Any, dry: float, wet: float, chillers: Any, dt_s: float,
                 out_zone: Any, out_plant: Any) -> bool:
    """One step (``single_plant._step``'s arithmetic) into ``out_zone`` (8, Z; rows :data:`ZONE_ROWS`, the new
    zone temperatures are ``return_air_c``) and ``out_plant`` (21; :data:`PLANT_ROWS`, the new chilled-water
    supply first). Returns False, writing nothing reliable, where ``step_single_plant`` returns None for its
    inputs or result (non-finite); raises ``ZeroDivisionError`` / ``ValueError`` where it catches them.

    Run compiled (:func:`compiled`); in the interpreter it is only slow."""
    z = zone0.shape[0]
    # The float path's check, sum by sum: a finite input whose sum overflows is declined there too.
    sums = [0.0] * 6
    for i in range(z):
        sums[0] += zone0[i]
    for i in range(z):
        sums[1] += fan_set[i]
    for i in range(z):
        sums[2] += supply_set[i]
    for i in range(z):
        sums[3] += it[i]
    for i in range(z):
        sums[4] += alive[i]
    for u in range(chillers.shape[0]):
        sums[5] += chillers[u]
    inputs = sums[0] + sums[1] + sums[2] + sums[3] + sums[4] + sums[5]
    if not math.isfinite(inputs + chw0 + chw_set + econ_on + dry + wet + dt_s):
        return False
    cp = c[_CP]
    coil_floor = chw0 + c[_APPROACH]
    min_recirc = c[_MIN_RECIRC]
    server_air_cp = c[_SERVER_AIR_CP]

    loop_load = 0.0
    fan_total = 0.0
    it_total = 0.0
    envelope_total = 0.0
    stored = 0.0
    for i in range(z):
        max_air, fan_max, ua, cap = zones[0, i], zones[1, i], zones[2, i], zones[3, i]
        t0, f, sp, q_it, a = zone0[i], fan_set[i], supply_set[i], it[i], alive[i]
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
        x = (mcp + ua) * (dt_s / cap)
        if x < _SERIES_LIMIT:
            phi = 1.0 - x / 2.0 + x * x / 6.0
            psi = 0.5 - x / 6.0 + x * x / 24.0
        else:
            phi = -math.expm1(-x) / x
            psi = (1.0 - phi) / x
        drift = (q_it + mcp * (ts - t0) + ua * (dry - t0)) / cap * dt_s
        t1 = t0 + drift * phi
        mean = t0 + drift * psi
        coil = mcp * (mean - ts) + fan
        out_zone[0, i] = ts
        out_zone[1, i] = ts + r * (t0 - ts)
        out_zone[2, i] = ts + r * (t1 - ts)
        out_zone[3, i] = t1
        out_zone[4, i] = r
        out_zone[5, i] = m
        out_zone[6, i] = fan
        out_zone[7, i] = coil
        loop_load += coil
        fan_total += fan
        it_total += q_it
        envelope_total += ua * (mean - dry)
        stored += (t1 - t0) * cap

    # Chilled-water loop.
    load_fraction = (loop_load if loop_load >= 0.0 else 0.0) / c[_DESIGN_COOLING]
    pump_min = c[_PUMP_MIN]
    flow_fraction = load_fraction if load_fraction >= pump_min else pump_min
    f = flow_fraction if flow_fraction >= pump_min else pump_min
    chw_pump = c[_CHW_PUMP] * f * f * f
    heat_in = (loop_load + chw_pump) * dt_s
    loop_mass = c[_LOOP_MASS]
    removal = heat_in + loop_mass * (chw0 - chw_set)
    removal = removal if removal >= 0.0 else 0.0
    chw_return = chw0 + c[_CHW_DT] * load_fraction / flow_fraction
    if c[_ECON] > 0.5:
        econ_water = wet + c[_TOWER_APPROACH] + c[_HX_APPROACH]
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

    # Chillers.
    condenser = wet + c[_TOWER_APPROACH]
    leaving = chw_set if chw_set >= chw0 else chw0
    lo, hi = c[_LEAVE_LO], c[_LEAVE_HI]
    cx = leaving if leaving >= lo else lo
    cx = cx if cx <= hi else hi
    lo, hi = c[_COND_LO], c[_COND_HI]
    cy = condenser if condenser >= lo else lo
    cy = cy if cy <= hi else hi
    a, b, cc, d, e, g = c[_CAPFT], c[_CAPFT + 1], c[_CAPFT + 2], c[_CAPFT + 3], c[_CAPFT + 4], c[_CAPFT + 5]
    capft = a + cx * (b + cc * cx + g * cy) + cy * (d + e * cy)
    a, b, cc, d, e, g = c[_EIRFT], c[_EIRFT + 1], c[_EIRFT + 2], c[_EIRFT + 3], c[_EIRFT + 4], c[_EIRFT + 5]
    eirft = a + cx * (b + cc * cx + g * cy) + cy * (d + e * cy)
    unit_capacity = c[_REF_CAPACITY] * capft
    units_available = 0.0
    for u in range(chillers.shape[0]):
        units_available += chillers[u]
    capacity = unit_capacity * units_available
    wanted = (removal - econ_kj) / dt_s
    chiller_load = wanted if wanted <= capacity else capacity
    needed = chiller_load / unit_capacity - 1e-9
    if not math.isfinite(needed):
        raise ValueError("cannot take the ceiling of a non-finite unit count")  # math.ceil's error in the float path
    units_on = float(np.ceil(needed))  # −0.0 where math.ceil gives 0: only compared, so no output differs
    units_on = units_on if units_on <= units_available else units_available
    running = unit_capacity * (units_on if units_on >= 0.0 else 0.0)
    safe = running if running >= 1e-9 else 1e-9
    plr = chiller_load / safe
    plr = plr if plr <= 1.0 else 1.0
    cycling = plr / c[_MIN_PLR]
    cycling = cycling if cycling <= 1.0 else 1.0
    pp = plr if plr >= c[_MIN_UNLOAD] else c[_MIN_UNLOAD]
    a, b, cc = c[_EIRFPLR], c[_EIRFPLR + 1], c[_EIRFPLR + 2]
    chiller_kw = safe / c[_REF_COP] * eirft * (a + pp * (b + cc * pp)) * cycling
    chiller_kw = chiller_kw * (1.0 if running > 0.0 else 0.0)
    heat_removed = econ_kj + chiller_load * dt_s
    chw1 = chw0 + (heat_in - heat_removed) / loop_mass

    # Heat rejection, pumps, UPS, totals.
    rejected = heat_removed / dt_s + chiller_kw
    rejection_fraction = rejected / c[_DESIGN_REJECTION]
    q = rejection_fraction if rejection_fraction <= 1.5 else 1.5
    tower = c[_TOWER_FAN] * q * q
    f = rejection_fraction if rejection_fraction >= pump_min else pump_min
    cw_pump = c[_CW_PUMP] * f * f * f * (1.0 if rejected > 0.0 else 0.0)
    rated = c[_UPS_RATED]
    xu = it_total / rated
    ups = rated * (c[_UPS] + xu * (c[_UPS + 1] + c[_UPS + 2] * xu))
    electrical = ups + c[_DISTRIBUTION] * it_total + c[_ANCILLARY] * c[_DESIGN_IT]
    cooling = fan_total + chw_pump + cw_pump + tower + chiller_kw
    facility = it_total + electrical + cooling
    pue = facility / (it_total if it_total >= 1e-9 else 1e-9) * (1.0 if it_total > 0.0 else 0.0)
    stored = stored + (chw1 - chw0) * loop_mass
    if not math.isfinite(facility + chw1 + stored + loop_load + heat_removed + envelope_total):
        return False
    out_plant[0] = chw1
    out_plant[1] = chw_return
    out_plant[2] = condenser
    out_plant[3] = econ
    out_plant[4] = econ_kj / dt_s
    out_plant[5] = chiller_load
    out_plant[6] = capacity
    out_plant[7] = chiller_kw
    out_plant[8] = chw_pump
    out_plant[9] = cw_pump
    out_plant[10] = tower
    out_plant[11] = ups
    out_plant[12] = electrical
    out_plant[13] = it_total
    out_plant[14] = cooling
    out_plant[15] = facility
    out_plant[16] = pue
    out_plant[17] = (it_total + fan_total + chw_pump) * dt_s
    out_plant[18] = heat_removed
    out_plant[19] = envelope_total * dt_s
    out_plant[20] = stored
    return True


def outputs_of(out_zone: NDArray[np.float64], out_plant: NDArray[np.float64]) -> tuple[PlantState, PlantOutputs]:
    """The state and ``PlantOutputs`` of a kernel step (copies: the kernel's buffers may be reused)."""
    block = np.array(out_zone)
    plant = [np.float64(v) for v in out_plant.tolist()]
    outputs = PlantOutputs(*block, *plant)
    return PlantState(block[3], plant[0]), outputs


def step_compiled(config: PlantConfig, packed: tuple[NDArray[np.float64], NDArray[np.float64]], state: PlantState,
                  control: PlantControl, it_kw: NDArray[np.float64], fan_units_alive: NDArray[np.float64],
                  dry_bulb_c: float, wet_bulb_c: float, chiller_available: NDArray[np.float64], dt_s: float
                  ) -> tuple[PlantState, PlantOutputs] | None:
    """One step through the compiled kernel for plain float64 inputs ((Z,) zone arrays), or None where the float
    path declines the step (the caller then runs ``step_plant``). For tests and one-off steps: a loop keeps
    its buffers and calls the kernel itself."""
    zones, scalars = packed
    z = config.n_zones
    out_zone, out_plant = np.empty((8, z)), np.empty(len(PLANT_ROWS))
    try:
        ok = compiled(plant_kernel)(
            zones, scalars, state.zone_temp_c, float(state.chw_supply_c), control.fan_speed,
            control.supply_setpoint_c, float(control.chw_setpoint_c), float(control.economiser_on), it_kw,
            fan_units_alive, float(dry_bulb_c), float(wet_bulb_c), chiller_available, float(dt_s), out_zone,
            out_plant)
    except (ArithmeticError, ValueError):
        return None
    return outputs_of(out_zone, out_plant) if ok else None
