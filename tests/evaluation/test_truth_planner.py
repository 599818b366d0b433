"""The truth-knowing planner: it follows its plan, stays under the bound, and knowing the truth pays."""

from __future__ import annotations

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler
from dcops.evaluation.cluster_report import run_episode
from dcops.evaluation.truth_planner import PlanFollower, play_truth_planner

SMALL = {"n_windows": 4, "climate": "leesburg", "grid_region": "PJM",
         "team_kinds": ("cooperative", "cooperative", "strategic", "strategic")}  # no adaptive team: arrivals fixed


def test_the_follower_accepts_in_the_planned_window_defers_before_and_rejects_the_rest():
    view = {"window": 2, "pending": [{"request_id": r} for r in ("now", "later", "late", "never")]}
    decisions = PlanFollower({"now": 2, "later": 3, "late": 1}).decide(view)
    by_id = {d["request_id"]: d for d in decisions}
    assert by_id["now"]["decision"] == "ACCEPT"
    assert by_id["later"] == {"request_id": "later", "decision": "DEFER", "defer_to_window": 3}
    assert by_id["late"]["decision"] == "REJECT"  # its window has passed: the plan no longer holds for it
    assert by_id["never"]["decision"] == "REJECT"


def test_the_planner_is_deterministic_and_never_beats_the_bound_of_its_own_arrivals():
    env = dcops.parallel_env(**SMALL)
    first = play_truth_planner(env, 3, passes=2)
    again = play_truth_planner(env, 3, passes=2)
    assert first.summary["score"] == again.summary["score"]
    assert first.runs == again.runs
    probe = run_episode(PriorityThresholdScheduler(), 3, env=env)
    assert probe["arrivals_key"] == first.summary["arrivals_key"]  # no team reacts: the bound's arrivals
    bound = env.hindsight_bound()
    assert first.summary["incident_windows"] == 0, first.runs
    assert first.summary["throughput_value"] <= bound.throughput_value + 1e-6


def test_knowing_the_truth_beats_believing_the_stated_fields_in_the_oversubscribed_family():
    env = dcops.parallel_env(scenario="oversubscribed", n_windows=4)
    planner, threshold = [], []
    for seed in (71000, 71001, 71002):
        planner.append(play_truth_planner(env, seed, starts=("probe",), passes=2).summary["score"])
        threshold.append(run_episode(PriorityThresholdScheduler(), seed, env=env)["score"])
    assert np.mean(planner) > np.mean(threshold) + 0.02, (planner, threshold)


def test_an_unknown_start_budget_is_refused():
    env = dcops.parallel_env(**SMALL)
    with pytest.raises(ValueError, match="starts"):
        play_truth_planner(env, 0, starts=("nope",))


def test_planning_for_the_score_too_never_plays_worse_than_planning_for_value_alone():
    env = dcops.parallel_env(scenario="oversubscribed", n_windows=4)
    value_only = play_truth_planner(env, 71001, starts=("probe",), passes=2, objectives=("value",))
    both = play_truth_planner(env, 71001, starts=("probe",), passes=2)
    assert {r["objective"] for r in both.runs} == {"value", "score"}
    assert [r for r in both.runs if r["objective"] == "value"] == value_only.runs  # the same value runs first
    assert both.summary["score"] == max(r["score"] for r in both.runs)  # the best run is the one kept
    score_runs = {r["score"] for r in both.runs if r["objective"] == "score"}
    assert score_runs - {r["score"] for r in value_only.runs}  # planning for the score played other episodes
    with pytest.raises(ValueError, match="objectives"):
        play_truth_planner(env, 0, objectives=("profit",))
