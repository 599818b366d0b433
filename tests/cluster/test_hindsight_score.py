"""The hindsight MILP's score objective: it plans for the window terms the reward pays, not for raw value."""

from __future__ import annotations

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler
from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import RuleFastPath
from dcops.cluster.decisions import resolve_structured
from dcops.cluster.episode import ClusterEpisode
from dcops.cluster.hindsight import electrical_job_power_budget, hindsight_bound
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
from dcops.evaluation.play import run_episode
from dcops.evaluation.truth_planner import PlanFollower


def finished_episode(jobs: list[tuple[str, Priority, float, float, int]], value_scale: float,
                     game_version: int = 1) -> ClusterEpisode:
    ep = ClusterEpisode(ClusterConfig(n_windows=3, faults=(), value_scale=value_scale, game_version=game_version),
                        RuleFastPath())
    ep.reset(np.random.default_rng(0), np.random.default_rng(0), ["team_0"])
    ep.submit([Submission(Request(rid, "team_0", "finetune", "", kw, h, 8, "H100", p, d, False, 1.0, 0),
                          RequestTruth(p, d, False, h)) for rid, p, kw, h, d in jobs])
    for w in range(3):
        ids = ep.pending_ids()
        ep.decide(resolve_structured([{"request_id": i, "decision": "REJECT"} for i in ids], ids, w, 3))
        ep.run_window()
    return ep


def test_in_a_saturated_window_the_score_plan_avoids_a_loss_that_the_value_plan_accepts():
    # Only one of the two fits 100 kW. Running the LOW job gains 90 and rejects the MEDIUM one (−0.1·40 = −4):
    # net 86 against 40, so the value plan runs it. With V = 10 both windows saturate, and the terms are
    # (90 − 4)/94 = 0.915 against 40/40 = 1: the score plan runs the MEDIUM job and loses nothing.
    ep = finished_episode([("low", Priority.LOW, 90.0, 1.0, 0), ("medium", Priority.MEDIUM, 20.0, 1.0, 0)], 10.0)
    budget = np.full(3, 100.0)
    value = hindsight_bound(ep, budget_kw=budget)
    score = hindsight_bound(ep, budget_kw=budget, objective="score")
    assert value.starts == {"low": 0}
    assert value.plan_value == pytest.approx(90.0 - 4.0)
    assert score.starts == {"medium": 0}
    assert score.plan_value == pytest.approx(40.0)
    # h_0 = min((G − L)/V, 1 − 2L/V) = min(4, 1) = 1; the later windows book nothing: h = min(0, 1) = 0.
    assert score.window_terms == pytest.approx([1.0, 0.0, 0.0])


def test_without_saturation_the_score_plan_is_worth_the_value_plan():
    # V far above any window's value: every term is (G − L)/V, linear in value, so both objectives agree.
    ep = finished_episode([("high", Priority.HIGH, 80.0, 1.0, 1), ("low", Priority.LOW, 80.0, 1.0, 1),
                           ("medium", Priority.MEDIUM, 60.0, 2.0, 2)], 1e7)
    budget = np.full(3, 100.0)
    value = hindsight_bound(ep, budget_kw=budget)
    score = hindsight_bound(ep, budget_kw=budget, objective="score")
    assert score.plan_value == pytest.approx(value.plan_value)
    assert sum(score.window_terms) == pytest.approx(value.plan_value / 1e7)


def test_the_plans_window_terms_bound_the_terms_the_reward_pays_when_the_plan_is_followed():
    # Where the followed run realises the plan, each window's term is at least h_w and equals it unsaturated.
    # This checks the window each score is booked in against the ledger's own booking.
    env = dcops.parallel_env(n_windows=6, climate="leesburg", grid_region="PJM", value_scale=900.0,
                             team_kinds=("cooperative", "cooperative", "strategic", "strategic"))
    run_episode(PriorityThresholdScheduler(), 5, env=env)
    plan = hindsight_bound(env.episode, budget_kw=0.6 * electrical_job_power_budget(env.episode), objective="score")
    followed = run_episode(PlanFollower(plan.starts), 5, env=env)
    assert followed["incident_windows"] == 0
    started = {row["request_id"]: row.get("start_window") for row in env.episode_truth()}
    assert {rid: started[rid] for rid in plan.starts} == plan.starts  # the plan was realised as written
    scale = env.episode.config.throughput_scale
    saturated = 0
    for h, window in zip(plan.window_terms, followed["windows"], strict=True):
        gained, lost = window["value_gained"], window["value_lost"]
        assert window["throughput"] >= h - 1e-9
        if gained + lost <= scale:
            assert window["throughput"] == pytest.approx(h, abs=1e-9)
        else:
            saturated += 1
    assert len(plan.window_terms) == 6
    assert 0 < saturated < 6  # both branches were checked
    assert len(plan.starts) > 10


def test_an_unknown_objective_is_refused_by_name():
    ep = finished_episode([("low", Priority.LOW, 90.0, 1.0, 0)], 10.0)
    with pytest.raises(ValueError, match="objective"):
        hindsight_bound(ep, budget_kw=np.full(3, 100.0), objective="profit")


def test_losses_far_above_the_scale_still_give_a_plan():
    # Two CRITICAL jobs of which only one fits: rejecting the other loses 0.5·480 = 240 = 24·V in window 0, so
    # the window's term is far below −1 whatever the plan. The plan still runs one of them.
    ep = finished_episode([("a", Priority.CRITICAL, 60.0, 1.0, 0), ("b", Priority.CRITICAL, 60.0, 1.0, 0)], 10.0)
    score = hindsight_bound(ep, budget_kw=np.full(3, 100.0), objective="score")
    assert len(score.starts) == 1
    assert score.window_terms[0] == pytest.approx(1.0 - 2.0 * 240.0 / 10.0)


def test_with_no_job_worth_running_the_score_plan_is_empty_and_books_the_rejections():
    ep = finished_episode([("late", Priority.CRITICAL, 50.0, 3.0, 0)], 10.0)  # 3 h cannot finish in its window
    score = hindsight_bound(ep, budget_kw=np.full(3, 100.0), objective="score")
    assert score.starts == {} and score.window_terms == []
    assert score.plan_value == pytest.approx(-0.5 * 8 * 50.0 * 3.0)


def test_in_game_version_0_a_job_due_after_the_horizon_counts_its_rejection_in_the_score_plan():
    # Version 0's value bound books a job due after the horizon at 0 when it never starts, so it runs the LOW job
    # (90 kW × 4.5 h = 405) over the HIGH one (4 · 20 kW × 4.5 h = 360); only one fits 90 kW. But the plan
    # follower rejects what it does not run, which costs 0.3 · 360 = 108 for the HIGH job and nothing for the
    # LOW one, so the score plan (V far above: linear) runs the HIGH job: 360 against 405 − 108 = 297.
    ep = finished_episode([("high", Priority.HIGH, 20.0, 4.5, 9), ("low", Priority.LOW, 90.0, 4.5, 9)], 1e7,
                          game_version=0)
    budget = np.full(3, 90.0)
    assert hindsight_bound(ep, budget_kw=budget).starts == {"low": 0}
    assert hindsight_bound(ep, budget_kw=budget, objective="score").starts == {"high": 0}
