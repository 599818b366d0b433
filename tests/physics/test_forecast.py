"""Forecasts with error: unit AR(1) errors, σ growing with √lead, and forecasts that land on the truth ahead."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.physics.forecast import PERFECT, ForecastModel, forecast, unit_ar1


def test_ar1_errors_have_unit_variance_and_the_stated_correlation():
    rng = np.random.default_rng(0)
    e = unit_ar1(rng, 200_000, dt_s=300.0, correlation_hours=3.0)
    assert abs(float(e.mean())) < 0.05 and float(e.std()) == pytest.approx(1.0, abs=0.03)
    lag1 = float(np.corrcoef(e[:-1], e[1:])[0, 1])
    assert lag1 == pytest.approx(math.exp(-300.0 / (3.0 * 3600.0)), abs=0.005)
    lag36 = float(np.corrcoef(e[:-36], e[36:])[0, 1])  # 3 h: one correlation time
    assert lag36 == pytest.approx(math.exp(-1.0), abs=0.03)


def test_forecast_errors_grow_with_the_square_root_of_the_lead():
    """σ(h) = σ₁·√h: the 3 h forecast's error is √3 times the 1 h forecast's, and both are unbiased."""
    model = ForecastModel()
    rng = np.random.default_rng(1)
    n = 100_000
    truth = 20.0 + np.sin(np.arange(n + 40) / 50.0)
    errors = {}
    for lead, hours in zip(model.lead_steps(300.0), model.leads_h, strict=True):
        f = forecast(truth, n, lead, model.wet_bulb_sigma_k * math.sqrt(hours), unit_ar1(rng, n, 300.0, 0.0), False)
        errors[hours] = f - truth[lead: lead + n]
    assert float(errors[1.0].std()) == pytest.approx(0.4, rel=0.02)
    assert float(errors[3.0].std()) / float(errors[1.0].std()) == pytest.approx(math.sqrt(3.0), rel=0.03)
    assert all(abs(float(e.mean())) < 0.02 for e in errors.values())


def test_a_perfect_forecast_is_the_truth_ahead_and_relative_errors_never_go_negative():
    truth = np.arange(50, dtype=float)
    assert PERFECT.lead_steps(300.0) == (12, 36)
    np.testing.assert_array_equal(forecast(truth, 10, 12, 0.0, np.zeros(10), True), truth[12:22])
    wild = forecast(np.ones(20), 10, 5, 2.0, np.full(10, -3.0), True)
    assert np.all(wild == 0.0)
    with pytest.raises(ValueError, match="truth needs"):
        forecast(truth, 40, 12, 0.0, np.zeros(40), False)


@pytest.mark.parametrize(("field", "value"), [("leads_h", ()), ("leads_h", (1.0, -3.0)),
                                              ("wet_bulb_sigma_k", math.nan), ("correlation_hours", -1.0)])
def test_bad_forecast_parameters_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        ForecastModel(**{field: value})


def test_the_default_forecast_errors_are_the_documented_skill():
    """Module docstring: σ₁ = 0.4 K (wet-bulb), 3 % (carbon), 2 % (IT load) per √h, correlation time 3 h."""
    model = ForecastModel()
    assert (model.wet_bulb_sigma_k, model.carbon_sigma_fraction, model.load_sigma_fraction) == (0.4, 0.03, 0.02)
    assert model.correlation_hours == 3.0


def test_the_error_series_is_the_stated_recurrence():
    """e_0 = s_0, e_i = ρ·e_(i−1) + √(1 − ρ²)·s_i with ρ = exp(−Δt/τ), over the generator's standard normals."""
    shocks = np.random.default_rng(9).standard_normal(6)
    rho = math.exp(-300.0 / (2.0 * 3600.0))
    expected = [shocks[0]]
    for s in shocks[1:]:
        expected.append(rho * expected[-1] + math.sqrt(1.0 - rho * rho) * s)
    np.testing.assert_allclose(unit_ar1(np.random.default_rng(9), 6, 300.0, 2.0), expected, rtol=1e-12)
    np.testing.assert_array_equal(unit_ar1(np.random.default_rng(9), 6, 300.0, 0.0), shocks)  # no memory


def test_a_correlation_time_under_an_hour_still_has_memory():
    """ρ = exp(−Δt/τ) for any τ > 0: half an hour of correlation with 5-minute steps is ρ = e^(−1/6), not white
    noise."""
    shocks = np.random.default_rng(4).standard_normal(3)
    rho = math.exp(-300.0 / 1800.0)
    e1 = rho * shocks[0] + math.sqrt(1.0 - rho * rho) * shocks[1]
    values = unit_ar1(np.random.default_rng(4), 3, 300.0, 0.5)
    assert values[0] == shocks[0] and values[1] == pytest.approx(e1, rel=1e-12)
    assert values[2] == pytest.approx(rho * e1 + math.sqrt(1.0 - rho * rho) * shocks[2], rel=1e-12)


def test_the_perfect_forecast_model_has_no_error_at_any_lead():
    """``PERFECT``: forecasts without error, for every quantity (the leads and correlation time are the defaults)."""
    assert (PERFECT.wet_bulb_sigma_k, PERFECT.carbon_sigma_fraction, PERFECT.load_sigma_fraction) == (0.0, 0.0, 0.0)
    assert (PERFECT.leads_h, PERFECT.correlation_hours) == (ForecastModel().leads_h, ForecastModel().correlation_hours)


def test_forecasts_by_hand():
    truth = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    errors = np.array([0.5, -100.0, 1.0])
    np.testing.assert_allclose(forecast(truth, 3, 2, 0.1, errors, relative=False), [30.05, 30.0, 50.1])
    np.testing.assert_allclose(forecast(truth, 3, 2, 0.1, errors, relative=True), [30.0 * 1.05, 0.0, 50.0 * 1.1])
    with pytest.raises(ValueError, match="truth needs 6 values for these forecasts, got 5"):
        forecast(truth, 4, 2, 0.1, np.zeros(4), relative=False)


@pytest.mark.parametrize(("lead_h", "steps"), [(0.01, 1), (0.1, 1), (0.125, 2), (0.2083, 2), (1.0, 12)])
def test_leads_are_whole_steps_rounded_and_at_least_one(lead_h, steps):
    """300 s steps: 36 s is less than a step (one step), 360 s is 1.2 (one), 450 s is 1.5 (two, rounding half to
    even), 749.9 s is 2.4996 (two)."""
    assert ForecastModel(leads_h=(lead_h,)).lead_steps(300.0) == (steps,)


@pytest.mark.parametrize("leads", [(), (0.0,), (-1.0,), (math.inf,), (1.0, math.nan)])
def test_leads_must_be_positive_hours(leads):
    with pytest.raises(ValueError, match="leads_h must be positive hours"):
        ForecastModel(leads_h=leads)
