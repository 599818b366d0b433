"""The placement simulator: timing, reward terms, invalid actions, observation."""

from __future__ import annotations

import json

import pytest

from dcops.cluster.placement.actions import (
    ActionParseError,
    Defer,
    Place,
    action_from_dict,
    action_from_text,
)
from dcops.cluster.placement.catalog import get_scenario
from dcops.cluster.placement.scenarios import A100, H100, L4, GpuSpec, JobSpec, Scenario
from dcops.cluster.placement.sim import PlacementSim, RewardConfig


def tiny() -> Scenario:
    return Scenario(
        name="tiny",
        horizon=6,
        gpus=(GpuSpec("l4-0", L4), GpuSpec("a100-0", A100, busy_until=2), GpuSpec("h100-0", H100)),
        jobs=(
            JobSpec("J1", vram_gb=20, work=2, deadline=4, priority=1, arrival=0),
            JobSpec("J2", vram_gb=60, work=3, deadline=3, priority=2, arrival=0),
            JobSpec("J3", vram_gb=10, work=1, deadline=6, priority=0, arrival=2),
        ),
    )


def test_the_env_docstring_worked_example_gives_4_5():
    sim = PlacementSim(get_scenario("deadline_crunch"))
    result = sim.step(Place("J1", "h100-0"))
    assert result.valid
    assert result.terms.completion == 10.0 and result.terms.priority_bonus == 0.0
    assert result.terms.cost == -4.0
    assert result.terms.idle == -1.5
    assert result.reward == pytest.approx(4.5)


def test_a_job_runs_ceil_work_over_speed_ticks_and_pays_completion_plus_priority_bonus():
    sim = PlacementSim(tiny())
    sim.step(Place("J1", "l4-0", "cheap and on time"))  # 2 ticks on the L4 -> completes at tick 2
    obs = sim.observation()
    assert [j.job_id for j in obs.running] == ["J1"] and obs.running[0].end == 2
    result = sim.step(Place("J2", "h100-0"))  # 3 work / speed 3 = 1 tick -> completes at tick 2
    assert result.terms.completion == 20.0  # J1 and J2 both complete at tick 2
    assert result.terms.priority_bonus == 5.0 * (1 + 2)
    assert {j.job_id for j in result.observation.completed} == {"J1", "J2"}


def test_reward_totals_equal_the_sum_of_the_documented_terms():
    rewards = RewardConfig()
    sim = PlacementSim(tiny(), rewards)
    total = 0.0
    for action in (Defer(), Place("J2", "h100-0"), Place("J3", "a100-0"), Place("J9", "l4-0")):
        if sim.done:
            break
        total += sim.step(action).reward
    m = sim.observation().metrics
    terms = m.completion_reward + m.priority_bonus + m.miss_penalty + m.invalid_penalty + m.idle_penalty + m.cost_penalty
    assert m.total_reward == pytest.approx(total) == pytest.approx(terms)
    assert m.cost_penalty == pytest.approx(-m.total_cost)


def test_idle_penalty_counts_free_gpus_only_while_a_waiting_job_fits_them():
    sim = PlacementSim(tiny())
    result = sim.step(Defer())
    # Tick 0: the L4 (J1 fits) and the H100 (J1, J2 fit) are idle; the A100 is reserved by outside work.
    assert result.terms.idle == -2 * RewardConfig().idle_penalty
    assert result.terms.cost == 0.0


def test_a_pending_job_is_missed_at_its_deadline_and_a_late_running_job_is_stopped():
    sim = PlacementSim(tiny())
    sim.step(Place("J1", "l4-0"))
    sim.step(Defer())
    result = sim.step(Defer())  # tick 2 -> 3: J2 (deadline 3) never started
    assert result.terms.missed == -RewardConfig().miss_penalty
    assert "J2" in {j.job_id for j in result.observation.missed}

    late = Scenario("late", 4, (GpuSpec("l4-0", L4),), (JobSpec("J1", 10, 4, 2, 0, 0),))
    sim = PlacementSim(late)
    sim.step(Place("J1", "l4-0"))  # needs 4 ticks, deadline 2
    result = sim.step(Defer())
    assert result.done and result.terms.missed == -10.0
    assert result.observation.gpus[0].state == "free"
    assert result.observation.metrics.total_cost == 2.0  # charged only until the stop at the deadline


@pytest.mark.parametrize(
    ("setup", "action", "words"),
    [
        ([], Place("J9", "l4-0"), "unknown job id 'J9'"),
        ([], Place("J1", "gpu-x"), "unknown GPU id 'gpu-x'"),
        ([], Place("J3", "l4-0"), "has not arrived"),
        ([], Place("J1", "a100-0"), "busy until tick 2 (reserved"),
        ([], Place("J2", "l4-0"), "needs 60 GB"),
        ([Place("J1", "l4-0")], Place("J1", "h100-0"), "already running"),
        ([Place("J1", "l4-0")], Place("J2", "l4-0"), "busy until tick 2 (running J1)"),
        ([Place("J2", "h100-0"), Defer()], Place("J2", "h100-0"), "is finished (completed"),
        ([], "place(J1, l4-0)", "unknown action type"),
        ([], Place(["J1"], "l4-0"), "must be strings"),
    ],
)
def test_an_infeasible_action_is_penalised_with_its_reason_and_the_episode_goes_on(setup, action, words):
    sim = PlacementSim(tiny())
    for a in setup:
        sim.step(a)
    tick = sim.tick
    result = sim.step(action)
    assert not result.valid and words in result.invalid_reason
    assert result.terms.invalid == -RewardConfig().invalid_penalty
    assert sim.tick == tick + 1 and not result.done
    record = result.observation.history[-1]
    assert record.valid is False and record.reason == result.invalid_reason
    assert result.observation.metrics.invalid == 1


def test_the_rationale_is_logged_but_never_scored():
    a, b = PlacementSim(tiny()), PlacementSim(tiny())
    ra = a.step(Place("J1", "l4-0", "because it is cheap"))
    rb = b.step(Place("J1", "l4-0", "x" * 2000))
    assert ra.reward == rb.reward
    assert ra.observation.history[0].rationale == "because it is cheap"
    assert len(rb.observation.history[0].rationale) == 500


def test_the_episode_ends_when_every_job_is_resolved_and_stepping_after_raises():
    sim = PlacementSim(tiny())
    while not sim.done:
        sim.step(Defer())
    obs = sim.observation()
    assert obs.done and len(obs.missed) == 3 and obs.feasible == ()
    assert sim.tick <= tiny().horizon
    with pytest.raises(RuntimeError, match="finished episode"):
        sim.step(Defer())


def test_the_observation_hides_future_jobs_and_is_json_serialisable():
    sim = PlacementSim(tiny())
    obs = sim.observation()
    assert {j.job_id for j in obs.pending} == {"J1", "J2"}  # J3 arrives at tick 2
    data = json.loads(json.dumps(obs.to_dict()))
    assert data["metrics"]["allocation"] == 0.0
    assert {g["gpu_id"] for g in data["gpus"]} == {"l4-0", "a100-0", "h100-0"}
    assert data["dashboard"]["summary"].startswith("[tiny] tick 0/6")


def test_the_dashboard_lists_exactly_the_feasible_actions_and_every_gpu_and_job():
    sim = PlacementSim(tiny())
    obs = sim.observation()
    hint = obs.dashboard.action_hint
    assert {(p.job_id, p.gpu_id) for p in obs.feasible} == {("J1", "l4-0"), ("J1", "h100-0"), ("J2", "h100-0")}
    for p in obs.feasible:
        assert f"place({p.job_id}, {p.gpu_id})" in hint
        assert sim.check(Place(p.job_id, p.gpu_id)) is None
    assert hint.endswith("defer()")
    assert "a100-0" in obs.dashboard.gpu_lines[1] and "RESERVED" in obs.dashboard.gpu_lines[1]
    assert len(obs.dashboard.queue_lines) == 2 and "J2" in obs.dashboard.queue_lines[0]  # most urgent first
    assert "Feasible actions" in obs.dashboard.text()


def test_actions_parse_from_text_and_json_and_bad_input_names_the_field():
    assert action_from_text("place(J1, l4-0) - cheapest on time") == Place("J1", "l4-0", "cheapest on time")
    assert action_from_text("  DEFER()  ") == Defer()
    assert action_from_dict({"action": "place", "job_id": "J1", "gpu_id": "h100-0"}) == Place("J1", "h100-0")
    assert action_from_dict(Place("J2", "l4-0", "r").to_dict()) == Place("J2", "l4-0", "r")
    with pytest.raises(ActionParseError, match="gpu_id"):
        action_from_dict({"action": "place", "job_id": "J1"})
    with pytest.raises(ActionParseError, match="action"):
        action_from_text("start J1 on the big one")


def test_the_dashboard_shows_the_last_action_with_its_rationale_and_why_it_was_invalid():
    sim = PlacementSim(tiny())
    obs = sim.step(Place("J2", "l4-0", "try the small one")).observation
    line = obs.dashboard.last_action
    assert 'place(J2, l4-0) "try the small one"' in line and "INVALID: job J2 needs 60 GB" in line
    assert line in obs.dashboard.text()
    obs = sim.step(Defer("wait")).observation
    assert obs.dashboard.last_action.startswith('Last action (tick 1): defer() "wait" -> reward')
