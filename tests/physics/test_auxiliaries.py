"""The electrical loads around the chillers against their documented laws and published figures, worked by hand.

Module equations (``dcops.physics.auxiliaries``): CRAH fans ``P = P_max · a · s³``; pumps
``P = P_design · max(f, f_min)³``; tower fans ``P = P_design · min(q, 1.5)²``; UPS loss
``P_rated · (0.01 + 0.02·x + 0.01·x²)`` with x = P_IT / P_rated (95.7 % efficient at half load, 96.1 % at 80 %);
distribution 2 % of the IT power; ancillary loads 1 % of the design IT power.
"""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.auxiliaries import (
    ANCILLARY_FRACTION,
    DISTRIBUTION_LOSS_FRACTION,
    UPS_LOSS_COEFFICIENTS,
    ancillary_kw,
    distribution_loss_kw,
    fan_power_kw,
    pump_power_kw,
    tower_fan_power_kw,
    ups_loss_kw,
)


@pytest.mark.parametrize(
    ("speed", "alive", "expected_kw"),
    [
        (1.0, 1.0, 10.0),     # full speed, every unit: the rated 10 kW
        (0.5, 1.0, 1.25),     # half speed: 10 · 0.5³
        (0.8, 0.5, 2.56),     # half the units at 80 %: 10 · 0.5 · 0.512
        (0.0, 1.0, 0.0),      # stopped
    ],
)
def test_crah_fan_power_follows_the_cube_law_of_speed_and_the_units_alive(speed, alive, expected_kw):
    power = fan_power_kw(np.asarray(10.0), np.asarray(speed), np.asarray(alive))
    assert float(power) == pytest.approx(expected_kw, abs=1e-12)


@pytest.mark.parametrize(
    ("flow_fraction", "expected_kw"),
    [
        (1.0, 20.0),      # design flow
        (0.5, 2.5),       # 20 · 0.5³
        (0.3, 0.54),      # at the 30 % minimum speed: 20 · 0.3³
        (0.1, 0.54),      # below it the pump still turns at 30 %
        (0.0, 0.54),
    ],
)
def test_pump_power_follows_the_cube_law_down_to_its_minimum_speed(flow_fraction, expected_kw):
    assert float(pump_power_kw(20.0, np.asarray(flow_fraction), 0.3)) == pytest.approx(expected_kw, abs=1e-12)


@pytest.mark.parametrize(
    ("rejection_fraction", "expected_kw"),
    [
        (1.0, 40.0),      # design heat rejection
        (0.5, 10.0),      # 40 · 0.5²
        (1.5, 90.0),      # the 1.5 cap itself: 40 · 1.5²
        (2.0, 90.0),      # past the cap the fans are at their limit
        (0.0, 0.0),
    ],
)
def test_tower_fan_power_is_square_in_the_rejected_heat_up_to_one_and_a_half_times_design(rejection_fraction,
                                                                                            expected_kw):
    assert float(tower_fan_power_kw(40.0, np.asarray(rejection_fraction))) == pytest.approx(expected_kw, abs=1e-12)


@pytest.mark.parametrize(("load_fraction", "published_efficiency_pct"), [(0.5, 95.7), (0.8, 96.1)])
def test_ups_efficiency_matches_its_published_figures(load_fraction, published_efficiency_pct):
    rated_kw = 1000.0
    it_kw = load_fraction * rated_kw
    efficiency = it_kw / (it_kw + float(ups_loss_kw(np.asarray(it_kw), rated_kw)))
    assert round(100.0 * efficiency, 1) == published_efficiency_pct


@pytest.mark.parametrize(
    ("it_kw", "expected_kw"),
    [
        (0.0, 5.0),       # no load: 500 · 0.01, the no-load loss
        (250.0, 11.25),   # x = 0.5: 500 · (0.01 + 0.01 + 0.0025)
        (500.0, 20.0),    # x = 1:   500 · (0.01 + 0.02 + 0.01)
    ],
)
def test_ups_loss_is_the_quadratic_of_the_load_fraction(it_kw, expected_kw):
    assert UPS_LOSS_COEFFICIENTS == (0.01, 0.02, 0.01)
    assert float(ups_loss_kw(np.asarray(it_kw), 500.0)) == pytest.approx(expected_kw, abs=1e-12)


def test_distribution_and_ancillary_loads_are_two_and_one_percent():
    assert DISTRIBUTION_LOSS_FRACTION == 0.02 and ANCILLARY_FRACTION == 0.01
    assert float(distribution_loss_kw(np.asarray(800.0))) == pytest.approx(16.0, abs=1e-12)
    assert ancillary_kw(1000.0) == pytest.approx(10.0, abs=1e-12)
