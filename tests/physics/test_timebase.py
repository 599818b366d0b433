"""The calendar behind the weather and carbon profiles (``physics/timebase.py``), against Python's own calendar:
month blends between mid-months, hours of day, days since the start, the bilinear lookup, and the seeded
day-to-day anomaly's documented law (AR(1) at local noons, linear in between)."""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta

import numpy as np
import pytest

from dcops.physics.timebase import calendar_points, daily_anomaly, lookup

HOUR = 3600.0


def _mid_month(month: int) -> float:
    """Day of year (0-based, fractional) of the middle of ``month`` in a 365-day year, from the calendar."""
    start = (datetime(2026, month, 1) - datetime(2026, 1, 1)).days
    return start + calendar.monthrange(2026, month)[1] / 2.0


def _day_of_year(t: datetime) -> float:
    return (t - datetime(t.year, 1, 1)).total_seconds() / 86400.0


@pytest.mark.parametrize("month", range(1, 13))
def test_at_the_middle_of_each_month_the_blend_is_that_month_alone(month):
    days = _mid_month(month)
    at = datetime(2026, 1, 1) + timedelta(days=days)
    points = calendar_points(at, np.array([0.0]))
    assert (int(points.month_lo[0]), float(points.month_weight[0])) == (month - 1, 0.0)


@pytest.mark.parametrize(("t", "lo", "hi", "lo_mid", "hi_mid"), [
    (datetime(2026, 3, 10, 6, 30), 1, 2, _mid_month(2), _mid_month(3)),
    (datetime(2026, 1, 5, 18), 11, 0, _mid_month(12) - 365.0, _mid_month(1)),  # wraps back to December
    (datetime(2026, 12, 28, 3), 11, 0, _mid_month(12), _mid_month(1) + 365.0),  # wraps on to January
    (datetime(2026, 12, 1), 10, 11, _mid_month(11), _mid_month(12)),
])
def test_months_blend_linearly_between_their_middles(t, lo, hi, lo_mid, hi_mid):
    points = calendar_points(t, np.array([0.0]))
    assert (int(points.month_lo[0]), int(points.month_hi[0])) == (lo, hi)
    expected = (_day_of_year(t) - lo_mid) / (hi_mid - lo_mid)
    assert float(points.month_weight[0]) == pytest.approx(expected, rel=1e-12)


def test_hours_days_and_hour_of_year_by_hand():
    """From 06:30 on 10 March: 20 h later is 02:30 on 11 March (day 1); 17 h later is 23:30 (the hour after 23
    is hour 0)."""
    start = datetime(2026, 3, 10, 6, 30)
    p = calendar_points(start, np.array([0.0, 17 * HOUR, 20 * HOUR]))
    assert list(p.hour_lo) == [6, 23, 2] and list(p.hour_hi) == [7, 0, 3]
    np.testing.assert_allclose(p.hour_weight, [0.5, 0.5, 0.5], atol=1e-12)
    assert list(p.day_index) == [0, 0, 1]
    np.testing.assert_allclose(p.day_fraction, [6.5 / 24, 23.5 / 24, 2.5 / 24], atol=1e-12)
    doy = _day_of_year(start)
    np.testing.assert_allclose(p.hour_of_year, [doy * 24, doy * 24 + 17, doy * 24 + 20], atol=1e-9)


def test_the_last_day_of_a_leap_year_folds_onto_the_365_day_table():
    p = calendar_points(datetime(2028, 12, 31, 12), np.array([0.0]))
    assert float(p.hour_of_year[0]) == pytest.approx(364.999 * 24)


def test_lookup_is_bilinear_in_month_and_hour():
    """Table value 100·month + hour: at 23:30 in a March-blend the hour interpolates from 23 towards 0 of the
    same month, then the months blend."""
    table = 100.0 * np.arange(12)[:, None] + np.arange(24)[None, :]
    t = datetime(2026, 3, 10, 23, 30)
    p = calendar_points(t, np.array([0.0]))
    w = float(p.month_weight[0])
    feb = 100.0 + 23.0 + 0.5 * (0.0 - 23.0)
    mar = 200.0 + 23.0 + 0.5 * (0.0 - 23.0)
    assert float(lookup(table, p)[0]) == pytest.approx(feb + w * (mar - feb), rel=1e-12)


def test_calendar_points_are_read_only_and_cached():
    start = datetime(2026, 5, 1)
    a = calendar_points(start, np.array([0.0, HOUR]))
    with pytest.raises(ValueError):
        a.hour_weight[0] = 1.0
    calendar_points(start, np.array([0.0, 2 * HOUR]))  # another key
    assert calendar_points(start, np.array([0.0, HOUR])) is a


def _anomaly(seed: int, start: datetime, hours: list[float], std: float = 1.0, rho: float = 0.6):
    points = calendar_points(start, np.asarray(hours) * HOUR)
    return daily_anomaly(np.random.default_rng(seed), points, std, day_to_day_correlation=rho)


def test_the_daily_anomaly_is_linear_between_noon_and_the_midnights_either_side():
    """Drawn at each local noon and interpolated linearly: 06:00 is halfway between midnight and noon, 18:00
    halfway between noon and the next midnight, and nothing is flat (the last day's evening moves on)."""
    start = datetime(2026, 4, 1)
    hours = [0.0, 6.0, 12.0, 18.0, 24.0, 36.0, 42.0]
    for seed in range(20):
        v = _anomaly(seed, start, hours)
        assert v[1] == pytest.approx((v[0] + v[2]) / 2, abs=1e-12)
        assert v[3] == pytest.approx((v[2] + v[4]) / 2, abs=1e-12)
        assert v[0] != v[1] and v[6] != v[5]


def test_the_daily_anomaly_has_its_spread_and_day_to_day_correlation_at_noons():
    """Over 4,000 seeds: the noon values have standard deviation ``std`` and consecutive noons correlate by
    ``day_to_day_correlation``; the midnight between them is their mean."""
    start = datetime(2026, 4, 1, 12)
    v = np.array([_anomaly(seed, start, [0.0, 12.0, 24.0], std=2.0, rho=0.6) for seed in range(4000)])
    assert v[:, 0].std() == pytest.approx(2.0, abs=0.08) and v[:, 2].std() == pytest.approx(2.0, abs=0.08)
    assert np.corrcoef(v[:, 0], v[:, 2])[0, 1] == pytest.approx(0.6, abs=0.04)
    np.testing.assert_allclose(v[:, 1], (v[:, 0] + v[:, 2]) / 2, atol=1e-12)


def test_the_daily_anomaly_consumes_its_seeded_draws_in_order():
    """The seed contract (weather and carbon draw one after the other from one generator): for an episode over
    days 0..D the anomaly draws D + 3 standard normals, the noon of day d is node d + 1 of the AR(1) over them
    (node 0 is the first draw), and the generator goes on right after them."""
    start = datetime(2026, 4, 1)
    hours = [12.0, 36.0, 60.0]  # the noons of days 0, 1 and 2
    rng = np.random.default_rng(21)
    values = daily_anomaly(rng, calendar_points(start, np.asarray(hours) * HOUR), 1.0, day_to_day_correlation=0.5)
    shocks = np.random.default_rng(21).standard_normal(2 + 3)
    nodes = [shocks[0]]
    for s in shocks[1:]:
        nodes.append(0.5 * nodes[-1] + np.sqrt(0.75) * s)
    np.testing.assert_allclose(values, nodes[1:4], rtol=1e-12)
    following = np.random.default_rng(21)
    following.standard_normal(5)
    assert rng.standard_normal() == following.standard_normal()


def test_instants_before_the_first_midnight_count_back_from_it():
    """Days are counted from the start's local midnight, whole days down: 23:00 the evening before is day −1 (not
    day 0), that midnight day 0, the next midnight day 1."""
    p = calendar_points(datetime(2026, 3, 10, 6, 0), np.array([-7.0, -6.0, 0.0, 18.0]) * HOUR)
    assert list(p.day_index) == [-1, 0, 0, 1]
    np.testing.assert_allclose(p.day_fraction, [23 / 24, 0.0, 6 / 24, 0.0], atol=1e-12)


def test_cached_calendar_points_cannot_be_rebound():
    """One cached record is handed to every caller with the same start and instants (weather, carbon, each reset),
    so its fields are frozen as well as its arrays: no caller can change what the next one reads."""
    from dataclasses import FrozenInstanceError

    points = calendar_points(datetime(2026, 5, 2), np.array([0.0, HOUR]))
    with pytest.raises(FrozenInstanceError):
        points.day_index = np.array([5, 5])  # type: ignore[misc]


def test_the_cache_keeps_no_more_than_64_calls(monkeypatch):
    """The cache is bounded (the last 64 distinct calls at most): after 65 distinct calls the first is no longer
    held and comes back as a new (equal) record, while a call just made is still served from the cache."""
    import dcops.physics.timebase as timebase

    monkeypatch.setattr(timebase, "_cache", {})
    start = datetime(2026, 6, 1)
    first = calendar_points(start, np.array([0.0]))
    for k in range(1, 65):
        last = calendar_points(start, np.array([k * HOUR]))
    assert calendar_points(start, np.array([64 * HOUR])) is last
    again = calendar_points(start, np.array([0.0]))
    assert again is not first
    np.testing.assert_array_equal(again.hour_of_year, first.hour_of_year)


@pytest.mark.parametrize("held_before", [1, 62, 63])
def test_a_full_cache_evicts_the_least_recently_used_not_everything(monkeypatch, held_before):
    """Whatever the cache held before (CI once ran this file after other tests had filled it to 63 entries, and
    a cache that cleared itself when full lost the record just made), a record used since is still served."""
    import dcops.physics.timebase as timebase

    monkeypatch.setattr(timebase, "_cache", {})
    start = datetime(2026, 7, 1)
    oldest = calendar_points(start, np.array([1000.0]))
    for k in range(1, held_before):
        calendar_points(start, np.array([1000.0 + k]))
    kept = calendar_points(start, np.array([0.0, HOUR]))
    for k in range(64):  # 64 more distinct calls, touching `kept` after each
        calendar_points(start, np.array([5000.0 + k]))
        assert calendar_points(start, np.array([0.0, HOUR])) is kept
    assert len(timebase._cache) == 64
    assert calendar_points(start, np.array([1000.0])) is not oldest  # the least recently used went first


def test_with_no_instant_the_anomaly_is_empty_and_draws_two_normals():
    """The seed contract for no instants (days 0..−1): the noons of days −1 and 0, two standard normals."""
    rng = np.random.default_rng(8)
    values = daily_anomaly(rng, calendar_points(datetime(2026, 4, 1), np.array([])), 1.0)
    assert values.shape == (0,)
    following = np.random.default_rng(8)
    following.standard_normal(2)
    assert rng.standard_normal() == following.standard_normal()
