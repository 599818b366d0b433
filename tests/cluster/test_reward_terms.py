"""Each term of the reward by the formulas and the table of its module docstring (``dcops.cluster.reward``), one
function at a time: the documented constants, the four outcome scores, the thermal, carbon and invalid terms, and
the booking of job scores into a window's gains and losses. Fast on purpose: these come first in the reward's
mutation tests (``.mutation/reward.toml``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcops.cluster.requests import Priority, RequestTruth
from dcops.cluster.reward import (
    DELAY_FLOOR,
    DELAY_LOSS_PER_WINDOW,
    INVALID_PENALTY,
    MISS_COST,
    PRIORITY_WEIGHT,
    REJECT_COST,
    SOFT_INLET_C,
    SOFT_THERMAL_WEIGHT,
    W_CARBON,
    W_THERMAL,
    W_THROUGHPUT,
    WindowScore,
    bounded_ratio,
    carbon_term,
    invalid_term,
    job_value,
    missed_score,
    on_time_score,
    rejected_score,
    thermal_term,
    unfinished_score,
)


def test_documented_weights_costs_and_thresholds_are_the_module_constants():
    assert (W_THROUGHPUT, W_THERMAL, W_CARBON, INVALID_PENALTY) == (0.50, 0.35, 0.15, 0.10)
    assert PRIORITY_WEIGHT == {Priority.LOW: 1, Priority.MEDIUM: 2, Priority.HIGH: 4, Priority.CRITICAL: 8}
    assert REJECT_COST == {Priority.LOW: 0, Priority.MEDIUM: 0.1, Priority.HIGH: 0.3, Priority.CRITICAL: 0.5}
    assert (MISS_COST, DELAY_LOSS_PER_WINDOW, DELAY_FLOOR) == (0.5, 0.1, 0.5)
    assert (SOFT_INLET_C, SOFT_THERMAL_WEIGHT) == (27.0, 0.5)


RHO = {Priority.LOW: 0.0, Priority.MEDIUM: 0.1, Priority.HIGH: 0.3, Priority.CRITICAL: 0.5}


@pytest.mark.parametrize(("priority", "weight"), [(Priority.LOW, 1), (Priority.MEDIUM, 2), (Priority.HIGH, 4),
                                                  (Priority.CRITICAL, 8)])
def test_job_value_and_the_outcome_scores_follow_the_table(priority, weight):
    """v = W·kW·h; on time +v·d, missed −0.5·v, rejected −ρ·v, unfinished +v·d·f (d = 0.9: inflexible, one
    window waited; f = 0.25)."""
    truth = RequestTruth(priority, true_deadline_window=5, true_carbon_flexible=False, true_runtime_h=3.0)
    v = job_value(truth, 40.0)
    assert v == pytest.approx(weight * 40.0 * 3.0)
    assert on_time_score(v, truth, start_window=2, submitted_window=1) == pytest.approx(0.9 * v)
    assert missed_score(v) == pytest.approx(-0.5 * v)
    assert rejected_score(v, truth) == pytest.approx(-RHO[priority] * v)
    for version in (0, 1):
        assert unfinished_score(v, truth, 2, 1, 0.25, game_version=version) == pytest.approx(0.9 * v * 0.25)
        assert unfinished_score(v, truth, 2, 1, 1.0, game_version=version) == pytest.approx(0.9 * v)


@pytest.mark.parametrize("priority", list(Priority))
def test_an_unfinished_job_that_never_started_scores_0_in_version_0_and_a_rejection_from_version_1(priority):
    truth = RequestTruth(priority, 9, True, 2.0)
    v = job_value(truth, 25.0)
    for start_window, fraction_done in [(None, 0.0), (3, 0.0)]:  # not started, or started with nothing done
        assert unfinished_score(v, truth, start_window, 1, fraction_done, game_version=0) == 0.0
        assert unfinished_score(v, truth, start_window, 1, fraction_done, game_version=1) == pytest.approx(
            -RHO[priority] * v)
    # one that ran a little scores the work done in both versions (flexible: d = 1)
    for version in (0, 1):
        assert unfinished_score(v, truth, 3, 1, 0.1, game_version=version) == pytest.approx(0.1 * v)


def test_thermal_term_is_minus_1_in_an_incident_else_minus_half_the_share_above_27c():
    assert thermal_term(True, 0.0) == -1.0
    assert thermal_term(True, 0.6) == -1.0
    assert thermal_term(False, 0.0) == 0.0
    assert thermal_term(False, 0.2) == pytest.approx(-0.1)
    assert thermal_term(False, 1.0) == pytest.approx(-0.5)


@given(st.booleans(), st.floats(-10, 10))
def test_thermal_term_stays_in_minus_one_to_zero(incident, soft_fraction):
    assert -1.0 <= thermal_term(incident, soft_fraction) <= 0.0


@given(st.floats(-1e6, 1e6), st.floats(0, 1e6))
def test_carbon_term_is_the_saved_share_inside_minus_one_to_one(saved, denominator):
    term = carbon_term(saved, denominator)
    assert -1.0 <= term <= 1.0
    if denominator == 0.0:
        assert term == 0.0  # nothing scored
    elif abs(saved) <= denominator:  # |B − A| ≤ max(A, B) job by job
        assert term == pytest.approx(saved / denominator)


def test_carbon_term_below_one_gram_is_still_the_ratio():
    assert carbon_term(0.5, 0.8) == pytest.approx(0.625)
    assert carbon_term(-0.2, 0.4) == pytest.approx(-0.5)


def test_invalid_penalty_is_a_tenth_of_the_invalid_share_of_pending_requests():
    assert invalid_term(0, 5) == 0.0
    assert invalid_term(1, 5) == pytest.approx(0.02)
    assert invalid_term(1, 1) == pytest.approx(0.10)
    assert invalid_term(7, 2) == pytest.approx(0.10)  # capped at the full penalty
    assert invalid_term(3, 0) == pytest.approx(0.10)  # nothing pending: N counts as 1


def test_bounded_ratio_is_net_value_over_the_larger_of_the_scale_and_the_gross_value():
    assert bounded_ratio(432.0, 40.0, 1658.0) == pytest.approx(392.0 / 1658.0)
    assert bounded_ratio(3000.0, 1000.0, 1658.0) == pytest.approx(0.5)
    assert bounded_ratio(0.2, 0.1, 0.5) == pytest.approx(0.2)  # any positive scale, below 1 too
    assert bounded_ratio(0.0, 0.0, 0.0) == 0.0  # nothing gained or lost is 0, even at a zero scale


def test_an_empty_window_scores_zero_on_every_term():
    score = WindowScore(window=4).finalise(1658.0)
    assert (score.throughput, score.thermal, score.carbon, score.invalid_penalty, score.reward) == (0, 0, 0, 0, 0)


def test_job_scores_are_booked_as_gains_and_losses_for_the_window_and_for_each_team():
    """G_w sums the positive scores, L_w the magnitudes of the negative ones; the team split sums the same."""
    score = WindowScore(window=3)
    for team, outcome, value in [("team_0", "on_time", 432.0), ("team_0", "missed", -40.0),
                                 ("team_1", "unfinished", 0.5), ("team_1", "rejected", -0.5),
                                 ("team_1", "rejected", -12.0), ("team_0", "rejected", 0.0)]:
        score.add_job_score(team, outcome, value)
    assert score.gain == pytest.approx(432.5) and score.loss == pytest.approx(52.5)
    assert score.team_gain == pytest.approx({"team_0": 432.0, "team_1": 0.5})
    assert score.team_loss == pytest.approx({"team_0": 40.0, "team_1": 12.5})
    assert score.outcomes == {"on_time": 1, "missed": 1, "rejected": 3, "unfinished": 1}
