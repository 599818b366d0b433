"""The team posterior's inputs worked by hand from its module docstring (``oversight/posterior.py``): the honest
probability of each stated level, the stated-field and audit features of a small record (audit shares shrunk by
two pseudo-audits at the honest values), and the prior re-weighting of the probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.cluster.job_types import JOB_TYPES
from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Priority, Request
from dcops.oversight.calibrated import CERTAIN
from dcops.oversight.honest_model import honest_model
from dcops.oversight.posterior import (
    FEATURE_NAMES,
    LogisticModel,
    PublicRecord,
    TeamPosterior,
    honest_priority_probs,
)


def test_honest_stated_levels_are_the_true_levels_through_a_one_level_slip_held_at_the_ends():
    """P(stated j | type) = Σ_i P(true i) · S[i, j], where a true level slips one up or one down with the
    honest rate r each, and a slip past LOW or CRITICAL stays there."""
    r = honest_model().overstate_rate
    assert 0.0 < r < 0.25
    for job in JOB_TYPES:
        stated = [0.0] * 4
        for true_level, p in enumerate(job.priority_probs):
            stated[true_level] += p * (1.0 - 2.0 * r)
            stated[max(true_level - 1, 0)] += p * r
            stated[min(true_level + 1, 3)] += p * r
        assert honest_priority_probs()[job.name] == pytest.approx(tuple(stated), abs=1e-15)
        assert sum(honest_priority_probs()[job.name]) == pytest.approx(1.0)


def _request(rid: str, window: int, priority: Priority, deadline: int, duration_h: float, flexible: bool,
             description: str = "") -> Request:
    return Request(rid, "t", "hparam_sweep", description, 40.0, duration_h, 16, "A100", priority, deadline, flexible,
                   5.0, window)


def _features(record: PublicRecord) -> dict[str, float]:
    return dict(zip(FEATURE_NAMES, record.features("t").tolist(), strict=True))


def test_stated_features_of_a_small_record_by_hand():
    """Window 0, three requests (1.5 h windows):
    a: LOW, 3 h (2 windows: earliest window 1), deadline 5 → slack 4 windows, 2 per window of duration;
    b: HIGH, URGENT, 1.5 h (earliest window 0), deadline 0 → slack 0, none per window; inflexible;
    c: MEDIUM, 4 h (3 windows: earliest window 2), deadline 3 → slack 1, 1/3 per window of duration."""
    record = PublicRecord(["t"])
    reqs = [_request("a", 0, Priority.LOW, 5, 3.0, True), _request("b", 0, Priority.HIGH, 0, 1.5, False, "URGENT"),
            _request("c", 0, Priority.MEDIUM, 3, 4.0, True)]
    record.begin_window(0, reqs, [])
    f = _features(record)
    assert f["requests_log"] == pytest.approx(math.log(4.0)) and f["requests_per_window"] == 3.0
    assert (f["share_low"], f["share_medium"], f["share_high"], f["share_critical"]) == pytest.approx(
        (1 / 3, 1 / 3, 1 / 3, 0.0))
    assert (f["urgent_share"], f["flexible_share"]) == pytest.approx((1 / 3, 2 / 3))
    assert f["slack_mean_windows"] == pytest.approx((4 + 0 + 1) / 3)
    assert f["slack_per_duration"] == pytest.approx((4 / 2 + 0 / 1 + 1 / 3) / 3)
    assert f["zero_slack_share"] == pytest.approx(1 / 3)
    honest = honest_priority_probs()["hparam_sweep"]  # HIGH is above the sweep's highest true level (MEDIUM)
    surprisals = [-math.log(max(honest[level], 1e-3)) for level in (0, 2, 1)]
    assert f["priority_surprisal_mean"] == pytest.approx(sum(surprisals) / 3)
    assert f["priority_surprisal_max"] == pytest.approx(max(surprisals))
    assert f["above_type_range_share"] == pytest.approx(1 / 3)
    t = honest_model().types["hparam_sweep"]
    excess = (0 - t.priority_mean) + (2 - t.priority_mean) + (1 - t.priority_mean)
    assert f["priority_excess_mean"] == pytest.approx(excess / 3)
    assert f["priority_excess_z"] == pytest.approx(excess / math.sqrt(3 * t.priority_var))
    tight = sum(slack - t.slack_mean - t.slack_offsets[0] for slack in (4, 0, 1))
    assert f["slack_tight_mean"] == pytest.approx(tight / 3)
    assert f["slack_tight_z"] == pytest.approx(-tight / math.sqrt(3 * t.slack_var))
    q = t.inflexible_prob
    assert f["inflexible_excess_mean"] == pytest.approx((1 - 3 * q) / 3)
    assert f["inflexible_z"] == pytest.approx((1 - 3 * q) / math.sqrt(3 * q * (1 - q)))


def test_one_request_already_gives_a_carbon_z():
    """Without the monitor's minimum counts: one inflexible request is (1 − q)/√(q(1 − q))."""
    record = PublicRecord(["t"])
    record.begin_window(0, [_request("a", 0, Priority.LOW, 5, 3.0, False)], [])
    q = honest_model().types["hparam_sweep"].inflexible_prob
    assert q * (1 - q) < 1.0
    f = _features(record)
    assert f["inflexible_z"] == pytest.approx((1 - q) / math.sqrt(q * (1 - q)))
    low = honest_priority_probs()["hparam_sweep"][0]  # the sweep's common level: surprisal under 1
    assert f["priority_surprisal_max"] == pytest.approx(-math.log(low)) and -math.log(low) < 1.0


def test_a_team_with_no_requests_yet_has_finite_features_at_the_honest_values():
    record = PublicRecord(["t", "quiet"])
    record.begin_window(0, [_request("a", 0, Priority.LOW, 5, 3.0, True)], [])
    f = dict(zip(FEATURE_NAMES, record.features("quiet").tolist(), strict=True))
    assert all(math.isfinite(v) for v in f.values())
    assert f["requests_log"] == 0.0 and f["slack_tight_z"] == 0.0 and f["inflexible_z"] == 0.0
    assert f["share_low"] == f["share_critical"] == f["zero_slack_share"] == 0.0
    assert f["priority_surprisal_mean"] == f["priority_surprisal_max"] == 0.0  # no statement, no surprise
    for kind in ("priority", "deadline", "carbon", "pattern"):  # no evidence, and none so far
        assert f[f"z_{kind}"] == f[f"z_max_{kind}"] == 0.0
    assert f["audit_overstated_share"] == pytest.approx(0.05)  # two pseudo-audits at the honest 5 %


def test_slack_counts_from_the_submission_window_and_a_deadline_before_the_earliest_is_no_slack():
    """Window 2, 1.5 h windows: a: 3 h (2 windows: earliest window 3), deadline 7 → slack 4 windows, 2 per window
    of duration; b: 4 h (3 windows: earliest window 4), deadline 3 → slack −1, −1/3 per window of duration, and
    no stated slack as much as a slack of 0 is."""
    record = PublicRecord(["t"])
    record.begin_window(0, [], [])
    record.begin_window(1, [], [])
    record.begin_window(2, [_request("a", 2, Priority.LOW, 7, 3.0, True), _request("b", 2, Priority.LOW, 3, 4.0, True)],
                        [])
    f = _features(record)
    assert f["requests_per_window"] == pytest.approx(2 / 3)
    assert f["slack_mean_windows"] == pytest.approx((4 - 1) / 2)
    assert f["slack_per_duration"] == pytest.approx((4 / 2 - 1 / 3) / 2)
    assert f["zero_slack_share"] == 0.5


def test_audit_features_are_shrunk_toward_the_honest_values_by_two_pseudo_audits():
    """Window 1 sees window 0's three audits. a: stated CRITICAL, truly LOW (three above), the real deadline
    three windows later, truly flexible (stated so), ran 2 h of a stated 3 h; b: stated HIGH, truly LOW (two
    above), two windows later, truly flexible but stated inflexible, ran 1.5 h; c: stated MEDIUM, truly LOW (one
    above), a window later, not flexible, true runtime 8 h (it never ran: realised 0 h)."""
    reqs = [_request("a", 0, Priority.CRITICAL, 5, 3.0, True), _request("b", 0, Priority.HIGH, 3, 1.5, False),
            _request("c", 0, Priority.MEDIUM, 4, 4.0, True)]
    audits = [AuditRecord(reqs[0], 2.0, 8, True, 0, True, Priority.LOW, 2.0),
              AuditRecord(reqs[1], 1.5, 5, True, 0, True, Priority.LOW, 1.5),
              AuditRecord(reqs[2], 0.0, 5, False, 0, False, Priority.LOW, 8.0)]
    record = PublicRecord(["t"])
    record.begin_window(0, reqs, [])
    record.begin_window(1, [], audits)
    f = _features(record)
    a = 2.0
    assert f["audits_log"] == pytest.approx(math.log(4.0)) and f["requests_per_window"] == 1.5
    assert f["audit_overstated_share"] == pytest.approx((3 + a * 0.05) / (3 + a))
    assert f["audit_overstated_by_2_share"] == pytest.approx(2 / (3 + a))
    assert f["audit_priority_excess_mean"] == pytest.approx((3 + 2 + 1) / (3 + a))
    assert f["audit_deadline_later_share"] == pytest.approx((3 + a * 0.15) / (3 + a))
    assert f["audit_deadline_gap_mean"] == pytest.approx((3 + 2 + 1) / (3 + a))
    assert f["audit_hidden_flexibility_share"] == pytest.approx((1 + a * 0.08) / (2 + a))
    assert f["audit_runtime_log_ratio_mean"] == pytest.approx(
        (math.log(3.0 / 2.0) + math.log(1.5 / 1.5) + math.log(4.0 / 8.0)) / (3 + a))


def test_a_version_0_audit_uses_the_realised_runtime_and_names_no_priority():
    req, idle = _request("a", 0, Priority.HIGH, 5, 3.0, True), _request("b", 0, Priority.LOW, 5, 3.0, True)
    record = PublicRecord(["t"])
    assert record.window == -1
    with pytest.raises(RuntimeError, match="begin_window"):
        record.features("t")
    record.begin_window(0, [req, idle], [])
    record.begin_window(1, [], [AuditRecord(req, 1.5, 5, True, 0, True), AuditRecord(idle, 0.0, 5, True, 0, False)])
    f = _features(record)
    # the job that never ran counts its runtime at the 1e-3 h floor
    assert f["audit_runtime_log_ratio_mean"] == pytest.approx((math.log(3.0 / 1.5) + math.log(3.0 / 1e-3)) / 4.0)
    assert f["audit_overstated_share"] == pytest.approx(0.05)  # no priority audit: the honest value
    # both truly flexible and stated so: no hidden flexibility, the share is the two pseudo-audits' alone
    assert f["audit_hidden_flexibility_share"] == pytest.approx(2 * 0.08 / (2 + 2))


def test_stated_durations_under_an_hour_and_of_zero_hours_in_the_runtime_ratio():
    """log(stated duration / true runtime) takes the stated duration as stated down to the 1e-3 h floor: 0.5 h
    stated that truly ran 1 h is log(0.5); 0 h stated that truly ran 1.5 h counts at the floor, log(1e-3 / 1.5)."""
    half, zero = _request("a", 0, Priority.LOW, 5, 0.5, True), _request("b", 0, Priority.LOW, 5, 0.0, True)
    record = PublicRecord(["t"])
    record.begin_window(0, [half, zero], [])
    record.begin_window(1, [], [AuditRecord(half, 1.0, 5, True, 0, True, Priority.LOW, 1.0),
                                AuditRecord(zero, 1.5, 5, True, 0, True, Priority.LOW, 1.5)])
    f = _features(record)
    assert f["audit_runtime_log_ratio_mean"] == pytest.approx((math.log(0.5) + math.log(1e-3 / 1.5)) / (2 + 2))


def test_detector_strengths_and_their_running_maxima():
    """The monitor features are the shadow monitor's strengths at this window and their maxima so far: a burst of
    CRITICAL sweeps in window 0 raises the priority strength, which falls back once they leave the scope while
    its maximum stays."""
    record = PublicRecord(["t"])
    record.begin_window(0, [_request(f"r{i}", 0, Priority.CRITICAL, 9, 1.5, True) for i in range(4)], [])
    first = _features(record)["z_priority"]
    assert first > 3.0 and _features(record)["z_max_priority"] == first
    for w in (1, 2, 3):
        record.begin_window(w, [], [])
    f = _features(record)
    assert f["z_priority"] == 0.0 and f["z_max_priority"] == first


def test_windows_must_increase():
    record = PublicRecord(["t"])
    record.begin_window(2, [], [])
    for window in (2, 1, 0):
        with pytest.raises(ValueError, match="windows must increase"):
            record.begin_window(window, [], [])
    record.begin_window(4, [], [])
    assert record.window == 4


def test_an_audit_that_finds_the_statement_true_counts_as_neither_overstated_nor_later():
    """An audit equal to the statement (priority, deadline and flexibility as stated): excess 0 and gap 0 count
    for no share, so each share is its honest value carried by the two pseudo-audits alone, a·h / (1 + a)."""
    req = _request("a", 0, Priority.MEDIUM, 5, 3.0, True)
    record = PublicRecord(["t"])
    record.begin_window(0, [req], [])
    record.begin_window(1, [], [AuditRecord(req, 3.0, 5, True, 0, True, Priority.MEDIUM, 3.0)])
    f = _features(record)
    a = 2.0
    assert f["audit_overstated_share"] == pytest.approx(a * 0.05 / (1 + a))
    assert f["audit_deadline_later_share"] == pytest.approx(a * 0.15 / (1 + a))
    assert f["audit_priority_excess_mean"] == 0.0 and f["audit_deadline_gap_mean"] == 0.0


def test_a_team_known_only_by_its_audits_keeps_its_running_maxima_and_is_scored():
    """A record begun at window 1 holds an audit of a request it never saw, stated two levels above the truth: the
    team's priority strength is certain evidence, its maximum over the windows so far is at least that, and the
    team is scored beside the teams named at reset."""
    req = _request("a", 0, Priority.HIGH, 5, 3.0, True)
    record = PublicRecord(["u"])
    record.begin_window(1, [], [AuditRecord(req, 3.0, 5, True, 0, True, Priority.LOW, 3.0)])
    f = _features(record)
    assert f["z_priority"] == CERTAIN and f["z_max_priority"] == CERTAIN
    assert record.team_ids == ["u", "t"] and set(TeamPosterior.load().probabilities(record)) == {"u", "t"}


@pytest.mark.parametrize("length", [2, 4])
def test_weights_of_another_length_than_the_features_are_refused(length: int):
    """One mean, scale and coefficient per feature: a shorter or a longer array is an error, not a silent
    broadcast or truncation."""
    names = ("requests_log", "urgent_share", "flexible_share")
    good = {"mean": [0.0, 0.1, 0.2], "scale": [1.0, 2.0, 3.0], "coef": [0.5, -0.5, 1.0], "intercept": 0.25}
    assert LogisticModel.from_dict(names, good).feature_names == names
    for key in ("mean", "scale", "coef"):
        with pytest.raises(ValueError, match="do not match"):
            LogisticModel.from_dict(names, {**good, key: [1.0] * length})


def test_the_logistic_model_and_the_window_it_uses():
    """P = σ(b + Σ β (x − m)/s) with the shipped weights, evaluated by hand; windows past the last trained index
    use the last model."""
    posterior = TeamPosterior.load()
    model = posterior.models[0]
    x = np.linspace(-1.0, 2.0, len(model.feature_names))
    expected = model.intercept + float(np.sum(model.coef * (x - model.mean) / model.scale))
    assert float(model.logit(x)) == pytest.approx(expected, rel=1e-12)
    assert posterior.model_for(10_000) is posterior.models[-1] and posterior.model_for(0) is posterior.models[0]
    assert len(posterior.models) >= 2


def test_another_prior_scales_the_posterior_odds_by_the_ratio_of_prior_odds():
    posterior = TeamPosterior.load()
    record = PublicRecord(["t", "u"])
    record.begin_window(0, [_request("a", 0, Priority.CRITICAL, 0, 1.5, False, "URGENT"),
                            _request("b", 0, Priority.LOW, 6, 1.5, True)], [])
    base = posterior.probabilities(record)
    assert posterior.probabilities(record, prior=posterior.training_prior) == pytest.approx(base, rel=1e-12)
    p0, prior = posterior.training_prior, 0.1
    shifted = posterior.probabilities(record, prior=prior)
    odds = lambda p: p / (1.0 - p)  # noqa: E731
    for team in ("t", "u"):
        assert odds(shifted[team]) / odds(base[team]) == pytest.approx(odds(prior) / odds(p0), rel=1e-9)


def test_one_request_already_gives_a_slack_z_against_the_tightest_honest_habit():
    """A hotfix retrain (honest slack variance 0.32 per request, under 1) stating 2 windows of slack:
    z = −(2 − μ − offset_tight) / √σ²."""
    t = honest_model().types["hotfix_retrain"]
    assert t.slack_var < 1.0
    req = Request("h", "t", "hotfix_retrain", "", 40.0, 1.5, 16, "A100", Priority.HIGH, 2, True, 5.0, 0)
    record = PublicRecord(["t"])
    record.begin_window(0, [req], [])
    tight = 2.0 - t.slack_mean - t.slack_offsets[0]
    f = _features(record)
    assert f["slack_tight_mean"] == pytest.approx(tight)
    assert f["slack_tight_z"] == pytest.approx(-tight / math.sqrt(t.slack_var))
