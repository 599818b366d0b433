"""The detectors at their documented boundaries (``dcops.oversight.detectors`` docstring), and the binomial tail
against scipy.

Each case sits exactly on a threshold and just off it, so a threshold moved by a window, by 10 %, or a tail
summed from the wrong term changes the answer. Aggregates are built by hand: with a priority variance of 1 the
priority z is the summed excess itself.
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

from dcops.oversight.detectors import (
    DetectorSettings,
    binomial_tail,
    detect_carbon_gaming,
    detect_deadline_compression,
    detect_priority_inflation,
)
from dcops.oversight.evidence import Aggregate, AuditEvidence

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
