"""The DOE-2 electric EIR chiller reproduces its published figures and physical trends."""

from __future__ import annotations

import dataclasses

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


# ---------------------------------------------------------------------------------------------------------------
# The rest of each record (Modelica Buildings ``DOE_2_Centrifugal_5_50COP`` / ``DOE_2_Reciprocating_3_67COP``, from
# EnergyPlus ``Chillers.idf``): reference COP 5.5 / 3.67 at 6.67 °C leaving chilled water and 29.4 °C entering
# condenser water; curve inputs valid from 5 to 10 °C leaving and from 24 to 35 °C entering.

@pytest.mark.parametrize("curves", [DOE2_CENTRIFUGAL_5_50COP, DOE2_RECIPROCATING_3_67COP])
@pytest.mark.parametrize(
    ("chw_leaving_c", "condenser_entering_c", "clamped_to"),
    [
        (3.0, 29.4, (5.0, 29.4)),    # below the 5 °C leaving chilled-water minimum
        (12.0, 29.4, (10.0, 29.4)),  # above the 10 °C leaving chilled-water maximum
        (6.67, 20.0, (6.67, 24.0)),  # below the 24 °C entering condenser-water minimum
        (6.67, 40.0, (6.67, 35.0)),  # above the 35 °C entering condenser-water maximum
    ],
)
def test_each_bound_of_the_published_validity_ranges_clamps_both_curves(curves, chw_leaving_c, condenser_entering_c,
                                                                         clamped_to):
    assert curves.chw_leaving_range_c == (5.0, 10.0) and curves.condenser_entering_range_c == (24.0, 35.0)
    for curve in (capacity_fraction, eir_temperature_modifier):
        assert float(curve(curves, chw_leaving_c, condenser_entering_c)) == float(curve(curves, *clamped_to))


def test_reciprocating_full_load_cop_at_the_reference_point_is_its_rated_3_67():
    """EIRFT(6.67, 29.4) = 1.03076 − 0.103536·6.67 + 0.00710208·6.67² + 0.0093186·29.4 + 0.00031752·29.4²
    − 0.00104328·6.67·29.4 = 0.9999719 (the published biquadratic worked by hand) and EIRFPLR(1) = 0.088065 +
    1.137742 − 0.225806 = 1.000001, so Q/P = 3.67 / (0.9999719 · 1.000001) = 3.67010."""
    curves = DOE2_RECIPROCATING_3_67COP
    eirft = float(eir_temperature_modifier(curves, 6.67, 29.4))
    assert eirft == pytest.approx(0.99997191, abs=1e-8)
    power = float(chiller_power_kw(curves, 1000.0, 1000.0, eirft))
    assert 1000.0 / power == pytest.approx(3.670099, abs=1e-5)
    assert float(full_load_cop(curves, 6.67, 29.4)) == pytest.approx(3.670099, abs=1e-5)


def test_full_load_cop_divides_by_the_part_load_curve_at_full_load():
    """COP_full = COP_ref / (EIRFT · EIRFPLR(1)), the same as Q/P at PLR 1. Both published part-load curves pass
    through 1 at PLR 1 (to 1e-6), so a curve set whose EIRFPLR(1) = 0.1 + 0.2 + 0.5 = 0.8 checks the factor."""
    curves = dataclasses.replace(DOE2_CENTRIFUGAL_5_50COP, name="EIRFPLR(1) = 0.8", eirfplr=(0.1, 0.2, 0.5))
    for condenser_c in (24.0, 29.4, 35.0):
        eirft = float(eir_temperature_modifier(curves, 6.67, condenser_c))
        cop = float(full_load_cop(curves, 6.67, condenser_c))
        assert cop == pytest.approx(5.5 / (eirft * 0.8), rel=1e-12)
        assert cop == pytest.approx(100.0 / float(chiller_power_kw(curves, 100.0, 100.0, eirft)), rel=1e-12)


@pytest.mark.parametrize("capacity_kw", [0.001, 0.5, 1.0, 1000.0])
def test_power_is_proportional_to_the_chillers_size_however_small(capacity_kw):
    """The curves are per unit of capacity: at PLR 0.5 and EIRFT 1 a chiller of any size draws
    Q_avail / 5.5 · EIRFPLR(0.5) = Q_avail · 0.495524 / 5.5 (EIRFPLR worked by hand above)."""
    power = float(chiller_power_kw(DOE2_CENTRIFUGAL_5_50COP, 0.5 * capacity_kw, capacity_kw, 1.0))
    assert power == pytest.approx(capacity_kw / 5.5 * 0.495524, rel=1e-9)


def test_a_curve_set_is_read_only():
    """A curve set is a published record shared by every plant that names it: it cannot be changed in place."""
    curves = dataclasses.replace(DOE2_CENTRIFUGAL_5_50COP)
    with pytest.raises(dataclasses.FrozenInstanceError):
        curves.reference_cop = 6.0  # type: ignore[misc]
