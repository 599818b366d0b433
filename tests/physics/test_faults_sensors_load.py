"""Faults become per-step effects; sensors lie in seeded ways; load profiles stay in range."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.faults import ChillerTrip, FanFailure, SensorDrift, build_timeline, random_faults
from dcops.physics.it_load import LOAD_PATTERNS, LoadProfile
from dcops.physics.sensors import SensorErrors, SensorModel, draw_errors


def test_chiller_trip_ramps_to_zero_and_restarts():
    timeline = build_timeline(
        [ChillerTrip(start_s=600.0, chiller=1, ramp_s=300.0, duration_s=1800.0, restart_ramp_s=300.0)],
        n_steps=12, dt_s=300.0, n_zones=2, n_chillers=2,
    )
    avail = timeline.chiller_available[:, 1]
    np.testing.assert_array_equal(timeline.chiller_available[:, 0], 1.0)
    assert avail[1] == 1.0 and avail[2] == 0.5 and avail[3] == 0.0
    assert avail[7] == 0.0 and avail[8] == 0.5 and avail[9] == 1.0


def test_fan_failure_and_sensor_drift_apply_to_their_zone_only():
    timeline = build_timeline(
        [FanFailure(start_s=0.0, zone=1, units_lost=0.5), SensorDrift(start_s=0.0, zone=0, rate_k_per_h=-2.0)],
        n_steps=4, dt_s=1800.0, n_zones=3, n_chillers=1,
    )
    np.testing.assert_array_equal(timeline.fan_units_alive[:, 1], 0.5)
    np.testing.assert_array_equal(timeline.fan_units_alive[:, [0, 2]], 1.0)
    np.testing.assert_allclose(timeline.inlet_sensor_offset_k[:, 0], [-1.0, -2.0, -3.0, -4.0])
    np.testing.assert_array_equal(timeline.inlet_sensor_offset_k[:, 1:], 0.0)


@pytest.mark.parametrize(
    ("fault", "field"),
    [(ChillerTrip(start_s=0.0, chiller=5), "ChillerTrip.chiller"), (ChillerTrip(0.0, chiller=-1), "ChillerTrip.chiller"),
     (ChillerTrip(0.0, chiller=2), "ChillerTrip.chiller"), (FanFailure(start_s=0.0, zone=9), "FanFailure.zone"),
     (FanFailure(0.0, zone=-1), "FanFailure.zone"), (FanFailure(0.0, zone=2), "FanFailure.zone"),
     (FanFailure(0.0, zone=0, units_lost=-0.1), "FanFailure.units_lost"),
     (FanFailure(0.0, zone=0, units_lost=1.1), "FanFailure.units_lost"),
     (SensorDrift(start_s=0.0, zone=-1), "SensorDrift.zone"), (SensorDrift(0.0, zone=2), "SensorDrift.zone"),
     (SensorDrift(0.0, zone=5), "SensorDrift.zone")],
)
def test_a_fault_that_points_nowhere_is_rejected_by_name(fault, field):
    """Indices past either end (the plant has 2 zones and 2 chillers) and shares of units outside [0, 1]."""
    with pytest.raises(ValueError, match=field):
        build_timeline([fault], n_steps=2, dt_s=300.0, n_zones=2, n_chillers=2)


def test_random_faults_are_seeded():
    a = random_faults(np.random.default_rng(4), 43200.0, 3, 2, 1.0, 1.0, 1.0)
    b = random_faults(np.random.default_rng(4), 43200.0, 3, 2, 1.0, 1.0, 1.0)
    assert a == b and len(a) == 3


def test_sensor_errors_are_seeded_and_have_the_stated_spread():
    model = SensorModel(noise_std_k=0.2, bias_std_k=0.0)
    a = draw_errors(model, np.random.default_rng(1), 5000, 2)
    b = draw_errors(model, np.random.default_rng(1), 5000, 2)
    np.testing.assert_array_equal(a.noise_k, b.noise_k)
    assert abs(a.noise_k.std() - 0.2) < 0.01
    reading = a.report(3, np.array([20.0, 21.0]), drift_k=np.array([-1.0, 0.0]))
    np.testing.assert_allclose(reading, np.array([19.0, 21.0]) + a.noise_k[3])


@pytest.mark.parametrize("pattern", LOAD_PATTERNS)
def test_load_profiles_stay_within_design(pattern):
    design = np.array([100.0, 200.0])
    load = LoadProfile(pattern=pattern, low=0.3, high=0.9).generate(np.random.default_rng(0), design, 288, 300.0, 0.0)
    assert load.shape == (288, 2)
    assert np.all(load >= 0.05 * design) and np.all(load <= design)


def test_diurnal_load_peaks_near_its_peak_hour():
    load = LoadProfile(pattern="diurnal", low=0.3, high=0.9, noise=0.0, zone_spread=0.0, peak_hour=15.0).generate(
        np.random.default_rng(0), np.array([100.0]), 24, 3600.0, 0.0)
    assert int(np.argmax(load[:, 0])) == 15


def test_bad_load_profile_is_rejected_by_field():
    with pytest.raises(ValueError, match="pattern"):
        LoadProfile(pattern="sawtooth")
    with pytest.raises(ValueError, match="low"):
        LoadProfile(low=0.9, high=0.2)


def test_random_faults_follow_their_seeded_draws_in_order():
    """The seed contract (training environments replay faults from it): per kind, one uniform draw decides
    whether it occurs, then its start (a uniform share of the horizon: 10–80 % for trips and fan failures, 0–50 %
    for drift), its chiller or zone, then a trip lasts 0.5–2 h, a fan failure loses 25 % or 50 % of the zone's
    units for 0.5–3 h, and a drift runs at 0.3–1.5 K/h, low or high with equal odds."""
    horizon, zones, chillers = 43200.0, 3, 2
    for seed in range(30):
        got = random_faults(np.random.default_rng(seed), horizon, zones, chillers, 0.5, 0.5, 0.5)
        rng = np.random.default_rng(seed)
        expected = []
        if rng.random() < 0.5:
            start = rng.uniform(0.1, 0.8) * horizon
            expected.append(ChillerTrip(start_s=start, chiller=int(rng.integers(chillers)),
                                        duration_s=rng.uniform(0.5, 2.0) * 3600.0))
        if rng.random() < 0.5:
            start = rng.uniform(0.1, 0.8) * horizon
            zone = int(rng.integers(zones))
            lost = float(rng.choice([0.25, 0.5]))
            expected.append(FanFailure(start_s=start, zone=zone, units_lost=lost,
                                       duration_s=rng.uniform(0.5, 3.0) * 3600.0))
        if rng.random() < 0.5:
            start = rng.uniform(0.0, 0.5) * horizon
            zone = int(rng.integers(zones))
            sign = float(rng.choice([-1.0, 1.0]))
            expected.append(SensorDrift(start_s=start, zone=zone, rate_k_per_h=sign * rng.uniform(0.3, 1.5)))
        assert got == expected, seed


def test_random_fault_parameters_cover_their_documented_ranges():
    trips, fans, drifts = [], [], []
    for seed in range(400):
        for f in random_faults(np.random.default_rng(seed), 43200.0, 3, 2, 1.0, 1.0, 1.0):
            {ChillerTrip: trips, FanFailure: fans, SensorDrift: drifts}[type(f)].append(f)
    trip_h = np.array([f.duration_s for f in trips]) / 3600.0
    fan_h = np.array([f.duration_s for f in fans]) / 3600.0
    rates = np.array([f.rate_k_per_h for f in drifts])
    assert 0.5 <= trip_h.min() < 0.55 and 1.95 < trip_h.max() <= 2.0
    assert 0.5 <= fan_h.min() < 0.55 and 2.95 < fan_h.max() <= 3.0
    assert {f.units_lost for f in fans} == {0.25, 0.5}
    assert 0.3 <= np.abs(rates).min() < 0.33 and 1.45 < np.abs(rates).max() <= 1.5
    assert 0.4 < np.mean(rates < 0) < 0.6
    assert {f.chiller for f in trips} == {0, 1} and {f.zone for f in drifts} == {0, 1, 2}


def test_a_restart_ramps_back_from_zero_at_its_own_rate():
    """A trip at 150 s that ramps down over 600 s and restarts after 300 s: at the restart (450 s, a step's
    middle) the unit is at 0, whatever the unfinished ramp-down, and climbs back over ``restart_ramp_s``."""
    trip = ChillerTrip(start_s=150.0, ramp_s=600.0, duration_s=300.0, restart_ramp_s=600.0)
    timeline = build_timeline([trip], n_steps=5, dt_s=300.0, n_zones=1, n_chillers=1)
    np.testing.assert_allclose(timeline.chiller_available[:, 0], [1.0, 0.0, 0.5, 1.0, 1.0])


@pytest.mark.parametrize(("duration_s", "restart_ramp_s", "expected"), [
    (12.25, 0.5, [0.0, 0.0, 0.5, 1.0]),  # the third step's middle (2.5 s) is 0.25 s into a 0.5 s ramp
    (12.5, 0.0, [0.0, 0.0, 0.0, 1.0]),  # an instant restart, at the third step's middle: 0 there, 1 after
])
def test_a_short_restart_ramp(duration_s, restart_ramp_s, expected):
    """1 s steps, a unit down since before the start."""
    trip = ChillerTrip(start_s=-10.0, ramp_s=1.0, duration_s=duration_s, restart_ramp_s=restart_ramp_s)
    timeline = build_timeline([trip], n_steps=4, dt_s=1.0, n_zones=1, n_chillers=1)
    assert np.all(np.isfinite(timeline.chiller_available))
    np.testing.assert_allclose(timeline.chiller_available[:, 0], expected)


def test_a_trip_ramps_availability_down_linearly_at_each_steps_middle():
    """Trip at 450 s over a 600 s ramp, 300 s steps (middles 150, 450, 750, …): 1, 1, 0.5, 0, 0, 0."""
    timeline = build_timeline([ChillerTrip(start_s=450.0, chiller=1, ramp_s=600.0)], 6, 300.0, 2, 2)
    np.testing.assert_allclose(timeline.chiller_available[:, 1], [1.0, 1.0, 0.5, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(timeline.chiller_available[:, 0], 1.0)  # the other unit runs on


@pytest.mark.parametrize(("ramp_s", "expected"), [(0.0, [1.0, 1.0, 1.0, 0.0]), (0.5, [1.0, 1.0, 0.5, 0.0])])
def test_short_and_instant_trips(ramp_s, expected):
    """1 s steps, a trip at 2.25 s (0.5 s ramp: half-way at the third middle, 2.5 s) or at 2.5 s (instant: still
    up at that very instant, down after)."""
    start = 2.25 if ramp_s else 2.5
    timeline = build_timeline([ChillerTrip(start_s=start, ramp_s=ramp_s)], 4, 1.0, 1, 1)
    assert np.all(np.isfinite(timeline.chiller_available))
    np.testing.assert_allclose(timeline.chiller_available[:, 0], expected)


def test_a_fan_failure_takes_its_share_of_units_for_its_duration():
    """A quarter of zone 1's units fails from 600 s for 900 s: alive 0.75 at the middles in [600, 1500)."""
    timeline = build_timeline([FanFailure(start_s=600.0, zone=1, units_lost=0.25, duration_s=900.0)], 6, 300.0, 2, 1)
    np.testing.assert_allclose(timeline.fan_units_alive[:, 1], [1.0, 1.0, 0.75, 0.75, 0.75, 1.0])
    np.testing.assert_array_equal(timeline.fan_units_alive[:, 0], 1.0)


def test_a_drift_grows_at_its_rate_to_each_steps_end():
    """−1.2 K/h from 450 s, read at the steps' ends (300, 600, 900 s): 0, −1.2·150/3600, −1.2·450/3600."""
    timeline = build_timeline([SensorDrift(start_s=450.0, zone=0, rate_k_per_h=-1.2)], 3, 300.0, 2, 1)
    np.testing.assert_allclose(timeline.inlet_sensor_offset_k[:, 0], [0.0, -1.2 * 150 / 3600, -1.2 * 450 / 3600],
                               atol=1e-15)
    np.testing.assert_array_equal(timeline.inlet_sensor_offset_k[:, 1], 0.0)


def test_faults_at_the_edges_of_the_plant_are_accepted():
    faults = [ChillerTrip(0.0, chiller=0), ChillerTrip(0.0, chiller=1), FanFailure(0.0, zone=0, units_lost=0.0),
              FanFailure(0.0, zone=2, units_lost=1.0), SensorDrift(0.0, zone=0), SensorDrift(0.0, zone=2)]
    timeline = build_timeline(faults, 2, 300.0, 3, 2)
    assert timeline.fan_units_alive[1, 2] == 0.0 and timeline.fan_units_alive[1, 0] == 1.0
    with pytest.raises(TypeError, match="not a fault"):
        build_timeline(["trip"], 2, 300.0, 3, 2)  # type: ignore[list-item]


def _exact(pattern: str, **kw) -> LoadProfile:
    return LoadProfile(pattern=pattern, noise=0.0, zone_spread=0.0, **kw)


def test_load_patterns_by_hand_without_noise():
    design = np.array([100.0, 200.0])
    rng = np.random.default_rng(0)
    steady = _exact("steady", low=0.3, high=0.9).generate(rng, design, 4, 3600.0, 0.0)
    np.testing.assert_allclose(steady, np.outer(np.full(4, 0.6), design))
    ramp = _exact("ramp", low=0.3, high=0.9).generate(rng, design, 4, 3600.0, 0.0)
    np.testing.assert_allclose(ramp[:, 0], [30.0, 50.0, 70.0, 90.0])
    # diurnal: high at the peak hour, low twelve hours away, the middle six hours away (hourly steps from 03:00)
    diurnal = _exact("diurnal", low=0.3, high=0.9, peak_hour=15.0).generate(rng, design, 19, 3600.0, 3.0)
    np.testing.assert_allclose(diurnal[[0, 6, 12, 18], 0], [30.0, 60.0, 90.0, 60.0], atol=1e-9)


def test_spikes_jump_from_low_to_high_for_three_to_six_steps():
    lengths = []
    for seed in range(200):
        load = _exact("spikes", low=0.3, high=0.9, spike_probability=0.01).generate(
            np.random.default_rng(seed), np.array([100.0]), 400, 300.0, 0.0)[:, 0]
        assert set(np.round(load, 9)) <= {30.0, 90.0}
        high = np.concatenate([[0], (load > 50.0).astype(int), [0]])
        edges = np.flatnonzero(np.diff(high))
        starts, ends = edges[::2], edges[1::2]
        lengths += list((ends - starts)[ends < 400])  # a spike cut short by the episode's end is left out
    lengths = np.array(lengths)
    assert len(lengths) > 300
    assert lengths.min() == 3 and np.mean(lengths <= 6) > 0.95  # longer only where two spikes overlap
    assert set(range(3, 7)) <= set(lengths.tolist())


def test_zone_spread_and_noise_have_their_stated_spread():
    rng = np.random.default_rng(5)
    design = np.full(4000, 100.0)
    spread = LoadProfile(pattern="steady", low=0.5, high=0.5, noise=0.0, zone_spread=0.05).generate(
        rng, design, 2, 300.0, 0.0)
    scale = spread[0] / 50.0
    assert scale.mean() == pytest.approx(1.0, abs=0.01) and scale.std() == pytest.approx(0.05, abs=0.004)
    np.testing.assert_allclose(spread[1], spread[0])  # one scale per zone, for the whole episode
    noisy = LoadProfile(pattern="steady", low=0.5, high=0.5, noise=0.02, zone_spread=0.0).generate(
        rng, np.array([100.0]), 4000, 300.0, 0.0)[:, 0] / 50.0
    assert noisy.std() == pytest.approx(0.02, abs=0.002) and noisy.mean() == pytest.approx(1.0, abs=0.002)


def test_load_fractions_are_clipped_to_five_percent_and_full_design():
    idle = _exact("steady", low=0.0, high=0.0).generate(np.random.default_rng(0), np.array([100.0]), 3, 300.0, 0.0)
    np.testing.assert_allclose(idle, 5.0)
    full = LoadProfile(pattern="steady", low=1.0, high=1.0, noise=0.2, zone_spread=0.0).generate(
        np.random.default_rng(0), np.array([100.0]), 200, 300.0, 0.0)
    assert full.max() == 100.0 and full.min() < 100.0


@pytest.mark.parametrize(("low", "high", "ok"), [(0.0, 0.0, True), (1.0, 1.0, True), (0.4, 0.4, True),
                                                  (-0.1, 0.5, False), (0.5, 1.1, False), (0.6, 0.5, False)])
def test_load_fractions_must_be_ordered_within_zero_and_one(low, high, ok):
    if ok:
        LoadProfile(low=low, high=high)
    else:
        with pytest.raises(ValueError, match="low <= high"):
            LoadProfile(low=low, high=high)


def test_a_reading_is_the_truth_plus_bias_drift_and_noise():
    errors = SensorErrors(noise_k=np.array([[0.05, -0.02], [0.1, 0.0]]), bias_k=np.array([0.3, -0.4]))
    np.testing.assert_allclose(errors.report(1, np.array([20.0, 25.0]), drift_k=np.array([-1.0, 0.5])),
                               [20.0 + 0.3 - 1.0 + 0.1, 25.0 - 0.4 + 0.5 + 0.0])
    np.testing.assert_allclose(errors.report(0, np.array([20.0, 25.0])), [20.35, 24.58])  # no drift by default


def test_sensor_errors_are_centred_with_their_stated_spreads_by_default():
    """Defaults: 0.1 K of calibration bias per sensor and 0.1 K of noise per reading, both centred on the truth."""
    assert (SensorModel().noise_std_k, SensorModel().bias_std_k) == (0.1, 0.1)
    errors = draw_errors(SensorModel(), np.random.default_rng(3), 400, 500)
    assert errors.bias_k.shape == (500,) and errors.noise_k.shape == (400, 500)
    assert abs(errors.bias_k.mean()) < 0.015 and errors.bias_k.std() == pytest.approx(0.1, abs=0.01)
    assert abs(errors.noise_k.mean()) < 0.002 and errors.noise_k.std() == pytest.approx(0.1, abs=0.002)


def test_fault_defaults():
    """A trip of chiller 0 coasts down in 3 min and restarts over 10 min (when it has a duration); a fan failure
    loses half the units; a drift reads low by 1 K/h (the dangerous direction); random faults occur with 30 %,
    20 % and 30 % chance."""
    import inspect

    assert ChillerTrip(0.0) == ChillerTrip(0.0, chiller=0, ramp_s=180.0, duration_s=None, restart_ramp_s=600.0)
    assert FanFailure(0.0, zone=0).units_lost == 0.5 and SensorDrift(0.0, zone=0).rate_k_per_h == -1.0
    defaults = {k: p.default for k, p in inspect.signature(random_faults).parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == {"chiller_trip_probability": 0.3, "fan_failure_probability": 0.2,
                        "sensor_drift_probability": 0.3}
    for seed in range(20):
        assert random_faults(np.random.default_rng(seed), 43200.0, 2, 2, 0.0, 0.0, 0.0) == []


def test_a_fan_failure_window_includes_its_start_and_excludes_its_end():
    """From 450 s for 600 s (ends at 1050 s), 300 s steps whose middles fall on both ends."""
    timeline = build_timeline([FanFailure(start_s=450.0, zone=0, units_lost=0.5, duration_s=600.0)], 5, 300.0, 1, 1)
    np.testing.assert_allclose(timeline.fan_units_alive[:, 0], [1.0, 0.5, 0.5, 1.0, 1.0])


def test_a_fault_that_ends_builds_its_timeline_without_a_warning():
    """Steps after a fan failure's end are plain steps: building the timeline warns of nothing (no division, no
    overflow), whether or not warnings are errors."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        timeline = build_timeline([FanFailure(start_s=0.0, zone=0, units_lost=0.5, duration_s=300.0)], 3, 300.0, 1, 1)
    np.testing.assert_allclose(timeline.fan_units_alive[:, 0], [0.5, 1.0, 1.0])


def test_the_default_load_is_the_documented_one():
    assert LoadProfile() == LoadProfile(pattern="diurnal", low=0.5, high=0.9, noise=0.02, zone_spread=0.05,
                                        peak_hour=15.0, spike_probability=0.05)


@pytest.mark.parametrize("pattern", ["spikes", "diurnal"])
def test_the_load_follows_its_documented_draws_in_order(pattern):
    """The seed contract of ``LoadProfile``: spike starts and lengths, then the zone scales, then the noise."""
    profile = LoadProfile(pattern=pattern, low=0.3, high=0.8, noise=0.04, zone_spread=0.1, peak_hour=14.0,
                          spike_probability=0.2)
    design, n, dt, start_hour = np.array([100.0, 250.0, 40.0]), 30, 900.0, 5.5
    got = profile.generate(np.random.default_rng(17), design, n, dt, start_hour)
    rng = np.random.default_rng(17)
    if pattern == "spikes":
        base = np.full(n, 0.3)
        for start in np.flatnonzero(rng.random(n) < 0.2):
            base[start : start + int(rng.integers(3, 7))] = 0.8
        assert 0.3 < base.mean() < 0.8  # the seed draws spikes, and not everywhere
    else:
        hours = start_hour + np.arange(n) * dt / 3600.0  # 05:30, 05:45, …
        base = 0.3 + 0.5 * 0.5 * (1.0 + np.cos(2.0 * np.pi * (hours - 14.0) / 24.0))
    scale = 1.0 + rng.normal(0.0, 0.1, size=3)
    noise = 1.0 + rng.normal(0.0, 0.04, size=(n, 3))
    np.testing.assert_allclose(got, np.clip(base[:, None] * scale * noise, 0.05, 1.0) * design, rtol=1e-12)


def test_a_load_profile_is_frozen():
    from dataclasses import FrozenInstanceError

    with pytest.raises(FrozenInstanceError):
        LoadProfile().low = 0.1  # type: ignore[misc]
