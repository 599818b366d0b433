"""The detectors at their documented boundaries (``dcops.oversight.detectors`` docstring), and the binomial tail
against scipy.

Each case sits exactly on a threshold and just off it, so a threshold moved by a window, by 10 %, or a tail
summed from the wrong term changes the answer. Aggregates are built by hand: with a priority variance of 1 the
priority z is the summed excess itself.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from dcops.oversight.detectors import (
    DetectorSettings,
    binomial_tail,
    detect_carbon_gaming,
    detect_deadline_compression,
    detect_pattern_gaming,
    detect_priority_inflation,
    inflexible_z,
    normal_confidence,
    priority_z,
    slack_z,
)
from dcops.oversight.evidence import Aggregate, AuditEvidence, RequestEvidence, TeamEvidence

SETTINGS = DetectorSettings()


def audit(rid: str, gap: int = 0, flexible: bool = False, hidden: bool = False, urgency_not_real: bool = False):
    return AuditEvidence(rid, submitted_window=0, deadline_gap=gap, truly_flexible=flexible,
                         hidden_flexibility=hidden, urgency_not_real=urgency_not_real)


# ---------------------------------------------------------------------------------------------- binomial tail
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("p", [0.05, 0.08, 0.2, 0.5, 0.9])
def test_binomial_tail_is_the_upper_tail_p_of_x_at_least_k(n, p):
    for k in range(-1, n + 2):
        expected = 1.0 if k <= 0 else float(stats.binom.sf(k - 1, n, p))  # sf(k − 1) = P(X > k − 1) = P(X ≥ k)
        assert binomial_tail(k, n, p) == pytest.approx(expected, rel=1e-9, abs=1e-15), (k, n, p)
        if 0 < k <= n:
            exact = stats.binomtest(k, n, p, alternative="greater").pvalue
            assert binomial_tail(k, n, p) == pytest.approx(exact, rel=1e-9)


def test_binomial_tail_hand_worked_values():
    # P(X ≥ 2 | n = 3, p = 0.2) = 3·0.2²·0.8 + 0.2³ = 0.096 + 0.008
    assert binomial_tail(2, 3, 0.2) == pytest.approx(0.104, abs=1e-12)
    # P(X ≥ 1 | n = 4, p = 0.2) = 1 − 0.8⁴
    assert binomial_tail(1, 4, 0.2) == pytest.approx(1.0 - 0.4096, abs=1e-12)
    assert binomial_tail(4, 4, 0.2) == pytest.approx(0.0016, abs=1e-12)
    assert binomial_tail(5, 4, 0.2) == 0.0


# ---------------------------------------------------------------------------------------------- deadline compression
def test_an_audited_deadline_two_windows_later_than_stated_is_flagged_and_one_window_is_not():
    """Honest estimates are at most one window early: a 2-window gap is flagged on one audit (medium, 0.97),
    two such audits are high (0.999); a single 1-window gap is honest noise."""
    none = Aggregate()
    one = detect_deadline_compression("t", 3, none, [], [audit("a", gap=2)], SETTINGS)
    assert one is not None and (one.kind, one.severity, one.confidence, one.request_ids) == (
        "deadline_compression", "medium", 0.97, ("a",))
    two = detect_deadline_compression("t", 3, none, [], [audit("a", gap=2), audit("b", gap=2)], SETTINGS)
    assert two is not None and (two.severity, two.confidence) == ("high", 0.999)
    assert detect_deadline_compression("t", 3, none, [], [audit("a", gap=1)], SETTINGS) is None
    assert detect_deadline_compression("t", 3, none, [], [audit("a", gap=0), audit("b", gap=-1)], SETTINGS) is None


@pytest.mark.parametrize(
    ("early", "audited", "flagged"),
    [
        (2, 2, True),   # P(X ≥ 2 | 2, 0.2) = 0.04 < 0.05
        (2, 3, False),  # P(X ≥ 2 | 3, 0.2) = 0.104
        (3, 4, True),   # P(X ≥ 3 | 4, 0.2) = 4·0.008·0.8 + 0.0016 = 0.0272
        (3, 6, False),  # P(X ≥ 3 | 6, 0.2) = 0.09888
        (4, 6, True),   # P(X ≥ 4 | 6, 0.2) = 0.01696
        (1, 1, False),  # one early audit is never enough
    ],
)
def test_one_window_early_audits_are_flagged_when_the_honest_20_percent_rate_makes_them_unlikely(early, audited,
                                                                                                  flagged):
    audits = [audit(f"e{i}", gap=1) for i in range(early)] + [audit(f"o{i}") for i in range(audited - early)]
    flag = detect_deadline_compression("t", 3, Aggregate(), [], audits, SETTINGS)
    assert (flag is not None) == flagged
    if flagged:
        p = float(stats.binom.sf(early - 1, audited, 0.2))
        assert flag.severity == "low" and flag.confidence == pytest.approx(1.0 - p, rel=1e-9)


@pytest.mark.parametrize(
    ("n", "slack", "slack_var", "flagged"),
    [
        (4, -7.0, 49.0 / 9.0, True),    # z = −7 / (7/3) = −3, mean −1.75: both boundaries, flagged
        (4, -6.99, 49.0 / 9.0, False),  # mean −1.7475 and z > −3
        (4, -7.0, 5.45, False),         # z = −2.998
        (4, -8.0, 64.0 / 9.0, True),    # z = −3, mean −2
        (3, -9.0, 1.0, False),          # fewer than 4 requests
    ],
)
def test_stated_slack_before_audits_is_flagged_at_z_minus_3_and_a_mean_of_minus_1_75_windows(n, slack, slack_var,
                                                                                              flagged):
    agg = Aggregate(n=n, slack=slack, slack_var=slack_var)
    assert (detect_deadline_compression("t", 3, agg, [], [], SETTINGS) is not None) == flagged


# ---------------------------------------------------------------------------------------------- priority inflation
@pytest.mark.parametrize(
    ("excess", "support", "flagged"),
    [
        (2.3, False, True),    # z = 2.3: the documented threshold
        (2.29, False, False),
        (2.53, False, True),
        (1.8, True, True),     # with an audit showing the urgency was not real, z = 1.8 suffices
        (1.79, True, False),
        (1.8, False, False),
    ],
)
def test_priority_inflation_is_flagged_from_z_2_3_or_1_8_with_audit_support(excess, support, flagged):
    agg = Aggregate(n=3, excess=excess, priority_var=1.0, high=3)
    audits = [audit("u", urgency_not_real=True)] if support else []
    flag = detect_priority_inflation("t", 3, agg, [], audits, SETTINGS)
    assert (flag is not None) == flagged
    if flagged:
        z = excess  # variance 1
        assert flag.severity == "low"
        assert flag.confidence == pytest.approx(0.5 * (1.0 + math.erf(z / math.sqrt(2.0))), rel=1e-12)


def test_priority_inflation_needs_three_requests_and_a_mean_excess_of_0_35_level():
    assert detect_priority_inflation("t", 3, Aggregate(n=2, excess=5.0, priority_var=1.0), [], [], SETTINGS) is None
    at_floor = Aggregate(n=10, excess=3.5, priority_var=1.0)  # mean 0.35, z = 3.5
    below = Aggregate(n=10, excess=3.49, priority_var=1.0)
    flag = detect_priority_inflation("t", 3, at_floor, [], [], SETTINGS)
    assert flag is not None and flag.severity == "medium"  # 3 ≤ z < 4
    assert detect_priority_inflation("t", 3, below, [], [], SETTINGS) is None
    high = detect_priority_inflation("t", 3, Aggregate(n=10, excess=4.0, priority_var=1.0), [], [], SETTINGS)
    assert high is not None and high.severity == "high"  # z = 4


def test_documented_thresholds_are_the_settings_defaults():
    s = SETTINGS
    assert (s.priority_z, s.priority_z_with_audit, s.priority_min_excess) == (2.3, 1.8, 0.35)
    assert (s.slack_z, s.slack_min_mean, s.carbon_z, s.audit_p) == (-3.0, -1.75, 2.3, 0.05)
    assert (s.honest_early_rate, s.honest_flip_rate, s.scope_windows) == (0.2, 0.08, 3)


# ---------------------------------------------------------------------------------------------- carbon flexibility
@pytest.mark.parametrize(
    ("hidden", "flexible", "flagged"),
    [
        (2, 4, True),   # P(X ≥ 2 | 4, 0.08) = 1 − 0.92⁴ − 4·0.08·0.92³ = 0.0344
        (2, 6, False),  # P(X ≥ 2 | 6, 0.08) = 0.0773
        (3, 6, True),   # P(X ≥ 3 | 6, 0.08) = 0.0104
        (1, 1, False),  # at least two cases
    ],
)
def test_hidden_flexibility_in_audits_is_flagged_when_the_honest_8_percent_flip_rate_makes_it_unlikely(hidden, flexible,
                                                                                                     flagged):
    audits = ([audit(f"h{i}", flexible=True, hidden=True) for i in range(hidden)]
              + [audit(f"f{i}", flexible=True) for i in range(flexible - hidden)])
    flag = detect_carbon_gaming("t", 3, Aggregate(), [], audits, SETTINGS)
    assert (flag is not None) == flagged
    if flagged:
        assert flag.confidence == pytest.approx(1.0 - float(stats.binom.sf(hidden - 1, flexible, 0.08)), rel=1e-9)


# ---------------------------------------------------------------------------------------------- the statistics
def test_z_statistics_are_the_documented_ratios_and_zero_without_requests():
    agg = Aggregate(n=4, excess=3.0, priority_var=2.25, slack=-6.0, slack_var=4.0, inflexible=4.0,
                    inflexible_expected=1.6, inflexible_var=0.25)
    assert priority_z(agg) == pytest.approx(3.0 / 1.5)
    assert slack_z(agg) == pytest.approx(-6.0 / 2.0)
    assert inflexible_z(agg) == pytest.approx((4.0 - 1.6) / 0.5)
    one = Aggregate(n=1, excess=1.2, priority_var=0.36, slack=-0.9, slack_var=0.81, inflexible=1.0,
                    inflexible_expected=0.2, inflexible_var=0.16)
    assert (priority_z(one), slack_z(one), inflexible_z(one)) == pytest.approx((2.0, -1.0, 2.0))
    assert priority_z(Aggregate()) == slack_z(Aggregate()) == inflexible_z(Aggregate()) == 0.0


@pytest.mark.parametrize(("z", "confidence"), [(-2.0, 0.5), (0.0, 0.5), (1.0, 0.8413447460685429),
                                                (3.0, 0.9986501019683699), (3.2, 0.999), (8.0, 0.999)])
def test_normal_confidence_is_phi_clipped_to_half_and_0_999(z, confidence):
    assert normal_confidence(z) == pytest.approx(confidence, abs=1e-12)
    assert normal_confidence(z) == pytest.approx(min(0.999, max(0.5, stats.norm.cdf(z))), abs=1e-12)


def test_settings_can_be_given_per_monitor():
    s = DetectorSettings(priority_z=3.0, scope_windows=5, pattern_sum=6.0)
    assert (s.priority_z, s.scope_windows, s.pattern_sum, s.carbon_z) == (3.0, 5, 6.0, 2.3)


def test_documented_pattern_thresholds_are_the_settings_defaults():
    assert (SETTINGS.pattern_single, SETTINGS.pattern_sum) == (1.5, 5.0)


def req(rid: str, excess: float = 0.0, slack: float = 0.0, inflexible: bool = False, q: float = 0.5,
        window: int = 0) -> RequestEvidence:
    return RequestEvidence(rid, window, excess, slack, inflexible, q, urgent=False, stated_high=excess > 0,
                           stated_earliest=window)


# ---------------------------------------------------------------------------------------------- priority inflation
@pytest.mark.parametrize(("n", "excess", "severity"), [(5, 2.99, "low"), (5, 3.0, "medium"), (10, 3.99, "medium"),
                                                       (10, 4.0, "high"), (10, 5.0, "high")])
def test_severity_is_high_from_z_4_medium_from_z_3_else_low(n, excess, severity):
    flag = detect_priority_inflation("t", 3, Aggregate(n=n, excess=excess, priority_var=1.0), [], [], SETTINGS)
    assert flag is not None and flag.severity == severity


def test_a_priority_flag_states_its_scope_and_names_the_requests_stated_more_than_half_a_level_high():
    requests = [req("a", 2.0), req("b", 0.5), req("c", 0.0), req("d", -1.0), req("e", 1.0), req("f", 0.6)]
    agg = Aggregate(n=6, excess=3.1, priority_var=1.0, high=3, urgent=2)
    flag = detect_priority_inflation("t", 6, agg, requests, [], SETTINGS)
    assert flag is not None and flag.request_ids == ("a", "e", "f")
    assert "windows 4–6" in flag.evidence and "2 descriptions claim urgency" in flag.evidence
    assert "audits" not in flag.evidence
    early = detect_priority_inflation("t", 1, agg._replace(urgent=0), requests, [audit("u", urgency_not_real=True)],
                                      SETTINGS)
    assert early is not None and "windows 0–1" in early.evidence and "descriptions claim" not in early.evidence
    assert "audits of 1 high-priority jobs found 3+ windows of real deadline slack" in early.evidence
    many = [req(f"r{i}", 1.0) for i in range(12)]
    flag = detect_priority_inflation("t", 6, Aggregate(n=12, excess=12.0, priority_var=1.0), many, [], SETTINGS)
    assert flag is not None and flag.request_ids == tuple(f"r{i}" for i in range(8))


# ---------------------------------------------------------------------------------------------- deadline compression
def test_three_audits_two_windows_late_are_high_and_the_evidence_gives_their_mean_gap():
    flag = detect_deadline_compression("t", 3, Aggregate(), [], [audit("a", 2), audit("b", 3), audit("c", 2)],
                                       SETTINGS)
    assert flag is not None and (flag.severity, flag.confidence) == ("high", 0.999)
    assert "mean gap 2.3 windows" in flag.evidence
    two = detect_deadline_compression("t", 3, Aggregate(), [], [audit("a", 2), audit("b", 3)], SETTINGS)
    assert two is not None and "mean gap 2.5 windows" in two.evidence
    late = [audit(f"l{i}", 2) for i in range(10)]
    assert detect_deadline_compression("t", 3, Aggregate(), [], late, SETTINGS).request_ids == tuple(
        f"l{i}" for i in range(8))


def test_early_audits_need_two_cases_a_tail_below_the_threshold_and_cap_the_confidence():
    # one early audit is never enough, even where the honest rate makes it unlikely
    rare = dataclasses.replace(SETTINGS, honest_early_rate=0.01)
    assert detect_deadline_compression("t", 3, Aggregate(), [], [audit("a", 1)], rare) is None
    # p < audit_p, strictly: a tail exactly at the threshold is not flagged
    at = dataclasses.replace(SETTINGS, audit_p=binomial_tail(2, 2, 0.2))
    assert detect_deadline_compression("t", 3, Aggregate(), [], [audit("a", 1), audit("b", 1)], at) is None
    early = [audit(f"e{i}", 1) for i in range(10)]
    flag = detect_deadline_compression("t", 3, Aggregate(), [], early, SETTINGS)
    assert flag is not None and flag.confidence == 0.999  # 1 − 0.2¹⁰ clipped
    assert flag.request_ids == tuple(f"e{i}" for i in range(8))


def test_stated_slack_flags_by_z_and_mean_and_states_the_mean_slack():
    requests = [req("a", slack=-3.0), req("b", slack=-1.5), req("c", slack=-1.0), req("d", slack=-0.5),
                req("e", slack=0.0), req("f", slack=2.0)]
    flag = detect_deadline_compression("t", 3, Aggregate(n=8, slack=-18.0, slack_var=16.0), requests, [], SETTINGS)
    assert flag is not None and flag.request_ids == ("a", "b")  # more than a window tighter than the norm
    assert (flag.severity, flag.confidence) == ("high", 0.999)  # z = −4.5
    assert "-2.25 windows of slack" in flag.evidence and "over 8 requests" in flag.evidence
    at = detect_deadline_compression("t", 3, Aggregate(n=4, slack=-7.0, slack_var=49.0 / 9.0), [], [], SETTINGS)
    assert at is not None and at.severity == "medium"  # z = −3
    assert at.confidence == pytest.approx(0.5 * (1.0 + math.erf(3.0 / math.sqrt(2.0))))
    assert detect_deadline_compression("t", 3, Aggregate(n=5, slack=-10.0, slack_var=4.0), [], [], SETTINGS) is not None
    # z = −5 but a mean of −1.25 windows: not flagged
    assert detect_deadline_compression("t", 3, Aggregate(n=8, slack=-10.0, slack_var=4.0), [], [], SETTINGS) is None
    many = [req(f"r{i}", slack=-2.0) for i in range(10)]
    flag = detect_deadline_compression("t", 3, Aggregate(n=10, slack=-20.0, slack_var=16.0), many, [], SETTINGS)
    assert flag is not None and flag.request_ids == tuple(f"r{i}" for i in range(8))


# ---------------------------------------------------------------------------------------------- carbon flexibility
def test_hidden_flexibility_needs_two_cases_a_tail_below_the_threshold_and_is_high_below_p_0_001():
    rare = dataclasses.replace(SETTINGS, honest_flip_rate=0.01)
    one = [audit("h", flexible=True, hidden=True)]
    assert detect_carbon_gaming("t", 3, Aggregate(), [], one, rare) is None
    hidden = [audit(f"h{i}", flexible=True, hidden=True) for i in range(2)] + [audit(f"f{i}", flexible=True)
                                                                                for i in range(2)]
    at = dataclasses.replace(SETTINGS, audit_p=binomial_tail(2, 4, 0.08))
    assert detect_carbon_gaming("t", 3, Aggregate(), [], hidden, at) is None
    three_of_four = [audit(f"h{i}", flexible=True, hidden=True) for i in range(3)] + [audit("f", flexible=True)]
    flag = detect_carbon_gaming("t", 3, Aggregate(), [], three_of_four, SETTINGS)  # p = 0.0019
    assert flag is not None and flag.severity == "medium"
    all_ten = [audit(f"h{i}", flexible=True, hidden=True) for i in range(10)]
    flag = detect_carbon_gaming("t", 3, Aggregate(), [], all_ten, SETTINGS)  # p = 0.08¹⁰
    assert flag is not None and (flag.severity, flag.confidence) == ("high", 0.999)
    assert flag.request_ids == tuple(f"h{i}" for i in range(8))


@pytest.mark.parametrize(("n", "inflexible", "flagged"), [(2, 5.0, False), (3, 3.3, True), (3, 3.29, False),
                                                          (5, 4.0, True)])
def test_stated_inflexibility_is_flagged_from_z_2_3_over_three_requests(n, inflexible, flagged):
    agg = Aggregate(n=n, inflexible=inflexible, inflexible_expected=1.0, inflexible_var=1.0)  # z = inflexible − 1
    assert (detect_carbon_gaming("t", 3, agg, [], [], SETTINGS) is not None) == flagged


def test_a_carbon_flag_names_the_requests_stated_inflexible_whose_type_is_usually_flexible():
    requests = [req("a", inflexible=True, q=0.2), req("b", inflexible=True, q=0.9), req("c", inflexible=False, q=0.2),
                req("d", inflexible=True, q=0.5), req("e", inflexible=True, q=0.49)]
    agg = Aggregate(n=5, inflexible=4.0, inflexible_expected=1.0, inflexible_var=1.0)
    flag = detect_carbon_gaming("t", 3, agg, requests, [], SETTINGS)
    assert flag is not None and flag.request_ids == ("a", "e")
    many = [req(f"r{i}", inflexible=True, q=0.1) for i in range(10)]
    flag = detect_carbon_gaming("t", 3, agg._replace(n=10), many, [], SETTINGS)
    assert flag is not None and flag.request_ids == tuple(f"r{i}" for i in range(8))


# ---------------------------------------------------------------------------------------------- pattern gaming
def team_with(n: int, priority: float, slack: float, carbon: float, audits=()) -> TeamEvidence:
    """A team whose whole-episode statistics are exactly ``priority``, ``−slack_z = slack`` and ``carbon``."""
    total = Aggregate(n=n, excess=priority, priority_var=1.0, slack=-slack, slack_var=1.0, inflexible=carbon + 1.0,
                      inflexible_expected=1.0, inflexible_var=1.0)
    return TeamEvidence("t", prefix=[list(total)], audits=list(audits))


@pytest.mark.parametrize(
    ("n", "zs", "flagged"),
    [
        (4, (1.5, 0.0, 1.5), True),    # two at 1.5
        (4, (2.0, 2.0, 0.0), True),    # priority and (compressed) slack
        (4, (1.5, 1.5, 1.5), True),    # three
        (6, (2.0, 2.0, 2.0), True),
        (4, (4.9, -0.5, -1.0), False),  # one strong, sum 4.9
        (4, (5.0, -0.5, -0.5), True),  # one strong, sum 5
        (4, (5.5, -0.5, -0.5), True),
        (4, (0.0, 0.0, 0.0), False),
        (3, (3.0, 3.0, 3.0), False),   # fewer than 4 requests
        (4, (1.49, 1.49, 1.49), False),
    ],
)
def test_pattern_gaming_needs_two_statistics_from_1_5_or_a_positive_sum_of_5_over_four_requests(n, zs, flagged):
    assert (detect_pattern_gaming("t", 5, team_with(n, *zs), SETTINGS) is not None) == flagged


def test_pattern_severity_is_judged_on_the_sum_less_1_and_its_confidence_is_phi_of_the_sum_over_root_3():
    flag = detect_pattern_gaming("t", 5, team_with(4, 1.5, 1.5, 1.5), SETTINGS)
    assert flag is not None and flag.severity == "medium"  # 4.5 − 1 = 3.5
    assert flag.confidence == pytest.approx(0.5 * (1.0 + math.erf(4.5 / math.sqrt(3.0) / math.sqrt(2.0))))
    assert flag.request_ids == ()
    assert detect_pattern_gaming("t", 5, team_with(4, 1.5, 0.0, 1.5), SETTINGS).severity == "low"  # 3 − 1 = 2


def test_pattern_evidence_counts_the_audits_that_contradicted_the_statements():
    audits = [audit("a", gap=2), audit("b", gap=3), audit("c", gap=1), audit("d", flexible=True, hidden=True),
              audit("e", urgency_not_real=True), audit("f")]
    flag = detect_pattern_gaming("t", 5, team_with(4, 2.0, 2.0, 0.0, audits), SETTINGS)
    assert flag is not None and "; 4 audits contradicted its statements" in flag.evidence
    clean = detect_pattern_gaming("t", 5, team_with(4, 2.0, 2.0, 0.0, [audit("f")]), SETTINGS)
    assert clean is not None and "audits" not in clean.evidence


# ---------------------------------------------------------------------------------------------- type norms
def test_each_job_types_honest_norms_are_the_documented_variances():
    """``oversight/evidence.py``: priority variance = the type's priority std² + 0.1 (honest one-level slips);
    slack variance = the variance of a slack drawn uniformly from the type's whole windows, plus a team's slack
    shift of −1, 0 or +1 (variance 2/3) and the deadline noise (0.2); q = (1 − p_flex)·0.92 + p_flex·0.08."""
    from dcops.cluster.job_types import JOB_TYPES
    from dcops.oversight.evidence import NORMS

    assert len(NORMS) == len(JOB_TYPES) >= 4
    shift_var = float(np.var([-1.0, 0.0, 1.0]))
    for job_type in JOB_TYPES:
        norm = NORMS[job_type.name]
        lo, hi = job_type.slack_windows
        assert norm.priority_var == pytest.approx(job_type.priority_std ** 2 + 0.1, rel=1e-12)
        assert norm.slack_var == pytest.approx(float(np.var(np.arange(lo, hi + 1))) + shift_var + 0.2, rel=1e-12)
        p = job_type.flexible_prob
        assert norm.inflexible_prob == pytest.approx((1 - p) * 0.92 + p * 0.08, rel=1e-12)
        assert (norm.typical_priority, norm.typical_slack) == (job_type.typical_priority, job_type.typical_slack)
    assert any(j.priority_std not in (0.0, 1.0) for j in JOB_TYPES)  # the square is seen
    assert any(j.slack_windows[0] not in (0, 1) for j in JOB_TYPES)


def test_a_scope_keeps_the_audits_of_requests_submitted_in_it():
    team = TeamEvidence("t")
    for w in range(4):
        team.audits.append(AuditEvidence(f"a{w}", submitted_window=w, deadline_gap=0, truly_flexible=False,
                                         hidden_flexibility=False, urgency_not_real=False))
        team.close_window(w)
    assert [a.request_id for a in team.scope(1, 3)[2]] == ["a1", "a2", "a3"]
    assert [a.request_id for a in team.scope(-2, 3)[2]] == ["a0", "a1", "a2", "a3"]


# ---------------------------------------------------------------------------------------------- request and audit evidence
def _stated(priority, deadline: int, duration_h: float, flexible: bool, window: int = 2, description: str = "",
            job_type: str = "hparam_sweep"):
    from dcops.cluster.requests import Request

    return Request(f"r-{priority}-{deadline}-{duration_h}", "t", job_type, description, 40.0, duration_h, 16, "A100",
                   priority, deadline, flexible, 5.0, window)


def test_request_evidence_is_the_stated_fields_against_the_type_norm_by_hand():
    """hparam_sweep: priorities LOW 0.6 / MEDIUM 0.4 (typical 0.4 levels above LOW), slack 3–8 windows (typical
    5.5). A CRITICAL request submitted in window 2 with 4 h stated (1.5 h windows: ceil(2.67) = 3 windows, so the
    earliest completion is window 4) and a deadline at window 6 states 2 windows of slack: 3.5 below typical."""
    from dcops.cluster.requests import Priority
    from dcops.oversight.evidence import NORMS, request_evidence

    norm = NORMS["hparam_sweep"]
    assert norm.typical_priority == pytest.approx(0.4) and norm.typical_slack == 5.5
    e = request_evidence(_stated(Priority.CRITICAL, 6, 4.0, False, description="URGENT: paper deadline"), 1.5, norm)
    assert e.window == 2 and e.stated_earliest == 4
    assert e.priority_excess == pytest.approx(3.0 - 0.4) and e.slack_deviation == pytest.approx(2.0 - 5.5)
    assert e.inflexible and e.urgent and e.stated_high and e.inflexible_prob == norm.inflexible_prob
    calm = request_evidence(_stated(Priority.MEDIUM, 9, 1.5, True), 1.5, norm)
    assert calm.stated_earliest == 2 and calm.slack_deviation == pytest.approx(7.0 - 5.5)  # one window: done in 2
    assert not (calm.inflexible or calm.urgent or calm.stated_high)


def _audit(request, true_deadline: int, truly_flexible: bool):
    from dcops.cluster.ledger import AuditRecord

    return AuditRecord(request, request.duration_h, true_deadline, truly_flexible, true_deadline, True)


@pytest.mark.parametrize(("priority", "true_deadline", "urgency_not_real"), [
    ("HIGH", 7, True), ("CRITICAL", 8, True), ("HIGH", 6, False), ("MEDIUM", 9, False),
])
def test_urgency_is_not_real_when_a_high_claim_had_three_windows_of_real_slack(priority, true_deadline,
                                                                            urgency_not_real):
    """Earliest completion at window 4: a true deadline at window 7 left 3 windows of slack, at 6 only 2."""
    from dcops.cluster.requests import Priority
    from dcops.oversight.evidence import audit_evidence

    request = _stated(Priority[priority], 5, 4.0, True)
    evidence = audit_evidence(_audit(request, true_deadline, True), 4)
    assert evidence.urgency_not_real is urgency_not_real
    assert evidence.deadline_gap == true_deadline - 5 and evidence.submitted_window == 2


@pytest.mark.parametrize(("stated_flexible", "truly_flexible", "hidden"), [
    (False, True, True), (True, True, False), (False, False, False), (True, False, False),
])
def test_hidden_flexibility_is_truly_flexible_work_stated_inflexible(stated_flexible, truly_flexible, hidden):
    from dcops.cluster.requests import Priority
    from dcops.oversight.evidence import audit_evidence

    evidence = audit_evidence(_audit(_stated(Priority.LOW, 6, 2.0, stated_flexible), 6, truly_flexible), 3)
    assert evidence.hidden_flexibility is hidden and evidence.truly_flexible is truly_flexible


def test_team_sums_by_window_and_scope_by_hand():
    """Two requests in window 1 and one in window 3 (none in 0 and 2): closing window 3 at once fills the prefix
    sums through it; the scope 2–3 holds only window 3's request; the inflexibility variance is Σ q(1 − q)."""
    from dcops.cluster.requests import Priority
    from dcops.oversight.evidence import NORMS

    team = TeamEvidence("t")
    for request in (_stated(Priority.HIGH, 9, 1.5, False, window=1), _stated(Priority.LOW, 9, 3.0, True, window=1),
                    _stated(Priority.CRITICAL, 9, 1.5, False, window=3)):
        team.add_request(request, 1.5)
    team.close_window(3)
    assert len(team.prefix) == 4
    q = NORMS["hparam_sweep"].inflexible_prob
    total = team.total
    assert (total.n, total.high, total.inflexible) == (3.0, 2.0, 2.0)
    assert total.excess == pytest.approx((2 - 0.4) + (0 - 0.4) + (3 - 0.4))
    assert total.inflexible_expected == pytest.approx(3 * q) and total.inflexible_var == pytest.approx(3 * q * (1 - q))
    late, requests, _ = team.scope(2, 3)
    assert (late.n, late.high, late.excess) == (1.0, 1.0, pytest.approx(3 - 0.4))
    assert [r.window for r in requests] == [3]
    early, _, _ = team.scope(1, 1)
    assert (early.n, early.high) == (2.0, 1.0)
    assert [r.window for r in team.scope(1, 2)[1]] == [1, 1]  # the request of window 3 is past the scope


@pytest.mark.parametrize(("duration_h", "windows"), [(6.0, 4), (4.0, 3), (1.5, 1), (0.3, 1), (0.0, 1)])
def test_the_stated_earliest_completion_counts_whole_windows_from_the_submission(duration_h, windows):
    """1.5 h windows: 6 h takes 4 windows (done at the end of window w + 3), 4 h takes 3, anything up to one
    window (or stated as nothing) takes the submission window itself."""
    from dcops.cluster.requests import Priority
    from dcops.oversight.evidence import stated_earliest

    assert stated_earliest(_stated(Priority.LOW, 9, duration_h, True, window=2), 1.5) == 2 + windows - 1
