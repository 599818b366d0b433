"""The DOE-2 electric EIR chiller reproduces its published figures and physical trends."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.chiller import (
    DOE2_CENTRIFUGAL_5_50COP,
    DOE2_RECIPROCATING_3_67COP,
    capacity_fraction,
    chiller_power_kw,
    eir_part_load_modifier,
    eir_temperature_modifier,
    full_load_cop,
)


@pytest.mark.parametrize(("condenser_c", "published_cop"), [(24.0, 6.2), (29.4, 5.5), (35.0, 4.8)])
def test_centrifugal_full_load_cop_matches_doe2_figures(condenser_c, published_cop):
    cop = float(full_load_cop(DOE2_CENTRIFUGAL_5_50COP, 6.67, condenser_c))
    assert abs(cop - published_cop) / published_cop < 0.05


def test_curves_are_normalised_at_the_reference_point():
    for curves in (DOE2_CENTRIFUGAL_5_50COP, DOE2_RECIPROCATING_3_67COP):
        assert abs(float(capacity_fraction(curves, 6.67, 29.4)) - 1.0) < 0.01
        assert abs(float(eir_temperature_modifier(curves, 6.67, 29.4)) - 1.0) < 0.01


@pytest.mark.parametrize("curves", [DOE2_CENTRIFUGAL_5_50COP, DOE2_RECIPROCATING_3_67COP])
def test_cop_falls_with_condenser_temperature(curves):
    condenser = np.linspace(24.0, 35.0, 45)
    cop = full_load_cop(curves, 6.67, condenser)
    assert np.all(np.diff(cop) < 0)
    # About 2 % per K for the centrifugal set, as the design notes say.
    if curves is DOE2_CENTRIFUGAL_5_50COP:
        per_k = (cop[0] / cop[-1]) ** (1.0 / 11.0) - 1.0
        assert 0.015 < per_k < 0.03


def test_cop_rises_with_leaving_chilled_water_temperature():
    cop = full_load_cop(DOE2_CENTRIFUGAL_5_50COP, np.linspace(5.0, 10.0, 21), 29.4)
    assert np.all(np.diff(cop) > 0)


def test_inputs_outside_the_validity_range_are_clamped():
    assert float(full_load_cop(DOE2_CENTRIFUGAL_5_50COP, 6.67, 10.0)) == float(
        full_load_cop(DOE2_CENTRIFUGAL_5_50COP, 6.67, 24.0)
    )
    assert float(capacity_fraction(DOE2_CENTRIFUGAL_5_50COP, 18.0, 29.4)) == float(
        capacity_fraction(DOE2_CENTRIFUGAL_5_50COP, 10.0, 29.4)
    )


def test_centrifugal_part_load_efficiency_peaks_between_half_and_three_quarter_load():
    plr = np.linspace(0.1, 1.0, 91)
    eirft = eir_temperature_modifier(DOE2_CENTRIFUGAL_5_50COP, 6.67, 29.4)
    cop = plr * 100.0 / chiller_power_kw(DOE2_CENTRIFUGAL_5_50COP, plr * 100.0, 100.0, eirft)
    assert 0.5 <= plr[np.argmax(cop)] <= 0.75


def test_power_is_zero_without_load_or_capacity_and_capped_at_full_load():
    curves = DOE2_CENTRIFUGAL_5_50COP
    eirft = eir_temperature_modifier(curves, 6.67, 29.4)
    assert float(chiller_power_kw(curves, 0.0, 100.0, eirft)) == 0.0
    assert float(chiller_power_kw(curves, 50.0, 0.0, eirft)) == 0.0
    assert float(chiller_power_kw(curves, 150.0, 100.0, eirft)) == float(chiller_power_kw(curves, 100.0, 100.0, eirft))


# ---------------------------------------------------------------------------------------------------------------
# The part-load curve against its published record. EnergyPlus ``Chillers.idf`` (and the Modelica Buildings
# records ``DOE_2_Centrifugal_5_50COP`` / ``DOE_2_Reciprocating_3_67COP``): EIRFPLR(p) = a + b·p + c·p² with
#   centrifugal   a = 0.222903, b = 0.313387, c = 0.463710
#   reciprocating a = 0.088065, b = 1.137742, c = −0.225806
# minimum part-load ratio 0.1, minimum unloading ratio 0.2. The expected values below are that polynomial
# worked by hand, e.g. centrifugal at p = 0.5: 0.222903 + 0.313387·0.5 + 0.463710·0.25 = 0.495524.

PUBLISHED_EIRFPLR = {
    "centrifugal": (DOE2_CENTRIFUGAL_5_50COP, (0.222903, 0.313387, 0.463710)),
    "reciprocating": (DOE2_RECIPROCATING_3_67COP, (0.088065, 1.137742, -0.225806)),
}


@pytest.mark.parametrize("name", list(PUBLISHED_EIRFPLR))
def test_part_load_curve_coefficients_and_limits_are_the_published_energyplus_record(name):
    curves, published = PUBLISHED_EIRFPLR[name]
    assert curves.eirfplr == pytest.approx(published, rel=1e-9, abs=0.0)
    assert curves.min_part_load_ratio == 0.1 and curves.min_unloading_ratio == 0.2


@pytest.mark.parametrize(
    ("curves", "part_load_ratio", "expected"),
    [
        (DOE2_CENTRIFUGAL_5_50COP, 1.00, 1.000000),
        (DOE2_CENTRIFUGAL_5_50COP, 0.75, 0.718780125),
        (DOE2_CENTRIFUGAL_5_50COP, 0.50, 0.495524),
        (DOE2_CENTRIFUGAL_5_50COP, 0.25, 0.330231625),
        (DOE2_CENTRIFUGAL_5_50COP, 0.20, 0.3041288),
        (DOE2_RECIPROCATING_3_67COP, 1.00, 1.000001),
        (DOE2_RECIPROCATING_3_67COP, 0.75, 0.814355625),
        (DOE2_RECIPROCATING_3_67COP, 0.50, 0.6004845),
        (DOE2_RECIPROCATING_3_67COP, 0.25, 0.358387625),
    ],
)
def test_part_load_modifier_matches_the_published_curve_at_its_points(curves, part_load_ratio, expected):
    assert float(eir_part_load_modifier(curves, part_load_ratio)) == pytest.approx(expected, abs=1e-9)


def test_centrifugal_full_load_cop_at_the_reference_point_is_its_rated_5_50():
    """At 6.67 °C leaving chilled water and 29.4 °C entering condenser water, EIRFT = 0.99909 (the published
    biquadratic worked by hand) and EIRFPLR(1) = 1, so Q/P = 5.5 / 0.99909 = 5.505 (a 10 % error in any
    part-load coefficient moves it by 2-5 %)."""
    curves = DOE2_CENTRIFUGAL_5_50COP
    eirft = float(eir_temperature_modifier(curves, 6.67, 29.4))
    assert eirft == pytest.approx(0.999087916, abs=1e-8)
    power = float(chiller_power_kw(curves, 1000.0, 1000.0, eirft))
    assert 1000.0 / power == pytest.approx(5.505021, abs=1e-4)
    assert float(full_load_cop(curves, 6.67, 29.4)) == pytest.approx(5.505021, abs=1e-4)


@pytest.mark.parametrize(
    ("load_kw", "expected_kw"),
    [
        # P = Q_avail / COP_ref · EIRFT · EIRFPLR(max(PLR, 0.2)) · min(1, PLR / 0.1), Q_avail = 100 kW, EIRFT = 1
        (50.0, 100.0 / 5.5 * 0.495524),           # PLR 0.5: on the curve, no false loading
        (20.0, 100.0 / 5.5 * 0.3041288),          # PLR 0.2: the minimum unloading ratio itself
        (15.0, 100.0 / 5.5 * 0.3041288),          # PLR 0.15: false-loaded, power as at 0.2 (not EIRFPLR(0.15) = 0.28034)
        (12.0, 100.0 / 5.5 * 0.3041288),          # PLR 0.12: still false-loaded
        (5.0, 100.0 / 5.5 * 0.3041288 * 0.5),     # PLR 0.05: cycling below PLR_min 0.1, half of the 0.1 power
    ],
)
def test_below_the_minimum_unloading_ratio_the_chiller_false_loads_as_in_energyplus(load_kw, expected_kw):
    curves = DOE2_CENTRIFUGAL_5_50COP
    assert float(chiller_power_kw(curves, load_kw, 100.0, 1.0)) == pytest.approx(expected_kw, rel=1e-9)
    # and the part-load modifier itself is flat below the minimum unloading ratio
    if load_kw < 20.0:
        assert float(eir_part_load_modifier(curves, load_kw / 100.0)) == pytest.approx(0.3041288, abs=1e-9)
