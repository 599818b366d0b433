"""The rolling planner: it plans on the view alone, packs power where greedy order cannot, waits instead of
rejecting, and plays whole episodes deterministically with valid decisions."""

from __future__ import annotations

import copy

import pytest

import dcops
from dcops.agents.schedulers import Capacity, PriorityThresholdScheduler
from dcops.agents.schedulers.planner import RollingPlanner, fraction_by_horizon, window_scale


@pytest.fixture(scope="module")
def base_view():
    """Window 0 of an oversubscribed episode with no pending, queued or running work, and no posterior."""
    env = dcops.parallel_env(scenario="oversubscribed")
    _, infos = env.reset(seed=71000)
    view = copy.deepcopy(infos["scheduler"]["view"])
    view |= {"pending": [], "queued": [], "running": []}
    for team in view["teams"].values():
        team["gaming_posterior"] = 0.0
    return view


def _request(rid, kw, priority="MEDIUM", deadline=0, window=0, hours=1.5, gpus=8, gpu_type="H100", flexible=False):
    return {"request_id": rid, "team": "team_0", "job_type": "fine_tuning", "description": "", "kw": kw,
            "duration_h": hours, "gpus": gpus, "gpu_type": gpu_type, "priority": priority,
            "deadline_window": deadline, "carbon_flexible": flexible, "chargeback": 1.0,
            "submitted_window": window, "slot": 0, "windows_waited": 0, "fits_now": True}


def _by_id(decisions):
    return {d["request_id"]: d for d in decisions}


def _with_power_left(view, kw):
    """``view`` with other work committed so that ``kw`` of job power is left now (margin of the planner)."""
    budget = Capacity(view, RollingPlanner().margin).job_budget_kw
    return {**view, "plant": {**view["plant"], "committed_job_kw": budget - kw}}


def test_it_packs_the_power_a_greedy_order_leaves_empty(base_view):
    """Three MEDIUM one-window jobs due now, of 180, 147 and 147 kW, with 300 kW left: taking them in order (as
    priority_threshold does) runs only the first; the plan runs the two that fill the power, worth more."""
    view = {**_with_power_left(base_view, 300.0),
            "pending": [_request("a", 180.0, gpu_type="H100"), _request("b", 147.0, gpu_type="A100"),
                        _request("c", 147.0, gpu_type="L40S")]}
    planned = _by_id(RollingPlanner().decide(view))
    assert [planned[r]["decision"] for r in "abc"] == ["REJECT", "ACCEPT", "ACCEPT"]
    greedy = _by_id(PriorityThresholdScheduler(margin=RollingPlanner().margin).decide(view))
    assert [greedy[r]["decision"] for r in "abc"] == ["ACCEPT", "REJECT", "REJECT"]


def test_work_that_does_not_fit_now_waits_while_its_deadline_allows(base_view):
    view = {**_with_power_left(base_view, 200.0),
            "pending": [_request("urgent", 160.0, priority="HIGH", gpu_type="H100"),
                        _request("patient", 160.0, deadline=3, gpu_type="A100"),
                        _request("doomed", 160.0, deadline=0, gpu_type="L40S")]}
    planned = _by_id(RollingPlanner().decide(view))
    assert planned["urgent"]["decision"] == "ACCEPT"
    assert planned["patient"] == {"request_id": "patient", "decision": "DEFER", "defer_to_window": 1}
    assert planned["doomed"]["decision"] == "REJECT"


def test_a_running_job_holds_its_power_until_its_stated_end(base_view):
    """A running job holds 250 kW through window 1 of a ~400 kW budget, so a 187 kW job of two windows that may
    start until window 2 cannot start before the holder ends: the plan starts it in window 2, and waits now."""
    budget = Capacity(base_view, RollingPlanner().margin).job_budget_kw
    assert 250.0 + 187.0 > budget > 187.0
    running = [{"request_id": "holder", "team": "team_0", "zone": base_view["zones"][0]["name"], "kw": 250.0,
                "gpus": 8, "started_window": 0, "stated_end_window": 1}]
    view = {**_with_power_left(base_view, budget - 250.0), "running": running,
            "pending": [_request("long", 187.0, hours=3.0, deadline=3, flexible=True, gpu_type="L40S")]}
    planner = RollingPlanner()
    assert planner.plan(view) == {"long": 2}
    assert _by_id(planner.decide(view))["long"] == {"request_id": "long", "decision": "DEFER", "defer_to_window": 1}


def test_the_window_scale_is_the_configs():
    env = dcops.parallel_env(scenario="oversubscribed")
    _, infos = env.reset(seed=1)
    assert window_scale(infos["scheduler"]["view"]) == pytest.approx(env.episode.config.throughput_scale)


def test_a_job_running_past_its_stated_end_holds_its_power_only_while_it_may_still_end(base_view):
    """A job stated to end in window 0 still runs in window 2 (true runtimes differ from stated ones). The plan
    counts its power this window (Capacity's committed power), as ending now at the latest, so a 187 kW job of two
    windows that does not fit beside it now is planned for the next window (it loses value while it waits)."""
    budget = Capacity(base_view, RollingPlanner().margin).job_budget_kw
    running = [{"request_id": "late", "team": "team_0", "zone": base_view["zones"][0]["name"], "kw": 250.0,
                "gpus": 8, "started_window": 0, "stated_end_window": 0}]
    view = {**_with_power_left(base_view, budget - 250.0), "window": 2, "running": running,
            "pending": [_request("next", 187.0, hours=3.0, deadline=5, window=2, gpu_type="L40S")]}
    assert RollingPlanner().plan(view) == {"next": 3}


def test_gpus_bind_per_type_in_the_plan(base_view):
    """Three H100 jobs of 96 GPUs and little power: the hall has 192 H100 GPUs, so the plan starts two now and
    the third next window."""
    view = {**base_view, "pending": [_request(f"g{i}", 10.0, gpus=96, deadline=3, gpu_type="H100")
                                     for i in range(3)]}
    starts = sorted(RollingPlanner().plan(view).values())
    assert starts == [0, 0, 1]
    decided = _by_id(RollingPlanner().decide(view))
    assert sorted(d["decision"] for d in decided.values()) == ["ACCEPT", "ACCEPT", "DEFER"]


def test_work_cut_by_the_horizon_is_valued_by_the_fraction_of_its_stated_runtime_done():
    request = {"duration_h": 2.0}
    assert fraction_by_horizon(request, 7, 8, 1.5) == pytest.approx(0.75)  # 1.5 h of 2 h
    assert fraction_by_horizon({"duration_h": 3.0}, 7, 8, 1.5) == pytest.approx(0.5)
    assert fraction_by_horizon(request, 5, 8, 1.5) == 1.0


def test_a_gaming_posterior_discounts_the_stated_value(base_view):
    request = _request("x", 40.0, priority="HIGH")
    energy = 40.0 * 1.5
    assert RollingPlanner().estimate(request, base_view) == pytest.approx((4.0 * energy, 0.3 * 4.0 * energy))
    view = copy.deepcopy(base_view)
    view["teams"]["team_0"]["gaming_posterior"] = 1.0
    # One level for a sure gamer: read as MEDIUM. Half a level (the default): weight 2^1.5, ρ halfway, 0.2.
    assert RollingPlanner(posterior_levels=1.0).estimate(request, view) == pytest.approx((2.0 * energy,
                                                                                          0.1 * 2.0 * energy))
    assert RollingPlanner().estimate(request, view) == pytest.approx((2.0 ** 1.5 * energy, 0.2 * 2.0 ** 1.5 * energy))
    low = _request("y", 40.0, priority="LOW")
    assert RollingPlanner(posterior_levels=3.0).estimate(low, view) == pytest.approx((energy, 0.0))  # no lower


def test_whole_episodes_decide_every_pending_request_once_validly_and_replay_exactly():
    def play():
        env = dcops.parallel_env(scenario="oversubscribed", n_windows=4)
        planner = RollingPlanner()
        _, infos = env.reset(seed=71002)
        rewards, decided = [], 0
        while env.agents:
            view = infos["scheduler"]["view"]
            decisions = planner.decide(view)
            assert sorted(d["request_id"] for d in decisions) == sorted(r["request_id"] for r in view["pending"])
            decided += len(decisions)
            _, reward, _, _, infos = env.step({"scheduler": decisions})
            rewards.append(reward["scheduler"])
        assert infos["scheduler"]["episode"]["invalid_entries"] == 0
        return rewards, decided

    first, again = play(), play()
    assert first == again and first[1] > 0
