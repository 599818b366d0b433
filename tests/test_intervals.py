"""The t-interval helper behind every report's 95 % t-interval (``dcops.intervals``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.intervals import t_interval


def test_the_interval_of_one_to_five_is_the_textbook_one():
    # mean 3, sd √2.5, t(0.975, 4 dof) = 2.776445 (a printed t table): half-width 2.776445 · √2.5 / √5 = 1.963243
    mean, low, high = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0
    assert (low, high) == pytest.approx((3.0 - 1.963243, 3.0 + 1.963243), abs=1e-6)


@pytest.mark.parametrize("n", [2, 3, 10, 30])
def test_the_interval_is_the_mean_plus_minus_t_times_the_standard_error(n):
    values = np.random.default_rng(n).normal(5.0, 2.0, size=n)
    quantile = {2: 12.706205, 3: 4.302653, 10: 2.262157, 30: 2.045230}[n]  # t(0.975, n - 1 dof), t table
    half = quantile * values.std(ddof=1) / math.sqrt(n)
    mean, low, high = t_interval(values)
    assert mean == pytest.approx(values.mean(), rel=1e-15)
    assert (low, high) == pytest.approx((values.mean() - half, values.mean() + half), rel=1e-6)


def test_a_wider_confidence_gives_a_wider_interval():
    values = [0.1, 0.4, 0.35, 0.8]
    _, low95, high95 = t_interval(values)
    _, low99, high99 = t_interval(values, confidence=0.99)
    assert low99 < low95 < high95 < high99


def test_fewer_than_two_values_give_no_interval_and_no_spread_gives_the_mean():
    assert all(math.isnan(v) for v in t_interval([]))
    mean, low, high = t_interval([0.7])
    assert mean == 0.7 and math.isnan(low) and math.isnan(high)
    assert t_interval([0.25, 0.25, 0.25]) == (0.25, 0.25, 0.25)
