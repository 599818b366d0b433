"""Scheduler decisions: one per pending request, invalid entries counted and reported, never raised."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.cluster.decisions import DecisionKind, resolve_array, resolve_structured

PENDING = ["r0001", "r0002", "r0003"]


def test_valid_structured_decisions_are_taken_as_given():
    batch = resolve_structured(
        [{"request_id": "r0001", "decision": "ACCEPT"}, {"request_id": "r0002", "decision": "reject"},
         {"request_id": "r0003", "decision": "DEFER", "defer_to_window": 4}], PENDING, window=2, n_windows=8)
    assert batch.report.count == 0
    assert [batch.decisions[r].kind for r in PENDING] == [DecisionKind.ACCEPT, DecisionKind.REJECT, DecisionKind.DEFER]
    assert batch.decisions["r0003"].defer_to_window == 4


def test_duplicate_ids_count_and_the_first_decision_wins():
    batch = resolve_structured([{"request_id": "r0001", "decision": "REJECT"}] + [{"request_id": "r0001", "decision": "ACCEPT"}] * 5,
                               PENDING, window=0, n_windows=8)
    assert batch.decisions["r0001"].kind is DecisionKind.REJECT
    assert batch.report.duplicates == ["r0001"] * 5


def test_unknown_ids_are_reported_not_dropped():
    batch = resolve_structured([{"request_id": "nonsense", "decision": "ACCEPT"}], PENDING, window=0, n_windows=8)
    assert batch.report.unknown_ids == ["nonsense"]
    assert batch.report.undecided == PENDING


def test_defer_to_the_past_the_present_or_past_the_horizon_is_invalid_and_gets_the_default():
    for target in (1, 3, 8, 99):
        batch = resolve_structured([{"request_id": "r0001", "decision": "DEFER", "defer_to_window": target}],
                                   ["r0001"], window=3, n_windows=8)
        assert batch.report.bad_defer == ["r0001"], target
        assert batch.report.undecided == []
        assert batch.decisions["r0001"].kind is DecisionKind.DEFER and batch.decisions["r0001"].defer_to_window == 4


def test_undecided_requests_are_deferred_to_the_next_window_or_rejected_in_the_last():
    middle = resolve_structured([], PENDING, window=5, n_windows=8)
    last = resolve_structured([], PENDING, window=7, n_windows=8)
    assert all(d.kind is DecisionKind.DEFER and d.defer_to_window == 6 for d in middle.decisions.values())
    assert all(d.kind is DecisionKind.REJECT for d in last.decisions.values())
    assert middle.report.undecided == PENDING and middle.report.count == 3


def test_malformed_entries_are_counted():
    batch = resolve_structured(["junk", 7, {"request_id": "r0001"}, {"request_id": "r0002", "decision": "DEFER"},
                                {"decision": "ACCEPT"}], PENDING, window=0, n_windows=8)
    assert len(batch.report.malformed) == 5
    assert len(batch.decisions) == 3


def test_array_codes_map_to_accept_reject_and_defer_by_k():
    action = np.zeros(6, dtype=np.int64)
    action[:3] = [0, 1, 3]
    batch = resolve_array(action, PENDING, [], window=2, n_windows=8, max_slots=6, max_defer=4)
    assert batch.report.count == 0
    assert batch.decisions["r0003"].kind is DecisionKind.DEFER and batch.decisions["r0003"].defer_to_window == 4


def test_array_defer_past_the_horizon_is_invalid():
    batch = resolve_array([5, 0, 0, 0], ["r0001"], [], window=6, n_windows=8, max_slots=4, max_defer=4)
    assert batch.report.bad_defer == ["r0001"]
    assert batch.decisions["r0001"].defer_to_window == 7


def test_array_of_the_wrong_shape_defaults_every_request_and_counts_them():
    batch = resolve_array([0, 0], PENDING, [], window=0, n_windows=8, max_slots=6, max_defer=4)
    assert len(batch.report.malformed) == 1 and batch.report.undecided == PENDING
    assert batch.report.count == 4


def test_overflow_requests_get_the_default_without_penalty():
    batch = resolve_array(np.zeros(2), ["r0001", "r0002"], ["r0003"], window=0, n_windows=8, max_slots=2, max_defer=4)
    assert batch.report.overflow == ["r0003"] and batch.report.count == 0
    assert batch.decisions["r0003"].kind is DecisionKind.DEFER


json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.sampled_from(
        ["request_id", "decision", "defer_to_window", "x"]), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(json_like, st.integers(0, 7))
def test_any_structured_input_resolves_to_exactly_one_decision_per_pending_request(entries, window):
    batch = resolve_structured(entries, PENDING, window=window, n_windows=8)
    assert sorted(batch.decisions) == PENDING
    for decision in batch.decisions.values():
        if decision.kind is DecisionKind.DEFER:
            assert window < decision.defer_to_window < 8


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=8), st.integers(0, 7))
def test_any_array_input_resolves_to_exactly_one_decision_per_pending_request(codes, window):
    batch = resolve_array(codes, PENDING, [], window=window, n_windows=8, max_slots=6, max_defer=4)
    assert sorted(batch.decisions) == PENDING
    assert batch.report.count >= 0
