"""What a cooling task reports, recomputed from its own documented parts: the plant block of the observation
(carbon in kg/kWh, the local hour's sine and cosine at the end of the step to be played, progress), each step's time, carbon and the episode summary."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np
import pytest

import dcops

ACTION = np.array([0.7, 20.0, 10.0, 1.0], dtype=np.float32)  # one zone: fan, supply, chilled water, economiser


def test_the_plant_block_time_carbon_and_summary_by_hand():
    env = dcops.make_env("cooling/single_zone_recovery", diagnostics=True)
    obs, info = env.reset(seed=3)
    start = datetime.fromisoformat(info["time"])
    n, dt = env.unwrapped.task.n_steps, env.unwrapped.task.dt_s
    plant = obs[5:]
    assert plant[8] == 0.0 and plant[2] == 0.0  # progress and the economiser's share before any step
    carbon_g = facility_kwh = it_kwh = 0.0
    for k in range(n):
        obs, _, terminated, _, info = env.step(ACTION)
        plant = obs[5:].astype(np.float64)
        t = start + timedelta(seconds=(k + 1) * dt)
        assert info["time"] == t.isoformat()
        reading = min(k + 1, n - 1)
        # the hour features are those of the end of the step about to be played (capped at the last step)
        ahead = start + timedelta(seconds=(reading + 1) * dt)
        hour = ahead.hour + ahead.minute / 60.0 + ahead.second / 3600.0
        assert plant[6] == pytest.approx(math.sin(2 * math.pi * hour / 24), abs=1e-6)
        assert plant[7] == pytest.approx(math.cos(2 * math.pi * hour / 24), abs=1e-6)
        assert plant[8] == pytest.approx((k + 1) / n, abs=1e-6)
        intensity = float(env.unwrapped._carbon_g_per_kwh[k])
        assert float(obs[5 + 5]) == pytest.approx(float(env.unwrapped._carbon_g_per_kwh[reading]) / 1000.0, rel=1e-6)
        step_kwh = info["facility_kw"] * dt / 3600.0
        assert info["carbon_g"] == pytest.approx(step_kwh * intensity, rel=1e-12)
        carbon_g += info["carbon_g"]
        facility_kwh += step_kwh
        it_kwh += info["it_kw"] * dt / 3600.0
    assert terminated
    summary = info["summary"]
    assert summary["carbon_kg"] == pytest.approx(carbon_g / 1000.0, rel=1e-12)
    assert summary["pue"] == pytest.approx(facility_kwh / it_kwh, rel=1e-12)
    totals = env.unwrapped.totals
    assert summary["mean_violation"] == pytest.approx(totals.violation_sum / n, rel=1e-12)
    assert summary["minutes_below_18"] == pytest.approx(list(totals.minutes_below_18))


def test_an_empty_episodes_summary_is_zero():
    from dcops.cooling_env import EpisodeTotals

    summary = EpisodeTotals().as_dict()
    assert (summary["pue"], summary["carbon_kg"], summary["mean_violation"]) == (0.0, 0.0, 0.0)


def test_render_before_and_after_a_step():
    env = dcops.make_env("cooling/single_zone_recovery", render_mode="ansi")
    env.reset(seed=0)
    assert "inlet   nan °C" in env.render()
    env.step(ACTION)
    text = env.render()
    assert "nan" not in text and "PUE" in text and "step 1/" in text


def _fraction_above(start: float, end: float, threshold: float) -> float:
    """The docstring's f: the share of a step a temperature going linearly from ``start`` to ``end`` spends above
    ``threshold``."""
    if start == end:
        return 1.0 if start > threshold else 0.0
    crossing = (threshold - start) / (end - start)  # where on [0, 1] it meets the threshold
    if not 0.0 < crossing < 1.0:
        return 1.0 if (start + end) / 2.0 > threshold else 0.0
    return 1.0 - crossing if end > start else crossing


def test_every_steps_reward_and_the_episode_tallies_by_hand():
    """The docstring's reward, violation minutes (27, 32 and 18 °C, linear within a step), cooling over design
    IT in the observation, and the fastest inlet change, recomputed from each step's start and end inlets."""
    env = dcops.make_env("cooling/single_zone_recovery", diagnostics=True)
    env.reset(seed=11)
    n, dt = env.unwrapped.task.n_steps, env.unwrapped.task.dt_s
    minutes, hours = dt / 60.0, dt / 3600.0
    starved = np.array([0.2, 27.0, 18.0, 0.0], dtype=np.float32)  # little air: the inlets take the 38 °C hall air
    moderate = np.array([0.5, 22.0, 10.0, 1.0], dtype=np.float32)  # then down through 32 and 27 °C within steps
    cold = np.array([1.0, 15.0, 5.0, 1.0], dtype=np.float32)  # then full cooling, below 18 °C
    above_27 = above_32 = below_18 = violation_sum = fastest = 0.0
    partial = 0
    for k in range(n):
        obs, reward, terminated, _, info = env.step(starved if k < 3 else moderate if k < 9 else cold)
        out = env.unwrapped._last_outputs
        start, end = float(out.inlet_start_c[0]), float(out.inlet_c[0])
        f27, f32 = _fraction_above(start, end, 27.0), _fraction_above(start, end, 32.0)
        f18 = 1.0 - _fraction_above(start, end, 18.0)
        partial += any(0.0 < f < 1.0 for f in (f27, f32, f18))
        violation = f27 + 4.0 * f32 + f18  # one zone: its weight is 1
        assert reward == pytest.approx(-(violation + 0.8 * info["cooling_kw"] / info["it_kw"]), rel=1e-9, abs=1e-12)
        assert info["violation_minutes_27"][0] == pytest.approx(f27 * minutes, abs=1e-9)
        assert info["violation_minutes_32"][0] == pytest.approx(f32 * minutes, abs=1e-9)
        assert float(obs[5 + 9]) == pytest.approx(info["cooling_kw"] / 250.0, rel=1e-6)
        above_27, above_32, below_18 = above_27 + f27 * minutes, above_32 + f32 * minutes, below_18 + f18 * minutes
        violation_sum += violation
        fastest = max(fastest, abs(end - start) / hours)
    assert terminated
    summary = info["summary"]
    assert min(above_32, below_18) > 0.0 and partial >= 3  # every threshold reached; 32 and 27 crossed
    assert summary["minutes_above_27"] == pytest.approx([above_27], abs=1e-9)
    assert summary["minutes_above_32"] == pytest.approx([above_32], abs=1e-9)
    assert summary["minutes_below_18"] == pytest.approx([below_18], abs=1e-9)
    assert summary["mean_violation"] == pytest.approx(violation_sum / n, rel=1e-12)
    assert summary["max_inlet_rate_k_per_h"] == pytest.approx(fastest, rel=1e-12)


def test_an_env_without_a_render_mode_renders_nothing():
    env = dcops.make_env("cooling/single_zone_recovery")
    env.reset(seed=0)
    assert env.render() is None


@pytest.mark.parametrize(("overrides", "message"), [
    ({"zone_names": ("a", "b")}, "zone_names and zone_weights need 1 entries"),
    ({"zone_names": ()}, "zone_names and zone_weights need 1 entries"),
    ({"zone_weights": (1.0, 1.0)}, "zone_names and zone_weights need 1 entries"),
    ({"zone_weights": ()}, "zone_names and zone_weights need 1 entries"),
    ({"n_steps": 0}, "n_steps must be >= 1 and dt_s > 0"),
    ({"dt_s": -60.0}, "n_steps must be >= 1 and dt_s > 0"),
    ({"dt_s": 0.0}, "n_steps must be >= 1 and dt_s > 0"),
])
def test_a_task_spec_that_cannot_run_is_refused(overrides, message):
    from dataclasses import replace

    from dcops.cooling_env import single_zone_recovery_spec

    with pytest.raises(ValueError, match=message):
        replace(single_zone_recovery_spec(), **overrides)
    replace(single_zone_recovery_spec(), dt_s=0.5, n_steps=1)  # any positive step length and step count


def test_the_task_spec_defaults_are_the_documented_ones():
    """The docstring's table: 300 s control steps; a spec that names only its plant and zones runs a 12 h day
    (144 steps) from a July morning with no jitter, as its fields say."""
    from dcops.cooling_env import CoolingTaskSpec
    from dcops.physics.plant_types import PlantConfig

    spec = CoolingTaskSpec("custom", PlantConfig.default(n_zones=1), ("hall",), (1.0,))
    assert (spec.n_steps, spec.dt_s, spec.start_jitter_days) == (144, 300.0, 0)
    assert spec.start == datetime(2026, 7, 15, 6, 0)
    assert (spec.initial_zone_temp_c, spec.initial_chw_c) == (30.0, 12.0)


@pytest.mark.parametrize(("task", "first_day", "days", "clock"), [
    ("cooling/single_zone_recovery", datetime(2026, 6, 10), 21, (13, 0)),
    ("cooling/multi_zone_sensor_drift", datetime(2026, 5, 1), 31, (6, 0)),
    ("cooling/cascading_chiller_failure", datetime(2026, 7, 10), 21, (11, 0)),
])
def test_each_task_starts_at_its_documented_hour_on_a_day_drawn_from_its_range(task, first_day, days, clock):
    """The factories' docstrings: the start hour, and a day anywhere in the stated range (the first draw of the
    episode's generator picks it), every day of it reachable."""
    env = dcops.make_env(task)
    seen = set()
    for seed in range(150):
        _, info = env.reset(seed=seed)
        start = datetime.fromisoformat(info["time"])
        day = int(np.random.default_rng(seed).integers(0, days))
        assert start == first_day.replace(hour=clock[0], minute=clock[1]) + timedelta(days=day)
        seen.add(day)
    assert seen == set(range(days))


def test_the_cascading_trips_are_the_documented_ones_drawn_from_the_seed():
    """Chiller 0 trips at 2 h ± 20 min (one uniform draw) with a 3 min ramp and restarts after 60 min; chiller 1
    trips 15 min later, same ramp, for 30 min."""
    from dcops.cooling_env import _cascading_trips

    for seed in range(20):
        trips = _cascading_trips(np.random.default_rng(seed))
        first = 2 * 3600.0 + np.random.default_rng(seed).uniform(-20 * 60.0, 20 * 60.0)
        assert [(t.chiller, t.start_s, t.ramp_s, t.duration_s) for t in trips] == [
            (0, first, 180.0, 3600.0), (1, first + 900.0, 180.0, 1800.0)]


def test_the_drifting_sensor_is_the_documented_one_drawn_from_the_seed():
    """One of three zones, 0.5–1.2 K/h low, from 0.5–3 h in: a start, a zone, a rate, drawn in that order."""
    from dcops.cooling_env import drift_one_zone

    for seed in range(20):
        (drift,) = drift_one_zone(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        start = rng.uniform(0.5, 3.0) * 3600.0
        zone = int(rng.integers(3))
        assert (drift.start_s, drift.zone, drift.rate_k_per_h) == (start, zone, -rng.uniform(0.5, 1.2))


def test_weather_and_carbon_are_read_at_each_steps_middle_in_the_seeds_order():
    """The seed contract: without a start jitter, the weather draws first from the episode's generator, then the
    grid carbon; each is the value at the middle of its step (an odd step length shows the half second)."""
    from dcops.physics.carbon import carbon_source
    from dcops.physics.weather import weather_source

    env = dcops.make_env("cooling/single_zone_recovery", start_jitter_days=0, dt_s=301.0)
    env.reset(seed=5)
    unwrapped, spec = env.unwrapped, env.unwrapped.task
    middles = np.arange(spec.n_steps) * 301.0 + 150.5
    rng = np.random.default_rng(5)
    weather = weather_source(spec.climate).series(spec.start, middles, rng)
    carbon = carbon_source(spec.grid_region, spec.climate).series(spec.start, middles, rng)
    np.testing.assert_array_equal(unwrapped._dry_bulb, weather.dry_bulb_c)
    np.testing.assert_array_equal(unwrapped._wet_bulb, weather.wet_bulb_c)
    np.testing.assert_array_equal(unwrapped._carbon_g_per_kwh, carbon)


def test_the_sensor_errors_follow_the_faults_in_the_documented_order():
    """Module docstring (reset draws): the day jitter, weather, carbon, load and faults, then the inlet, return-air
    and chilled-water sensors, each family its biases and then its noise for the reset reading and every step."""
    from dcops.physics.carbon import carbon_source
    from dcops.physics.sensors import draw_errors
    from dcops.physics.weather import weather_source

    env = dcops.make_env("cooling/multi_zone_sensor_drift", n_steps=6)
    env.reset(seed=11)
    unwrapped, spec = env.unwrapped, env.unwrapped.task
    assert spec.start_jitter_days and callable(spec.faults)  # every draw of the list is made
    n, dt, z = spec.n_steps, spec.dt_s, spec.plant.n_zones
    rng = np.random.default_rng(11)
    start = spec.start + timedelta(days=int(rng.integers(0, spec.start_jitter_days + 1)))
    middles = np.arange(n) * dt + dt / 2.0
    weather_source(spec.climate).series(start, middles, rng)
    carbon_source(spec.grid_region, spec.climate).series(start, middles, rng)
    spec.load.generate(rng, spec.plant.zone_design_it_kw, n, dt, start.hour + start.minute / 60.0)
    assert tuple(spec.faults(rng)) == unwrapped.faults
    for errors, sensors in ((unwrapped._inlet_errors, z), (unwrapped._return_errors, z), (unwrapped._chw_errors, 1)):
        expected = draw_errors(spec.sensor_model, rng, n + 1, sensors)
        np.testing.assert_array_equal(errors.bias_k, expected.bias_k)
        np.testing.assert_array_equal(errors.noise_k, expected.noise_k)


def test_a_start_off_the_hour_moves_the_hour_features_by_its_minutes():
    env = dcops.make_env("cooling/single_zone_recovery", start=datetime(2026, 6, 10, 13, 30), start_jitter_days=0)
    obs, _ = env.reset(seed=0)
    hour = 13.5 + 300.0 / 3600.0  # the end of the step about to be played (see the first test)
    assert obs[5 + 6] == pytest.approx(math.sin(2 * math.pi * hour / 24), abs=1e-6)
    assert obs[5 + 7] == pytest.approx(math.cos(2 * math.pi * hour / 24), abs=1e-6)


def test_before_any_step_the_observation_reports_no_last_step_and_the_score_no_violation():
    env = dcops.make_env("cooling/multi_zone_sensor_drift")
    obs, _ = env.reset(seed=1)
    plant = obs[15:]
    assert (plant[2], plant[9], plant[10]) == (0.0, 0.0, 0.0)  # economiser share, cooling over IT, PUE
    assert 0.6 <= env.unwrapped.score() <= 1.0  # no violation yet: T = 1, and the score stays in [0, 1]


def test_the_chillers_available_are_a_fraction_of_the_units():
    env = dcops.make_env("cooling/cascading_chiller_failure")
    env.reset(seed=2)
    unwrapped = env.unwrapped
    n = unwrapped.task.n_steps
    action = np.array([0.8] * 4 + [18.0] * 4 + [7.0, 0.0], dtype=np.float32)
    fractions = []
    for k in range(n):
        obs, *_ = env.step(action)
        fractions.append(float(obs[5 * 4 + 1]))
        expected = unwrapped._timeline.chiller_available[min(k + 1, n - 1)].sum() / 3
        assert fractions[-1] == pytest.approx(expected, abs=1e-6)
    assert min(fractions) < 0.5 and any(0.0 < f < 1.0 and f not in (1 / 3, 2 / 3) for f in fractions)


def test_a_drift_that_starts_at_once_shows_in_the_first_reading():
    from dcops.physics.faults import SensorDrift
    from dcops.physics.sensors import SensorModel

    env = dcops.make_env("cooling/single_zone_recovery", diagnostics=True, sensor_model=SensorModel(0.0, 0.0),
                         faults=(SensorDrift(start_s=0.0, zone=0, rate_k_per_h=-12.0),))
    obs, info = env.reset(seed=0)
    assert obs[0] == pytest.approx(info["inlet_c"][0], abs=1e-5)  # no drift yet at the start
    obs, _, _, _, info = env.step(ACTION)
    assert obs[0] == pytest.approx(info["inlet_c"][0] - 1.0, abs=1e-5)  # 12 K/h for 5 min


def test_the_env_hides_the_diagnostics_unless_asked_and_takes_keyword_arguments_only():
    from dcops.cooling_env import CoolingEnv, single_zone_recovery_spec

    env = CoolingEnv(single_zone_recovery_spec())
    _, info = env.reset(seed=0)
    assert "inlet_c" not in info and "faults" not in info
    _, _, _, _, info = env.step(ACTION)
    assert "inlet_c" not in info and "violation_minutes_27" not in info
    with pytest.raises(TypeError):
        env.reset(0)  # Gymnasium's reset takes seed and options by keyword only
    with pytest.raises(RuntimeError, match="call reset"):
        CoolingEnv(single_zone_recovery_spec()).step(ACTION)


def test_an_episode_ends_at_its_last_step_and_then_refuses_to_step():
    env = dcops.make_env("cooling/single_zone_recovery", n_steps=3)
    env.reset(seed=0)
    assert [env.step(ACTION)[2] for _ in range(3)] == [False, False, True]
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(ACTION)


def test_task_specs_and_results_are_frozen():
    from dataclasses import FrozenInstanceError

    from dcops.cooling_env import EpisodeResult, single_zone_recovery_spec

    with pytest.raises(FrozenInstanceError):
        single_zone_recovery_spec().n_steps = 5  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        EpisodeResult("t", "c", 0, 0.5, -1.0, {}).score = 1.0  # type: ignore[misc]


def test_small_totals_by_the_formulas():
    """Below 1 kWh of IT energy the PUE and the energy score are still the ratios of the docstring."""
    from dcops.cooling_env import EpisodeTotals, thermal_and_energy_score

    assert EpisodeTotals(it_kwh=0.5, facility_kwh=0.6).as_dict()["pue"] == pytest.approx(1.2)
    assert thermal_and_energy_score(0.25, 0.05, 0.5) == pytest.approx(0.75 * (0.6 + 0.4 * (1 - 0.1 / 0.5)))
    empty = EpisodeTotals().as_dict()
    assert empty["max_inlet_rate_k_per_h"] == 0.0
    assert empty["minutes_above_27"] == empty["minutes_above_32"] == empty["minutes_below_18"] == []


def test_run_controller_sums_the_rewards_of_the_episode_it_plays():
    from dcops.cooling_env import run_controller

    class Fixed:
        def reset(self, context):
            self.context = context

        def act(self, observation):
            return ACTION

    result = run_controller(dcops.make_env("cooling/single_zone_recovery"), Fixed(), seed=4)
    env = dcops.make_env("cooling/single_zone_recovery")
    env.reset(seed=4)
    rewards = [env.step(ACTION)[1] for _ in range(env.unwrapped.task.n_steps)]
    assert result.total_reward == pytest.approx(sum(rewards), rel=1e-12)
    assert result.score == pytest.approx(env.unwrapped.score(), rel=1e-12)


def test_a_small_halls_overhead_and_a_step_off_the_minute_by_the_formulas():
    """A 10 kW hall at idle draws 0.5 kW of IT (5 % of design): the reward still prices its cooling per kW of IT.
    A 301 s step counts 301/60 minutes of violation."""
    from dcops.physics.it_load import LoadProfile
    from dcops.physics.plant_types import PlantConfig

    env = dcops.make_env("cooling/single_zone_recovery", diagnostics=True, initial_zone_temp_c=22.0,
                         initial_chw_c=9.0, plant=PlantConfig.default(n_zones=1, zone_design_it_kw=10.0),
                         load=LoadProfile(pattern="steady", low=0.0, high=0.0, noise=0.0))
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([0.5, 21.0, 9.0, 0.0], dtype=np.float32))
    assert info["it_kw"] == pytest.approx(0.5) and 18.0 < info["inlet_c"][0] < 27.0  # no violation
    assert reward == pytest.approx(-0.8 * info["cooling_kw"] / info["it_kw"], rel=1e-12)
    odd = dcops.make_env("cooling/single_zone_recovery", diagnostics=True, dt_s=301.0)
    odd.reset(seed=0)
    _, _, _, _, info = odd.step(np.array([0.2, 27.0, 18.0, 0.0], dtype=np.float32))
    assert info["violation_minutes_27"] == pytest.approx([301.0 / 60.0], rel=1e-12)  # the whole step above 27 °C
