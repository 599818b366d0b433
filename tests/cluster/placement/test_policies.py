"""Heuristics, the linear policy and the exact optimum on canonical and generated scenarios."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest

from dcops.cluster.placement.actions import Defer, Place
from dcops.cluster.placement.generator import generate_scenario
from dcops.cluster.placement.heuristics import HEURISTICS, AlwaysDefer
from dcops.cluster.placement.linear import CONFIG_FILE, LinearPolicy, load_weights
from dcops.cluster.placement.optimum import OptimalPolicy, OptimumSolver, optimal_value
from dcops.cluster.placement.policies import HEURISTIC_NAMES, policy_factories
from dcops.cluster.placement.policy import PlacementPolicy, run_episode
from dcops.cluster.placement.scenarios import (
    A100,
    CANONICAL,
    CANONICAL_WINNERS,
    H100,
    L4,
    GpuSpec,
    JobSpec,
    Scenario,
)
from dcops.cluster.placement.sim import PlacementSim


def heuristic_rewards(scenario: Scenario) -> dict[str, float]:
    return {cls().name: run_episode(scenario, cls()).total_reward for cls in HEURISTICS}


@pytest.mark.parametrize("name", list(CANONICAL))
def test_each_canonical_scenario_is_won_outright_by_its_designated_heuristic(name):
    rewards = heuristic_rewards(CANONICAL[name])
    winner = CANONICAL_WINNERS[name]
    others = [r for k, r in rewards.items() if k != winner]
    assert rewards[winner] > max(others) + 1.0, rewards


def test_no_single_heuristic_wins_two_canonical_scenarios():
    assert sorted(CANONICAL_WINNERS.values()) == sorted(HEURISTIC_NAMES)


def test_wait_for_capacity_really_rewards_deferring_the_first_tick():
    scenario = CANONICAL["wait_for_capacity"]
    sim = PlacementSim(scenario)
    assert sim.feasible(), "something could start at tick 0"
    _, plan = OptimumSolver(scenario).solve()
    assert isinstance(plan[0], Defer)
    first = run_episode(scenario, HEURISTICS[3]()).history[0]
    assert first.action == "defer" and first.tick == 0  # cheapest waits too
    for cls in HEURISTICS[:3]:  # the work-conserving ones start J1 at once
        assert run_episode(scenario, cls()).history[0].action == "place"


def test_reserve_large_gpu_is_lost_by_whoever_puts_a_small_job_on_the_h100():
    scenario = CANONICAL["reserve_large_gpu"]
    for cls in HEURISTICS:
        result = run_episode(scenario, cls())
        small_on_h100 = any(h.gpu_id == "h100-0" and h.tick < 2 for h in result.history if h.action == "place")
        assert small_on_h100 == (result.policy in ("fifo", "edf"))
        assert (result.metrics.missed > 0) == (result.policy != "best_fit")


def test_deadline_crunch_winner_pays_more_than_the_cheaper_losers():
    scenario = CANONICAL["deadline_crunch"]
    results = {cls().name: run_episode(scenario, cls()) for cls in HEURISTICS}
    assert results["edf"].metrics.missed == 0
    assert results["edf"].metrics.total_cost > max(r.metrics.total_cost for k, r in results.items() if k != "edf")


@pytest.mark.parametrize("scenario", [*CANONICAL.values(), *(generate_scenario(s) for s in range(12))], ids=lambda s: s.name)
def test_the_optimum_is_at_least_as_good_as_every_policy(scenario):
    best = optimal_value(scenario)
    played = run_episode(scenario, OptimalPolicy(scenario)).total_reward
    assert played == pytest.approx(best)
    for name, factory in policy_factories().items():
        assert run_episode(scenario, factory(scenario)).total_reward <= best + 1e-9, name


@pytest.mark.parametrize("scenario", [*CANONICAL.values(), *(generate_scenario(s) for s in range(30))], ids=lambda s: s.name)
def test_heuristics_and_the_linear_policy_make_no_invalid_action(scenario):
    for policy in (*(cls() for cls in HEURISTICS), LinearPolicy()):
        assert run_episode(scenario, policy).metrics.invalid == 0, policy.name


def _brute_force(sim: PlacementSim) -> float:
    """Best total reward from ``sim``'s state by trying every valid action sequence."""
    if sim.done:
        return 0.0
    best = float("-inf")
    for action in [*(Place(p.job_id, p.gpu_id) for p in sim.feasible()), Defer()]:
        child = copy.deepcopy(sim)
        reward = child.step(action).reward
        best = max(best, reward + _brute_force(child))
    return best


def _tiny(seed: int) -> Scenario:
    rng = np.random.default_rng(seed)
    gpus = (GpuSpec("l4-0", L4), GpuSpec("a100-0", A100, int(rng.integers(0, 2))), GpuSpec("h100-0", H100))
    jobs = []
    for i in range(3):
        arrival = int(rng.integers(0, 2))
        jobs.append(
            JobSpec(f"J{i}", int(rng.choice([16, 30, 60])), int(rng.integers(1, 5)), int(rng.integers(arrival + 1, 6)),
                    int(rng.integers(0, 4)), arrival)
        )
    return Scenario(f"tiny_{seed}", 5, gpus, tuple(jobs))


@pytest.mark.parametrize("seed", range(4))
def test_the_dp_optimum_equals_exhaustive_search_on_tiny_scenarios(seed):
    scenario = _tiny(seed)
    assert optimal_value(scenario) == pytest.approx(_brute_force(PlacementSim(scenario)))


def test_the_optimal_policy_recovers_from_a_bad_start_and_q_values_measure_the_regret():
    scenario = CANONICAL["reserve_large_gpu"]
    solver = OptimumSolver(scenario)
    start = solver.initial_state()
    bad = Place("J1", "h100-0")  # holds the H100 until tick 3: J4 (deadline 4) cannot start in time
    assert solver.q_value(start, bad) < solver.value(start) - 10
    assert solver.q_value(start, solver.best_action(start)) == pytest.approx(solver.value(start))
    assert solver.q_value(start, Place("J9", "l4-0")) == pytest.approx(solver.q_value(start, Defer()) - 5.0)
    sim = PlacementSim(scenario)
    total = sim.step(bad).reward
    policy = OptimalPolicy(scenario)
    while not sim.done:
        total += sim.step(policy.act(sim.observation())).reward
    assert total == pytest.approx(solver.q_value(start, bad))


def test_every_builtin_policy_satisfies_the_protocol():
    for name, factory in policy_factories().items():
        policy = factory(CANONICAL["cost_pressure"])
        assert isinstance(policy, PlacementPolicy) and policy.name == name
    assert isinstance(AlwaysDefer(), PlacementPolicy)


def test_the_shipped_linear_weights_load_with_their_training_record():
    import json

    weights = load_weights()
    record = json.loads(CONFIG_FILE.read_text())
    assert np.allclose(record["weights"], weights)
    assert record["config"]["seed"] == 0 and record["command"] == "dcops train-placement"
    assert "1000000" in record["training_seeds"] and record["evaluation_seeds"].startswith("0..99")


def test_rationales_are_given_by_every_heuristic():
    obs = PlacementSim(CANONICAL["deadline_crunch"]).observation()
    for policy in itertools.chain((cls() for cls in HEURISTICS), [LinearPolicy()]):
        assert policy.act(obs).rationale


def test_the_exact_search_stays_small_on_every_evaluation_scenario():
    """The documented cost bound of the DP, counted in states (not timed)."""
    for scenario in [*CANONICAL.values(), *(generate_scenario(s) for s in range(100))]:
        solver = OptimumSolver(scenario)
        solver.value(solver.initial_state())
        assert solver.states_explored <= 10_000, scenario.name
