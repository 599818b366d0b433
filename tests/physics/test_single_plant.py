"""The Python-float path for one plant (``dcops.physics.single_plant``) equals the array path, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.physics.plant import (
    PlantBoundary,
    PlantConfig,
    PlantControl,
    initial_state,
    step_plant,
    step_plant_arrays,
)
from dcops.physics.single_plant import step_single_plant

CONFIGS = [
    PlantConfig.default(),
    PlantConfig.legacy(),
    PlantConfig.default(n_zones=1),
    PlantConfig.default(zone_design_it_kw=[300.0, 250.0, 200.0]),
    PlantConfig.default(n_zones=6, n_chillers=3, chiller_capacity_fraction=0.45),
]

# The single path uses libm's expm1 (math.expm1); numpy uses it too unless it was built with SVML (AVX-512
# machines), where the last bit of a zone update may differ: then the comparison allows 1e-12 relative.
_PROBE = -np.geomspace(1e-4, 50.0, 2001)
LIBM_EXPM1 = bool(np.array_equal(np.expm1(_PROBE), [math.expm1(v) for v in _PROBE.tolist()]))


def _assert_same(a: object, b: object, name: str) -> None:
    x, y = np.asarray(a), np.asarray(b)
    assert x.shape == y.shape, name
    if LIBM_EXPM1:
        assert np.array_equal(x, y), f"{name}: {x} != {y}"
    else:
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=name)


def _case(rng: np.random.Generator, config: PlantConfig, dt_s: float, idle: bool, tripped: bool):
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


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, len(CONFIGS) - 1),
       dt_s=st.sampled_from([1e-3, 60.0, 300.0, 3600.0]), idle=st.booleans(), tripped=st.booleans())
def test_single_plant_path_equals_array_path(seed: int, which: int, dt_s: float, idle: bool, tripped: bool) -> None:
    config = CONFIGS[which]
    state, control, boundary = _case(np.random.default_rng(seed), config, dt_s, idle, tripped)
    single = step_single_plant(config, state, control, boundary, dt_s)
    assert single is not None
    new_single, out_single = single
    new_arrays, out_arrays = step_plant_arrays(config, state, control, boundary, dt_s)
    _assert_same(new_single.zone_temp_c, new_arrays.zone_temp_c, "zone_temp_c")
    _assert_same(new_single.chw_supply_c, new_arrays.chw_supply_c, "chw_supply_c")
    for name in out_arrays._fields:
        _assert_same(getattr(out_single, name), getattr(out_arrays, name), name)


def test_a_long_trajectory_stays_identical() -> None:
    """Errors cannot accumulate: 500 steps through step_plant (single path) and the array path agree."""
    config = CONFIGS[0]
    rng = np.random.default_rng(7)
    a = b = initial_state(config, 35.0, 18.0)
    for k in range(500):
        _, control, boundary = _case(rng, config, 300.0, idle=k % 50 == 0, tripped=k % 77 == 0)
        a, out_a = step_plant(config, a, control, boundary, 300.0)
        b, out_b = step_plant_arrays(config, b, control, boundary, 300.0)
    _assert_same(a.zone_temp_c, b.zone_temp_c, "zone_temp_c")
    _assert_same(out_a.facility_kw, out_b.facility_kw, "facility_kw")


@pytest.mark.parametrize("change", ["float32 load", "nan load", "batched load", "eight zones"])
def test_inputs_it_declines_go_to_the_array_path(change: str) -> None:
    """Anything but plain float64 shapes of at most 7 zones is left to numpy (None), and step_plant still works."""
    config = PlantConfig.default(n_zones=8) if change == "eight zones" else CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(1), config, 300.0, False, False)
    it = boundary.it_kw
    if change == "float32 load":
        it = it.astype(np.float32)
    elif change == "nan load":
        it = it.copy()
        it[0] = np.nan
    elif change == "batched load":
        it = it[None, :]
    boundary = PlantBoundary(it, boundary.outdoor_dry_bulb_c, boundary.outdoor_wet_bulb_c,
                             boundary.chiller_available, boundary.fan_units_alive)
    assert step_single_plant(config, state, control, boundary, 300.0) is None
    new, out = step_plant(config, state, control, boundary, 300.0)
    expected_new, expected_out = step_plant_arrays(config, state, control, boundary, 300.0)
    np.testing.assert_array_equal(new.zone_temp_c, expected_new.zone_temp_c)
    np.testing.assert_array_equal(out.facility_kw, expected_out.facility_kw)


def test_an_unbatched_plant_takes_the_single_path_and_a_batch_the_arrays(monkeypatch) -> None:
    """``step_plant``'s dispatch as its docstring states it: an unbatched plant is stepped by ``step_single_plant``;
    a batch goes to the array path without it."""
    import dcops.physics.plant as plant_module

    offered: list[int] = []
    single = plant_module.step_single_plant

    def spy(config, state, control, boundary, dt_s):
        offered.append(state.zone_temp_c.ndim)
        return single(config, state, control, boundary, dt_s)

    monkeypatch.setattr(plant_module, "step_single_plant", spy)
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(0), config, 300.0, False, False)
    step_plant(config, state, control, boundary, 300.0)
    assert offered == [1]
    batch = initial_state(config, np.stack([state.zone_temp_c] * 2), np.full(2, float(state.chw_supply_c)),
                          batch_shape=(2,))
    controls = PlantControl(np.stack([control.fan_speed] * 2), np.stack([control.supply_setpoint_c] * 2),
                            np.full(2, float(control.chw_setpoint_c)), np.full(2, float(control.economiser_on)))
    boundaries = PlantBoundary(np.stack([boundary.it_kw] * 2), np.full(2, float(boundary.outdoor_dry_bulb_c)),
                               np.full(2, float(boundary.outdoor_wet_bulb_c)),
                               np.stack([boundary.chiller_available] * 2), np.stack([boundary.fan_units_alive] * 2))
    step_plant(config, batch, controls, boundaries, 300.0)
    assert offered == [1]
