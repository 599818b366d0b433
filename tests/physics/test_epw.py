"""The EPW reader against pvlib's: same records, same order, same hours; wet-bulb against PsychroLib.

pvlib (``pvlib.iotools.read_epw``) is a test dependency only: it needs pandas, which the light runtime import
does not carry. Expected values come from pvlib's parse of the file and PsychroLib's psychrometrics, never from
our own reader.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import numpy as np
import psychrolib  # the test extra installs it
import pytest
from pvlib.iotools import read_epw  # the test extra installs it

from dcops.physics.weather import load_epw

# The 8 header lines as EnergyPlus writes them. The site is high (1 694 m, about 83.5 kPa), so the station
# pressure moves the wet-bulb by tenths of a kelvin, and its January is warm, so every wet-bulb is above 1 °C,
# where ours and PsychroLib's agree within 0.05 K (see test_weather_carbon_psychrometrics.py).
HEADER = [
    "LOCATION,Johannesburg OR Tambo Intl AP,GT,ZAF,SRC-TMYx,683680,-26.1392,28.2460,2.0,1694.0",
    "DESIGN CONDITIONS,1,Climate Design Data 2009 ASHRAE Handbook,,Heating,7,0.4,1.8,-9.2,2.0,6.1,-7.7,2.3,"
    "7.2,11.4,15.8,10.1,15.2,2.1,360,Cooling,1,14.1,29.4,15.5,28.3,15.4,27.2,15.3,19.0,25.4,18.3,24.6,17.7,"
    "24.0,4.3,300",
    "TYPICAL/EXTREME PERIODS,6,Summer - Week Nearest Max Temperature For Period,Extreme,1/ 8,1/14,"
    "Summer - Week Nearest Average Temperature For Period,Typical,12/22,12/28,"
    "Winter - Week Nearest Min Temperature For Period,Extreme,7/ 8,7/14,"
    "Winter - Week Nearest Average Temperature For Period,Typical,7/29,8/ 4,"
    "Autumn - Week Nearest Average Temperature For Period,Typical,4/22,4/28,"
    "Spring - Week Nearest Average Temperature For Period,Typical,10/ 8,10/14",
    "GROUND TEMPERATURES,3,.5,,,,19.12,19.80,19.05,17.23,14.51,12.06,10.45,10.06,11.08,13.24,15.86,18.01,"
    "2,,,,17.62,18.60,18.49,17.39,15.43,13.32,11.63,10.79,11.07,12.44,14.43,16.30,"
    "4,,,,16.47,17.41,17.62,17.09,15.85,14.31,12.90,12.01,11.88,12.56,13.86,15.25",
    "HOLIDAYS/DAYLIGHT SAVINGS,No,0,0,0",
    "COMMENTS 1,Synthetic two-day file for the dcops EPW reader test (values shaped like a TMYx record)",
    "COMMENTS 2, -- Ground temps produced with a standard soil diffusivity of 2.3225760E-03 {m**2/day}",
    "DATA PERIODS,1,1,Data,Sunday, 1/ 1,12/31",
]
YEAR = 2017  # not a leap year; one year for all records, so pvlib's index and ours share a calendar
N_HOURS = 48
DATA_SOURCE = "?9?9?9?9E0?9?9?9?9?9?9?9?9?9?9?9?9?9?9*9*9?9?9?9"


def _record(hour_index: int, *, dry_c: float | None = None, dew_c: float | None = None,
            rh_pct: int | None = None, pressure_pa: int | None = None) -> str:
    """One 35-field EPW data line for hour ``hour_index`` (0-based) of the file; keywords override a field.

    Dry-bulb and dew point follow a day cycle (warmest mid-afternoon), relative humidity is the one PsychroLib
    gives for them (rounded to a whole percent, as in EPW files) and the station pressure drifts by a few hPa.
    """
    day, hour = divmod(hour_index, 24)
    phase = 2.0 * math.pi * (hour - 9) / 24.0
    dry = round(21.0 + 6.0 * math.sin(phase) + 0.7 * day, 1) if dry_c is None else dry_c
    dew = round(12.5 + 1.2 * math.sin(phase + 0.8) - 0.4 * day, 1) if dew_c is None else dew_c
    if rh_pct is None:
        # Capped at saturation: an overridden missing-code dew point (99.9) lies above the dry-bulb.
        rh_pct = round(100.0 * psychrolib.GetRelHumFromTDewPoint(dry, min(dew, dry)))
    if pressure_pa is None:
        pressure_pa = round(83_400 + 250 * math.cos(2.0 * math.pi * hour_index / 36.0))
    sun = max(0.0, math.sin(2.0 * math.pi * (hour - 5.5) / 28.0))
    ghi = round(1050 * sun)
    fields = [
        YEAR, 1, 1 + day, hour + 1, 60, DATA_SOURCE,
        dry, dew, rh_pct, pressure_pa,
        round(1400 * sun), 1367 if sun else 0, 390 + hour % 7,  # extraterrestrial horizontal, normal; IR
        ghi, round(0.75 * 900 * sun), round(0.25 * ghi),  # global, direct normal, diffuse, Wh/m²
        round(110 * ghi), round(95 * 0.75 * 900 * sun), round(120 * 0.25 * ghi), 9999 if not sun else 2500,
        (40 + 15 * hour) % 360, round(3.0 + 2.0 * sun, 1), 3, 1, 9999, 77777,  # wind, sky cover, visibility
        9, "999999999", 27, 0.1, 0, 88, 0.16, 0.0, 1,  # weather codes, water, AOD, snow, albedo, rain
    ]
    assert len(fields) == 35
    return ",".join(str(value) for value in fields)


def _write_epw(path: Path, overrides: dict[int, dict[str, float]] | None = None) -> Path:
    overrides = overrides or {}
    lines = HEADER + [_record(h, **overrides.get(h, {})) for h in range(N_HOURS)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(autouse=True)
def _psychrolib_si() -> None:
    psychrolib.SetUnitSystem(psychrolib.SI)


def test_synthetic_file_is_a_well_formed_epw_for_pvlib(tmp_path):
    """Guards the fixture itself: pvlib reads 48 hourly records with its location metadata."""
    data, meta = read_epw(_write_epw(tmp_path / "johannesburg.epw"))
    assert len(data) == N_HOURS and meta["city"] == "Johannesburg OR Tambo Intl AP" and meta["TZ"] == 2.0
    assert data["liquid_precipitation_quantity"].eq(1).all()  # the 35th field landed in the 35th column


def test_epw_dry_bulb_matches_pvlib_record_for_record(tmp_path):
    path = _write_epw(tmp_path / "johannesburg.epw")
    data, _ = read_epw(path)
    weather = load_epw(path)
    assert weather.name == "johannesburg"
    np.testing.assert_array_equal(weather.dry_bulb_c, data["temp_air"].to_numpy(dtype=np.float64))


def test_epw_hours_fall_on_pvlib_timestamps(tmp_path):
    """EPW hour h of a day is pvlib's h−1 o'clock (local standard time): looked up at pvlib's timestamps, the
    hourly series returns each record unchanged, in file order (including the second day)."""
    path = _write_epw(tmp_path / "johannesburg.epw")
    data, _ = read_epw(path)
    start = datetime(YEAR, 1, 1)
    instants = data.index.tz_localize(None)
    elapsed_s = np.asarray((instants - start).total_seconds(), dtype=np.float64)
    assert elapsed_s[0] == 0.0 and np.all(np.diff(elapsed_s) == 3600.0)
    series = load_epw(path).series(start, elapsed_s, np.random.default_rng(0))
    np.testing.assert_allclose(series.dry_bulb_c, data["temp_air"].to_numpy(dtype=np.float64), atol=1e-12)


def test_epw_wet_bulb_matches_psychrolib_from_pvlibs_humidity_and_pressure(tmp_path):
    """The wet-bulb solved from the file's dry-bulb, relative humidity and station pressure as pvlib parses them."""
    path = _write_epw(tmp_path / "johannesburg.epw")
    data, _ = read_epw(path)
    expected = [
        psychrolib.GetTWetBulbFromRelHum(dry, rh / 100.0, pressure)
        for dry, rh, pressure in data[["temp_air", "relative_humidity", "atmospheric_pressure"]].to_numpy()
    ]
    assert min(expected) > 1.0  # above freezing: the regime where the two psychrometrics agree within 0.05 K
    np.testing.assert_allclose(load_epw(path).wet_bulb_c, expected, atol=0.05)


def test_epw_wet_bulb_is_consistent_with_pvlibs_dew_point(tmp_path):
    """The file's humidity fields agree (RH rounded to 1 %), so the wet-bulb also matches the dew point's."""
    path = _write_epw(tmp_path / "johannesburg.epw")
    data, _ = read_epw(path)
    expected = [
        psychrolib.GetTWetBulbFromTDewPoint(dry, dew, pressure)
        for dry, dew, pressure in data[["temp_air", "temp_dew", "atmospheric_pressure"]].to_numpy()
    ]
    np.testing.assert_allclose(load_epw(path).wet_bulb_c, expected, atol=0.15)


def test_epw_missing_humidity_and_pressure_fall_back_to_dew_point_and_standard_pressure(tmp_path):
    """RH 999 (missing) is replaced by the dew point's RH; pressure 999999 (missing) by 101 325 Pa."""
    path = _write_epw(tmp_path / "gaps.epw", {5: {"rh_pct": 999}, 30: {"pressure_pa": 999999}})
    data, _ = read_epw(path)
    assert data["relative_humidity"].iloc[5] == 999 and data["atmospheric_pressure"].iloc[30] == 999999
    wet = load_epw(path).wet_bulb_c
    row5, row30 = data.iloc[5], data.iloc[30]
    assert wet[5] == pytest.approx(
        psychrolib.GetTWetBulbFromTDewPoint(row5["temp_air"], row5["temp_dew"], row5["atmospheric_pressure"]),
        abs=0.05)
    assert wet[30] == pytest.approx(
        psychrolib.GetTWetBulbFromRelHum(row30["temp_air"], row30["relative_humidity"] / 100.0, 101_325.0),
        abs=0.05)


@pytest.mark.parametrize(("field", "column"), [("dry_c", "temp_air"), ("dew_c", "temp_dew")])
def test_epw_missing_dry_bulb_or_dew_point_raises(tmp_path, field, column):
    """99.9 is EPW's missing code for both temperatures; a year of made-up weather is worse than an error."""
    path = _write_epw(tmp_path / "missing.epw", {17: {field: 99.9}})
    data, _ = read_epw(path)
    assert data[column].iloc[17] == 99.9  # the code sits in the column pvlib names, where our reader looks
    with pytest.raises(ValueError, match=r"missing.*99\.9"):
        load_epw(path)


@pytest.mark.parametrize("field", ["dry_c", "dew_c"])
@pytest.mark.parametrize("value", [99.9, 150.0])
def test_epw_temperatures_at_or_above_the_missing_code_raise(tmp_path, field, value):
    """No real temperature reaches 99.9 °C (EPW's valid range is −70…70): the code, or anything above it, is missing."""
    with pytest.raises(ValueError, match=r"missing.*99\.9"):
        load_epw(_write_epw(tmp_path / "bad.epw", {3: {field: value}}))


def test_epw_pressures_at_or_above_the_missing_code_fall_back_to_standard_pressure(tmp_path):
    """999999 Pa is the missing code and nothing above it is a pressure (valid: 31–120 kPa): both read as 101 325 Pa."""
    coded = load_epw(_write_epw(tmp_path / "coded.epw", {30: {"pressure_pa": 999999}})).wet_bulb_c
    above = load_epw(_write_epw(tmp_path / "above.epw", {30: {"pressure_pa": 1_500_000}})).wet_bulb_c
    standard = load_epw(_write_epw(tmp_path / "standard.epw", {30: {"pressure_pa": 101_325}})).wet_bulb_c
    assert above[30] == coded[30] == standard[30]
    assert coded[30] != load_epw(_write_epw(tmp_path / "one_pa.epw", {30: {"pressure_pa": 101_326}})).wet_bulb_c[30]


def test_epw_records_need_the_first_ten_fields_only(tmp_path):
    """The reader uses fields 7–10: a record cut after its tenth field is read, one cut after the ninth is not."""
    full = _write_epw(tmp_path / "full.epw")
    lines = full.read_text().splitlines()
    cut = lambda n: lines[:8] + [",".join(line.split(",")[:n]) for line in lines[8:]]  # noqa: E731
    (tmp_path / "ten.epw").write_text("\n".join(cut(10)) + "\n")
    np.testing.assert_array_equal(load_epw(tmp_path / "ten.epw").wet_bulb_c, load_epw(full).wet_bulb_c)
    (tmp_path / "nine.epw").write_text("\n".join(cut(9)) + "\n")
    with pytest.raises(ValueError, match=r"nine\.epw:9: expected at least 10 EPW fields, got 9"):
        load_epw(tmp_path / "nine.epw")


def test_epw_humidity_is_used_as_given_up_to_saturation_and_recomputed_above(tmp_path):
    """A record at 100 % (saturated: wet-bulb = dry-bulb) is read as given, whatever its dew point says; above
    100 % is no humidity (EPW's missing code is 999), so 101 % is recomputed from the dew point like 999."""
    saturated = load_epw(_write_epw(tmp_path / "sat.epw", {7: {"rh_pct": 100, "dew_c": 5.0}}))
    assert saturated.wet_bulb_c[7] == pytest.approx(saturated.dry_bulb_c[7], abs=1e-6)
    above = load_epw(_write_epw(tmp_path / "above.epw", {7: {"rh_pct": 101}})).wet_bulb_c
    coded = load_epw(_write_epw(tmp_path / "coded.epw", {7: {"rh_pct": 999}})).wet_bulb_c
    assert above[7] == coded[7]
