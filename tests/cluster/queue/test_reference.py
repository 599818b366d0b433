"""The near-optimal reference: optimal where optimality can be checked, deterministic, feasible, never worse."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import dcops
from dcops.cluster.queue.benchmark import build_heuristics, run_orlib, run_streaming
from dcops.cluster.queue.dynasearch import (
    BusyMachineProblem,
    SearchSettings,
    _apply,
    _interval_moves,
    iterated_dynasearch,
    repair,
    sequence_cost,
)
from dcops.cluster.queue.heuristics import make_rule
from dcops.cluster.queue.jobs import Instance, StreamConfig, static_instance, streaming_instance
from dcops.cluster.queue.list_search import decode, list_cost
from dcops.cluster.queue.orlib import read_orlib
from dcops.cluster.queue.reference import (
    REFERENCE_NAME,
    PriorityListPolicy,
    ReferenceConfig,
    busy_periods,
    reference_schedule,
)
from dcops.cluster.queue.simulator import simulate, weighted_tardiness

ORLIB = Path(dcops.__file__).parent.parent / "shared" / "data" / "orlib-wt"
HEURISTICS = build_heuristics(atc_k=0.75, covert_k=5.0)
# Tiny instances are searched on a small budget; the OR-Library check uses the benchmark's default.
SMALL = ReferenceConfig(iterations=40, patience=20)


def tiny_stream(seed: int, n_machines: int, n_jobs: int = 7) -> Instance:
    """A congested seven-job stream (about 20 s between arrivals per machine, jobs of 5-60 s, tight dues)."""
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.uniform(0.0, 20.0 * n_jobs / n_machines, n_jobs))
    arrival[0] = 0.0
    processing_s = rng.uniform(5.0, 60.0, n_jobs)
    weight = rng.choice([1.0, 2.0, 4.0, 8.0], n_jobs)
    due_s = arrival + rng.uniform(1.0, 2.5, n_jobs) * processing_s
    return Instance(arrival, processing_s, weight, due_s, n_machines=n_machines, name=f"tiny-{seed}")


def brute_force_static(instance: Instance) -> float:
    """Optimal total weighted tardiness of a static one-machine instance over all n! sequences."""
    perms = np.array(list(itertools.permutations(range(instance.n_jobs))))
    completion = np.cumsum(instance.processing_s[perms], axis=1)
    tardiness = np.maximum(completion - instance.due_s[perms], 0.0)
    return float(np.min(np.sum(instance.weight[perms] * tardiness, axis=1)))


def brute_force_lists(instance: Instance) -> float:
    """Best simulator score over every priority list, i.e. over every schedule the simulator can produce.

    Lists are decoded by the fast decoder (equal to the simulator, see the test below); the best one is
    re-scored by the simulator itself.
    """
    perms = [np.array(perm) for perm in itertools.permutations(range(instance.n_jobs))]
    best = min(perms, key=lambda perm: list_cost(instance, perm))
    return simulate(instance, PriorityListPolicy(best)).weighted_tardiness


def assert_feasible(instance: Instance, schedule) -> None:
    """Every job starts after its arrival, runs for its processing time, and machines never overlap."""
    assert np.all(schedule.start_s >= instance.arrival_s)
    assert np.allclose(schedule.completion_s - schedule.start_s, instance.processing_s)
    for m in range(instance.n_machines):
        jobs = np.flatnonzero(schedule.machine == m)
        jobs = jobs[np.argsort(schedule.start_s[jobs])]
        assert np.all(schedule.start_s[jobs[1:]] >= schedule.completion_s[jobs[:-1]])


def test_dynasearch_move_costs_match_the_recomputed_sequences():
    # Every swap and insertion predicted by the dynamic programme's tables, checked against a full
    # re-evaluation, on a busy period whose arrivals make some moves infeasible (cost inf).
    rng = np.random.default_rng(7)
    n = 18
    p = rng.uniform(5.0, 60.0, n)
    release = np.concatenate(([0.0], np.cumsum(p)[:-1])) * rng.uniform(0.0, 1.0, n) ** 0.3
    problem = BusyMachineProblem(
        p, rng.choice([1.0, 2.0, 4.0, 8.0], n), release + rng.uniform(0, 90, n), release
    )
    sequence = repair(problem, rng.permutation(n))
    base = sequence_cost(problem, sequence)
    assert np.isfinite(base)
    for max_distance in (n - 1, 5):
        delta, _ = _interval_moves(problem, sequence, max_distance)
        for i in range(n):
            for j in range(i + 1, min(n, i + max_distance + 1)):
                costs = []
                for kind in range(3):
                    moved = sequence.copy()
                    _apply(moved, i, j, kind)
                    costs.append(sequence_cost(problem, moved) - base)
                assert delta[i, j] == pytest.approx(min(costs), abs=1e-6), (i, j)


def test_a_realised_order_read_as_a_priority_list_reproduces_its_schedule():
    # The reason a reference started from a heuristic's order can never be worse than that heuristic.
    for n_machines in (1, 3):
        instance = streaming_instance(11, StreamConfig(n_jobs=80, n_machines=n_machines))
        atc = simulate(instance, make_rule("atc", 0.75))
        replay = simulate(instance, PriorityListPolicy(atc.order))
        assert np.array_equal(replay.order, atc.order)
        assert replay.weighted_tardiness == atc.weighted_tardiness


def test_fast_list_decoder_matches_the_simulator_on_several_machines():
    rng = np.random.default_rng(3)
    for n_machines in (1, 2, 4):
        instance = streaming_instance(5, StreamConfig(n_jobs=60, n_machines=n_machines))
        for _ in range(3):
            priority = rng.permutation(instance.n_jobs)
            schedule = simulate(instance, PriorityListPolicy(priority))
            assert np.array_equal(decode(instance, priority), schedule.completion_s)


def test_busy_periods_partition_the_jobs_and_start_at_an_arrival():
    instance = streaming_instance(1_000_000)
    schedule = simulate(instance, make_rule("fifo"))
    periods = busy_periods(schedule)
    assert np.array_equal(np.sort(np.concatenate(periods)), np.arange(instance.n_jobs))
    for jobs in periods:
        assert schedule.start_s[jobs[0]] == instance.arrival_s[jobs[0]]
        assert np.array_equal(schedule.start_s[jobs[1:]], schedule.completion_s[jobs[:-1]])


@pytest.mark.parametrize("seed", [1, 5, 7, 8])
def test_reference_matches_brute_force_on_eight_job_static_instances(seed):
    # Seeds where no heuristic is optimal, so the search has work to do.
    instance = static_instance(seed, n_jobs=8)
    optimum = brute_force_static(instance)
    assert min(simulate(instance, h).weighted_tardiness for h in HEURISTICS) > optimum + 1e-6
    result = reference_schedule(instance, HEURISTICS, SMALL)
    assert result.weighted_tardiness == pytest.approx(optimum, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("n_machines, seed", [(1, 2), (1, 14), (2, 10), (2, 14), (2, 21)])
def test_reference_matches_brute_force_over_priority_lists_on_tiny_streams(n_machines, seed):
    # Seven jobs with arrivals, one machine (busy periods + dynasearch) and two (list search); seeds where
    # no heuristic is optimal.
    instance = tiny_stream(seed, n_machines)
    optimum = brute_force_lists(instance)
    assert min(simulate(instance, h).weighted_tardiness for h in HEURISTICS) > optimum + 1e-6
    result = reference_schedule(instance, HEURISTICS, SMALL)
    assert result.weighted_tardiness == pytest.approx(optimum, rel=1e-9, abs=1e-9)


def test_reference_reaches_the_proven_optimum_on_orlib_instances():
    if not ORLIB.exists():
        pytest.skip(f"OR-Library data not found at {ORLIB}")
    data = read_orlib(40, ORLIB)
    for index in (1, 3, 4):  # optima 1225, 2094, 990, none reached by a heuristic
        assert (
            min(simulate(data.instances[index], h).weighted_tardiness for h in HEURISTICS)
            > data.optimum[index]
        )
        result = reference_schedule(data.instances[index], HEURISTICS)
        assert result.weighted_tardiness == data.optimum[index]


def test_reference_is_deterministic():
    instance = streaming_instance(1_000_001, StreamConfig(n_jobs=60))
    first = reference_schedule(instance, HEURISTICS, SMALL)
    second = reference_schedule(instance, HEURISTICS, SMALL)
    assert np.array_equal(first.priority, second.priority)
    assert first.weighted_tardiness == second.weighted_tardiness
    assert first.kicks == second.kicks > 0


@pytest.mark.parametrize("n_machines", [1, 2])
def test_reference_is_feasible_and_never_worse_than_the_best_heuristic_on_streams(n_machines):
    config = ReferenceConfig(iterations=10, patience=5, max_list_evaluations=1_000)
    improved = 0
    for seed in (1_000_000, 1_000_002):
        instance = streaming_instance(seed, StreamConfig(n_jobs=80, n_machines=n_machines))
        result = reference_schedule(instance, HEURISTICS, config)
        best = min(simulate(instance, h).weighted_tardiness for h in HEURISTICS)
        assert result.weighted_tardiness <= best
        assert result.start_weighted_tardiness == best
        # The returned list, re-scored by the simulator, is the schedule and the score reported.
        replay = simulate(instance, PriorityListPolicy(result.priority))
        assert np.array_equal(replay.completion_s, result.schedule.completion_s)
        assert replay.weighted_tardiness == result.weighted_tardiness
        assert weighted_tardiness(instance, replay.completion_s) == pytest.approx(result.weighted_tardiness)
        assert_feasible(instance, replay)
        improved += result.weighted_tardiness < best
    assert improved >= 1  # the search finds something better than every heuristic on 80-job scenarios


def test_iterated_dynasearch_never_returns_worse_than_its_start():
    instance = static_instance(9, n_jobs=30)
    problem = BusyMachineProblem(instance.processing_s, instance.weight, instance.due_s, instance.arrival_s)
    start = np.arange(30)
    outcome = iterated_dynasearch(problem, start, SearchSettings(iterations=5), np.random.default_rng(0))
    assert outcome.cost <= sequence_cost(problem, start) == outcome.initial_cost
    assert sorted(outcome.sequence) == list(range(30))


def test_streaming_benchmark_reports_the_gap_to_the_reference():
    policies = [make_rule("fifo"), make_rule("wspt"), make_rule("atc", 1.0)]
    config = StreamConfig(n_jobs=60)
    result = run_streaming(policies, [500_000, 500_001], config, reference=ReferenceConfig(iterations=5))
    ref = result.reference
    assert ref is not None and ref.name == REFERENCE_NAME
    assert np.all(ref.values <= np.minimum.reduce([result.values[p.name] for p in policies]))
    for row in result.summary:
        assert row.gap_to_reference == pytest.approx(row.mean / ref.mean - 1)
        assert row.gap_to_reference >= 0
    assert any(d.b == REFERENCE_NAME for d in result.paired)


def test_orlib_benchmark_adds_the_reference_row(tmp_path):
    # Two eight-job instances in the OR-Library file format, with their brute-force optima.
    numbers = []
    for seed in (21, 22):
        inst = static_instance(seed, n_jobs=8)
        numbers += [max(1, round(x)) for x in (*inst.processing_s, *inst.weight)]
        numbers += [round(x) for x in inst.due_s]
    (tmp_path / "wt8.txt").write_text(" ".join(map(str, numbers)))
    (tmp_path / "wtopt8.txt").write_text("0\n0\n")  # placeholder to read the integer data back
    optima = [brute_force_static(inst) for inst in read_orlib(8, tmp_path).instances]
    (tmp_path / "wtopt8.txt").write_text("\n".join(f"{v:.0f}" for v in optima))
    policies = [make_rule("edd"), make_rule("wspt")]
    rows = run_orlib(policies, tmp_path, sizes=(8,), reference=ReferenceConfig())
    assert [r.policy for r in rows] == ["EDD", "WSPT", REFERENCE_NAME]
    ref = rows[-1]
    assert ref.n_optimal == ref.n_instances == 2 and ref.summed_gap == pytest.approx(0.0)
