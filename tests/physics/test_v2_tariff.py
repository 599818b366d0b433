"""The time-of-use tariff of plant v2 against its documented schedule, worked by hand.

Weekdays: on-peak 12:00–20:00, mid-peak 08:00–12:00 and 20:00–22:00, off-peak otherwise; weekends off-peak.
Periods are half-open ``[start, end)`` in local hours, with minutes and seconds counting.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from dcops.physics.v2.tariff import FLAT, TimeOfUseTariff

MONDAY = datetime(2026, 6, 1)  # 00:00 local
HOUR = 3600.0


def test_the_reference_monday_is_a_monday() -> None:
    assert MONDAY.weekday() == 0


def test_a_weekday_follows_the_documented_periods_at_each_boundary() -> None:
    tariff = TimeOfUseTariff()
    # (elapsed seconds after Monday 00:00, expected $/kWh)
    cases = [
        (0.0, 0.08), (7 * HOUR + 59 * 60 + 59, 0.08),  # night: off-peak until 08:00
        (8 * HOUR, 0.14), (11 * HOUR + 30 * 60, 0.14), (11 * HOUR + 59 * 60 + 59, 0.14),  # morning shoulder
        (12 * HOUR, 0.22), (12 * HOUR + 30 * 60, 0.22), (19 * HOUR + 59 * 60, 0.22),  # on-peak
        (20 * HOUR, 0.14), (21 * HOUR + 45 * 60, 0.14),  # evening shoulder
        (22 * HOUR, 0.08), (23 * HOUR + 59 * 60, 0.08),  # night again
    ]
    elapsed = np.array([s for s, _ in cases])
    np.testing.assert_array_equal(tariff.series(MONDAY, elapsed), [p for _, p in cases])


def test_minutes_and_seconds_count_towards_the_hour() -> None:
    """A period that starts at 13:14:30 begins exactly there: a second earlier is still the previous period."""
    start_h = 13 + 14 / 60.0 + 30 / 3600.0
    tariff = TimeOfUseTariff(on_peak_hours=(start_h, 20.0), mid_peak_hours=((8.0, start_h),))
    at = 13 * HOUR + 14 * 60 + 30
    np.testing.assert_array_equal(tariff.series(MONDAY, np.array([at - 1.0, at, at + 1.0])), [0.14, 0.22, 0.22])
    # 13:20 is on-peak only if the minutes add to the hour (13.33 is past 13.24; 13 − 0.33 is not)
    assert tariff.series(datetime(2026, 6, 1, 13, 20), np.array([0.0]))[0] == 0.22


def test_a_second_is_one_3600th_of_an_hour():
    """A period that starts 2 µh after 13:14:59 has not begun at 13:14:59 (59 s is 59/3600 h, not 59/3599)."""
    start_h = 13 + 14 / 60.0 + 59 / 3600.0 + 2e-6
    tariff = TimeOfUseTariff(on_peak_hours=(start_h, 20.0), mid_peak_hours=((8.0, start_h),))
    assert tariff.series(datetime(2026, 6, 1, 13, 14, 59), np.array([0.0]))[0] == 0.14


def test_elapsed_time_runs_forward_from_the_start_and_across_days() -> None:
    tariff = TimeOfUseTariff()
    friday_evening = datetime(2026, 6, 5, 19, 0)  # Friday 19:00
    assert friday_evening.weekday() == 4
    prices = tariff.series(friday_evening, np.array([0.0, 1.5 * HOUR, 18 * HOUR, 2 * 24 * HOUR + 17 * HOUR]))
    # Friday 19:00 on-peak, Friday 20:30 mid-peak, Saturday 13:00 weekend off-peak, Monday 12:00 on-peak
    np.testing.assert_array_equal(prices, [0.22, 0.14, 0.08, 0.22])


def test_weekends_are_off_peak_unless_the_tariff_says_otherwise() -> None:
    saturday_noon, sunday_9 = datetime(2026, 6, 6, 12), datetime(2026, 6, 7, 9)
    assert (saturday_noon.weekday(), sunday_9.weekday()) == (5, 6)
    tariff = TimeOfUseTariff()
    assert tariff.series(saturday_noon, np.array([0.0]))[0] == 0.08
    assert tariff.series(sunday_9, np.array([0.0]))[0] == 0.08
    every_day = TimeOfUseTariff(weekend_off_peak=False)
    assert every_day.series(saturday_noon, np.array([0.0]))[0] == 0.22
    assert every_day.series(sunday_9, np.array([0.0]))[0] == 0.14


def test_flat_is_one_price_at_every_hour() -> None:
    elapsed = np.arange(0.0, 7 * 24 * HOUR, 1800.0)
    prices = FLAT.series(MONDAY, elapsed)
    assert prices.shape == elapsed.shape
    assert set(prices.tolist()) == {0.12}


@pytest.mark.parametrize("field", ["on_peak", "mid_peak", "off_peak"])
def test_a_negative_price_is_refused(field: str) -> None:
    with pytest.raises(ValueError, match="prices must be >= 0"):
        TimeOfUseTariff(**{field: -0.01})
    TimeOfUseTariff(**{field: 0.0})  # zero is a price
