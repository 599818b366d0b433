"""The Python-float path for one plant (``dcops.physics.single_plant``) equals the array path, bit for bit."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dcops.physics.single_plant as single_plant_module
from dcops.physics.compiled_plant import pack_plant, step_compiled
from dcops.physics.plant import (
    PlantBoundary,
    PlantConfig,
    PlantControl,
    PlantState,
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


# ---- Bit for bit on any machine (one expm1 for both paths), and the input forms the single path takes -----------


def _numpy_expm1(x: float) -> float:
    return float(np.expm1(x))


def _assert_bit_for_bit(config: PlantConfig, state, control, boundary, dt_s: float, reference=None) -> None:
    """``step_single_plant`` gives every field of ``step_plant_arrays`` (on ``reference``, the same inputs in plain
    form, when given) exactly, on any machine: where numpy's expm1 is not libm's (``LIBM_EXPM1``) only its last bit
    may differ, so the single path is given numpy's, and then nothing else may."""
    shared = contextlib.nullcontext() if LIBM_EXPM1 else mock.patch.object(single_plant_module, "_EXPM1", _numpy_expm1)
    with shared:
        single = step_single_plant(config, state, control, boundary, dt_s)
    assert single is not None
    new_single, out_single = single
    new_arrays, out_arrays = step_plant_arrays(config, *(reference or (state, control, boundary)), dt_s)
    pairs = [("zone_temp_c", new_single.zone_temp_c, new_arrays.zone_temp_c),
             ("chw_supply_c", new_single.chw_supply_c, new_arrays.chw_supply_c)]
    pairs += [(name, getattr(out_single, name), getattr(out_arrays, name)) for name in out_arrays._fields]
    for name, a, b in pairs:
        x, y = np.asarray(a), np.asarray(b)
        assert x.shape == y.shape and x.dtype == y.dtype, name
        assert np.array_equal(x, y), f"{name}: {x} != {y}"
    _assert_kernel_agrees(config, state, control, boundary, dt_s, reference)


def _assert_kernel_agrees(config: PlantConfig, state, control, boundary, dt_s: float, reference=None) -> None:
    """The compiled kernel (``dcops.physics.compiled_plant``, libm's expm1 as the float path's own) gives the float
    path's every field on the same inputs in plain form, so every case of this file checks it too."""
    single = step_single_plant(config, state, control, boundary, dt_s)
    plain_state, plain_control, plain_boundary = reference or (state, control, boundary)
    packed = pack_plant(config)
    assert single is not None and packed is not None
    kernel = step_compiled(config, packed, plain_state, plain_control, plain_boundary.it_kw,
                           plain_boundary.fan_units_alive, float(plain_boundary.outdoor_dry_bulb_c),
                           float(plain_boundary.outdoor_wet_bulb_c), plain_boundary.chiller_available, dt_s)
    assert kernel is not None, "the kernel declined a step the float path takes"
    assert np.array_equal(single[0].zone_temp_c, kernel[0].zone_temp_c)
    for name in single[1]._fields:
        assert np.array_equal(getattr(single[1], name), getattr(kernel[1], name)), f"kernel: {name}"


ALL_CONFIGS = [*CONFIGS, PlantConfig.default(n_zones=7, n_chillers=7)]  # 7: the most the single path takes


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, len(ALL_CONFIGS) - 1),
       dt_s=st.sampled_from([1e-3, 60.0, 300.0, 3600.0]), idle=st.booleans(), tripped=st.booleans())
def test_single_plant_path_equals_array_path(seed: int, which: int, dt_s: float, idle: bool, tripped: bool) -> None:
    config = ALL_CONFIGS[which]
    state, control, boundary = _case(np.random.default_rng(seed), config, dt_s, idle, tripped)
    _assert_bit_for_bit(config, state, control, boundary, dt_s)


ZONE_INPUTS = ("zone_temp_c", "fan_speed", "supply_setpoint_c", "it_kw", "fan_units_alive")
PLANT_INPUTS = ("chw_supply_c", "chw_setpoint_c", "economiser_on", "outdoor_dry_bulb_c", "outdoor_wet_bulb_c")


def _get(state, control, boundary, name: str):
    return getattr(next(part for part in (state, control, boundary) if hasattr(part, name)), name)


def _with(state, control, boundary, name: str, value):
    """The three inputs with the field ``name`` set to ``value``."""
    if hasattr(state, name):
        fields = {"zone_temp_c": state.zone_temp_c, "chw_supply_c": state.chw_supply_c, name: value}
        return PlantState(**fields), control, boundary
    if hasattr(control, name):
        return state, dataclasses.replace(control, **{name: value}), boundary
    return state, control, dataclasses.replace(boundary, **{name: value})


# A zone input's forms (from its (Z,) values v): the value, whether the single path takes it (the module docstring:
# a float64 array (Z,) or one float64 value for every zone) and the plain (Z,) array it stands for.
ZONE_FORMS = {
    "float64 (Z,)": (lambda v: v.copy(), True, lambda v: v),
    "strided float64 (Z,)": (lambda v: np.repeat(v, 2)[::2], True, lambda v: v),
    "float64 0-d": (lambda v: np.asarray(v[0]), True, lambda v: np.full_like(v, v[0])),
    "float": (lambda v: float(v[0]), True, lambda v: np.full_like(v, v[0])),
    "numpy float64": (lambda v: np.float64(v[0]), True, lambda v: np.full_like(v, v[0])),
    "float32 (Z,)": (lambda v: v.astype(np.float32), False, None),
    "int (Z,)": (lambda v: v.astype(np.int64), False, None),
    "complex (Z,)": (lambda v: v.astype(np.complex128), False, None),
    "long double (Z,)": (lambda v: v.astype(np.longdouble), False, None),
    "float32 0-d": (lambda v: np.asarray(v[0], dtype=np.float32), False, None),
    "float64 (1, Z)": (lambda v: v[None, :].copy(), False, None),
    "float64 (Z, 1)": (lambda v: v[:, None].copy(), False, None),
    "float64 (Z + 1,)": (lambda v: np.append(v, v[0]), False, None),
    "list": (lambda v: v.tolist(), False, None),
    "int": (lambda v: int(v[0]), False, None),
}
# A plant input's forms (from its value x): the value and whether the single path takes it (a Python or numpy
# float64, or a 0-d float64 array).
PLANT_FORMS = {
    "float64 0-d": (lambda x: np.asarray(x), True),
    "float": (lambda x: x, True),
    "numpy float64": (lambda x: np.float64(x), True),
    "float64 (1,)": (lambda x: np.asarray([x]), False),
    "float32 0-d": (lambda x: np.asarray(x, dtype=np.float32), False),
    "numpy float32": (lambda x: np.float32(x), False),
    "int 0-d": (lambda x: np.asarray(round(x)), False),
    "complex 0-d": (lambda x: np.asarray(x, dtype=np.complex128), False),
    "bool 0-d": (lambda x: np.asarray(x > 0.0), False),
    "int": (lambda x: round(x), False),
    "list": (lambda x: [x], False),
}
# The chiller availabilities' forms (from the (N,) values v): any float64 vector of at most 7 chillers is taken.
CHILLER_FORMS = {
    "float64 (N,)": (lambda v: v.copy(), True),
    "float64 (1,)": (lambda v: v[:1].copy(), True),
    "float64 (7,)": (lambda v: np.resize(v, 7), True),
    "float64 (8,)": (lambda v: np.resize(v, 8), False),
    "float64 0-d": (lambda v: np.asarray(v[0]), False),
    "float64 (1, N)": (lambda v: v[None, :].copy(), False),
    "float32 (N,)": (lambda v: v.astype(np.float32), False),
    "int (N,)": (lambda v: np.ones(v.shape, dtype=np.int64), False),
    "complex (N,)": (lambda v: v.astype(np.complex128), False),
    "list": (lambda v: v.tolist(), False),
    "float": (lambda v: float(v[0]), False),
}


def _check_form(name: str, make, takes: bool, plain) -> None:
    """Over a few random plants: the single path takes the form and equals the array path on the plain
    equivalent to the bit, or declines it (None, so that ``step_plant`` runs the array path)."""
    config = CONFIGS[0]
    for seed in range(4):
        state, control, boundary = _case(np.random.default_rng(seed), config, 300.0, False, False)
        value = _get(state, control, boundary, name)
        changed = _with(state, control, boundary, name, make(value))
        if takes:
            _assert_bit_for_bit(config, *changed, 300.0, reference=_with(state, control, boundary, name, plain(value)))
        else:
            assert step_single_plant(config, *changed, 300.0) is None


@pytest.mark.parametrize("name", ZONE_INPUTS)
@pytest.mark.parametrize("form", list(ZONE_FORMS))
def test_a_zone_input_is_taken_as_float64_z_values_or_one_float_and_declined_otherwise(name: str, form: str) -> None:
    make, takes, plain = ZONE_FORMS[form]
    _check_form(name, make, takes, plain)


@pytest.mark.parametrize("name", PLANT_INPUTS)
@pytest.mark.parametrize("form", list(PLANT_FORMS))
def test_a_plant_input_is_taken_as_one_float64_and_declined_otherwise(name: str, form: str) -> None:
    make, takes = PLANT_FORMS[form]
    _check_form(name, lambda x: make(float(x)), takes, np.asarray)


@pytest.mark.parametrize("form", list(CHILLER_FORMS))
def test_chiller_availability_is_taken_as_a_float64_vector_of_at_most_seven(form: str) -> None:
    make, takes = CHILLER_FORMS[form]
    _check_form("chiller_available", make, takes, make)


@pytest.mark.parametrize("name", [*ZONE_INPUTS, *PLANT_INPUTS, "chiller_available", "dt_s"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("others", ["random", "zero"])
def test_a_non_finite_input_goes_to_the_array_path(name: str, bad: float, others: str) -> None:
    """Any NaN or infinite input is left to numpy's rules (None), and ``step_plant`` gives the array path's result,
    whatever the other inputs (random, or all 0)."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(3), config, 300.0, False, False)
    if others == "zero":
        for other in (*ZONE_INPUTS, *PLANT_INPUTS, "chiller_available"):
            value = _get(state, control, boundary, other)
            state, control, boundary = _with(state, control, boundary, other, np.zeros_like(value))
    dt_s = 300.0
    if name == "dt_s":
        dt_s = bad
    else:
        value = np.array(_get(state, control, boundary, name), dtype=np.float64)
        value.reshape(-1)[-1] = bad
        state, control, boundary = _with(state, control, boundary, name, value)
    assert step_single_plant(config, state, control, boundary, dt_s) is None
    with np.errstate(all="ignore"):
        new, out = step_plant(config, state, control, boundary, dt_s)
        expected_new, expected_out = step_plant_arrays(config, state, control, boundary, dt_s)
    np.testing.assert_array_equal(new.zone_temp_c, expected_new.zone_temp_c)
    for name_ in expected_out._fields:
        np.testing.assert_array_equal(getattr(out, name_), getattr(expected_out, name_), err_msg=name_)


@pytest.mark.parametrize("zero", [*ZONE_INPUTS, *PLANT_INPUTS, "chiller_available"])
def test_an_input_of_zero_is_stepped_like_any_other(zero: str) -> None:
    """A zero (fans stopped, every unit down, no load, 0 °C water, air or set-point) is an ordinary value: the
    single path takes it and equals the array path to the bit."""
    config = CONFIGS[0]
    for seed in range(2):
        state, control, boundary = _case(np.random.default_rng(seed), config, 300.0, False, False)
        value = _get(state, control, boundary, zero)
        _assert_bit_for_bit(config, *_with(state, control, boundary, zero, np.zeros_like(value)), 300.0)


def _still_plant(config: PlantConfig, chw_c: float, chw_setpoint_c: float, wet_bulb_c: float,
                 economiser_on: float = 1.0):
    """An idle plant with its fans stopped: no coil load, so the return water is the supply water."""
    z = config.n_zones
    state = initial_state(config, 25.0, chw_c)
    control = PlantControl(np.zeros(z), np.full(z, 18.0), np.asarray(chw_setpoint_c), np.asarray(economiser_on))
    boundary = PlantBoundary(np.zeros(z), np.asarray(20.0), np.asarray(wet_bulb_c), np.ones(config.n_chillers),
                             np.ones(z))
    return state, control, boundary


def test_a_zone_at_the_series_limit_takes_the_closed_form_as_the_array_path_does() -> None:
    """x = (ṁ·c_p + UA)·Δt/C = 1e-4 exactly (fans stopped, UA 1e-4 kW/K, C 1 kJ/K, Δt 1 s): both paths use the
    closed forms there (the series only below), so they agree to the bit."""
    config = CONFIGS[0].with_(zone_thermal_mass_kj_per_k=np.ones(4), zone_envelope_ua_kw_per_k=np.full(4, 1e-4))
    state, control, boundary = _case(np.random.default_rng(5), config, 1.0, False, False)
    control = dataclasses.replace(control, fan_speed=np.zeros(4))
    _assert_bit_for_bit(config, state, control, boundary, 1.0)


@pytest.mark.parametrize(("chw_c", "wet_bulb_c", "fraction"), [
    (1e-6, -4.9999995, 0.0),  # a rise of 1e-6 K exactly is no rise: full only if the HX water reaches 0 °C
    (1e-6, -5.0, 1.0),
    (0.0, -5.0, 1.0),  # the HX water at the set-point exactly (-5 + 3.5 + 1.5 = 0): full
    (0.0, -4.9999995, 0.0),
    (0.5, -4.75, 0.5),  # a rise of 0.5 K with the HX water half-way: half
])
def test_the_economiser_at_the_edges_of_no_load(chw_c: float, wet_bulb_c: float, fraction: float) -> None:
    """With no load the return water is the supply water, so the rise over a 0 °C set-point is the supply
    temperature: at most 1e-6 K counts as no rise (economiser.economiser_fraction), and then the economiser carries
    everything iff its water (wet bulb + tower and HX approaches) is at or below the set-point."""
    config = CONFIGS[0]
    state, control, boundary = _still_plant(config, chw_c, 0.0, wet_bulb_c)
    _assert_bit_for_bit(config, state, control, boundary, 300.0)
    assert float(step_single_plant(config, state, control, boundary, 300.0)[1].economiser_fraction) == fraction


@pytest.mark.parametrize(("setting", "on"), [(0.5, False), (0.5000001, True)])
def test_the_economiser_setting_is_on_above_one_half(setting: float, on: bool) -> None:
    config = CONFIGS[0]
    state, control, boundary = _still_plant(config, 0.0, 0.0, -5.0, economiser_on=setting)
    _assert_bit_for_bit(config, state, control, boundary, 300.0)
    assert float(step_single_plant(config, state, control, boundary, 300.0)[1].economiser_fraction) == float(on)


@pytest.mark.parametrize("fault", ["a zone of no thermal mass", "chillers of no capacity"])
def test_a_step_the_float_arithmetic_cannot_do_goes_to_the_array_path(fault: str) -> None:
    """A plant outside the model's range where Python's float arithmetic raises (a division by zero, where numpy
    gives inf or NaN) is left to the array path (None), and step_plant gives its result."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(2), config, 300.0, False, False)
    if fault == "a zone of no thermal mass":
        config = config.with_(zone_thermal_mass_kj_per_k=np.array([5000.0, 0.0, 5000.0, 5000.0]))
    else:
        config = config.with_(chiller_reference_capacity_kw=0.0)
    assert step_single_plant(config, state, control, boundary, 300.0) is None
    with np.errstate(all="ignore"):
        new, out = step_plant(config, state, control, boundary, 300.0)
        expected_new, expected_out = step_plant_arrays(config, state, control, boundary, 300.0)
    np.testing.assert_array_equal(new.zone_temp_c, expected_new.zone_temp_c)
    for name in expected_out._fields:
        np.testing.assert_array_equal(getattr(out, name), getattr(expected_out, name), err_msg=name)


@pytest.mark.parametrize("x", [1e-6, 3e-5, 9.9e-5])
def test_zones_in_the_series_regime_with_a_large_drift(x: float) -> None:
    """Below x = 1e-4 the zone update uses the truncated series of φ and ψ; with the fans stopped and a small UA
    a zone heats by kelvins in a step while x stays small, so every term of the series shows in the result."""
    config = CONFIGS[0].with_(zone_envelope_ua_kw_per_k=np.full(4, 0.01))
    dt_s = x * 5000.0 / 0.01  # x = UA·Δt/C with no airflow (C = 5000 kJ/K)
    state, control, boundary = _case(np.random.default_rng(11), config, dt_s, False, False)
    control = dataclasses.replace(control, fan_speed=np.zeros(4))
    _assert_bit_for_bit(config, state, control, boundary, dt_s)


@pytest.mark.parametrize("removal_kj", [1e-4, -0.5])
def test_a_load_too_small_to_start_a_chiller_draws_no_chiller_power(removal_kj: float) -> None:
    """A load below 1e-9 of one chiller's capacity (1e-4 kJ over the step: 3.3e-7 kW) starts no chiller (the
    staging rounds it down): the load is still counted as carried (and its heat rejected, so the condenser pump
    runs), but no compressor runs, so the chillers draw nothing. A negative removal (the loop asked to warm up)
    is no load."""
    config = CONFIGS[0]
    state, control, boundary = _still_plant(config, 10.0, 10.0, 20.0, economiser_on=0.0)
    heat_in_kj = float(step_single_plant(config, state, control, boundary, 300.0)[1].heat_in_kj)  # the CHW pump
    chw_setpoint_c = 10.0 + (heat_in_kj - removal_kj) / config.loop_thermal_mass_kj_per_k
    control = dataclasses.replace(control, chw_setpoint_c=np.asarray(chw_setpoint_c))
    _assert_bit_for_bit(config, state, control, boundary, 300.0)
    out = step_single_plant(config, state, control, boundary, 300.0)[1]
    if removal_kj > 0.0:
        assert 0.0 < float(out.chiller_load_kw) < 1e-9 * float(out.chiller_capacity_kw)
        assert float(out.cw_pump_kw) > 0.0
    else:
        assert float(out.chiller_load_kw) == 0.0
    assert float(out.chiller_kw) == 0.0


@pytest.mark.parametrize("it_kw", [[6.0, 5e-9, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [5e-10, 0.0, 0.0, 0.0],
                                   [-1.0, 0.0, 0.0, 0.0]])
def test_small_it_loads_with_the_fans_stopped(it_kw: list[float]) -> None:
    """IT loads of a few kW down to 1e-9 kW (and a negative one, outside the model's range): the server airflow
    they need (below 1 kg/s, or below the 1e-9 floor of the recirculation's denominator) and the PUE (whose
    denominator has the same floor, and which is 0 without IT load) as the array path gives them, to the bit."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(4), config, 300.0, False, False)
    control = dataclasses.replace(control, fan_speed=np.zeros(4))
    boundary = dataclasses.replace(boundary, it_kw=np.array(it_kw))
    _assert_bit_for_bit(config, state, control, boundary, 300.0)


def test_a_load_a_hair_above_one_chillers_capacity_runs_one_chiller() -> None:
    """Staging rounds the chillers needed up, less 1e-9 of one chiller: a load of one chiller's capacity and
    5e-10 more runs one chiller (at full load), not two."""
    config = CONFIGS[0]
    state, control, boundary = _still_plant(config, 10.0, 5.0, 20.0, economiser_on=0.0)  # leaving water 10 °C
    out = step_single_plant(config, state, control, boundary, 300.0)[1]
    unit_kw = float(out.chiller_capacity_kw) / 2.0
    removal_kj = unit_kw * (1.0 + 5e-10) * 300.0
    chw_setpoint_c = 10.0 - (removal_kj - float(out.heat_in_kj)) / config.loop_thermal_mass_kj_per_k
    control = dataclasses.replace(control, chw_setpoint_c=np.asarray(chw_setpoint_c))
    _assert_bit_for_bit(config, state, control, boundary, 300.0)
    out = step_single_plant(config, state, control, boundary, 300.0)[1]
    assert abs(float(out.chiller_load_kw) / unit_kw - 1.0 - 5e-10) < 1e-11
    one = step_single_plant(config, state, control, dataclasses.replace(boundary, chiller_available=np.array([1.0, 0.0])),
                            300.0)[1]
    assert float(out.chiller_kw) == float(one.chiller_kw)  # the same single chiller at full load


@pytest.mark.parametrize("wet_bulb_c", [-40.0, 45.0])
@pytest.mark.parametrize("chw_setpoint_c", [-5.0, 30.0])
def test_chiller_curves_held_at_the_edges_of_their_ranges(wet_bulb_c: float, chw_setpoint_c: float) -> None:
    """Leaving chilled water and entering condenser water beyond the curves' ranges (a set-point of −5 or 30 °C,
    a wet bulb of −40 or 45 °C) are held at the range's ends, as the array path holds them."""
    config = CONFIGS[0]
    state, control, boundary = _case(np.random.default_rng(6), config, 300.0, False, False)
    control = dataclasses.replace(control, chw_setpoint_c=np.asarray(chw_setpoint_c))
    boundary = dataclasses.replace(boundary, outdoor_wet_bulb_c=np.asarray(wet_bulb_c))
    _assert_bit_for_bit(config, state, control, boundary, 300.0)


@pytest.mark.parametrize("case", ["an adiabatic hall", "a step of 1e-300 s"])
def test_a_step_that_moves_no_heat_somewhere_is_an_ordinary_step(case: str) -> None:
    """No envelope loss (UA = 0), or a step too short to change any temperature (no heat stored): zeros the
    single path steps like any other value, to the array path's bit."""
    config = CONFIGS[0]
    dt_s = 300.0 if case == "an adiabatic hall" else 1e-300
    if case == "an adiabatic hall":
        config = config.with_(zone_envelope_ua_kw_per_k=np.zeros(4))
    state, control, boundary = _case(np.random.default_rng(8), config, dt_s, False, False)
    control = dataclasses.replace(control, chw_setpoint_c=np.asarray(state.chw_supply_c))
    _assert_bit_for_bit(config, state, control, boundary, dt_s)
    out = step_single_plant(config, state, control, boundary, dt_s)[1]
    assert float(out.envelope_loss_kj if case == "an adiabatic hall" else out.heat_stored_kj) == 0.0
