"""Outdoor weather over an episode: dry-bulb and wet-bulb temperature, °C.

Two sources share one interface, ``series(start, elapsed_s, rng) -> WeatherSeries``:

- :class:`TypicalDayClimate` (default): the built-in typical day of each month for one of 8 US sites
  (``dcops.physics.profiles``), blended smoothly between months and interpolated between hours, plus a seeded
  AR(1) day-to-day anomaly (dry-bulb std 2.5 K, lag-one-day correlation 0.6; the wet-bulb moves with 0.6 of the
  dry-bulb anomaly plus its own 0.8 K, and never exceeds the dry-bulb).
- :class:`HourlyWeather`: a full year of hourly records, e.g. from a user's EnergyPlus EPW file
  (:func:`load_epw`), interpolated linearly in time; no extra noise is added.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from dcops.physics.profiles import climate_profile, resolve_site
from dcops.physics.psychrometrics import relative_humidity_from_dew_point, wet_bulb_c
from dcops.physics.timebase import calendar_points, daily_anomaly, lookup


@dataclass(frozen=True)
class WeatherSeries:
    """Outdoor conditions at each control step: dry-bulb and wet-bulb, °C (arrays of equal length)."""

    dry_bulb_c: NDArray[np.float64]
    wet_bulb_c: NDArray[np.float64]


class WeatherSource(Protocol):
    """Anything that yields outdoor conditions for a list of instants."""

    def series(self, start: datetime, elapsed_s: NDArray[np.float64], rng: np.random.Generator) -> WeatherSeries:
        """Conditions at ``start + elapsed_s`` (local standard time); ``rng`` supplies any variation."""
        ...


@dataclass(frozen=True)
class TypicalDayClimate:
    """Built-in typical-day climate of one site with seeded day-to-day variation.

    :param site: short name (``phoenix``, ``seattle``, …) or full site id.
    :param dry_bulb_anomaly_std_k: standard deviation of the daily dry-bulb anomaly, K.
    :param wet_bulb_own_std_k: wet-bulb anomaly independent of the dry-bulb one, K.
    :param variation: set False for the plain typical days (used for annual figures and tests).
    """

    site: str = "leesburg"
    dry_bulb_anomaly_std_k: float = 2.5
    wet_bulb_own_std_k: float = 0.8
    variation: bool = True

    def series(self, start: datetime, elapsed_s: NDArray[np.float64], rng: np.random.Generator) -> WeatherSeries:
        profile = climate_profile(self.site)
        points = calendar_points(start, elapsed_s)
        dry = lookup(profile.dry_bulb_c, points)
        wet = lookup(profile.wet_bulb_c, points)
        if self.variation:
            dry_anomaly = daily_anomaly(rng, points, self.dry_bulb_anomaly_std_k)
            wet_own = daily_anomaly(rng, points, self.wet_bulb_own_std_k)
            dry = dry + dry_anomaly
            wet = wet + 0.6 * dry_anomaly + wet_own
        return WeatherSeries(dry_bulb_c=dry, wet_bulb_c=np.minimum(wet, dry))

    @property
    def name(self) -> str:
        return resolve_site(self.site)


@dataclass(frozen=True)
class HourlyWeather:
    """A year of hourly outdoor records (8760 values each), looked up by hour of year with wrap-around."""

    dry_bulb_c: NDArray[np.float64]
    wet_bulb_c: NDArray[np.float64]
    name: str = "hourly"

    def __post_init__(self) -> None:
        if self.dry_bulb_c.shape != self.wet_bulb_c.shape or self.dry_bulb_c.ndim != 1:
            raise ValueError("dry_bulb_c and wet_bulb_c must be 1-D arrays of equal length")
        if self.dry_bulb_c.size < 24:
            raise ValueError(f"need at least 24 hourly records, got {self.dry_bulb_c.size}")

    def series(self, start: datetime, elapsed_s: NDArray[np.float64], rng: np.random.Generator) -> WeatherSeries:
        del rng  # recorded weather: no synthetic variation
        hour = calendar_points(start, elapsed_s).hour_of_year
        n = self.dry_bulb_c.size
        grid = np.arange(n + 1, dtype=np.float64)
        dry = np.interp(hour % n, grid, np.append(self.dry_bulb_c, self.dry_bulb_c[0]))
        wet = np.interp(hour % n, grid, np.append(self.wet_bulb_c, self.wet_bulb_c[0]))
        return WeatherSeries(dry_bulb_c=dry, wet_bulb_c=np.minimum(wet, dry))


def load_epw(path: str | Path) -> HourlyWeather:
    """Read an EnergyPlus weather file (EPW) into :class:`HourlyWeather`.

    Uses the dry-bulb (field 7), dew point (8), relative humidity (9) and station pressure (10); the wet-bulb is
    solved from the psychrometer equation. A missing dry-bulb or dew point (EPW code 99.9) raises ``ValueError``;
    a missing relative humidity (999) is recomputed from the dew point and a missing pressure (999999) becomes
    101 325 Pa. Records are taken in file order (EPW hour 1 is the hour ending at 01:00 local standard time),
    record ``i`` being looked up at hour ``i`` of the year, the hour pvlib's reader stamps it with.

    The tests (``tests/physics/test_epw.py``) check this output against pvlib's EPW reader
    (``pvlib.iotools.read_epw``); pvlib is not used at run time because it would add pandas to the light
    runtime import.
    """
    rows = []
    with Path(path).open(encoding="utf-8", errors="replace") as handle:
        for line_number, line in enumerate(handle, start=1):
            if line_number <= 8 or not line.strip():
                continue
            fields = line.split(",")
            if len(fields) < 10:
                raise ValueError(f"{path}:{line_number}: expected at least 10 EPW fields, got {len(fields)}")
            rows.append((float(fields[6]), float(fields[7]), float(fields[8]), float(fields[9])))
    if not rows:
        raise ValueError(f"{path}: no weather records after the 8 EPW header lines")
    data = np.array(rows)
    dry, dew, rh, pressure = data.T
    if np.any(dry >= 99.9) or np.any(dew >= 99.9):
        raise ValueError(f"{path}: missing dry-bulb or dew-point values (EPW code 99.9)")
    rh = np.where(rh > 100.0, relative_humidity_from_dew_point(dry, dew), rh)
    pressure = np.where(pressure >= 999_999, 101_325.0, pressure)
    return HourlyWeather(dry_bulb_c=dry, wet_bulb_c=wet_bulb_c(dry, rh, pressure), name=Path(path).stem)


def weather_source(climate: str | WeatherSource) -> WeatherSource:
    """A weather source from a site name (the built-in typical days) or an existing source."""
    return TypicalDayClimate(climate) if isinstance(climate, str) else climate
