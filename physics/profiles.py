"""Built-in typical-day profiles: 8 US climates and 8 grid regions, one typical day per month.

The tables ship as package data (``physics/data``, copied from the project's shared profiles):

- climate: for each site, month (1–12) and local standard hour (0–23): dry-bulb, dew point, relative
  humidity, wet-bulb (°C / %) and station pressure (Pa), TMYx EPW means.
- carbon: for each balancing authority, month and local standard hour: mean, p10 and p90 of the hourly grid
  carbon intensity in 2022 (gCO2/kWh), EIA-930 generation mix × IPCC life-cycle factors.

Each table is parsed once and cached; arrays are shaped (12 months, 24 hours).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
from numpy.typing import NDArray

SITE_ALIASES: dict[str, str] = {
    "phoenix": "AZ_Phoenix-Sky.Harbor",
    "san_jose": "CA_San.Jose-Mineta",
    "atlanta": "GA_Atlanta-Hartsfield-Jackson",
    "chicago": "IL_Chicago.OHare",
    "new_york": "NY_New.York-Kennedy",
    "dallas": "TX_Dallas-Fort.Worth",
    "leesburg": "VA_Leesburg.Exec",
    "seattle": "WA_Seattle-Tacoma",
}
"""Short climate names accepted everywhere a site is expected."""

REGION_ALIASES: dict[str, str] = {
    "california": "CISO",
    "texas": "ERCO",
    "arizona": "AZPS",
    "pacific_northwest": "BPAT",
    "new_york": "NYIS",
    "midwest": "MISO",
    "mid_atlantic": "PJM",
    "southeast": "SOCO",
}
"""Short grid-region names; the balancing-authority codes (``CISO``…) are accepted too."""

DEFAULT_REGION_FOR_SITE: dict[str, str] = {
    "phoenix": "AZPS",
    "san_jose": "CISO",
    "atlanta": "SOCO",
    "chicago": "MISO",
    "new_york": "NYIS",
    "dallas": "ERCO",
    "leesburg": "PJM",
    "seattle": "BPAT",
}
"""The grid region that serves each built-in site (used when a config gives a site but no region)."""


@dataclass(frozen=True)
class ClimateProfile:
    """Typical day per month for one site. Arrays are (12, 24): [month − 1, local standard hour]."""

    site: str
    latitude_deg: float
    longitude_deg: float
    dry_bulb_c: NDArray[np.float64]
    dew_point_c: NDArray[np.float64]
    relative_humidity_pct: NDArray[np.float64]
    wet_bulb_c: NDArray[np.float64]
    pressure_pa: NDArray[np.float64]


@dataclass(frozen=True)
class CarbonProfile:
    """Typical day per month for one grid region, gCO2/kWh. Arrays are (12, 24)."""

    region: str
    utc_offset_h: int
    mean_g_per_kwh: NDArray[np.float64]
    p10_g_per_kwh: NDArray[np.float64]
    p90_g_per_kwh: NDArray[np.float64]


def resolve_site(name: str) -> str:
    """Return the full site id for a short alias or a full id; raise ``KeyError`` listing the choices."""
    if name in SITE_ALIASES:
        return SITE_ALIASES[name]
    if name in SITE_ALIASES.values():
        return name
    raise KeyError(f"unknown climate {name!r}; choose one of {sorted(SITE_ALIASES)}")


def resolve_region(name: str) -> str:
    """Return the balancing-authority code for a short alias or a code; raise ``KeyError`` listing choices."""
    if name in REGION_ALIASES:
        return REGION_ALIASES[name]
    if name.upper() in REGION_ALIASES.values():
        return name.upper()
    raise KeyError(f"unknown grid region {name!r}; choose one of {sorted(REGION_ALIASES.values())}")


def _read_rows(filename: str) -> list[dict[str, str]]:
    with resources.files("dcops.physics").joinpath("data", filename).open(newline="") as handle:
        return list(csv.DictReader(handle))


@cache
def _climate_table() -> dict[str, ClimateProfile]:
    fields = ("dry_bulb_c", "dew_point_c", "relative_humidity_pct", "wet_bulb_c", "pressure_pa")
    grids: dict[str, dict[str, NDArray[np.float64]]] = {}
    coords: dict[str, tuple[float, float]] = {}
    for row in _read_rows("climate_hourly_by_month.csv"):
        site = row["site"]
        if site not in grids:
            grids[site] = {f: np.full((12, 24), np.nan) for f in fields}
            coords[site] = (float(row["latitude"]), float(row["longitude"]))
        m, h = int(row["month"]) - 1, int(row["local_hour"])
        for f in fields:
            grids[site][f][m, h] = float(row[f])
    profiles = {}
    for site, arrays in grids.items():
        for f, a in arrays.items():
            if np.isnan(a).any():
                raise ValueError(f"climate table is missing {f} values for {site}")
            a.setflags(write=False)
        profiles[site] = ClimateProfile(site, *coords[site], **arrays)
    return profiles


@cache
def _carbon_table() -> dict[str, CarbonProfile]:
    fields = ("mean_g_per_kwh", "p10_g_per_kwh", "p90_g_per_kwh")
    columns = ("mean_gco2_per_kwh", "p10_gco2_per_kwh", "p90_gco2_per_kwh")
    grids: dict[str, dict[str, NDArray[np.float64]]] = {}
    offsets: dict[str, int] = {}
    for row in _read_rows("carbon_intensity_hourly_by_month.csv"):
        region = row["region"]
        if region not in grids:
            grids[region] = {f: np.full((12, 24), np.nan) for f in fields}
            offsets[region] = int(row["utc_offset_h"])
        m, h = int(row["month"]) - 1, int(row["local_hour"])
        for f, c in zip(fields, columns, strict=True):
            grids[region][f][m, h] = float(row[c])
    profiles = {}
    for region, arrays in grids.items():
        for f, a in arrays.items():
            if np.isnan(a).any():
                raise ValueError(f"carbon table is missing {f} values for {region}")
            a.setflags(write=False)
        profiles[region] = CarbonProfile(region, offsets[region], **arrays)
    return profiles


def climate_profile(site: str) -> ClimateProfile:
    """The built-in typical-day climate profile of ``site`` (alias or full id)."""
    return _climate_table()[resolve_site(site)]


def carbon_profile(region: str) -> CarbonProfile:
    """The built-in typical-day carbon-intensity profile of ``region`` (alias or code)."""
    return _carbon_table()[resolve_region(region)]


def sites() -> list[str]:
    """Short names of the built-in climates."""
    return sorted(SITE_ALIASES)


def regions() -> list[str]:
    """Codes of the built-in grid regions."""
    return sorted(REGION_ALIASES.values())
