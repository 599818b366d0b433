"""Psychrometrics against PsychroLib (the ASHRAE Handbook's equations in code) and the published equations.

PsychroLib (Meyer and Thevenard 2019) is independent of ``dcops.physics.psychrometrics``: it takes the saturation
pressure from the Hyland–Wexler equations of the ASHRAE Handbook, where ours uses the Magnus form of Alduchov and
Eskridge (1996), ``p_ws = 610.94 · exp(17.625·T / (T + 243.04))`` Pa, which is within 0.25 % of it from 1 to 50 °C
(measured; 0.24 % at 25 °C, Magnus on the low side). The humidity ratio ``W = 0.621945 · p_w / (p − p_w)`` is the
same equation in both.
"""

from __future__ import annotations

import math

import numpy as np
import psychrolib  # the test extra installs it
import pytest
from scipy.optimize import brentq

from dcops.physics.psychrometrics import (
    STANDARD_PRESSURE_PA,
    humidity_ratio,
    humidity_ratio_from_rh,
    relative_humidity_from_dew_point,
    saturation_pressure_pa,
    wet_bulb_c,
    wet_bulb_stull_c,
)

psychrolib.SetUnitSystem(psychrolib.SI)
TEMPS_C = np.linspace(1.0, 50.0, 50)


def test_the_default_pressure_is_the_standard_atmosphere():
    """101 325 Pa (ASHRAE Handbook, ch. 1, sea level): the default of every function that takes a pressure."""
    assert STANDARD_PRESSURE_PA == 101_325.0
    assert float(humidity_ratio(2_000.0)) == float(humidity_ratio(2_000.0, 101_325.0))
    assert float(humidity_ratio_from_rh(25.0, 60.0)) == float(humidity_ratio_from_rh(25.0, 60.0, 101_325.0))
    assert float(wet_bulb_c(25.0, 60.0)) == float(wet_bulb_c(25.0, 60.0, 101_325.0))


def test_magnus_saturation_pressure_at_0c_is_its_published_coefficient():
    """At 0 °C the exponent is 0, so p_ws is the Alduchov–Eskridge constant, 610.94 Pa (ASHRAE: 611.2 Pa)."""
    assert float(saturation_pressure_pa(0.0)) == pytest.approx(610.94, abs=1e-9)


def test_saturation_pressure_is_within_a_quarter_percent_of_hyland_wexler_from_1_to_50c():
    ours = saturation_pressure_pa(TEMPS_C)
    reference = np.array([psychrolib.GetSatVapPres(float(t)) for t in TEMPS_C])
    assert np.max(np.abs(ours / reference - 1.0)) < 0.0025


@pytest.mark.parametrize("pressure_pa", [80_000.0, 101_325.0])
@pytest.mark.parametrize("vapour_pressure_pa", [100.0, 500.0, 2_000.0, 7_000.0])
def test_humidity_ratio_is_the_ashrae_equation(vapour_pressure_pa, pressure_pa):
    reference = psychrolib.GetHumRatioFromVapPres(vapour_pressure_pa, pressure_pa)
    assert float(humidity_ratio(vapour_pressure_pa, pressure_pa)) == pytest.approx(reference, rel=1e-12, abs=1e-15)


def test_humidity_ratio_from_relative_humidity_follows_the_saturation_pressure():
    """W(T, RH) = W(RH/100 · p_ws(T)): within the saturation pressures' 0.25 % of PsychroLib's, at 5–100 % RH."""
    for rh in (5.0, 50.0, 100.0):
        ours = humidity_ratio_from_rh(TEMPS_C, rh)
        reference = np.array([psychrolib.GetHumRatioFromRelHum(float(t), rh / 100.0, 101_325.0) for t in TEMPS_C])
        assert np.max(np.abs(ours / reference - 1.0)) < 0.0025, rh


def test_relative_humidity_from_the_dew_point():
    """100 % at the dew point itself; otherwise within 0.15 percentage points of PsychroLib's (the Magnus
    pressures' errors largely cancel in the ratio p_ws(T_dew) / p_ws(T))."""
    np.testing.assert_allclose(relative_humidity_from_dew_point(TEMPS_C, TEMPS_C), 100.0, rtol=1e-12)
    for t in TEMPS_C:
        for dew in np.linspace(1.0, t, 6):
            reference = 100.0 * psychrolib.GetRelHumFromTDewPoint(float(t), float(dew))
            assert abs(float(relative_humidity_from_dew_point(t, dew)) - reference) < 0.15, (t, dew)


# Stull (2011), "Wet-bulb temperature from relative humidity and air temperature", J. Appl. Meteor. Climatol. 50,
# 2267–2269, eq. (1), with RH in percent:
#   T_w = T·atan(0.151977·(RH + 8.313659)^½) + atan(T + RH) − atan(RH − 1.676331)
#         + 0.00391838·RH^(3/2)·atan(0.023101·RH) − 4.686035
# and its worked example: T = 20 °C, RH = 50 % gives T_w = 13.7 °C.

def _stull_published(t: float, rh: float) -> float:
    return (t * math.atan(0.151977 * math.sqrt(rh + 8.313659)) + math.atan(t + rh) - math.atan(rh - 1.676331)
            + 0.00391838 * rh**1.5 * math.atan(0.023101 * rh) - 4.686035)


def test_stull_wet_bulb_reproduces_the_papers_worked_example():
    assert float(wet_bulb_stull_c(20.0, 50.0)) == pytest.approx(13.7, abs=0.05)


@pytest.mark.parametrize(("dry_bulb_c", "relative_humidity_pct"),
                         [(-20.0, 5.0), (0.0, 20.0), (20.0, 50.0), (35.0, 10.0), (50.0, 99.0)])
def test_stull_wet_bulb_is_the_published_equation_across_its_range(dry_bulb_c, relative_humidity_pct):
    """The equation as printed (above), evaluated with ``math`` at the corners of its validity range (RH 5–99 %,
    T −20 to 50 °C), where each term matters: at 5 % RH the atan(RH − 1.676331) term alone is worth 1.28 K."""
    expected = _stull_published(dry_bulb_c, relative_humidity_pct)
    assert float(wet_bulb_stull_c(dry_bulb_c, relative_humidity_pct)) == pytest.approx(expected, abs=1e-12)


# ASHRAE Handbook of Fundamentals (2017), ch. 1, eq. (33), the psychrometer equation above freezing:
#   W = ((2501 − 2.326·T*)·W*_s − 1.006·(T − T*)) / (2501 + 1.86·T − 4.186·T*),   W*_s = W(p_ws(T*))

def _wet_bulb_by_bisection(t: float, rh: float, p: float) -> float:
    """T* solving eq. (33) by Brent's bracketing method to 1e-13 K, with the module's p_ws and W (checked against
    PsychroLib above)."""
    w = float(humidity_ratio(rh / 100.0 * float(saturation_pressure_pa(t)), p))

    def residual(x: float) -> float:
        ws = float(humidity_ratio(float(saturation_pressure_pa(x)), p))
        return ((2501.0 - 2.326 * x) * ws - 1.006 * (t - x)) / (2501.0 + 1.86 * t - 4.186 * x) - w

    return brentq(residual, t - 40.0, t, xtol=1e-13, rtol=1e-15)


@pytest.mark.parametrize("pressure_pa", [80_000.0, 101_325.0])
@pytest.mark.parametrize(("dry_bulb_c", "relative_humidity_pct"),
                         [(40.0, 0.5), (5.0, 10.0), (20.0, 50.0), (35.0, 20.0), (45.0, 90.0), (30.0, 99.0)])
def test_newton_lands_on_the_root_of_the_psychrometer_equation(dry_bulb_c, relative_humidity_pct, pressure_pa):
    """Newton converges quadratically, so once a step is below its 1e-9 K stop the error left is far smaller:
    the result is the bracketed root to 1e-10 K (the docstring promises 1e-6 K)."""
    expected = _wet_bulb_by_bisection(dry_bulb_c, relative_humidity_pct, pressure_pa)
    got = float(wet_bulb_c(dry_bulb_c, relative_humidity_pct, pressure_pa))
    assert got == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("reading_pct", [0.0, 0.05, -5.0])
def test_a_relative_humidity_below_a_tenth_of_a_percent_is_read_as_a_tenth(reading_pct):
    """``wet_bulb_c`` reads relative humidity within [0.1, 100] % (its docstring): a dry or faulty reading below
    0.1 % gives the wet-bulb of 0.1 %, and one above 100 % that of saturated air, the dry-bulb itself."""
    assert float(wet_bulb_c(30.0, reading_pct)) == float(wet_bulb_c(30.0, 0.1))
    assert float(wet_bulb_c(30.0, 120.0)) == pytest.approx(30.0, abs=1e-9)
