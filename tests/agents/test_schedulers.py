"""Baseline schedulers: one valid decision per pending request, and each one's policy as documented."""

from __future__ import annotations

import pytest

import dcops
from dcops.agents.schedulers import (
    BASELINES,
    AcceptAllScheduler,
    CarbonAwareScheduler,
    EarliestDeadlineScheduler,
    PriorityThresholdScheduler,
    RejectAllScheduler,
)
from dcops.agents.schedulers.base import Capacity


@pytest.fixture(scope="module")
def env():
    return dcops.parallel_env()


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_every_baseline_decides_every_pending_request_validly_for_a_whole_episode(env, name):
    scheduler = BASELINES[name]()
    _, infos = env.reset(seed=2)
    while env.agents:
        view = infos["scheduler"]["view"]
        decisions = scheduler.decide(view)
        assert sorted(d["request_id"] for d in decisions) == sorted(r["request_id"] for r in view["pending"])
        _, _, _, _, infos = env.step({"scheduler": decisions})
        assert infos["scheduler"]["invalid"]["count"] == 0


def view_with(pending, window=0, n_windows=8, headroom_kw=1000.0, forecast=None):
    return {
        "window": window, "n_windows": n_windows, "window_h": 1.5, "power_cap_kw": 900.0,
        "plant": {"planning_pue": 1.125, "cooling_capacity_kw": 10_000.0, "base_load_kw": 0.0,
                  "committed_job_kw": 800.0 - headroom_kw},  # 900 kW / PUE 1.125 = 800 kW of IT
        "zones": [{"gpu_type": "H100", "gpus_free": 96, "job_kw_free": 187.5}],
        "queued": [], "pending": pending,
        "carbon_forecast_g_per_kwh": forecast or [500.0] * n_windows,
    }


def req(rid, priority="MEDIUM", deadline=7, kw=50.0, gpus=8, flexible=False, duration=1.0, submitted=0):
    return {"request_id": rid, "priority": priority, "deadline_window": deadline, "kw": kw, "gpus": gpus,
            "gpu_type": "H100", "carbon_flexible": flexible, "duration_h": duration, "submitted_window": submitted}


def kinds(decisions):
    return {d["request_id"]: (d["decision"], d.get("defer_to_window")) for d in decisions}


def test_capacity_counts_power_and_zone_room():
    capacity = Capacity(view_with([], headroom_kw=100.0), margin=0.0)
    assert capacity.admit(req("a", kw=60.0))
    assert not capacity.admit(req("b", kw=60.0))  # power gone
    assert capacity.admit(req("c", kw=30.0, gpus=80))
    assert not capacity.admit(req("d", kw=1.0, gpus=16))  # GPUs gone


def test_threshold_rejects_below_the_stated_threshold_and_prefers_higher_stated_priority():
    view = view_with([req("low", "LOW"), req("med", "MEDIUM", kw=60.0), req("crit", "CRITICAL", kw=60.0)],
                     headroom_kw=100.0)
    decided = kinds(PriorityThresholdScheduler(margin=0.0).decide(view))
    assert decided["low"][0] == "REJECT"
    assert decided["crit"][0] == "ACCEPT"
    assert decided["med"] == ("DEFER", 1)  # no room now, its deadline allows waiting


def test_earliest_deadline_first_admits_the_tightest_stated_deadline():
    view = view_with([req("later", deadline=5, kw=60.0), req("soon", deadline=1, kw=60.0)], headroom_kw=100.0)
    decided = kinds(EarliestDeadlineScheduler(margin=0.0).decide(view))
    assert decided["soon"][0] == "ACCEPT" and decided["later"] == ("DEFER", 1)


def test_a_request_that_can_no_longer_wait_is_rejected_when_it_does_not_fit():
    view = view_with([req("a", deadline=0, kw=200.0)], headroom_kw=100.0)
    assert kinds(EarliestDeadlineScheduler().decide(view))["a"][0] == "REJECT"


def test_carbon_greedy_defers_stated_flexible_work_to_the_cleanest_allowed_window():
    forecast = [500.0, 480.0, 300.0, 250.0, 200.0, 500.0, 500.0, 500.0]
    view = view_with([req("flex", flexible=True, deadline=3), req("rigid", flexible=False, deadline=3)],
                     forecast=forecast)
    decided = kinds(CarbonAwareScheduler().decide(view))
    assert decided["flex"] == ("DEFER", 3)  # window 4 is cleaner but too late for the stated deadline
    assert decided["rigid"][0] == "ACCEPT"


def test_trivial_schedulers_accept_or_reject_everything():
    view = view_with([req("a"), req("b")])
    assert {d["decision"] for d in AcceptAllScheduler().decide(view)} == {"ACCEPT"}
    assert {d["decision"] for d in RejectAllScheduler().decide(view)} == {"REJECT"}
