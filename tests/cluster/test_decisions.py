"""Scheduler decisions: one per pending request, invalid entries counted and reported, never raised."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.cluster.decisions import (
    DecisionKind,
    SlotDecisions,
    max_entries,
    resolve_array,
    resolve_structured,
)

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



def test_decision_codes_other_than_0_1_2_are_malformed_and_never_raise():
    """``decision`` is a name or 0/1/2 (ACCEPT, REJECT, DEFER); any other integer is a malformed entry."""
    entries = [{"request_id": "r0001", "decision": -1}, {"request_id": "r0002", "decision": np.int64(-1)},
               {"request_id": "r0003", "decision": 3}]
    batch = resolve_structured(entries, PENDING, window=0, n_windows=8)
    assert len(batch.report.malformed) == 3 and batch.report.undecided == PENDING
    assert all(d.kind is DecisionKind.DEFER and d.defer_to_window == 1 for d in batch.decisions.values())
    batch = resolve_structured([{"request_id": "r0001", "decision": np.int64(2), "defer_to_window": np.int64(5)}],
                               ["r0001"], window=0, n_windows=8)
    assert batch.report.count == 0 and batch.decisions["r0001"].defer_to_window == 5


def test_a_mapping_is_read_under_decisions_and_any_other_key_beside_it_is_one_malformed_entry():
    entries = [{"request_id": "r0001", "decision": "ACCEPT"}]
    clean = resolve_structured({"decisions": entries}, PENDING, window=0, n_windows=8)
    assert clean.report.malformed == [] and clean.decisions["r0001"].kind is DecisionKind.ACCEPT
    assert clean.report.count == 2  # the two other requests are undecided
    for stranger in ("actions", "window"):  # a key that sorts before "decisions", and one after
        batch = resolve_structured({stranger: [], "decisions": entries}, PENDING, window=0, n_windows=8)
        assert len(batch.report.malformed) == 1 and stranger in batch.report.malformed[0], stranger
        assert batch.decisions["r0001"].kind is DecisionKind.ACCEPT  # the decisions are still read
        assert batch.report.count == 3


def test_decisions_that_are_not_a_list_are_one_malformed_entry_and_every_request_is_undecided():
    for entries in ("ACCEPT", b"ACCEPT", 42, {"decisions": "r0001"}):
        batch = resolve_structured(entries, PENDING, window=0, n_windows=8)
        assert len(batch.report.malformed) == 1, entries
        assert batch.report.undecided == PENDING and batch.report.count == 4, entries


def test_at_most_16_per_pending_request_plus_1024_entries_are_read():
    """Past ``16 · pending + 1024`` entries the rest are not read (one malformed entry says so); below it every
    entry counts. Here every entry after the first is a duplicate, so the counts show how many were read."""
    assert (max_entries(0), max_entries(3)) == (1024, 16 * 3 + 1024)
    limit = max_entries(len(PENDING))
    entry = {"request_id": "r0001", "decision": "ACCEPT"}
    full = resolve_structured([entry] * limit, PENDING, window=0, n_windows=8)
    assert full.report.malformed == [] and len(full.report.duplicates) == limit - 1
    over = resolve_structured([entry] * (limit + 1), PENDING, window=0, n_windows=8)
    assert len(over.report.malformed) == 1 and len(over.report.duplicates) == limit - 1
    assert over.decisions["r0001"].kind is DecisionKind.ACCEPT
    pulled = itertools.count()
    endless = (entry for _ in pulled)  # never ends: only what is read is pulled from it
    batch = resolve_structured(endless, PENDING, window=0, n_windows=8)
    assert len(batch.report.malformed) == 1 and len(batch.report.duplicates) == limit - 1
    assert next(pulled) <= limit + 1  # the first ``limit`` and the one that shows there are more


class _Unreadable:
    """An object NumPy cannot turn into an array (its ``__array__`` refuses)."""

    def __array__(self, dtype=None, copy=None):
        raise TypeError("not an array")


def test_an_array_action_numpy_cannot_read_is_one_malformed_entry_not_an_error():
    for action in ([[0, 1], [2]], _Unreadable()):  # ragged (ValueError in NumPy), refused (TypeError)
        batch = resolve_array(action, PENDING, [], window=0, n_windows=8, max_slots=3, max_defer=4)
        assert len(batch.report.malformed) == 1 and batch.report.undecided == PENDING, action
        assert batch.report.count == 1 + len(PENDING)


def test_a_malformed_array_leaves_the_overflow_requests_unpenalised():
    """Overflow requests (beyond the slots) are not the agent's fault, even when the array itself is malformed:
    they get the default and are listed as overflow, not as undecided."""
    batch = resolve_array([0, 0, 0], ["r0001", "r0002"], ["r0003"], window=0, n_windows=8, max_slots=2,
                          max_defer=4)
    assert batch.report.overflow == ["r0003"] and batch.report.undecided == ["r0001", "r0002"]
    assert batch.report.count == 1 + 2
    assert batch.decisions["r0003"].kind is DecisionKind.DEFER and batch.decisions["r0003"].defer_to_window == 1

json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.sampled_from(
        ["request_id", "decision", "defer_to_window", "x"]), children, max_size=4),
    max_leaves=12,
)
STRANGERS = ["r0004", "r9999", "", "R0001"]
N_WINDOWS = 8

# Entries mostly about the pending ids (so most examples make real decisions), with strangers, duplicates, bad
# windows, odd spellings and junk mixed in.
good_entry = st.one_of(
    st.fixed_dictionaries({"request_id": st.sampled_from(PENDING),
                           "decision": st.sampled_from(["ACCEPT", "REJECT", "accept", " reject ", 0, 1])}),
    st.fixed_dictionaries({"request_id": st.sampled_from(PENDING), "decision": st.sampled_from(["DEFER", 2]),
                           "defer_to_window": st.integers(1, N_WINDOWS - 1)}),
)
decision_entry = st.fixed_dictionaries(
    {"request_id": st.sampled_from(PENDING + STRANGERS),
     "decision": st.sampled_from(["ACCEPT", "DEFER", " Defer ", 2, 3, True, "MAYBE", None, 1.0])},
    optional={"defer_to_window": st.integers(-1, N_WINDOWS + 1) | st.sampled_from([None, True, 4.0, "5"])},
)
structured_entries = st.lists(st.one_of(good_entry, good_entry, decision_entry, json_like), min_size=1, max_size=10)


def expected_structured(entries: list, window: int) -> tuple[dict, dict]:
    """The module docstring's rules, applied entry by entry: (decision by id, report lists)."""
    chosen: dict[str, tuple[DecisionKind, int | None]] = {}
    report = {"duplicates": [], "unknown_ids": [], "bad_defer": [], "malformed": 0}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("request_id"), str) or not entry["request_id"]:
            report["malformed"] += 1
            continue
        rid, raw, target = entry["request_id"], entry.get("decision"), entry.get("defer_to_window")
        if isinstance(raw, str) and raw.strip().upper() in ("ACCEPT", "REJECT", "DEFER"):
            kind = DecisionKind[raw.strip().upper()]
        elif type(raw) is int and 0 <= raw <= 2:
            kind = DecisionKind(raw)
        else:
            report["malformed"] += 1
            continue
        if kind is DecisionKind.DEFER and type(target) is not int:
            report["malformed"] += 1
            continue
        if rid not in PENDING:
            report["unknown_ids"].append(rid)
        elif rid in chosen or rid in report["bad_defer"]:
            report["duplicates"].append(rid)
        elif kind is DecisionKind.DEFER and not window < target < N_WINDOWS:
            report["bad_defer"].append(rid)
        else:
            chosen[rid] = (kind, target if kind is DecisionKind.DEFER else None)
    default = (DecisionKind.DEFER, window + 1) if window + 1 < N_WINDOWS else (DecisionKind.REJECT, None)
    decisions = {rid: chosen.get(rid, default) for rid in PENDING}
    report["undecided"] = [rid for rid in PENDING if rid not in chosen and rid not in report["bad_defer"]]
    return decisions, report


@settings(max_examples=200, deadline=None)
@given(structured_entries, st.integers(0, N_WINDOWS - 1))
def test_any_structured_input_resolves_by_the_documented_rules(entries, window):
    batch = resolve_structured(entries, PENDING, window=window, n_windows=N_WINDOWS)
    decisions, report = expected_structured(entries, window)
    assert {rid: (d.kind, d.defer_to_window) for rid, d in batch.decisions.items()} == decisions
    assert list(batch.decisions) == PENDING
    assert batch.report.duplicates == report["duplicates"]
    assert batch.report.unknown_ids == report["unknown_ids"]
    assert batch.report.bad_defer == report["bad_defer"]
    assert batch.report.undecided == report["undecided"]
    assert len(batch.report.malformed) == report["malformed"]
    assert batch.report.count == (len(report["duplicates"]) + len(report["unknown_ids"]) + len(report["bad_defer"])
                                  + report["malformed"] + len(report["undecided"]))
    assert batch.defaulted == [rid for rid in PENDING if rid in report["undecided"] or rid in report["bad_defer"]]


MAX_SLOTS, MAX_DEFER = 6, 4
array_codes = st.one_of(
    st.lists(st.integers(0, MAX_DEFER + 1), min_size=MAX_SLOTS, max_size=MAX_SLOTS),  # in the action space
    st.lists(st.integers(-1, MAX_DEFER + 2) | st.floats(allow_nan=True, allow_infinity=True, width=32)
             | st.sampled_from([0.0, 1.0, 2.5]), min_size=MAX_SLOTS, max_size=MAX_SLOTS),
    st.lists(st.integers(0, MAX_DEFER + 1), max_size=MAX_SLOTS + 2),  # often the wrong length
)


@settings(max_examples=200, deadline=None)
@given(array_codes, st.integers(0, N_WINDOWS - 1))
def test_any_array_input_resolves_by_the_documented_codes(codes, window):
    batch = resolve_array(codes, PENDING, [], window=window, n_windows=N_WINDOWS, max_slots=MAX_SLOTS,
                          max_defer=MAX_DEFER)
    default = (DecisionKind.DEFER, window + 1) if window + 1 < N_WINDOWS else (DecisionKind.REJECT, None)
    got = {rid: (d.kind, d.defer_to_window) for rid, d in batch.decisions.items()}
    assert list(got) == PENDING
    if len(codes) != MAX_SLOTS:  # the wrong shape: one malformed entry, every request undecided, defaults
        assert len(batch.report.malformed) == 1 and batch.report.undecided == PENDING
        assert got == dict.fromkeys(PENDING, default) and batch.report.count == 1 + len(PENDING)
        return
    expected, malformed, bad_defer = {}, 0, []
    for rid, code in zip(PENDING, codes, strict=False):  # slots past the pending ids are padding
        if not math.isfinite(code) or code != int(code) or not 0 <= code <= MAX_DEFER + 1:
            expected[rid], malformed = default, malformed + 1
        elif code == 0:
            expected[rid] = (DecisionKind.ACCEPT, None)
        elif code == 1:
            expected[rid] = (DecisionKind.REJECT, None)
        elif window + int(code) - 1 < N_WINDOWS:  # 1 + k = DEFER by k windows
            expected[rid] = (DecisionKind.DEFER, window + int(code) - 1)
        else:
            expected[rid] = default
            bad_defer.append(rid)
    assert got == expected
    assert len(batch.report.malformed) == malformed and batch.report.bad_defer == bad_defer
    assert batch.report.undecided == [] and batch.report.count == malformed + len(bad_defer)


def share_deciding(strategy, resolve) -> float:
    """Share of a fixed (derandomised) sample of ``strategy`` whose resolution decides a pending request."""
    hits: list[bool] = []

    @settings(max_examples=100, deadline=None, database=None, derandomize=True)
    @given(strategy)
    def sample(value):
        hits.append(len(resolve(value).defaulted) < len(PENDING))

    sample()
    return sum(hits) / len(hits)


def test_the_property_strategies_mostly_make_real_decisions():
    """The properties above are only worth something if their examples decide pending requests."""
    assert share_deciding(structured_entries, lambda e: resolve_structured(e, PENDING, 2, N_WINDOWS)) > 0.6
    assert share_deciding(array_codes, lambda c: resolve_array(c, PENDING, [], 2, N_WINDOWS, MAX_SLOTS,
                                                               MAX_DEFER)) > 0.5


def test_a_flat_mask_draws_every_allowed_code_uniformly_and_the_smallest_where_none_is_allowed():
    from scipy import stats

    space = SlotDecisions(np.full(3, 4))
    space.seed(1)
    mask = np.array([0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1], dtype=np.int8)  # slot 1 allows nothing
    draws = np.array([space.sample(mask) for _ in range(3000)])
    assert set(draws[:, 0]) == {1, 2, 3} and set(draws[:, 1]) == {0} and set(draws[:, 2]) == {0, 3}
    counts = np.bincount(draws[:, 0], minlength=4)[1:]
    assert stats.chisquare(counts).pvalue > 1e-3  # uniform over the three allowed codes
    again = SlotDecisions(np.full(3, 4))
    again.seed(1)
    assert (np.array([again.sample(mask) for _ in range(3000)]) == draws).all()  # seeded: the same draws


def test_a_flat_mask_draw_is_the_largest_of_uniform_draws_over_the_allowed_codes():
    """The documented draw, recomputed from the space's own seeded generator (Gymnasium seeds it with
    ``np.random.default_rng(seed)``): one uniform draw per code, the disallowed ones set below every draw."""
    space = SlotDecisions(np.full(4, 3))
    mask = np.array([1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0], dtype=np.int8)
    space.seed(3)
    got = [space.sample(mask) for _ in range(5)]
    rng = np.random.default_rng(3)
    for codes in got:
        draws = rng.random((4, 3))
        draws[mask.reshape(4, 3) == 0] = -1.0
        expected = draws.argmax(axis=1)
        expected[3] = 0  # no code allowed: the smallest
        assert list(codes) == list(expected)


def test_a_flat_mask_counts_from_the_space_start_and_works_for_one_slot():
    space = SlotDecisions(np.full(2, 3), start=np.array([10, 20]))
    space.seed(0)
    assert {tuple(space.sample(np.array([0, 0, 1, 0, 1, 0], dtype=np.int8))) for _ in range(20)} == {(12, 21)}
    single = SlotDecisions(np.array([4]))
    single.seed(0)
    assert {int(single.sample(np.array([0, 1, 0, 1], dtype=np.int8))[0]) for _ in range(50)} == {1, 3}


@pytest.mark.parametrize("nvec", [[2, 3, 3], [3, 3, 2], [3, 2, 3]])
def test_unequal_dimensions_split_the_flat_mask_per_dimension(nvec):
    space = SlotDecisions(np.array(nvec))
    space.seed(0)
    mask = np.concatenate([np.eye(n, dtype=np.int8)[-1] for n in nvec])  # only each dimension's last code
    assert all(list(space.sample(mask)) == [n - 1 for n in nvec] for _ in range(10))


def test_a_flat_mask_must_be_int8_zeros_and_ones_and_not_come_with_a_probability():
    space = SlotDecisions(np.full(2, 2))
    mask = np.array([1, 0, 0, 1], dtype=np.int8)
    for wrong in (mask.astype(bool), mask.astype(np.int64), mask * 3):
        with pytest.raises(ValueError, match="mask: int8 zeros and ones"):
            space.sample(wrong)
    with pytest.raises(ValueError, match="Only one of"):  # Gymnasium's rule: a mask or a probability, not both
        space.sample(mask, probability=tuple(np.full((2, 2), 0.5)))


def test_an_array_code_past_the_last_defer_is_malformed():
    """Codes are 0 ACCEPT, 1 REJECT and 1 + k DEFER by k ≤ max_defer: 2 + max_defer is outside the space."""
    for code, malformed in ((5, 0), (6, 1)):
        batch = resolve_array(np.array([code, 1, 1]), PENDING, [], window=0, n_windows=8, max_slots=3, max_defer=4)
        assert len(batch.report.malformed) == malformed, code
