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

pytestmark = pytest.mark.skipif(not jit_available(), reason="numba is not installed or DCOPS_JIT=0")

CONFIGS = [
    PlantConfig.default(),
    PlantConfig.legacy(),
    PlantConfig.default(n_zones=1),
    PlantConfig.default(zone_design_it_kw=[300.0, 250.0, 200.0]),
    PlantConfig.default(n_zones=6, n_chillers=3, chiller_capacity_fraction=0.45),
    PlantConfig.default(n_zones=7, n_chillers=7),
]


def _case(rng: np.random.Generator, config: PlantConfig, idle: bool, tripped: bool):
    z = config.n_zones
    state = initial_state(config, rng.uniform(10.0, 45.0, z), rng.uniform(3.0, 30.0))
    control = PlantControl(rng.uniform(-0.2, 1.2, z), rng.uniform(12.0, 30.0, z), np.asarray(rng.uniform(4.0, 20.0)),
                           np.asarray(float(rng.integers(2))))
    boundary = PlantBoundary(
        config.zone_design_it_kw * rng.uniform(0.0, 1.2, z) * (0.0 if idle else 1.0),
        np.asarray(rng.uniform(-20.0, 45.0)), np.asarray(rng.uniform(-25.0, 30.0)),
        rng.uniform(0.0, 1.0, config.n_chillers) * (0.0 if tripped else 1.0), rng.uniform(0.0, 1.0, z),
    )
    return state, control, boundary


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
    assert np.array_equal(s_state.zone_temp_c, k_state.zone_temp_c)
    assert float(s_state.chw_supply_c) == float(k_state.chw_supply_c)
    for name in PlantOutputs._fields:
        a, b = np.asarray(getattr(s_out, name)), np.asarray(getattr(k_out, name))
        assert a.shape == b.shape and a.dtype == b.dtype, name
        assert np.array_equal(a, b), f"{name}: {a} != {b}"


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


def test_large_plants_are_not_packed():
    assert pack_plant(PlantConfig.default(n_zones=8)) is None
    assert pack_plant(PlantConfig.default(n_zones=2, n_chillers=8)) is None


def test_the_switch_turns_the_compiled_paths_off(monkeypatch):
    monkeypatch.setenv(JIT_ENV, "0")
    assert not jit_available()
    monkeypatch.setenv(JIT_ENV, "1")
    assert jit_available()
