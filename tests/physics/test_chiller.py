"""The DOE-2 electric EIR chiller reproduces its published figures and physical trends."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.chiller import (
    DOE2_CENTRIFUGAL_5_50COP,
    DOE2_RECIPROCATING_3_67COP,
    capacity_fraction,
    chiller_power_kw,
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
