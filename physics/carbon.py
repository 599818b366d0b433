"""Grid carbon intensity over an episode, gCO2/kWh.

Two sources share one interface, ``series(start, elapsed_s, rng) -> NDArray``:

- :class:`TypicalDayCarbon` (default): the built-in typical day of each month for one of 8 US balancing
  authorities (``dcops.physics.profiles``; EIA-930 2022 generation mix with IPCC life-cycle factors), with a
  seeded day-to-day level: each day draws a standard-normal level z (AR(1), correlation 0.5) mapped onto the
  hour's own spread, ``mean + z/1.2816 · (p90 − mean)`` for z > 0 and ``mean + z/1.2816 · (mean − p10)``
  otherwise, with z clipped to ±1.2816 so every value stays between that hour's p10 and p90.
- :class:`HourlyCarbon`: a user's hourly series (e.g. an Electricity Maps or WattTime export) loaded with
  :func:`load_carbon_csv`, interpolated by hour of year.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.physics.profiles import DEFAULT_REGION_FOR_SITE, carbon_profile, resolve_region
from dcops.physics.timebase import calendar_points, daily_anomaly, lookup

_Z90 = 1.2816  # standard-normal 90th percentile

LBS_PER_MWH_TO_G_PER_KWH = 0.45359237
"""WattTime reports marginal emissions in lb/MWh; 1 lb/MWh = 0.4536 g/kWh."""


@dataclass(frozen=True)
class TypicalDayCarbon:
    """Built-in typical-day carbon intensity of a grid region with seeded day-to-day variation.

    :param region: balancing-authority code (``CISO``, ``ERCO``, …) or a short alias (``california``…).
    :param variation: set False for the plain monthly means.
    """

    region: str = "PJM"
    variation: bool = True

    def series(self, start: datetime, elapsed_s: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        profile = carbon_profile(self.region)
        points = calendar_points(start, elapsed_s)
        mean = lookup(profile.mean_g_per_kwh, points)
        if not self.variation:
            return mean
        p10 = lookup(profile.p10_g_per_kwh, points)
        p90 = lookup(profile.p90_g_per_kwh, points)
        z = np.clip(daily_anomaly(rng, points, 1.0, day_to_day_correlation=0.5), -_Z90, _Z90) / _Z90
        return np.where(z > 0, mean + z * (p90 - mean), mean + z * (mean - p10))

    @property
    def name(self) -> str:
        return resolve_region(self.region)


@dataclass(frozen=True)
class HourlyCarbon:
    """A year (or any whole number of days) of hourly carbon intensity, gCO2/kWh, wrapped by hour of year."""

    g_per_kwh: NDArray[np.float64]
    name: str = "hourly"

    def __post_init__(self) -> None:
        if self.g_per_kwh.ndim != 1 or self.g_per_kwh.size < 24:
            raise ValueError("g_per_kwh must be a 1-D array of at least 24 hourly values")
        if np.any(~np.isfinite(self.g_per_kwh)) or np.any(self.g_per_kwh < 0):
            raise ValueError("carbon intensity values must be finite and non-negative")

    def series(self, start: datetime, elapsed_s: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        del rng
        hour = calendar_points(start, elapsed_s).hour_of_year
        n = self.g_per_kwh.size
        grid = np.arange(n + 1, dtype=np.float64)
        return np.interp(hour % n, grid, np.append(self.g_per_kwh, self.g_per_kwh[0]))


_VALUE_COLUMN_HINTS = ("carbon intensity", "carbon_intensity", "gco2", "moer", "value")


def load_carbon_csv(
    path: str | Path,
    value_column: str | None = None,
    units: str = "g_per_kwh",
) -> HourlyCarbon:
    """Load an hourly carbon-intensity CSV (one row per hour, in time order) into :class:`HourlyCarbon`.

    :param value_column: the column holding the intensity; when omitted, the first column whose name contains
        one of "carbon intensity", "gco2", "moer" or "value" is used (Electricity Maps and WattTime exports).
    :param units: ``"g_per_kwh"`` or ``"lbs_per_mwh"`` (WattTime MOER), converted to gCO2/kWh.
    """
    if units not in ("g_per_kwh", "lbs_per_mwh"):
        raise ValueError(f"units must be 'g_per_kwh' or 'lbs_per_mwh', got {units!r}")
    with Path(path).open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        column = value_column or next(
            (c for c in columns if any(h in c.lower() for h in _VALUE_COLUMN_HINTS)), None
        )
        if column is None or column not in columns:
            raise ValueError(f"{path}: no carbon-intensity column found among {columns}; pass value_column=")
        values = []
        for line_number, row in enumerate(reader, start=2):
            try:
                values.append(float(row[column]))
            except (TypeError, ValueError):
                raise ValueError(f"{path}:{line_number}: {column!r} is not a number: {row[column]!r}") from None
    factor = LBS_PER_MWH_TO_G_PER_KWH if units == "lbs_per_mwh" else 1.0
    return HourlyCarbon(g_per_kwh=np.asarray(values) * factor, name=Path(path).stem)


def carbon_source(region: Any, climate: Any = None) -> Any:
    """A carbon source from a region code or alias, an existing source, or ``None``: the grid that serves the
    built-in site ``climate`` (``PJM`` when the climate is not a built-in site name)."""
    if region is None:
        region = DEFAULT_REGION_FOR_SITE.get(climate, "PJM") if isinstance(climate, str) else "PJM"
    return TypicalDayCarbon(region) if isinstance(region, str) else region
