"""Weather, carbon intensity and psychrometrics: shipped profiles, seeded variation, user files."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import numpy as np
import pytest

from dcops.physics.carbon import HourlyCarbon, TypicalDayCarbon, carbon_source, load_carbon_csv
from dcops.physics.profiles import carbon_profile, climate_profile, regions, sites
from dcops.physics.psychrometrics import wet_bulb_c, wet_bulb_stull_c
from dcops.physics.weather import HourlyWeather, TypicalDayClimate, load_epw

DAY = np.arange(0.0, 86400.0, 3600.0)


def test_eight_climates_and_eight_grid_regions_ship_with_the_package():
    assert len(sites()) == 8 and len(regions()) == 8
    assert climate_profile("phoenix").dry_bulb_c.shape == (12, 24)
    assert carbon_profile("CISO").mean_g_per_kwh.shape == (12, 24)


@pytest.mark.parametrize("site", ["atlanta", "phoenix", "seattle"])
def test_psychrometric_wet_bulb_matches_the_shipped_table(site):
    """The table averages hourly wet-bulbs; the wet-bulb of averaged air differs a little (non-linearity)."""
    profile = climate_profile(site)
    computed = wet_bulb_c(profile.dry_bulb_c, profile.relative_humidity_pct, profile.pressure_pa)
    error = np.abs(computed - profile.wet_bulb_c)
    assert error.mean() < 0.25 and error.max() < 1.0
    assert np.all(computed <= profile.dry_bulb_c + 1e-9)


def test_stull_approximation_agrees_with_the_psychrometer_equation():
    dry = np.linspace(0.0, 40.0, 9)
    rh = np.full_like(dry, 50.0)
    assert np.max(np.abs(wet_bulb_stull_c(dry, rh) - wet_bulb_c(dry, rh))) < 1.0


def test_saturated_air_has_wet_bulb_equal_to_dry_bulb():
    dry = np.array([5.0, 20.0, 35.0])
    np.testing.assert_allclose(wet_bulb_c(dry, np.full(3, 100.0)), dry, atol=1e-6)


def test_typical_day_without_variation_reproduces_the_table_mid_month():
    start = datetime(2026, 7, 16, 12, 0)  # mid-July: the month blend weight is ~0
    series = TypicalDayClimate("phoenix", variation=False).series(start, DAY, np.random.default_rng(0))
    table = climate_profile("phoenix").dry_bulb_c[6]
    expected = np.roll(table, -12)
    assert np.max(np.abs(series.dry_bulb_c - expected)) < 0.3


def test_weather_variation_is_seeded_and_keeps_wet_bulb_below_dry_bulb():
    start = datetime(2026, 3, 1)
    t = np.arange(0.0, 10 * 86400.0, 1800.0)
    climate = TypicalDayClimate("chicago")
    a = climate.series(start, t, np.random.default_rng(7))
    b = climate.series(start, t, np.random.default_rng(7))
    c = climate.series(start, t, np.random.default_rng(8))
    np.testing.assert_array_equal(a.dry_bulb_c, b.dry_bulb_c)
    assert not np.array_equal(a.dry_bulb_c, c.dry_bulb_c)
    assert np.all(a.wet_bulb_c <= a.dry_bulb_c)
    assert np.max(np.abs(np.diff(a.dry_bulb_c))) < 3.0  # smooth: no jump at midnight


def test_phoenix_summer_is_hotter_than_seattle_summer():
    start = datetime(2026, 7, 10)
    rng = np.random.default_rng(0)
    hot = TypicalDayClimate("phoenix", variation=False).series(start, DAY, rng)
    mild = TypicalDayClimate("seattle", variation=False).series(start, DAY, rng)
    assert hot.dry_bulb_c.mean() > mild.dry_bulb_c.mean() + 8.0


def test_carbon_variation_stays_between_the_hourly_p10_and_p90():
    start = datetime(2026, 5, 15)
    t = np.arange(0.0, 30 * 86400.0, 3600.0)
    values = TypicalDayCarbon("ERCO").series(start, t, np.random.default_rng(1))
    low = TypicalDayCarbon("ERCO", variation=False)
    profile = carbon_profile("ERCO")
    assert np.all(values >= profile.p10_g_per_kwh.min() - 1e-9)
    assert np.all(values <= profile.p90_g_per_kwh.max() + 1e-9)
    assert values.std() > low.series(start, t, np.random.default_rng(1)).std() * 0.5


def test_california_grid_has_a_solar_dip_at_midday():
    day = TypicalDayCarbon("CISO", variation=False).series(datetime(2026, 6, 15), DAY, np.random.default_rng(0))
    assert day[12] < 0.8 * day[20]


def test_carbon_csv_loader_reads_electricity_maps_and_wattime_exports(tmp_path):
    em = tmp_path / "em.csv"
    em.write_text("Datetime (UTC),Carbon Intensity gCO₂eq/kWh (LCA)\n" + "".join(
        f"2024-01-01T{h:02d}:00:00Z,{100 + h}\n" for h in range(24)))
    loaded = load_carbon_csv(em)
    assert loaded.g_per_kwh[5] == 105.0
    series = loaded.series(datetime(2024, 1, 1), np.array([5 * 3600.0, 5.5 * 3600.0]), np.random.default_rng(0))
    np.testing.assert_allclose(series, [105.0, 105.5])
    wt = tmp_path / "wt.csv"
    wt.write_text("point_time,value\n" + "".join(f"t{h},{1000}\n" for h in range(24)))
    assert load_carbon_csv(wt, units="lbs_per_mwh").g_per_kwh[0] == pytest.approx(453.59237)


def test_carbon_csv_loader_names_the_bad_row(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time,carbon_intensity\n0,100\n1,oops\n")
    with pytest.raises(ValueError, match=r"bad\.csv:3.*'oops'"):
        load_carbon_csv(bad)


def test_epw_loader_solves_the_wet_bulb(tmp_path):
    header = "".join(f"HEADER {i}\n" for i in range(8))
    rows = "".join(
        f"2020,1,1,{h + 1},0,?,{20.0 + h % 5},{10.0},50,101325,0,0,0\n" for h in range(48)
    )
    path = tmp_path / "site.epw"
    path.write_text(header + rows)
    weather = load_epw(path)
    assert weather.dry_bulb_c.size == 48
    assert np.all(weather.wet_bulb_c < weather.dry_bulb_c)
    np.testing.assert_allclose(weather.wet_bulb_c[0], wet_bulb_c(20.0, 50.0, 101325.0), atol=1e-9)


def test_wet_bulb_matches_psychrolib_the_ashrae_reference_implementation():
    """PsychroLib (Meyer and Thevenard 2019, the ASHRAE Handbook's equations in code) is independent of ours
    (it uses Hyland-Wexler saturation pressure and iterates the psychrometer equation its own way). Above 1 °C
    wet-bulb the two agree within 0.05 K from 80 to 101.3 kPa. Below freezing PsychroLib switches to the
    equation over ice while ours keeps supercooled water: up to 0.2 K apart at 0 °C and 0.64 K at 10 °C, 5 % RH
    and 80 kPa (measured; the model's wet-bulb is then slightly high, the conservative side for an economiser)."""
    import psychrolib  # the test extra installs it
    psychrolib.SetUnitSystem(psychrolib.SI)
    compared = 0
    for pressure in (80_000.0, 90_000.0, 101_325.0):
        for dry in np.linspace(5.0, 45.0, 17):
            for rh in np.linspace(10.0, 100.0, 10):
                reference = psychrolib.GetTWetBulbFromRelHum(float(dry), float(rh) / 100.0, pressure)
                if reference < 1.0:
                    continue
                assert abs(float(wet_bulb_c(dry, rh, pressure)) - reference) < 0.05, (dry, rh, pressure)
                compared += 1
    assert compared > 450


def test_weather_variation_has_the_documented_spread_and_coupling():
    """Module docstring of ``physics/weather.py``: a daily dry-bulb anomaly of std 2.5 K, and a wet-bulb anomaly of
    0.6 × the dry-bulb one plus its own of std 0.8 K. Estimated over 3,000 seeds at one instant (Phoenix, a July
    noon: the wet-bulb is some 15 K under the dry-bulb, so the cap at the dry-bulb never binds)."""
    start, at = datetime(2026, 7, 16, 12, 0), np.array([0.0])
    base = TypicalDayClimate("phoenix", variation=False).series(start, at, np.random.default_rng(0))
    assert base.dry_bulb_c[0] - base.wet_bulb_c[0] > 12.0
    climate = TypicalDayClimate("phoenix")
    draws = [climate.series(start, at, np.random.default_rng(seed)) for seed in range(3000)]
    dry = np.array([d.dry_bulb_c[0] for d in draws]) - base.dry_bulb_c[0]
    wet = np.array([d.wet_bulb_c[0] for d in draws]) - base.wet_bulb_c[0]
    assert abs(dry.mean()) < 0.15 and abs(wet.mean()) < 0.1  # anomalies, centred on the typical day
    assert dry.std() == pytest.approx(2.5, abs=0.12)
    slope = np.cov(wet, dry)[0, 1] / dry.var(ddof=1)
    assert slope == pytest.approx(0.6, abs=0.04)
    assert (wet - slope * dry).std() == pytest.approx(0.8, abs=0.05)


def test_the_dry_bulb_anomaly_correlates_from_one_day_to_the_next_by_0_6():
    """Module docstring of ``physics/weather.py``: the dry-bulb anomaly is AR(1) from day to day with lag-one-day
    correlation 0.6. Estimated over 2,000 seeds at two consecutive noons (Phoenix in July)."""
    start, at = datetime(2026, 7, 16, 12, 0), np.array([0.0, 86400.0])
    base = TypicalDayClimate("phoenix", variation=False).series(start, at, np.random.default_rng(0))
    climate = TypicalDayClimate("phoenix")
    dry = np.array([climate.series(start, at, np.random.default_rng(seed)).dry_bulb_c for seed in range(2000)])
    anomaly = dry - base.dry_bulb_c
    assert np.corrcoef(anomaly[:, 0], anomaly[:, 1])[0, 1] == pytest.approx(0.6, abs=0.05)


def test_typical_day_sources_are_named_by_their_full_site_and_region():
    """A source's ``name`` is a plain string, as for the hourly sources (the EPW file's stem, ``hourly``): the
    typical days by the full site id or balancing-authority code their alias resolves to."""
    assert TypicalDayClimate("phoenix").name == "AZ_Phoenix-Sky.Harbor"
    assert TypicalDayCarbon("california").name == "CISO"
    assert TypicalDayCarbon("pjm").name == "PJM"


def test_weather_spread_follows_the_given_standard_deviations():
    start, at = datetime(2026, 7, 16, 12, 0), np.array([0.0])
    base = TypicalDayClimate("phoenix", variation=False).series(start, at, np.random.default_rng(0))
    climate = TypicalDayClimate("phoenix", dry_bulb_anomaly_std_k=1.0, wet_bulb_own_std_k=0.0)
    draws = [climate.series(start, at, np.random.default_rng(seed)) for seed in range(400)]
    dry = np.array([d.dry_bulb_c[0] for d in draws]) - base.dry_bulb_c[0]
    wet = np.array([d.wet_bulb_c[0] for d in draws]) - base.wet_bulb_c[0]
    assert dry.std() == pytest.approx(1.0, abs=0.1)
    np.testing.assert_allclose(wet, 0.6 * dry, atol=1e-9)  # no own wet-bulb anomaly: exactly 0.6 of the dry


def test_weather_sources_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TypicalDayClimate().site = "phoenix"  # type: ignore[misc]
    weather = HourlyWeather(np.zeros(24), np.zeros(24))
    with pytest.raises(dataclasses.FrozenInstanceError):
        weather.name = "other"  # type: ignore[misc]
    series = weather.series(datetime(2026, 1, 1), np.array([0.0]), np.random.default_rng(0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        series.dry_bulb_c = np.ones(1)  # type: ignore[misc]


def test_weather_source_builds_the_typical_days_of_a_site_or_passes_a_source_through():
    from dcops.physics.weather import weather_source

    assert weather_source("phoenix") == TypicalDayClimate("phoenix")
    own = HourlyWeather(np.zeros(24), np.zeros(24))
    assert weather_source(own) is own


def test_hourly_weather_interpolates_both_series_and_wraps_to_the_first_record():
    """48 records: dry-bulb 10 + i, wet-bulb 5 + i/2 at hour i. Half-hours interpolate; past the last record the
    series wraps (hour 47.5 lies between the last record and the first; hour 49 is hour 1)."""
    hours = np.arange(48, dtype=np.float64)
    weather = HourlyWeather(10.0 + hours, 5.0 + hours / 2.0)
    start = datetime(2026, 1, 1)
    series = weather.series(start, np.array([0.0, 1.5, 30.25, 47.5, 49.0]) * 3600.0, np.random.default_rng(0))
    np.testing.assert_allclose(series.dry_bulb_c, [10.0, 11.5, 40.25, (57.0 + 10.0) / 2.0, 11.0], atol=1e-12)
    np.testing.assert_allclose(series.wet_bulb_c, [5.0, 5.75, 20.125, (28.5 + 5.0) / 2.0, 5.5], atol=1e-12)


def test_hourly_weather_caps_the_wet_bulb_at_the_dry_bulb():
    weather = HourlyWeather(np.full(24, 20.0), np.full(24, 22.0))
    series = weather.series(datetime(2026, 1, 1), np.array([0.0, 3600.0]), np.random.default_rng(0))
    np.testing.assert_array_equal(series.wet_bulb_c, [20.0, 20.0])


@pytest.mark.parametrize(("dry", "wet"), [
    (np.zeros(23), np.zeros(23)), (np.zeros(24), np.zeros(25)), (np.zeros(25), np.zeros(24)),
    (np.zeros((24, 2)), np.zeros((24, 2))),
])
def test_hourly_weather_needs_a_day_of_equal_one_dimensional_records(dry, wet):
    with pytest.raises(ValueError, match="hourly records|1-D arrays"):
        HourlyWeather(dry, wet)
    HourlyWeather(np.zeros(24), np.zeros(24))  # a day is enough


def _carbon_levels(region: str, start: datetime, elapsed_s: np.ndarray, seeds: int):
    """Each seed's values, and the hour's mean, p10 and p90 at those instants."""
    values = np.array([TypicalDayCarbon(region).series(start, elapsed_s, np.random.default_rng(s)) for s in range(seeds)])
    profile = carbon_profile(region)
    from dcops.physics.timebase import calendar_points, lookup

    points = calendar_points(start, elapsed_s)
    return values, *(lookup(table, points) for table in (profile.mean_g_per_kwh, profile.p10_g_per_kwh,
                                                          profile.p90_g_per_kwh))


def test_carbon_variation_is_the_documented_clipped_normal_level_on_each_sides_spread():
    """``physics/carbon.py``: a daily standard-normal level z, clipped to ±1.2816 and mapped onto the hour's own
    spread (``mean + z/1.2816·(p90 − mean)`` above the mean, ``… (mean − p10)`` below), AR(1) with a lag-one-day
    correlation of 0.5. Recovered over 3,000 seeds at two consecutive noons (at noon the level is a day's draw
    exactly): 10 % of days sit at p90, 10 % at p10, half above the mean, the level's quartiles at ±0.674 (the
    normal's) and consecutive days correlated by about 0.5."""
    values, mean, p10, p90 = _carbon_levels("ERCO", datetime(2026, 5, 15, 12), np.array([0.0, 86400.0]), 3000)
    assert np.all(p90 - mean > 20.0) and np.all(mean - p10 > 20.0)
    z = np.where(values > mean, 1.2816 * (values - mean) / (p90 - mean), 1.2816 * (values - mean) / (mean - p10))
    for day in (0, 1):
        assert np.mean(np.isclose(values[:, day], p90[day])) == pytest.approx(0.10, abs=0.02)
        assert np.mean(np.isclose(values[:, day], p10[day])) == pytest.approx(0.10, abs=0.02)
        assert np.mean(values[:, day] > mean[day]) == pytest.approx(0.5, abs=0.03)
        assert np.quantile(z[:, day], [0.25, 0.75]) == pytest.approx([-0.674, 0.674], abs=0.06)
    # the correlation of two standard normals correlated 0.5, once both are clipped at ±1.2816 (drawn here)
    draws = np.random.default_rng(12345).standard_normal((2, 400_000))
    pair = np.clip([draws[0], 0.5 * draws[0] + np.sqrt(0.75) * draws[1]], -1.2816, 1.2816)
    assert np.corrcoef(z[:, 0], z[:, 1])[0, 1] == pytest.approx(np.corrcoef(pair)[0, 1], abs=0.045)


def test_carbon_without_variation_is_the_hours_mean_whatever_the_seed():
    start, elapsed = datetime(2026, 5, 15), np.arange(0.0, 86400.0, 3600.0)
    _, mean, _, _ = _carbon_levels("ERCO", start, elapsed, 1)
    plain = TypicalDayCarbon("ERCO", variation=False)
    np.testing.assert_array_equal(plain.series(start, elapsed, np.random.default_rng(3)), mean)
    np.testing.assert_array_equal(plain.series(start, elapsed, np.random.default_rng(4)), mean)


def test_hourly_carbon_interpolates_and_wraps_to_the_first_hour():
    carbon = HourlyCarbon(100.0 + np.arange(48.0))
    series = carbon.series(datetime(2026, 1, 1), np.array([0.0, 2.5, 47.5, 50.0]) * 3600.0, np.random.default_rng(0))
    np.testing.assert_allclose(series, [100.0, 102.5, (147.0 + 100.0) / 2.0, 102.0], atol=1e-12)


@pytest.mark.parametrize("values", [
    np.full(23, 100.0), np.full((24, 2), 100.0), np.array([np.nan] + [100.0] * 23),
    np.array([-0.5] + [100.0] * 23), np.array([-2.0] + [100.0] * 23),
])
def test_hourly_carbon_refuses_short_multi_dimensional_missing_or_negative_values(values):
    with pytest.raises(ValueError, match="g_per_kwh|carbon intensity"):
        HourlyCarbon(values)


def test_hourly_carbon_accepts_a_day_or_more_and_zero_intensity():
    for values in (np.full(24, 100.0), np.full(25, 100.0), np.zeros(24), np.array([0.5] + [100.0] * 23)):
        HourlyCarbon(values)


def test_carbon_sources_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TypicalDayCarbon().region = "CISO"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        HourlyCarbon(np.zeros(24)).name = "other"  # type: ignore[misc]


def test_carbon_csv_loader_refuses_a_missing_value_column(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("time,carbon_intensity\n0,100\n")
    with pytest.raises(ValueError, match="no carbon-intensity column"):
        load_carbon_csv(path, value_column="nope")
    (tmp_path / "d.csv").write_text("time,price\n0,100\n")
    with pytest.raises(ValueError, match="no carbon-intensity column"):
        load_carbon_csv(tmp_path / "d.csv")


def test_carbon_source_picks_the_grid_that_serves_the_site():
    assert carbon_source(None, "phoenix") == TypicalDayCarbon("AZPS")
    assert carbon_source(None, "seattle") == TypicalDayCarbon("BPAT")
    assert carbon_source(None, "somewhere") == TypicalDayCarbon("PJM")
    assert carbon_source(None, TypicalDayClimate("phoenix")) == TypicalDayCarbon("PJM")  # not a site name
    assert carbon_source("CISO", "phoenix") == TypicalDayCarbon("CISO")
    own = HourlyCarbon(np.full(24, 50.0))
    assert carbon_source(own) is own


def _csv_rows(name: str) -> list[dict[str, str]]:
    import csv
    from pathlib import Path

    import dcops.physics

    path = Path(dcops.physics.__file__).parent / "data" / name
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_profiles_hold_each_csv_row_at_its_month_and_hour():
    """Checked against the shipped CSVs read here: every row lands at [month − 1, local hour]."""
    from dcops.physics.profiles import resolve_region, resolve_site

    for row in _csv_rows("climate_hourly_by_month.csv")[::97]:
        profile = climate_profile(resolve_site(row["site"]))
        m, h = int(row["month"]) - 1, int(row["local_hour"])
        assert profile.dry_bulb_c[m, h] == float(row["dry_bulb_c"]) and profile.wet_bulb_c[m, h] == float(row["wet_bulb_c"])
    for row in _csv_rows("carbon_intensity_hourly_by_month.csv")[::97]:
        profile = carbon_profile(resolve_region(row["region"]))
        m, h = int(row["month"]) - 1, int(row["local_hour"])
        assert profile.mean_g_per_kwh[m, h] == float(row["mean_gco2_per_kwh"])
        assert profile.p90_g_per_kwh[m, h] == float(row["p90_gco2_per_kwh"])


def test_profile_tables_are_read_only_and_names_resolve_both_ways():
    from dcops.physics.profiles import SITE_ALIASES, resolve_site

    climate, carbon = climate_profile("phoenix"), carbon_profile("CISO")
    for table in (climate.dry_bulb_c, climate.pressure_pa, carbon.mean_g_per_kwh, carbon.p10_g_per_kwh):
        with pytest.raises(ValueError):
            table[0, 0] = 0.0
    full = SITE_ALIASES["phoenix"]
    assert resolve_site("phoenix") == resolve_site(full) == full
    with pytest.raises(KeyError, match="unknown climate"):
        resolve_site("atlantis")
