"""Faults become per-step effects; sensors lie in seeded ways; load profiles stay in range."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.faults import ChillerTrip, FanFailure, SensorDrift, build_timeline, random_faults
from dcops.physics.it_load import LOAD_PATTERNS, LoadProfile
from dcops.physics.sensors import SensorModel, draw_errors


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
    [(ChillerTrip(start_s=0.0, chiller=5), "ChillerTrip.chiller"), (FanFailure(start_s=0.0, zone=9), "FanFailure.zone"),
     (SensorDrift(start_s=0.0, zone=-1), "SensorDrift.zone")],
)
def test_a_fault_that_points_nowhere_is_rejected_by_name(fault, field):
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
