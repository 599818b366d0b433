"""Calendar helpers shared by weather and carbon series: episode clock → month blend and hour of day.

Times are local standard time (no daylight saving), as in the built-in profiles. All functions are vectorised
over an array of elapsed seconds since the episode start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.float64)
_MONTH_MID_DAY = np.cumsum(_DAYS_IN_MONTH) - _DAYS_IN_MONTH / 2.0  # day of year of each month's middle


@dataclass(frozen=True)
class CalendarPoints:
    """Where each episode instant falls in the year, ready for bilinear lookup in a (12, 24) table.

    ``month_lo``/``month_hi`` are month indices (0–11) blended with weight ``month_weight`` on ``month_hi``
    (months are blended between their mid-points so the annual cycle is smooth); ``hour_lo``/``hour_hi``
    are hours of day (0–23) blended with ``hour_weight``; ``day_index`` counts local days from the episode's
    first day and ``day_fraction`` is the position in that day (0 = midnight).
    """

    month_lo: NDArray[np.int64]
    month_hi: NDArray[np.int64]
    month_weight: NDArray[np.float64]
    hour_lo: NDArray[np.int64]
    hour_hi: NDArray[np.int64]
    hour_weight: NDArray[np.float64]
    day_index: NDArray[np.int64]
    day_fraction: NDArray[np.float64]
    hour_of_year: NDArray[np.float64]


_CACHE_SIZE = 64
_cache: dict[tuple[Any, ...], CalendarPoints] = {}


def calendar_points(start: datetime, elapsed_s: NDArray[np.float64]) -> CalendarPoints:
    """Locate each instant ``start + elapsed_s`` in the year (see :class:`CalendarPoints`).

    Cached (the 64 most recently used distinct calls, the least recently used evicted first; the arrays are
    read-only): an environment resets to the same start and step times every episode, and the datetime arithmetic
    is a tenth of a cluster reset. Eviction is one entry at a time, so a call just made is always still held."""
    elapsed = np.asarray(elapsed_s, dtype=np.float64)
    key = (start, elapsed.shape, elapsed.tobytes())
    points = _cache.pop(key, None)
    if points is None:
        points = _calendar_points(start, elapsed)
        for value in vars(points).values():
            value.setflags(write=False)
        while len(_cache) >= _CACHE_SIZE:
            del _cache[next(iter(_cache))]  # the least recently used (dicts keep insertion order)
    _cache[key] = points  # (re)inserted last: most recently used
    return points


def _calendar_points(start: datetime, elapsed_s: NDArray[np.float64]) -> CalendarPoints:
    start64 = np.datetime64(start.replace(tzinfo=None), "us")
    instants = start64 + np.round(elapsed_s * 1e6).astype("timedelta64[us]")
    year_start = instants.astype("datetime64[Y]").astype("datetime64[us]")
    day_of_year = (instants - year_start) / np.timedelta64(1, "D")  # 0-based, fractional
    day_of_year = np.minimum(day_of_year, 364.999)  # fold 31 Dec of leap years onto the 365-day table
    hour_of_day = (instants - instants.astype("datetime64[D]")) / np.timedelta64(1, "h")

    # Month blend between mid-points, wrapping December → January.
    hi = np.searchsorted(_MONTH_MID_DAY, day_of_year, side="right")
    lo = hi - 1
    lo_mid = np.where(lo < 0, _MONTH_MID_DAY[-1] - 365.0, _MONTH_MID_DAY[lo % 12])
    hi_mid = np.where(hi > 11, _MONTH_MID_DAY[0] + 365.0, _MONTH_MID_DAY[hi % 12])
    month_weight = (day_of_year - lo_mid) / (hi_mid - lo_mid)

    hour_lo = np.floor(hour_of_day).astype(np.int64) % 24
    first_day = np.datetime64(start.replace(tzinfo=None), "D").astype("datetime64[us]")
    day_index = ((instants - first_day) // np.timedelta64(1, "D")).astype(np.int64)
    return CalendarPoints(
        month_lo=lo % 12,
        month_hi=hi % 12,
        month_weight=month_weight,
        hour_lo=hour_lo,
        hour_hi=(hour_lo + 1) % 24,
        hour_weight=hour_of_day - np.floor(hour_of_day),
        day_index=day_index,
        day_fraction=hour_of_day / 24.0,
        hour_of_year=day_of_year * 24.0,
    )


def lookup(table: NDArray[np.float64], points: CalendarPoints) -> NDArray[np.float64]:
    """Bilinear lookup of a (12 months, 24 hours) table at each calendar point."""

    def at_month(month: NDArray[np.int64]) -> NDArray[np.float64]:
        lo = table[month, points.hour_lo]
        hi = table[month, points.hour_hi]
        return lo + points.hour_weight * (hi - lo)

    a = at_month(points.month_lo)
    b = at_month(points.month_hi)
    return a + points.month_weight * (b - a)


def daily_anomaly(
    rng: np.random.Generator,
    points: CalendarPoints,
    std: float,
    day_to_day_correlation: float = 0.6,
) -> NDArray[np.float64]:
    """A seeded AR(1) day-to-day anomaly, drawn at each local noon and interpolated linearly in between.

    One value per instant, with std ``std`` and lag-one-day correlation ``day_to_day_correlation`` at the noons.
    Seed contract: D + 3 standard normals for days 0..D (the noons of days −1..D+1), so 2 when there is no instant.
    """
    n_days = int(points.day_index.max()) + 3 if points.day_index.size else 2
    shocks = rng.standard_normal(n_days)
    noon_values = np.empty(n_days)
    noon_values[0] = shocks[0]
    rho = day_to_day_correlation
    innovation = np.sqrt(1.0 - rho * rho)
    for d in range(1, n_days):  # n_days is small (days, not steps): a short recurrence
        noon_values[d] = rho * noon_values[d - 1] + innovation * shocks[d]
    # Noon of day d sits at position d + 0.5 (days since the episode's first midnight); index 0 is day -1.
    position = points.day_index + points.day_fraction + 0.5
    return std * np.interp(position, np.arange(n_days, dtype=np.float64), noon_values)
