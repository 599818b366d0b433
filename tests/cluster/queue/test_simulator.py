"""Seeded generators and the event-driven simulator: determinism, load, non-delay, accounting."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.cluster.queue.heuristics import make_rule
from dcops.cluster.queue.jobs import Instance, StreamConfig, static_instance, streaming_instance
from dcops.cluster.queue.seeds import held_out_seeds, tuning_seeds, validation_seeds
from dcops.cluster.queue.simulator import accrued_weighted_tardiness, simulate, weighted_tardiness


def test_same_seed_gives_the_same_instance_and_the_same_schedule():
    a, b = streaming_instance(42), streaming_instance(42)
    for name in ("arrival_s", "processing_s", "weight", "due_s", "family"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    rule = make_rule("atc", 1.0)
    assert np.array_equal(simulate(a, rule).order, simulate(b, rule).order)
    assert simulate(a, rule).weighted_tardiness == simulate(b, rule).weighted_tardiness


def test_different_seeds_give_different_instances():
    assert not np.array_equal(streaming_instance(1).processing_s, streaming_instance(2).processing_s)


def test_streaming_generator_hits_the_target_load_and_image_median():
    config = StreamConfig(n_jobs=20_000)
    inst = streaming_instance(3, config)
    utilisation = inst.processing_s.sum() / inst.arrival_s[-1]
    assert utilisation == pytest.approx(0.85, rel=0.05)
    images = inst.processing_s[inst.family == 0]
    assert np.median(images) == pytest.approx(25.0, rel=0.05)
    assert np.mean(inst.family == 1) == pytest.approx(0.2, abs=0.02)
    assert set(np.unique(inst.weight)) == {1.0, 2.0, 4.0, 8.0}
    slack = (inst.due_s - inst.arrival_s) / inst.processing_s
    assert slack.min() >= 1.5 and slack.max() <= 6.0


def test_arrival_rate_scales_with_the_number_of_machines():
    assert StreamConfig(n_machines=3).arrival_rate_per_s() == pytest.approx(
        3 * StreamConfig().arrival_rate_per_s()
    )


def test_static_instances_release_every_job_at_time_zero():
    inst = static_instance(5, n_jobs=30)
    assert inst.n_jobs == 30 and np.all(inst.arrival_s == 0) and np.all(inst.due_s >= 0)


@pytest.mark.parametrize("machines", [1, 3])
def test_schedule_is_feasible_and_non_delay(machines):
    inst = streaming_instance(11, StreamConfig(n_jobs=150, n_machines=machines))
    s = simulate(inst, make_rule("wmdd"))
    assert sorted(s.order.tolist()) == list(range(inst.n_jobs))
    assert np.all(s.start_s >= inst.arrival_s - 1e-9)
    assert np.allclose(s.completion_s, s.start_s + inst.processing_s)
    waiting_from, waiting_to = inst.arrival_s, s.start_s
    for m in range(machines):
        jobs = np.flatnonzero(s.machine == m)
        jobs = jobs[np.argsort(s.start_s[jobs])]
        assert np.all(s.start_s[jobs][1:] >= s.completion_s[jobs][:-1] - 1e-9)  # no overlap
        # Non-delay: no idle gap of this machine overlaps a time when some job was waiting.
        idle_from = np.concatenate([[0.0], s.completion_s[jobs][:-1]])
        idle_to = s.start_s[jobs]
        for a, b in zip(idle_from, idle_to, strict=True):
            if b - a > 1e-9:
                overlap = np.minimum(waiting_to, b) - np.maximum(waiting_from, a)
                assert np.all(overlap <= 1e-9)


def test_more_machines_never_increase_fifo_tardiness_on_the_same_jobs():
    one = streaming_instance(8)
    two = Instance(one.arrival_s, one.processing_s, one.weight, one.due_s, one.family, n_machines=2)
    rule = make_rule("fifo")
    assert simulate(two, rule).weighted_tardiness <= simulate(one, rule).weighted_tardiness


def test_accrued_tardiness_over_consecutive_intervals_sums_to_the_total():
    inst = streaming_instance(9)
    s = simulate(inst, make_rule("edd"))
    cuts = [-np.inf, *np.linspace(0, s.completion_s.max(), 17), np.inf]
    pieces = [
        accrued_weighted_tardiness(inst, s.completion_s, a, b)
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    assert sum(pieces) == pytest.approx(weighted_tardiness(inst, s.completion_s), rel=1e-9)


def test_policy_returning_nan_is_reported_not_silently_used():
    class Broken:
        name = "broken"

        def scores(self, state):
            return np.full(state.n_waiting, np.nan)

    with pytest.raises(ValueError, match="NaN"):
        simulate(static_instance(1, n_jobs=5), Broken())


def test_seed_ranges_are_disjoint_and_test_seeds_are_300_from_one_million():
    test = set(held_out_seeds())
    assert len(test) == 300 and min(test) == 1_000_000
    assert not test & set(tuning_seeds(1000)) and not test & set(validation_seeds(1000))
    assert not set(tuning_seeds(1000)) & set(validation_seeds(1000))


def test_instance_rejects_unsorted_arrivals_and_non_positive_processing_times():
    with pytest.raises(ValueError, match="sorted"):
        Instance(np.array([1.0, 0.0]), np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="processing_s"):
        Instance(np.zeros(2), np.array([1.0, 0.0]), np.ones(2), np.ones(2))
