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
