"""Weather, carbon intensity and psychrometrics: shipped profiles, seeded variation, user files."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from dcops.physics.carbon import TypicalDayCarbon, load_carbon_csv
from dcops.physics.profiles import carbon_profile, climate_profile, regions, sites
from dcops.physics.psychrometrics import wet_bulb_c, wet_bulb_stull_c
from dcops.physics.weather import TypicalDayClimate, load_epw

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
