"""Plant v0's control-room vectors (``dcops.physics.interface``), checked against its module docstring.

The docstring is the contract a controller is written against: the set-point layout ``[fan_speed × Z,
supply_setpoint_c × Z, chw_setpoint_c, economiser_on]`` with its physical ranges, and the telemetry layout of
5·Z + 11 values. Every expected value here is read from that text (or from numpy, for the summation order), not
from the module's output.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.physics import interface as iface

# The docstring's ranges, written out again on purpose.
FAN = (0.2, 1.0)
SUPPLY = (15.0, 27.0)
CHW = (5.0, 18.0)
ECONOMISER = (0.0, 1.0)


def _documented_bounds(n_zones: int) -> tuple[list[float], list[float]]:
    low = [FAN[0]] * n_zones + [SUPPLY[0]] * n_zones + [CHW[0], ECONOMISER[0]]
    high = [FAN[1]] * n_zones + [SUPPLY[1]] * n_zones + [CHW[1], ECONOMISER[1]]
    return low, high


@pytest.mark.parametrize("n_zones", [1, 2, 4, 9])
def test_the_setpoint_bounds_are_the_documented_ranges_and_cannot_be_written(n_zones: int) -> None:
    low, high = iface.setpoint_bounds(n_zones)
    want_low, want_high = _documented_bounds(n_zones)
    assert low.tolist() == want_low
    assert high.tolist() == want_high
    with pytest.raises(ValueError):
        low[0] = 0.0  # cached and shared: a caller must not be able to widen them for everyone
    with pytest.raises(ValueError):
        high[-1] = 5.0


def test_the_field_names_follow_the_layout() -> None:
    assert iface.setpoint_field_names(2) == [
        "fan_speed[0]", "fan_speed[1]", "supply_setpoint_c[0]", "supply_setpoint_c[1]",
        "chw_setpoint_c", "economiser_on",
    ]


def test_a_vector_inside_the_ranges_decodes_to_its_own_values_in_the_documented_slots() -> None:
    control = iface.decode_setpoints([0.3, 0.9, 16.0, 26.5, 7.25, 1.0], n_zones=2)
    assert control.fan_speed.tolist() == [0.3, 0.9]
    assert control.supply_setpoint_c.tolist() == [16.0, 26.5]
    assert float(control.chw_setpoint_c) == 7.25
    assert float(control.economiser_on) == 1.0


def test_values_outside_the_ranges_are_held_at_the_nearest_end() -> None:
    control = iface.decode_setpoints([0.0, 3.0, 10.0, 40.0, -2.0, 7.0], n_zones=2)
    assert control.fan_speed.tolist() == [FAN[0], FAN[1]]
    assert control.supply_setpoint_c.tolist() == [SUPPLY[0], SUPPLY[1]]
    assert float(control.chw_setpoint_c) == CHW[0]
    assert float(control.economiser_on) == ECONOMISER[1]
    control = iface.decode_setpoints([5.0, 30.0, 99.0, -1.0], n_zones=1)
    assert (float(control.fan_speed[0]), float(control.supply_setpoint_c[0])) == (FAN[1], SUPPLY[1])
    assert (float(control.chw_setpoint_c), float(control.economiser_on)) == (CHW[1], ECONOMISER[0])


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 7, 8])
def test_a_vector_of_the_wrong_size_is_refused_with_the_size_it_needs(size: int) -> None:
    with pytest.raises(ValueError, match=r"action must have 6 values \(fan_speed×2, supply_setpoint_c×2.*got "
                                         + str(size)):
        iface.decode_setpoints([0.5] * size, n_zones=2)
    with pytest.raises(ValueError, match="action must have 6 values"):
        iface.decode_setpoint_values([0.5] * size, n_zones=2)


def test_a_non_numeric_vector_is_refused_naming_the_shape() -> None:
    with pytest.raises(ValueError, match=r"numeric array of shape \(6,\)"):
        iface.decode_setpoints(["fast", 1, 2, 3, 4, 5], n_zones=2)
    with pytest.raises(ValueError, match=r"numeric array of shape \(4,\)"):
        iface.decode_setpoints({"fan": 1}, n_zones=1)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("index", range(6))
def test_a_value_that_is_not_finite_is_refused_by_its_field_name(index: int, bad: float) -> None:
    names = ["fan_speed[0]", "fan_speed[1]", "supply_setpoint_c[0]", "supply_setpoint_c[1]",
             "chw_setpoint_c", "economiser_on"]
    action = [0.5, 0.5, 20.0, 20.0, 10.0, 0.0]
    action[index] = bad
    for decode in (iface.decode_setpoints, iface.decode_setpoint_values):
        with pytest.raises(ValueError, match=rf"action field {re.escape(names[index])} is not finite"):
            decode(action, 2)


_SETPOINT = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(n_zones=st.integers(1, 5), data=st.data())
def test_the_float_fast_path_decodes_exactly_as_the_array_path(n_zones: int, data: st.DataObject) -> None:
    values = data.draw(st.lists(_SETPOINT, min_size=2 * n_zones + 2, max_size=2 * n_zones + 2))
    slow = iface.decode_setpoints(values, n_zones)
    fast = iface.decode_setpoint_values(values, n_zones)
    for name in ("fan_speed", "supply_setpoint_c", "chw_setpoint_c", "economiser_on"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    low, high = _documented_bounds(n_zones)
    flat = [*fast.fan_speed, *fast.supply_setpoint_c, float(fast.chw_setpoint_c), float(fast.economiser_on)]
    assert flat == [min(max(v, lo), hi) for v, lo, hi in zip(values, low, high, strict=True)]


def test_the_fast_path_hands_a_finite_overflow_to_the_array_path() -> None:
    # 1e308 + 1e308 overflows the sum the fast path checks, but each value is finite: it must still decode.
    control = iface.decode_setpoint_values([1e308, 1e308, 20.0, 20.0], n_zones=1)
    assert (float(control.fan_speed[0]), float(control.supply_setpoint_c[0])) == (FAN[1], SUPPLY[1])


def test_encoding_writes_the_documented_layout_in_float32() -> None:
    vector = iface.encode_setpoints(np.array([0.4, 0.6]), np.array([18.0, 22.0]), 9.5, economiser_on=True)
    assert vector.dtype == np.float32
    assert vector.tolist() == pytest.approx([0.4, 0.6, 18.0, 22.0, 9.5, 1.0], abs=1e-6)
    assert iface.encode_setpoints(np.array([1.0]), np.array([20.0]), 12.0, economiser_on=False)[-1] == 0.0


@pytest.mark.parametrize("n_zones", [1, 3])
def test_telemetry_has_five_values_per_zone_then_eleven_plant_values(n_zones: int) -> None:
    low, high = iface.telemetry_bounds(n_zones)
    assert low.shape == high.shape == (5 * n_zones + 11,)
    assert low.dtype == high.dtype == np.float32
    assert iface.ZONE_FIELDS == ("inlet_c", "return_c", "load_fraction", "fan_speed", "supply_c")
    assert iface.PLANT_FIELDS == ("chw_supply_c", "chillers_available", "economiser_fraction", "dry_bulb_c",
                                  "wet_bulb_c", "carbon_kg_per_kwh", "hour_sin", "hour_cos", "progress",
                                  "cooling_over_design_it", "pue")


def test_telemetry_bounds_hold_every_quantity_whose_range_is_known() -> None:
    """Fractions, sines and the progress are bounded by what they are; their bounds must be exactly that."""
    n_zones = 2
    low, high = iface.telemetry_bounds(n_zones)
    at = {name: 5 * n_zones + i for i, name in enumerate(iface.PLANT_FIELDS)}
    for name, (lo, hi) in {"chillers_available": (0, 1), "economiser_fraction": (0, 1), "hour_sin": (-1, 1),
                           "hour_cos": (-1, 1), "progress": (0, 1)}.items():
        assert (low[at[name]], high[at[name]]) == (lo, hi), name
    for zone in range(n_zones):
        fan = 5 * zone + iface.ZONE_FIELDS.index("fan_speed")
        assert (low[fan], high[fan]) == (0.0, 1.0)
        load = 5 * zone + iface.ZONE_FIELDS.index("load_fraction")
        assert low[load] == 0.0
    # Non-negative quantities cannot be reported below zero.
    for name in ("carbon_kg_per_kwh", "cooling_over_design_it", "pue"):
        assert low[at[name]] == 0.0, name
    # Temperatures keep the whole weather range of the climate files (−40 … +50 °C) with room to spare.
    for name in ("dry_bulb_c", "wet_bulb_c", "chw_supply_c"):
        assert low[at[name]] <= -40.0 and high[at[name]] >= 50.0, name


def test_telemetry_built_then_parsed_gives_every_field_back_by_name() -> None:
    n_zones = 2
    zone = {name: np.array([10.0 + i, 20.0 + i]) / (1.0 if i != 2 and i != 3 else 40.0)
            for i, name in enumerate(iface.ZONE_FIELDS)}
    plant = [7.0, 0.5, 0.25, 12.0, 9.0, 0.4, 0.5, -0.5, 0.75, 1.1, 1.3]
    low, high = iface.telemetry_bounds(n_zones)
    vector = iface.build_telemetry(*(zone[name] for name in iface.ZONE_FIELDS), plant, low, high)
    assert vector.dtype == np.float32
    # The documented order: each zone's five values together, then the plant values.
    assert vector[:5].tolist() == pytest.approx([zone[name][0] for name in iface.ZONE_FIELDS])
    assert vector[5:10].tolist() == pytest.approx([zone[name][1] for name in iface.ZONE_FIELDS])
    parsed = iface.Telemetry.parse(vector, n_zones)
    for name in iface.ZONE_FIELDS:
        np.testing.assert_allclose(getattr(parsed, name), zone[name], rtol=1e-6, err_msg=name)
    for name, value in zip(iface.PLANT_FIELDS, plant, strict=True):
        assert getattr(parsed, name) == pytest.approx(value, rel=1e-6), name


def test_telemetry_is_clipped_to_its_bounds() -> None:
    n_zones = 1
    low, high = iface.telemetry_bounds(n_zones)
    zone = [np.array([500.0]), np.array([-500.0]), np.array([7.0]), np.array([-3.0]), np.array([25.0])]
    plant = [0.0, 4.0, -1.0, 0.0, 0.0, -0.2, 3.0, -3.0, 2.0, 0.5, 1.2]
    vector = iface.build_telemetry(*zone, plant, low, high)
    assert vector[0] == high[0] and vector[1] == low[1]
    assert vector[2] == high[2] and vector[3] == 0.0 and vector[4] == 25.0
    parsed = iface.Telemetry.parse(vector, n_zones)
    assert (parsed.chillers_available, parsed.economiser_fraction, parsed.carbon_kg_per_kwh) == (1.0, 0.0, 0.0)
    assert (parsed.hour_sin, parsed.hour_cos, parsed.progress) == (1.0, -1.0, 1.0)


def test_telemetry_of_the_wrong_size_is_refused_with_the_size_it_needs() -> None:
    with pytest.raises(ValueError, match="telemetry must have 21 values for 2 zones, got 20"):
        iface.Telemetry.parse(np.zeros(20), 2)
    with pytest.raises(ValueError, match="telemetry must have 21 values for 2 zones, got 22"):
        iface.Telemetry.parse(np.zeros(22), 2)


def _numpy_sum(values: list[float]) -> float:
    return float(np.sum(np.asarray(values, dtype=np.float64)))


_ADDEND = st.one_of(st.floats(-1e16, 1e16, allow_nan=False), st.floats(-1.0, 1.0, allow_nan=False),
                    st.sampled_from([1e16, -1e16, 1.0, 0.1, 3.0]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_ADDEND, max_size=24))
def test_zone_sum_gives_numpys_bits(values: list[float]) -> None:
    """The docstring's promise: the same double as ``array.sum()`` for any length."""
    assert iface.zone_sum(values).hex() == _numpy_sum(values).hex()


@pytest.mark.parametrize("n", range(1, 8))
def test_zone_sum_below_eight_terms_adds_left_to_right_from_zero(n: int) -> None:
    # Chosen so that the order of the additions changes the result: 1e16 + 1 + 1 … loses each 1 left to right.
    values = [1e16] + [1.0] * (n - 1)
    total = 0.0
    for value in values:
        total += value
    assert iface.zone_sum(values) == total
    assert iface.zone_sum([]) == 0.0


def test_zone_sum_of_eight_terms_is_numpys_pairwise_sum_not_left_to_right() -> None:
    values = [1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    left_to_right = 0.0
    for value in values:
        left_to_right += value
    assert iface.zone_sum(values) == _numpy_sum(values)
    assert _numpy_sum(values) != left_to_right  # the case separates the two orders


def test_parsed_telemetry_is_frozen():
    from dataclasses import FrozenInstanceError

    low, _ = iface.telemetry_bounds(1)
    parsed = iface.Telemetry.parse(np.zeros_like(low), 1)
    with pytest.raises(FrozenInstanceError):
        parsed.pue = 1.0  # type: ignore[misc]
