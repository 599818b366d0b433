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
