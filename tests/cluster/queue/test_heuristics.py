"""Dispatching rules on small cases checked by hand, and against brute-force optima."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dcops.cluster.queue.heuristics import (
    atc_log_index,
    covert_index,
    make_rule,
    wmdd_index,
)
from dcops.cluster.queue.jobs import Instance
from dcops.cluster.queue.simulator import QueueState, simulate


def static(p, w, d) -> Instance:
    return Instance(np.zeros(len(p)), np.asarray(p, float), np.asarray(w, float), np.asarray(d, float))


def state(p, w, d, now=0.0, arrival=None) -> QueueState:
    n = len(p)
    return QueueState(
        now_s=now,
        processing_s=np.asarray(p, float),
        weight=np.asarray(w, float),
        due_s=np.asarray(d, float),
        arrival_s=np.zeros(n) if arrival is None else np.asarray(arrival, float),
        job_index=np.arange(n),
        busy_remaining_s=np.zeros(0),
    )


def brute_force_optimum(instance: Instance) -> float:
    best = math.inf
    for order in itertools.permutations(range(instance.n_jobs)):
        finish = np.cumsum(instance.processing_s[list(order)])
        late = np.maximum(finish - instance.due_s[list(order)], 0)
        best = min(best, float(np.sum(instance.weight[list(order)] * late)))
    return best


def test_wspt_orders_by_weight_over_processing_time():
    # w/p = 0.1, 0.5, 0.8 -> run job 2, then 1, then 0.
    schedule = simulate(static([10, 2, 5], [1, 1, 4], [0, 0, 0]), make_rule("wspt"))
    assert schedule.order.tolist() == [2, 1, 0]


def test_spt_runs_shortest_first_and_edd_earliest_due_first():
    inst = static([5, 1, 3], [1, 1, 1], [4, 20, 2])
    assert simulate(inst, make_rule("spt")).order.tolist() == [1, 2, 0]
    assert simulate(inst, make_rule("edd")).order.tolist() == [2, 0, 1]


def test_fifo_runs_in_arrival_order_and_breaks_ties_by_position():
    inst = Instance(np.array([0.0, 0.0, 1.0]), np.array([5.0, 1.0, 1.0]), np.ones(3), np.zeros(3))
    assert simulate(inst, make_rule("fifo")).order.tolist() == [0, 1, 2]


def test_weighted_tardiness_of_a_hand_computed_sequence():
    # FIFO: C = 3, 5, 9; tardiness = max(0, 3-2)=1, max(0, 5-6)=0, max(0, 9-4)=5; WT = 2*1 + 1*0 + 3*5 = 17.
    schedule = simulate(static([3, 2, 4], [2, 1, 3], [2, 6, 4]), make_rule("fifo"))
    assert schedule.completion_s.tolist() == [3.0, 5.0, 9.0]
    assert schedule.weighted_tardiness == pytest.approx(17.0)


def test_atc_index_matches_the_formula_by_hand():
    # p_bar = 3; slack = max(0, d - p - t) = 8 and 0.
    s = state([2, 4], [1, 1], [10, 4])
    k = 2.0
    expected = [math.log(1 / 2) - 8 / (k * 3), math.log(1 / 4) - 0.0]
    assert atc_log_index(s, k) == pytest.approx(expected)
    # Small k: urgency wins (job 1, no slack); large k: ATC tends to WSPT (job 0).
    assert int(np.argmax(atc_log_index(s, 2.0))) == 1
    assert int(np.argmax(atc_log_index(s, 100.0))) == 0


def test_atc_equals_wspt_when_every_job_is_already_late():
    s = state([3, 7, 2, 5], [1, 8, 2, 4], [0, 1, 0, 2], now=10.0)
    assert np.argsort(-atc_log_index(s, 1.0)).tolist() == np.argsort(-(s.weight / s.processing_s)).tolist()


def test_atc_never_underflows_into_ties_for_large_slack():
    # exp(-slack / (k p_bar)) underflows to 0 for both jobs; the log index still prefers the higher w/p.
    s = state([1, 1], [1, 2], [1e6, 1e6])
    assert int(np.argmax(atc_log_index(s, 0.25))) == 1


def test_wmdd_uses_the_larger_of_processing_time_and_time_to_due():
    # max(p, d - t) / w: job 0 -> max(4, 10) / 2 = 5; job 1 -> max(6, 2) / 1 = 6 -> job 0 first.
    s = state([4, 6], [2, 1], [12, 4], now=2.0)
    assert (-wmdd_index(s)).tolist() == pytest.approx([5.0, 6.0])


def test_covert_priority_is_zero_when_slack_exceeds_k_processing_times():
    # job 0: slack 20 >= k p = 2 * 5 -> 0; job 1: slack 0 -> w / p = 0.5.
    s = state([5, 2], [1, 1], [25, 2])
    assert covert_index(s, 2.0).tolist() == pytest.approx([0.0, 0.5])


def test_wspt_is_optimal_when_every_due_date_is_zero():
    # Smith's rule: with d = 0 weighted tardiness is weighted completion time, minimised by WSPT.
    inst = static([4, 1, 3, 6, 2, 5], [2, 3, 1, 4, 1, 2], [0, 0, 0, 0, 0, 0])
    assert simulate(inst, make_rule("wspt")).weighted_tardiness == pytest.approx(brute_force_optimum(inst))


def test_edd_finds_a_zero_tardiness_schedule_when_one_exists():
    inst = static([2, 3, 1, 4], [5, 1, 2, 3], [5, 3, 10, 9])  # EDD: 1, 0, 3, 2 -> C = 3, 5, 9, 10
    assert brute_force_optimum(inst) == 0.0
    assert simulate(inst, make_rule("edd")).weighted_tardiness == 0.0


@pytest.mark.parametrize("rule", ["fifo", "spt", "edd", "wspt", "atc", "wmdd", "covert"])
def test_no_rule_beats_the_brute_force_optimum(rule):
    rng = np.random.default_rng(7)
    for _ in range(5):
        p = rng.integers(1, 10, size=6).astype(float)
        inst = static(p, rng.integers(1, 5, size=6), rng.uniform(0, p.sum(), size=6))
        assert simulate(inst, make_rule(rule)).weighted_tardiness >= brute_force_optimum(inst) - 1e-9


def test_make_rule_rejects_unknown_names_and_misplaced_parameters():
    with pytest.raises(ValueError, match="unknown rule"):
        make_rule("random")
    with pytest.raises(ValueError, match="takes no look-ahead"):
        make_rule("wspt", k=2.0)
    with pytest.raises(ValueError, match="k must be > 0"):
        make_rule("atc", k=0.0).scores(state([1, 2], [1, 1], [0, 0]))
