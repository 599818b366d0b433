"""The integrated waterside economiser in its three modes (off, partial, full), against hand-worked cases.

Module equations (``dcops.physics.economiser``): the water reaching the plate heat exchanger is at
``T_econ = T_wb + tower approach + HX approach`` (both approaches make it warmer than the wet-bulb), and

    f_econ = clip((T_ret − T_econ) / (T_ret − T_chw,set), 0, 1)

so the economiser is full when ``T_econ ≤ T_chw,set``, off when ``T_econ ≥ T_ret`` and partial in between.
Every case below: tower approach 3.5 K, HX approach 1.5 K (T_econ = T_wb + 5 K), set-point 12 °C, return 18 °C
(a 6 K chilled-water rise).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dcops.physics.economiser import condenser_water_c, economiser_fraction

TOWER_K, HX_K = 3.5, 1.5
SETPOINT_C, RETURN_C = 12.0, 18.0


def fraction(wet_bulb_c: float, setpoint_c: float = SETPOINT_C, return_c: float = RETURN_C) -> float:
    return float(economiser_fraction(np.asarray(wet_bulb_c), np.asarray(setpoint_c), np.asarray(return_c),
                                     TOWER_K, HX_K))


@pytest.mark.parametrize(
    ("wet_bulb_c", "expected", "mode"),
    [
        (2.0, 1.0, "full"),     # T_econ = 7 °C, well below the 12 °C set-point
        (7.0, 1.0, "full"),     # T_econ = 12 °C = set-point: the boundary of full free cooling
        (8.0, 5.0 / 6.0, "partial"),  # T_econ = 13 °C: (18 − 13) / 6
        (10.0, 0.5, "partial"),  # T_econ = 15 °C: (18 − 15) / 6, half the load
        (12.5, 0.5 / 6.0, "partial"),  # T_econ = 17.5 °C: (18 − 17.5) / 6
        (13.0, 0.0, "off"),     # T_econ = 18 °C = return: nothing left to pre-cool
        (20.0, 0.0, "off"),     # T_econ = 25 °C, warmer than the return water
    ],
)
def test_economiser_fraction_in_each_mode_matches_the_hand_worked_value(wet_bulb_c, expected, mode):
    assert fraction(wet_bulb_c) == pytest.approx(expected, abs=1e-12), mode


def test_partial_mode_falls_linearly_from_full_to_off_across_one_chilled_water_rise():
    """Between T_wb = 7 °C (full) and 13 °C (off) the share falls by 1/6 per K of wet-bulb."""
    wet = np.linspace(7.0, 13.0, 13)
    shares = economiser_fraction(wet, np.full(13, SETPOINT_C), np.full(13, RETURN_C), TOWER_K, HX_K)
    np.testing.assert_allclose(shares, 1.0 - (wet - 7.0) / 6.0, atol=1e-12)
    assert np.all((shares[1:-1] > 0.0) & (shares[1:-1] < 1.0))


def test_both_approaches_warm_the_economiser_water():
    """A wider HX approach (or tower approach) can only shrink the economiser's share: with 3 K instead of
    1.5 K the 10 °C wet-bulb case gives T_econ = 16.5 °C, (18 − 16.5) / 6 = 0.25."""
    wider = float(economiser_fraction(np.asarray(10.0), np.asarray(SETPOINT_C), np.asarray(RETURN_C), TOWER_K, 3.0))
    assert wider == pytest.approx(0.25, abs=1e-12)
    no_hx = float(economiser_fraction(np.asarray(10.0), np.asarray(SETPOINT_C), np.asarray(RETURN_C), TOWER_K, 0.0))
    assert no_hx == pytest.approx(4.5 / 6.0, abs=1e-12)  # T_econ = 13.5 °C
    assert wider < fraction(10.0) < no_hx


@pytest.mark.parametrize(("wet_bulb_c", "expected"), [(7.0, 1.0), (7.5, 0.0), (2.0, 1.0)])
def test_without_a_return_water_rise_the_economiser_is_full_only_if_its_water_reaches_the_setpoint(wet_bulb_c,
                                                                                                    expected):
    # No load: return = set-point. T_econ = 12 °C (full), 12.5 °C (off), 7 °C (full).
    assert fraction(wet_bulb_c, return_c=SETPOINT_C) == expected


def test_condenser_water_leaves_the_tower_one_approach_above_the_wet_bulb():
    assert float(condenser_water_c(np.asarray(18.0), 3.5)) == 21.5


def test_a_light_load_of_half_a_kelvin_rise_is_still_partial():
    """Return 12.5 °C over the 12 °C set-point (a 0.5 K rise, well above the no-load threshold): T_wb = 7.25 °C
    gives T_econ = 12.25 °C and (12.5 − 12.25) / 0.5 = 0.5."""
    assert fraction(7.25, return_c=12.5) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize(("return_c", "expected"), [(1e-6, 0.0), (2e-6, 0.75)])
def test_a_rise_of_at_most_a_millionth_of_a_kelvin_counts_as_no_load(return_c, expected):
    """Set-point 0 °C, no approaches, wet-bulb 0.5e-6 °C (T_econ = 0.5e-6 °C, above the set-point). A rise of
    exactly 1e-6 K is no load: the no-load rule gives 0. A rise of 2e-6 K is a load: (2 − 0.5) / 2 = 0.75."""
    share = float(economiser_fraction(np.asarray(0.5e-6), np.asarray(0.0), np.asarray(return_c), 0.0, 0.0))
    assert share == pytest.approx(expected, abs=1e-9)


def test_loaded_and_unloaded_plants_in_one_batch_raise_no_floating_point_warning():
    """A batch mixes plants with and without a return-water rise; the guards keep every division finite."""
    wet = np.array([2.0, 10.0, 20.0, 2.0, 20.0])
    return_c = np.array([RETURN_C, RETURN_C, RETURN_C, SETPOINT_C, SETPOINT_C])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shares = economiser_fraction(wet, np.full(5, SETPOINT_C), return_c, TOWER_K, HX_K)
    np.testing.assert_allclose(shares, [1.0, 0.5, 0.0, 1.0, 0.0], atol=1e-12)
