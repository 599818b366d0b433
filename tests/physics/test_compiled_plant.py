"""The compiled plant step (``dcops.physics.compiled_plant``) equals the Python-float step, bit for bit, and declines
exactly the steps the float path declines."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.physics.compiled_plant import (
    JIT_ENV,
    PLANT_ROWS,
    ZONE_ROWS,
    jit_available,
    pack_plant,
    step_compiled,
)
from dcops.physics.plant import PlantBoundary, PlantConfig, PlantControl, PlantOutputs, initial_state
from dcops.physics.single_plant import step_single_plant
from tests.physics.test_single_plant import ALL_CONFIGS as CONFIGS  # the single path's plants, 1 to 7 zones
from tests.physics.test_single_plant import _case as _single_case


def _case(rng: np.random.Generator, config: PlantConfig, idle: bool, tripped: bool):
    """test_single_plant's random state, control and boundary (its step length is not part of them)."""
    return _single_case(rng, config, 300.0, idle, tripped)


def _compiled(config, state, control, boundary, dt_s):
    packed = pack_plant(config)
    assert packed is not None
    return step_compiled(config, packed, state, control, boundary.it_kw, boundary.fan_units_alive,
                         float(boundary.outdoor_dry_bulb_c), float(boundary.outdoor_wet_bulb_c),
                         boundary.chiller_available, dt_s)


def _assert_same_step(config, state, control, boundary, dt_s) -> None:
    single = step_single_plant(config, state, control, boundary, dt_s)
    kernel = _compiled(config, state, control, boundary, dt_s)
    assert (single is None) == (kernel is None), "the kernel must decline exactly what the float path declines"
    if single is None:
        return
    (s_state, s_out), (k_state, k_out) = single, kernel
    assert s_state.zone_temp_c.tobytes() == k_state.zone_temp_c.tobytes()
    assert np.asarray(s_state.chw_supply_c).tobytes() == np.asarray(k_state.chw_supply_c).tobytes()
    for name in PlantOutputs._fields:  # bytes: signed zeros count
        a, b = np.asarray(getattr(s_out, name)), np.asarray(getattr(k_out, name))
        assert a.shape == b.shape and a.dtype == b.dtype, name
        assert a.tobytes() == b.tobytes(), f"{name}: {a} != {b}"


def test_the_kernel_rows_are_the_outputs_fields_in_order():
    assert (*ZONE_ROWS, *PLANT_ROWS) == PlantOutputs._fields


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, len(CONFIGS) - 1),
       dt_s=st.sampled_from([1e-3, 60.0, 300.0, 3600.0]), idle=st.booleans(), tripped=st.booleans())
def test_the_kernel_equals_the_float_path(seed: int, which: int, dt_s: float, idle: bool, tripped: bool) -> None:
    config = CONFIGS[which]
    state, control, boundary = _case(np.random.default_rng(seed), config, idle, tripped)
    _assert_same_step(config, state, control, boundary, dt_s)


def test_a_long_trajectory_stays_identical() -> None:
    config, rng = CONFIGS[0], np.random.default_rng(5)
    state, control, boundary = _case(rng, config, False, False)
    for _ in range(300):
        single = step_single_plant(config, state, control, boundary, 300.0)
        kernel = _compiled(config, state, control, boundary, 300.0)
        assert single is not None and kernel is not None
        assert np.array_equal(single[0].zone_temp_c, kernel[0].zone_temp_c)
        assert float(single[0].chw_supply_c) == float(kernel[0].chw_supply_c)
        assert float(single[1].facility_kw) == float(kernel[1].facility_kw)
        state = single[0]
        _, control, boundary = _case(rng, config, False, False)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e308])
@pytest.mark.parametrize("where", ["zone", "plant", "chillers"])
def test_non_finite_inputs_are_declined(bad: float, where: str) -> None:
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(1), config, False, False)
    if where == "zone":
        zone = state.zone_temp_c.copy()
        zone[1] = bad
        zone[2] = bad if bad == 1e308 else zone[2]  # two huge finite values overflow the input sum
        state = dataclasses.replace(state, zone_temp_c=zone)
    elif where == "plant":
        control = dataclasses.replace(control, chw_setpoint_c=np.asarray(bad))
    else:
        chillers = boundary.chiller_available.copy()
        chillers[:] = bad
        boundary = dataclasses.replace(boundary, chiller_available=chillers)
    _assert_same_step(config, state, control, boundary, 300.0)


@pytest.mark.parametrize("fault", ["a zone of no thermal mass", "chillers of no capacity", "no pump minimum"])
def test_steps_the_float_arithmetic_cannot_do_are_declined(fault: str) -> None:
    base = CONFIGS[0]
    if fault == "a zone of no thermal mass":
        mass = base.zone_thermal_mass_kj_per_k.copy()
        mass[0] = 0.0
        config = dataclasses.replace(base, zone_thermal_mass_kj_per_k=mass)
    elif fault == "chillers of no capacity":
        config = dataclasses.replace(base, chiller_reference_capacity_kw=0.0)
    else:
        config = dataclasses.replace(base, pump_min_speed=0.0)
    state, control, boundary = _case(np.random.default_rng(2), config, fault == "no pump minimum", False)
    _assert_same_step(config, state, control, boundary, 300.0)


@pytest.mark.parametrize("which", ["zone_temp_c", "fan_speed", "supply_setpoint_c", "it_kw", "fan_units_alive",
                                   "chw_supply_c", "chw_setpoint_c", "economiser_on", "outdoor_dry_bulb_c",
                                   "outdoor_wet_bulb_c", "chiller_available"])
@pytest.mark.parametrize("value", [0.0, -0.0, 1e200])
def test_an_input_of_zero_or_a_huge_one_is_stepped_as_the_float_path_steps_it(which: str, value: float) -> None:
    """Zeros (a divisor of the input check's sums in a mutant) and huge finite values (whose products overflow
    where their sums do not) in each input, every zone or chiller at once."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(4), config, False, False)
    for part in ("state", "control", "boundary"):
        holder = {"state": state, "control": control, "boundary": boundary}[part]
        if hasattr(holder, which):
            old = np.asarray(getattr(holder, which))
            changed = dataclasses.replace(holder, **{which: np.full(old.shape, value)})
            state, control, boundary = (changed if part == "state" else state, changed if part == "control" else control,
                                        changed if part == "boundary" else boundary)
    _assert_same_step(config, state, control, boundary, 300.0)


def test_two_input_sums_that_overflow_together_are_declined() -> None:
    """Each input's sum finite, their total not: the float path declines, so must the kernel."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(6), config, False, False)
    zone = np.zeros(config.n_zones)
    zone[0] = 1e308
    state = dataclasses.replace(state, zone_temp_c=zone)
    for name in ("fan_speed", "supply_setpoint_c"):
        values = np.zeros(config.n_zones)
        values[0] = 1e308
        _assert_same_step(config, state, dataclasses.replace(control, **{name: values}), boundary, 300.0)
    assert step_single_plant(config, state, dataclasses.replace(control, fan_speed=zone), boundary, 300.0) is None


@pytest.mark.parametrize("it_kw", [[5e-10, 0.0, 0.0, 0.0], [6.0, 5e-9, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
@pytest.mark.parametrize("min_recirculation", [0.0, 0.02])
def test_loads_too_small_for_the_guards_with_the_fans_stopped(it_kw: list[float], min_recirculation: float) -> None:
    """The 1e-9 floors of the recirculation's divisor and of PUE's, reached."""
    config = dataclasses.replace(CONFIGS[0], min_recirculation=min_recirculation)
    state, control, boundary = _case(np.random.default_rng(7), config, False, False)
    control = dataclasses.replace(control, fan_speed=np.zeros(config.n_zones))
    boundary = dataclasses.replace(boundary, it_kw=np.array(it_kw))
    _assert_same_step(config, state, control, boundary, 300.0)


@pytest.mark.parametrize("offset", [0.0, 1e-6, 2e-6, -1e-6])
@pytest.mark.parametrize("water", ["warm", "between"])
def test_the_economiser_at_the_edge_of_no_span(offset: float, water: str) -> None:
    """The chilled-water return a hair above the set-point (span 0, 1e-6 and around), economiser on; the tower's
    water warm, or between the set-point and the return (where the two branches of the span test differ)."""
    config = CONFIGS[0]
    z = config.n_zones
    state = initial_state(config, 22.0, 0.0)
    # No load, no air, no envelope exchange: the return equals the supply, 0 °C, so the span is exactly -set-point.
    config = dataclasses.replace(config, zone_envelope_ua_kw_per_k=np.zeros(z))
    control = PlantControl(np.zeros(z), np.full(z, 22.0), np.asarray(-offset), np.asarray(1.0))
    wet = 3.0 if water == "warm" else -(config.tower_approach_k + config.hx_approach_k) - offset / 2.0
    boundary = PlantBoundary(np.zeros(z), np.asarray(22.0), np.asarray(wet), np.ones(config.n_chillers), np.ones(z))
    _assert_same_step(config, state, control, boundary, 300.0)


def test_input_sums_that_cancel_are_taken_as_the_float_path_takes_them() -> None:
    """Sum by sum, as the float path checks: a zone input of 1e308 and fan set-points of ±1e308 (their own sum
    0) total a finite 1e308, so the step is taken; a check summing them in another order would overflow."""
    base = CONFIGS[0]
    config = dataclasses.replace(base, zone_envelope_ua_kw_per_k=np.zeros(base.n_zones))
    state, control, boundary = _case(np.random.default_rng(12), config, False, False)
    state = dataclasses.replace(state, zone_temp_c=np.array([20.0, 1e308, 20.0, 20.0]))
    control = dataclasses.replace(control, fan_speed=np.array([1e308, -1e308, 0.5, 0.5]))
    assert step_single_plant(config, state, control, boundary, 300.0) is not None
    _assert_same_step(config, state, control, boundary, 300.0)


def test_the_compiled_paths_are_on_by_default(monkeypatch):
    """numba is a dependency: without DCOPS_JIT the compiled paths run (so these tests never skip), and only "0"
    turns them off."""
    monkeypatch.delenv(JIT_ENV, raising=False)
    assert jit_available()
    for value in ("", "1", "-1", "00", "no"):
        monkeypatch.setenv(JIT_ENV, value)
        assert jit_available(), value
    monkeypatch.setenv(JIT_ENV, " 0 ")
    assert not jit_available()


def test_signed_zeros_with_no_recirculation_floor() -> None:
    """Inputs of −0.0 and +0.0 in a hall with no recirculation floor and no envelope: the clamps' ties (``x if
    x >= 0 else 0`` keeps −0.0) reach the outputs' sign bits (airflow, recirculation), which must be the float
    path's."""
    base = CONFIGS[0]
    z = base.n_zones
    config = dataclasses.replace(base, min_recirculation=0.0, zone_envelope_ua_kw_per_k=np.zeros(z))
    state = initial_state(config, -0.0, -0.0)
    control = PlantControl(np.array([-0.0, 0.0, -0.0, 0.0]), np.full(z, -0.0), np.asarray(-0.0), np.asarray(-0.0))
    boundary = PlantBoundary(np.array([0.0, -0.0, -0.0, 0.0]), np.asarray(-0.0), np.asarray(-0.0),
                             np.ones(config.n_chillers), np.ones(z))
    _assert_same_step(config, state, control, boundary, 300.0)
    out = step_single_plant(config, state, control, boundary, 300.0)[1]
    assert np.signbit(out.airflow_kg_s[0]) and np.signbit(out.recirculation[1])  # the ties were reached


@pytest.mark.parametrize("capacity_kw", [0.5, 1.0, 2e-9, 4e-10])
def test_chillers_of_a_tiny_capacity(capacity_kw: float) -> None:
    """Units below 1 kW, near the 1e-9 kW floor of the part-load divisor and under it: a running chiller draws
    power however small it is."""
    config = dataclasses.replace(CONFIGS[0], chiller_reference_capacity_kw=capacity_kw)
    state, control, boundary = _case(np.random.default_rng(11), config, False, False)
    # Chilled water to bring down, economiser off: the chillers run, at their full (tiny) capacity.
    state = dataclasses.replace(state, chw_supply_c=np.float64(12.0))
    control = dataclasses.replace(control, chw_setpoint_c=np.asarray(6.0), economiser_on=np.asarray(0.0))
    _assert_same_step(config, state, control, boundary, 300.0)
    assert float(step_single_plant(config, state, control, boundary, 300.0)[1].chiller_kw) > 0.0


def test_large_plants_are_not_packed():
    assert pack_plant(PlantConfig.default(n_zones=8)) is None
    assert pack_plant(PlantConfig.default(n_zones=2, n_chillers=8)) is None


def test_the_switch_turns_the_compiled_paths_off(monkeypatch):
    monkeypatch.setenv(JIT_ENV, "0")
    assert not jit_available()
    monkeypatch.setenv(JIT_ENV, "1")
    assert jit_available()


def test_fan_set_points_whose_sum_overflows_are_declined_though_the_step_would_be_finite() -> None:
    """Fan set-points are clipped to [0, 1] before use, so huge ones leave the step finite; the float path still
    declines them (its input check), and the kernel must too."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(8), config, False, False)
    control = dataclasses.replace(control, fan_speed=np.array([1e308, 1e308, 0.5, 0.5]))
    assert step_single_plant(config, state, control, boundary, 300.0) is None
    _assert_same_step(config, state, control, boundary, 300.0)


@pytest.mark.parametrize("dt_s", [1e-3, 1e-2, 0.5])
def test_zones_at_zero_in_the_series_regime(dt_s: float) -> None:
    """Zones at 0 °C over steps short enough for the series form (x < 1e-4): with t0 = 0 the zone's mean is
    drift · psi exactly, so every term of the series reaches the outputs' bits."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(9), config, False, False)
    state = dataclasses.replace(state, zone_temp_c=np.zeros(config.n_zones))
    control = dataclasses.replace(control, supply_setpoint_c=np.full(config.n_zones, 30.0))
    boundary = dataclasses.replace(boundary, it_kw=config.zone_design_it_kw * 40.0)
    _assert_same_step(config, state, control, boundary, dt_s)


@pytest.mark.parametrize("name", ["zone_temp_c", "fan_speed", "supply_setpoint_c"])
def test_a_zone_input_whose_sum_overflows_is_declined_where_the_step_would_be_finite(name: str) -> None:
    """In an adiabatic hall with the fans stopped, two zones' huge values of this input leave the step finite;
    the float path declines them for their sum, and the kernel must too."""
    base = CONFIGS[0]
    config = dataclasses.replace(base, zone_envelope_ua_kw_per_k=np.zeros(base.n_zones))
    state, control, boundary = _case(np.random.default_rng(10), config, False, False)
    control = dataclasses.replace(control, fan_speed=np.zeros(config.n_zones))
    huge = np.array([1e308, 1e308, 0.0, 0.0])
    for part in ("state", "control", "boundary"):
        holder = {"state": state, "control": control, "boundary": boundary}[part]
        if hasattr(holder, name):
            changed = dataclasses.replace(holder, **{name: huge})
            state = changed if part == "state" else state
            control = changed if part == "control" else control
            boundary = changed if part == "boundary" else boundary
    one = {n: dataclasses.replace(p, **{name: np.array([1e308, 0.0, 0.0, 0.0])}) for n, p in
           (("state", state), ("control", control), ("boundary", boundary)) if hasattr(p, name)}
    single_huge = step_single_plant(config, one.get("state", state), one.get("control", control),
                                    one.get("boundary", boundary), 300.0)
    assert single_huge is not None and math.isfinite(float(single_huge[1].facility_kw)), "one huge value: finite"
    assert step_single_plant(config, state, control, boundary, 300.0) is None
    _assert_same_step(config, state, control, boundary, 300.0)


def test_without_numba_the_compiled_paths_are_off(monkeypatch):
    """numba not importable (a platform without its wheel): the Python paths run, nothing raises."""
    import sys

    from dcops.physics import compiled_plant

    monkeypatch.delenv(JIT_ENV, raising=False)
    compiled_plant._numba.cache_clear()
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    try:
        assert not jit_available()
    finally:
        compiled_plant._numba.cache_clear()
    monkeypatch.undo()
    assert jit_available()


@pytest.mark.parametrize("other_zones", [3, 5])
def test_a_plant_whose_zone_arrays_disagree_is_not_packed(other_zones: int) -> None:
    """``PlantConfig`` does not check that its zone arrays have one length: where they do not, there is no
    packed form (the float path declines such a plant too)."""
    base = CONFIGS[0]
    config = dataclasses.replace(base, crah_max_airflow_kg_s=np.full(other_zones, 30.0),
                                 crah_fan_max_kw=np.full(other_zones, 5.0),
                                 zone_envelope_ua_kw_per_k=np.full(other_zones, 0.1),
                                 zone_thermal_mass_kj_per_k=np.full(other_zones, 5000.0))
    assert config.n_zones == base.n_zones != other_zones
    assert pack_plant(config) is None
