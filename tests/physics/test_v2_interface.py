"""Plant v2's control-room vectors (``dcops.physics.v2.interface``), checked against its module docstring.

The set-point layout ``[fan_speed × Z (0.2–1), supply_setpoint_c × Z (15–27 °C), chw_setpoint_c (5–20 °C),
economiser_on (0–1), tower_fan_speed (0.2–1), chillers_staged (0–N), chw_pump_speed (0.3–1), tank_flow (−1…+1)]``
and the telemetry of 5·Z + 27 values are the contract a controller is written against; every expected value here
is read from that text.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.physics.v2 import interface as iface
from dcops.physics.v2.types import PlantV2Control

PLANT_RANGES = {  # the docstring's ranges, written out again on purpose (chillers_staged: 0–N)
    "chw_setpoint_c": (5.0, 20.0), "economiser_on": (0.0, 1.0), "tower_fan_speed": (0.2, 1.0),
    "chillers_staged": (0.0, None), "chw_pump_speed": (0.3, 1.0), "tank_flow": (-1.0, 1.0),
}
FAN, SUPPLY = (0.2, 1.0), (15.0, 27.0)


def _documented_bounds(n_zones: int, n_chillers: int) -> tuple[list[float], list[float]]:
    low = [FAN[0]] * n_zones + [SUPPLY[0]] * n_zones + [lo for lo, _ in PLANT_RANGES.values()]
    high = [FAN[1]] * n_zones + [SUPPLY[1]] * n_zones + [
        float(n_chillers) if hi is None else hi for _, hi in PLANT_RANGES.values()]
    return low, high


def _names(n_zones: int) -> list[str]:
    return ([f"fan_speed[{i}]" for i in range(n_zones)] + [f"supply_setpoint_c[{i}]" for i in range(n_zones)]
            + list(PLANT_RANGES))


@pytest.mark.parametrize(("n_zones", "n_chillers"), [(1, 1), (2, 3), (4, 6)])
def test_the_setpoint_bounds_are_the_documented_ranges_and_cannot_be_written(n_zones: int, n_chillers: int) -> None:
    low, high = iface.setpoint_bounds(n_zones, n_chillers)
    want_low, want_high = _documented_bounds(n_zones, n_chillers)
    assert low.tolist() == want_low
    assert high.tolist() == want_high
    with pytest.raises(ValueError):
        low[0] = 0.0
    with pytest.raises(ValueError):
        high[0] = 2.0


def test_the_plant_setpoints_and_field_names_follow_the_layout() -> None:
    assert iface.PLANT_SETPOINTS == tuple(PLANT_RANGES)
    assert iface.setpoint_field_names(2) == _names(2)


def test_a_vector_inside_the_ranges_decodes_into_the_documented_slots() -> None:
    action = [0.3, 0.9, 16.0, 26.5, 7.25, 1.0, 0.6, 2.0, 0.75, -0.5]
    control = iface.decode_setpoints(action, n_zones=2, n_chillers=3)
    assert isinstance(control, PlantV2Control)
    assert control.fan_speed.tolist() == [0.3, 0.9]
    assert control.supply_setpoint_c.tolist() == [16.0, 26.5]
    assert [float(getattr(control, name)) for name in PLANT_RANGES] == [7.25, 1.0, 0.6, 2.0, 0.75, -0.5]


def test_values_outside_the_ranges_are_held_at_the_nearest_end() -> None:
    n_zones, n_chillers = 1, 4
    above = [9.0, 99.0, 99.0, 9.0, 9.0, 9.0, 9.0, 9.0]
    below = [-9.0, -99.0, -99.0, -9.0, -9.0, -9.0, -9.0, -9.0]
    low, high = _documented_bounds(n_zones, n_chillers)
    for action, want in ((above, high), (below, low)):
        control = iface.decode_setpoints(action, n_zones, n_chillers)
        got = [float(control.fan_speed[0]), float(control.supply_setpoint_c[0])] + [
            float(getattr(control, name)) for name in PLANT_RANGES]
        assert got == want


@pytest.mark.parametrize("size", [0, 2, 9, 11])
def test_a_vector_of_the_wrong_size_is_refused_with_the_layout_it_needs(size: int) -> None:
    with pytest.raises(ValueError, match=r"action must have 10 values \(fan_speed×2, supply_setpoint_c×2, "
                                         r"chw_setpoint_c, economiser_on, tower_fan_speed, chillers_staged, "
                                         rf"chw_pump_speed, tank_flow\), got {size}$"):
        iface.decode_setpoints([0.5] * size, n_zones=2, n_chillers=2)


def test_a_non_numeric_vector_is_refused_naming_the_shape() -> None:
    with pytest.raises(ValueError, match=r"numeric array of shape \(8,\)"):
        iface.decode_setpoints(["on"] * 8, n_zones=1, n_chillers=1)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
@pytest.mark.parametrize("index", range(10))
def test_a_value_that_is_not_finite_is_refused_by_its_field_name(index: int, bad: float) -> None:
    action = [0.5, 0.5, 20.0, 20.0, 10.0, 0.0, 0.5, 1.0, 0.5, 0.0]
    action[index] = bad
    with pytest.raises(ValueError, match=rf"action field {re.escape(_names(2)[index])} is not finite"):
        iface.decode_setpoints(action, n_zones=2, n_chillers=2)


@settings(max_examples=150, deadline=None)
@given(n_zones=st.integers(1, 4), n_chillers=st.integers(1, 6), data=st.data())
def test_decoding_is_the_elementwise_clip_to_the_documented_ranges(n_zones: int, n_chillers: int,
                                                                     data: st.DataObject) -> None:
    size = 2 * n_zones + 6
    values = data.draw(st.lists(st.floats(-50.0, 50.0), min_size=size, max_size=size))
    control = iface.decode_setpoints(values, n_zones, n_chillers)
    low, high = _documented_bounds(n_zones, n_chillers)
    got = [*control.fan_speed.tolist(), *control.supply_setpoint_c.tolist()] + [
        float(getattr(control, name)) for name in PLANT_RANGES]
    assert got == [min(max(v, lo), hi) for v, lo, hi in zip(values, low, high, strict=True)]


def test_encoding_writes_the_documented_layout_in_float32() -> None:
    vector = iface.encode_setpoints([0.4, 0.6], [18.0, 22.0], 9.5, True, 0.7, 2, 0.8, tank_flow=-0.25)
    assert vector.dtype == np.float32
    assert vector.tolist() == pytest.approx([0.4, 0.6, 18.0, 22.0, 9.5, 1.0, 0.7, 2.0, 0.8, -0.25], abs=1e-6)
    default = iface.encode_setpoints([1.0], [20.0], 12.0, False, 1.0, 1, 1.0)
    assert default[3] == 0.0 and default[-1] == 0.0  # economiser off; no tank flow unless asked
    control = iface.decode_setpoints(vector, n_zones=2, n_chillers=2)
    assert float(control.tank_flow) == -0.25 and float(control.chillers_staged) == 2.0


@pytest.mark.parametrize("n_zones", [1, 3])
def test_telemetry_has_five_values_per_zone_then_twenty_seven_plant_values(n_zones: int) -> None:
    low, high = iface.telemetry_bounds(n_zones)
    assert low.shape == high.shape == (5 * n_zones + 27,)
    assert low.dtype == high.dtype == np.float32
    assert len(iface.PLANT_FIELDS) == 27
    assert iface.ZONE_FIELDS == ("inlet_c", "return_c", "load_fraction", "fan_speed", "supply_c")
    assert np.all(low < high)


def test_telemetry_bounds_hold_every_quantity_whose_range_is_known() -> None:
    n_zones = 2
    low, high = iface.telemetry_bounds(n_zones)
    at = {name: 5 * n_zones + i for i, name in enumerate(iface.PLANT_FIELDS)}
    exact = {"chillers_available": (0, 1), "economiser_fraction": (0, 1), "tower_fan_speed": (0, 1),
             "chw_pump_speed": (0, 1), "hour_sin": (-1, 1), "hour_cos": (-1, 1), "progress": (0, 1),
             "tank_flow": (-1, 1)}
    for name, (lo, hi) in exact.items():
        assert (low[at[name]], high[at[name]]) == (lo, hi), name
    for zone in range(n_zones):
        fan = 5 * zone + 3
        assert (low[fan], high[fan]) == (0.0, 1.0)
        assert low[5 * zone + 2] == 0.0  # load fraction
    nonnegative = ("chillers_on", "carbon_kg_per_kwh", "price_per_kwh", "cooling_over_design_it", "pue",
                   "carbon_1h_kg_per_kwh", "carbon_3h_kg_per_kwh", "price_1h_per_kwh", "price_3h_per_kwh",
                   "load_1h_fraction", "load_3h_fraction")
    for name in nonnegative:
        assert low[at[name]] == 0.0, name
    # Forecasts share the bounds of the quantity they forecast.
    for now, ahead in (("wet_bulb_c", "wet_bulb_1h_c"), ("wet_bulb_c", "wet_bulb_3h_c"),
                       ("carbon_kg_per_kwh", "carbon_1h_kg_per_kwh"), ("carbon_kg_per_kwh", "carbon_3h_kg_per_kwh"),
                       ("price_per_kwh", "price_1h_per_kwh"), ("price_per_kwh", "price_3h_per_kwh")):
        assert (low[at[ahead]], high[at[ahead]]) == (low[at[now]], high[at[now]]), ahead
    # The two load forecasts allow the same overload as the zones' load fraction.
    assert high[at["load_1h_fraction"]] == high[at["load_3h_fraction"]] == high[2]
    for name in ("dry_bulb_c", "wet_bulb_c", "chw_supply_c", "chw_return_c", "cw_supply_c", "tank_temp_c"):
        assert low[at[name]] <= -40.0 and high[at[name]] >= 50.0, name


def test_telemetry_built_then_parsed_gives_every_field_back_by_name() -> None:
    n_zones = 2
    zones = (np.array([24.0, 25.0]), np.array([35.0, 36.0]), np.array([0.5, 0.75]), np.array([0.6, 0.8]),
             np.array([18.0, 19.0]))
    plant = [0.5 + 0.25 * i for i in range(27)]  # inside every bound: the largest is 7.0
    plant[iface.PLANT_FIELDS.index("hour_cos")] = -0.5
    plant[iface.PLANT_FIELDS.index("tank_flow")] = -0.25
    for name in ("chillers_available", "economiser_fraction", "tower_fan_speed", "chw_pump_speed", "hour_sin",
                 "progress"):
        plant[iface.PLANT_FIELDS.index(name)] = 0.5
    for name in ("load_1h_fraction", "load_3h_fraction", "carbon_kg_per_kwh", "carbon_1h_kg_per_kwh",
                 "carbon_3h_kg_per_kwh"):
        plant[iface.PLANT_FIELDS.index(name)] = 1.5
    low, high = iface.telemetry_bounds(n_zones)
    vector = iface.build_telemetry(zones, plant, low, high)
    assert vector.dtype == np.float32
    assert vector[:5].tolist() == pytest.approx([24.0, 35.0, 0.5, 0.6, 18.0])  # zone 0's five values together
    assert vector[5:10].tolist() == pytest.approx([25.0, 36.0, 0.75, 0.8, 19.0])
    parsed = iface.TelemetryV2.parse(vector, n_zones)
    for name, values in zip(iface.ZONE_FIELDS, zones, strict=True):
        np.testing.assert_allclose(getattr(parsed, name), values, rtol=1e-6, err_msg=name)
    for name, value in zip(iface.PLANT_FIELDS, plant, strict=True):
        assert getattr(parsed, name) == pytest.approx(value, rel=1e-6), name


def test_telemetry_is_clipped_to_its_bounds() -> None:
    low, high = iface.telemetry_bounds(1)
    zones = (np.array([500.0]), np.array([-500.0]), np.array([9.0]), np.array([-1.0]), np.array([20.0]))
    vector = iface.build_telemetry(zones, [1e6] * 27, low, high)
    np.testing.assert_array_equal(vector[5:], high[5:])
    assert vector[0] == high[0] and vector[1] == low[1] and vector[2] == high[2] and vector[3] == 0.0
    vector = iface.build_telemetry(zones, [-1e6] * 27, low, high)
    np.testing.assert_array_equal(vector[5:], low[5:])


def test_telemetry_of_the_wrong_size_is_refused_with_the_size_it_needs() -> None:
    with pytest.raises(ValueError, match="telemetry must have 37 values for 2 zones, got 36"):
        iface.TelemetryV2.parse(np.zeros(36), 2)
    with pytest.raises(ValueError, match="telemetry must have 37 values for 2 zones, got 38"):
        iface.TelemetryV2.parse(np.zeros(38), 2)


def test_parsed_telemetry_is_frozen():
    from dataclasses import FrozenInstanceError

    low, _ = iface.telemetry_bounds(1)
    parsed = iface.TelemetryV2.parse(np.zeros_like(low), 1)
    with pytest.raises(FrozenInstanceError):
        parsed.pue = 1.0  # type: ignore[misc]
