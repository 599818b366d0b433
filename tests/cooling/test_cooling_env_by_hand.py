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
    ({"zone_weights": (1.0, 1.0)}, "zone_names and zone_weights need 1 entries"),
    ({"n_steps": 0}, "n_steps must be >= 1 and dt_s > 0"),
    ({"dt_s": -60.0}, "n_steps must be >= 1 and dt_s > 0"),
    ({"dt_s": 0.0}, "n_steps must be >= 1 and dt_s > 0"),
])
def test_a_task_spec_that_cannot_run_is_refused(overrides, message):
    from dataclasses import replace

    from dcops.cooling_env import single_zone_recovery_spec

    with pytest.raises(ValueError, match=message):
        replace(single_zone_recovery_spec(), **overrides)


def test_the_task_spec_defaults_are_the_documented_ones():
    """The docstring's table: 300 s control steps; a spec that names only its plant and zones runs a 12 h day
    (144 steps) from a July morning with no jitter, as its fields say."""
    from dcops.cooling_env import CoolingTaskSpec
    from dcops.physics.plant_types import PlantConfig

    spec = CoolingTaskSpec("custom", PlantConfig.default(n_zones=1), ("hall",), (1.0,))
    assert (spec.n_steps, spec.dt_s, spec.start_jitter_days) == (144, 300.0, 0)
    assert spec.start == datetime(2026, 7, 15, 6, 0)
    assert (spec.initial_zone_temp_c, spec.initial_chw_c) == (30.0, 12.0)
