"""Scenario data, validation and the seeded generator."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dcops.cluster.placement.catalog import get_scenario
from dcops.cluster.placement.generator import GeneratorConfig, generate_scenario
from dcops.cluster.placement.heuristics import AlwaysDefer
from dcops.cluster.placement.optimum import optimal_value
from dcops.cluster.placement.policy import run_episode
from dcops.cluster.placement.scenarios import (
    CANONICAL,
    GPU_TYPES,
    Scenario,
    ScenarioError,
    run_ticks,
)


def test_the_four_canonical_scenarios_fit_the_issue_bounds_and_use_three_gpu_types():
    assert set(CANONICAL) == {"deadline_crunch", "cost_pressure", "wait_for_capacity", "reserve_large_gpu"}
    for scenario in CANONICAL.values():
        assert 6 <= len(scenario.jobs) <= 10
        assert 10 <= scenario.horizon <= 20
        assert {g.gpu_type for g in scenario.gpus} == set(GPU_TYPES)
        assert scenario.description


def test_gpu_types_differ_in_vram_speed_and_cost():
    for attr in ("vram_gb", "speed", "cost_per_tick"):
        assert len({getattr(t, attr) for t in GPU_TYPES}) == 3


def test_a_scenario_round_trips_through_json():
    for scenario in CANONICAL.values():
        again = Scenario.from_dict(json.loads(json.dumps(scenario.to_dict())))
        assert again == scenario


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: replace(s, horizon=0), "horizon"),
        (lambda s: replace(s, jobs=s.jobs + (s.jobs[0],)), "duplicate id"),
        (lambda s: replace(s, jobs=(replace(s.jobs[0], deadline=99),) + s.jobs[1:]), "deadline"),
        (lambda s: replace(s, jobs=(replace(s.jobs[0], vram_gb=200),) + s.jobs[1:]), "vram_gb"),
        (lambda s: replace(s, jobs=(replace(s.jobs[0], priority=7),) + s.jobs[1:]), "priority"),
        (lambda s: replace(s, jobs=(replace(s.jobs[0], arrival=12),) + s.jobs[1:]), "arrival"),
        (lambda s: replace(s, jobs=(replace(s.jobs[0], work=0),) + s.jobs[1:]), "work"),
    ],
)
def test_bad_scenario_data_is_rejected_with_the_field_named(change, field):
    with pytest.raises(ScenarioError, match=field):
        change(CANONICAL["deadline_crunch"]).validate()


def test_from_dict_names_a_missing_field():
    data = CANONICAL["cost_pressure"].to_dict()
    del data["horizon"]
    with pytest.raises(ScenarioError, match="horizon"):
        Scenario.from_dict(data)


def test_get_scenario_knows_canonical_and_generated_names_and_lists_them_otherwise():
    assert get_scenario("cost_pressure") is CANONICAL["cost_pressure"]
    assert get_scenario("generated_12") == generate_scenario(12)
    with pytest.raises(KeyError, match="deadline_crunch"):
        get_scenario("nope")


def test_the_same_seed_gives_the_same_scenario_and_different_seeds_differ():
    assert generate_scenario(5) == generate_scenario(5)
    assert len({generate_scenario(s).jobs for s in range(10)}) == 10


def test_generated_scenarios_stay_in_bounds_and_every_job_can_be_done_on_time():
    cfg = GeneratorConfig()
    for seed in range(60):
        s = generate_scenario(seed)
        assert cfg.min_jobs <= len(s.jobs) <= cfg.max_jobs
        assert cfg.min_horizon <= s.horizon <= cfg.max_horizon
        assert 3 <= len(s.gpus) <= cfg.max_gpus and {g.gpu_type for g in s.gpus} == set(GPU_TYPES)
        for j in s.jobs:
            fits = [g for g in s.gpus if g.gpu_type.vram_gb >= j.vram_gb]
            assert any(j.arrival + run_ticks(j.work, g.gpu_type.speed) <= j.deadline for g in fits)


def test_on_generated_scenarios_the_optimum_gains_over_doing_nothing():
    for seed in range(20):
        s = generate_scenario(seed)
        assert optimal_value(s) > run_episode(s, AlwaysDefer()).total_reward
