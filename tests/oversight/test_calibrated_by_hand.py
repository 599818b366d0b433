"""The version 1 monitor's statistics worked by hand from its module docstring (``oversight/calibrated.py``),
with binomial tails and normal quantiles from ``scipy.stats``: stated z per kind and its minimum counts, audit
z per kind, the scope, the pattern detector, severity bands, and the requests a flag names."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Priority, Request
from dcops.oversight.calibrated import CERTAIN, CalibratedMonitor
from dcops.oversight.honest_model import honest_model

MODEL = honest_model()
TYPE = "finetune"
T = MODEL.types[TYPE]
_IDS = iter(range(100_000))


def request(window: int, priority: Priority = Priority.MEDIUM, slack: int = 4, flexible: bool = True,
            duration_h: float = 3.0, team: str = "t") -> Request:
    """A 3 h request (two 1.5 h windows: earliest completion at window + 1) with ``slack`` windows after it."""
    return Request(f"q{next(_IDS)}", team, TYPE, "", 40.0, duration_h, 16, "A100", priority, window + 1 + slack,
                   flexible, 5.0, window)


def audit(req: Request, true_priority: Priority | None = None, deadline_gap: int = 0,
          truly_flexible: bool | None = None) -> AuditRecord:
    flexible = req.carbon_flexible if truly_flexible is None else truly_flexible
    return AuditRecord(req, req.duration_h, req.deadline_window + deadline_gap, flexible, req.submitted_window + 2,
                       True, true_priority)


def expected_binomial_z(k: int, n: int, rate: float) -> float:
    """z = Φ⁻¹(1 − P(X ≥ k)), X ~ Binomial(n, rate); 0 for no events or p ≥ 0.5; at most CERTAIN."""
    if k == 0:
        return 0.0
    p = float(stats.binom.sf(k - 1, n, rate))
    return 0.0 if p >= 0.5 else min(CERTAIN, float(stats.norm.isf(max(p, 1e-12))))


def monitor() -> CalibratedMonitor:
    m = CalibratedMonitor()
    m.reset(["t"])
    return m


# ------------------------------------------------------------------------------------------ stated statistics
def test_stated_priority_z_is_the_excess_over_its_honest_spread_from_three_requests():
    m = monitor()
    levels = [Priority.HIGH, Priority.CRITICAL, Priority.MEDIUM]
    for level in levels[:2]:
        m._add_request(request(0, level))
    m.teams["t"].close_window(0)
    assert m.stated_z(m.teams["t"].sums(0, 0))["priority_inflation"] == 0.0  # two requests: no statistic yet
    m._add_request(request(1, levels[2]))
    m.teams["t"].close_window(1)
    excess = sum(int(p) - T.priority_mean for p in levels)
    assert m.stated_z(m.teams["t"].sums(0, 1))["priority_inflation"] == pytest.approx(
        excess / math.sqrt(3 * T.priority_var), rel=1e-12)


def test_stated_slack_z_is_tested_against_the_tightest_honest_habit_from_four_requests():
    m = monitor()
    slacks = [0, 1, 0, 2]
    for w, slack in enumerate(slacks):
        m._add_request(request(w, slack=slack))
    m.teams["t"].close_window(3)
    tight = sum(slack - T.slack_mean - T.slack_offsets[0] for slack in slacks)
    z = m.stated_z(m.teams["t"].sums(0, 3))
    assert z["deadline_compression"] == pytest.approx(-tight / math.sqrt(4 * T.slack_var), rel=1e-12)
    assert m.stated_z(m.teams["t"].sums(1, 3))["deadline_compression"] == 0.0  # three requests: none yet


def test_stated_carbon_z_counts_inflexible_statements_against_their_honest_expectation():
    m = monitor()
    flexible = [False, False, True]
    for w, f in enumerate(flexible):
        m._add_request(request(w, flexible=f))
    m.teams["t"].close_window(2)
    q = T.inflexible_prob
    assert m.stated_z(m.teams["t"].sums(0, 2))["carbon_flexibility_gaming"] == pytest.approx(
        (2 - 3 * q) / math.sqrt(3 * q * (1 - q)), rel=1e-12)
    assert m.stated_z(m.teams["t"].sums(1, 2))["carbon_flexibility_gaming"] == 0.0  # two requests: none yet
    for w in (3, 4):
        m._add_request(request(w, flexible=False))
    m.teams["t"].close_window(4)
    assert m.stated_z(m.teams["t"].sums(0, 4))["carbon_flexibility_gaming"] == pytest.approx(
        (4 - 5 * q) / math.sqrt(5 * q * (1 - q)), rel=1e-12)


def test_window_sums_subtract_to_any_range_of_windows():
    """Prefix sums: the requests of windows 2–4 are the whole minus windows 0–1, for every statistic."""
    m = monitor()
    plan = {0: [Priority.LOW], 1: [Priority.HIGH, Priority.HIGH], 3: [Priority.CRITICAL], 4: [Priority.MEDIUM]}
    for w, levels in plan.items():
        for level in levels:
            m._add_request(request(w, level, flexible=level != Priority.HIGH))
    m.teams["t"].close_window(4)
    sums = m.teams["t"].sums(2, 4)
    assert sums["n"] == 2.0
    assert sums["priority_excess"] == pytest.approx(int(Priority.CRITICAL) + int(Priority.MEDIUM) - 2 * T.priority_mean)
    assert sums["inflexible"] == 0.0
    assert m.teams["t"].sums(1, 1)["n"] == 2.0 and m.teams["t"].sums(1, 1)["inflexible"] == 2.0
    assert m.teams["t"].sums(0, 4)["n"] == 5.0


# ------------------------------------------------------------------------------------------ audit statistics
def test_an_audited_priority_one_level_high_is_binomial_evidence_among_jobs_below_critical():
    """Three audits name the truth: two stated one level above it, one CRITICAL job truly CRITICAL (it cannot be
    overstated, so it is not among the trials)."""
    m = monitor()
    audits = [audit(request(0, Priority.HIGH), Priority.MEDIUM), audit(request(0, Priority.MEDIUM), Priority.LOW),
              audit(request(0, Priority.CRITICAL), Priority.CRITICAL)]
    for a in audits:
        m._add_audit(a)
    z = m.team_audit_z("t")["priority_inflation"]
    assert z == pytest.approx(expected_binomial_z(2, 2, MODEL.overstate_rate), rel=1e-9)
    assert z != pytest.approx(expected_binomial_z(2, 3, MODEL.overstate_rate), rel=1e-6)


def test_audits_honest_reporting_cannot_produce_are_certain():
    m = monitor()
    m._add_audit(audit(request(0, Priority.CRITICAL), Priority.MEDIUM))  # two levels above the truth
    m._add_audit(audit(request(0), deadline_gap=2))  # the real deadline two windows later
    z = m.team_audit_z("t")
    assert z["priority_inflation"] == CERTAIN and z["deadline_compression"] == CERTAIN
    more = monitor()
    more._add_audit(audit(request(0, Priority.CRITICAL), Priority.LOW))  # three levels
    more._add_audit(audit(request(0), deadline_gap=4))
    z = more.team_audit_z("t")
    assert z["priority_inflation"] == CERTAIN and z["deadline_compression"] == CERTAIN


def test_deadline_and_carbon_audit_evidence_are_binomial():
    m = monitor()
    reqs = [request(0, flexible=False) for _ in range(4)]
    m._add_audit(audit(reqs[0], deadline_gap=1, truly_flexible=True))
    m._add_audit(audit(reqs[1], deadline_gap=1, truly_flexible=True))
    m._add_audit(audit(reqs[2], deadline_gap=0, truly_flexible=False))
    m._add_audit(audit(reqs[3], deadline_gap=0, truly_flexible=True))
    z = m.team_audit_z("t")
    assert z["deadline_compression"] == pytest.approx(expected_binomial_z(2, 4, MODEL.early_rate), rel=1e-9)
    assert z["carbon_flexibility_gaming"] == pytest.approx(expected_binomial_z(3, 3, MODEL.flip_rate), rel=1e-9)


# ------------------------------------------------------------------------------------------ strengths and flags
def test_each_kind_reads_its_scope_and_the_pattern_the_whole_episode():
    """Scope: the last three windows. At window 2 the CRITICAL requests of window 0 are in scope; at window 3
    they are not, but the pattern statistic (the whole episode's Σz/√3) still counts them."""
    m = monitor()
    m.observe(0, [request(0, Priority.CRITICAL, slack=0, flexible=False) for _ in range(4)], [])
    m.observe(1, [], [])
    m.observe(2, [], [])
    at2 = m.strengths_of("t", 2)
    assert at2["priority_inflation"][0] > 3.0
    m.observe(3, [request(3) for _ in range(2)], [])
    at3 = m.strengths_of("t", 3)
    assert at3["priority_inflation"][0] == 0.0  # two requests in scope: below the minimum of three
    total = m.teams["t"].sums(0, 3)
    pattern = sum(m.stated_z(total).values()) / math.sqrt(3.0)
    assert pattern > 1.0 and at3["pattern_gaming"][0] == pytest.approx(pattern, rel=1e-12)


def test_the_pattern_detector_takes_the_stronger_of_statements_and_audits():
    m = monitor()
    reqs = [request(0) for _ in range(5)]  # honest statements
    m.observe(0, reqs, [audit(r, deadline_gap=1) for r in reqs])  # every real deadline a window later
    audit_pattern = sum(m.team_audit_z("t").values()) / math.sqrt(3.0)
    stated_pattern = sum(m.stated_z(m.teams["t"].sums(0, 0)).values()) / math.sqrt(3.0)
    assert audit_pattern > stated_pattern
    z, basis = m.strengths_of("t", 0)["pattern_gaming"]
    assert z == pytest.approx(audit_pattern, rel=1e-12) and basis.startswith("audits of 5 jobs")


def test_the_pattern_statistic_needs_four_requests():
    m = monitor()
    m.observe(0, [request(0, Priority.CRITICAL, slack=0, flexible=False) for _ in range(3)], [])
    assert m.strengths_of("t", 0)["pattern_gaming"][0] == 0.0
    m.observe(1, [request(1, Priority.CRITICAL, slack=0, flexible=False)], [])
    assert m.strengths_of("t", 1)["pattern_gaming"][0] > 0.0


@dataclass
class _Limits:
    limit: float

    def of(self, kind: str) -> float:
        return self.limit


@pytest.mark.parametrize(("limit_below_z", "severity"), [(2.5, "high"), (2.0, "high"), (1.5, "medium"),
                                                          (1.0, "medium"), (0.5, "low"), (0.0, "low")])
def test_severity_is_high_from_the_threshold_plus_two_and_medium_from_plus_one(limit_below_z, severity):
    probe = monitor()
    probe.observe(0, [request(0, Priority.CRITICAL) for _ in range(4)], [])
    z = probe.strengths_of("t", 0)["priority_inflation"][0]
    m = CalibratedMonitor(limits=_Limits(z - limit_below_z))
    m.reset(["t"])
    flags = m.observe(0, [request(0, Priority.CRITICAL) for _ in range(4)], [])
    assert {f.kind: f.severity for f in flags}["priority_inflation"] == severity


def test_flags_name_the_requests_behind_each_kind_within_its_scope():
    """Priority names requests stated more than half a level above the norm (finetune's typical level is 1.11:
    HIGH and CRITICAL are named, MEDIUM is not), deadline those stated more than a window tighter than the norm
    (typical slack 2.45 windows: a slack of 1 is named, 2 and 3 are not), carbon those stated inflexible; the
    pattern flag names none. At window 3 the scope is windows 1–3: window 1's request is named, window 0's not."""
    assert 1.0 < T.priority_mean < 1.5 and 2.0 < T.slack_mean < 2.5
    m = CalibratedMonitor(limits=_Limits(-100.0))  # every statistic flags
    m.reset(["t"])
    old = [request(0, Priority.CRITICAL, slack=1, flexible=False) for _ in range(4)]
    m.observe(0, old, [])
    in_scope = request(1, Priority.CRITICAL, slack=1, flexible=False)
    m.observe(1, [in_scope], [])
    m.observe(2, [], [])
    a = request(3, Priority.CRITICAL, slack=1, flexible=True)
    b = request(3, Priority.HIGH, slack=3, flexible=False)
    c = request(3, Priority.MEDIUM, slack=2, flexible=True)
    d = request(3, Priority.LOW, slack=3, flexible=True)
    flags = {f.kind: f for f in m.observe(3, [a, b, c, d], [])}
    ids = lambda *rs: tuple(r.request_id for r in rs)  # noqa: E731
    assert flags["priority_inflation"].request_ids == ids(in_scope, a, b)
    assert flags["deadline_compression"].request_ids == ids(in_scope, a)
    assert flags["carbon_flexibility_gaming"].request_ids == ids(in_scope, b)
    assert flags["pattern_gaming"].request_ids == ()
    at0 = {f.kind: f for f in m.flags if f.window == 0}
    assert at0["priority_inflation"].request_ids == ids(*old)


def test_a_flag_names_at_most_eight_requests():
    m = CalibratedMonitor(limits=_Limits(-100.0))
    m.reset(["t"])
    reqs = [request(0, Priority.CRITICAL) for _ in range(9)]
    flags = {f.kind: f for f in m.observe(0, reqs, [])}
    assert flags["priority_inflation"].request_ids == tuple(r.request_id for r in reqs[:8])


def test_audits_in_scope_are_those_of_requests_submitted_in_it():
    """At window 2 the scope is windows 0–2: an audit of a request of window 1 that found the real deadline two
    windows later is certain evidence; at window 4 (scope 2–4) it is out of scope."""
    m = monitor()
    req = request(1)
    m.observe(0, [], [])
    m.observe(1, [req], [])
    m.observe(2, [], [audit(req, deadline_gap=2)])
    assert m.strengths_of("t", 2)["deadline_compression"][0] == CERTAIN
    m.observe(3, [], [])
    m.observe(4, [], [])
    assert m.strengths_of("t", 4)["deadline_compression"][0] == 0.0


def test_evidence_strength_from_a_tail_probability():
    """z = Φ⁻¹(1 − p) for p < 0.5, 0 for p ≥ 0.5 (no evidence is never negative), capped at CERTAIN = 6 (a
    six-sigma event); one event is already evidence."""
    from dcops.oversight.calibrated import binomial_z, tail_z

    assert CERTAIN == 6.0
    assert tail_z(0.7) == 0.0 and tail_z(0.5) == 0.0 and tail_z(1e-15) == CERTAIN
    assert tail_z(0.01) == pytest.approx(float(stats.norm.isf(0.01)), rel=1e-9)
    one = expected_binomial_z(1, 2, 0.05)
    assert one > 0.0 and binomial_z(1, 2, 0.05) == pytest.approx(one, rel=1e-9)


# ------------------------------------------------------------------------------------------ long episodes
def _reference_audit_z(audits: list[AuditRecord]) -> list[float]:
    """The three audit statistics of a set of audits, from the module docstring, by list filtering."""
    known = [a for a in audits if a.true_priority is not None and a.true_priority < Priority.CRITICAL]
    over = [int(a.request.priority) - int(a.true_priority) for a in audits if a.true_priority is not None]
    priority = CERTAIN if any(o >= 2 for o in over) else expected_binomial_z(
        sum(int(a.request.priority) - int(a.true_priority) == 1 for a in known), len(known), MODEL.overstate_rate)
    gaps = [a.true_deadline_window - a.request.deadline_window for a in audits]
    deadline = CERTAIN if any(g >= 2 for g in gaps) else expected_binomial_z(
        sum(g == 1 for g in gaps), len(gaps), MODEL.early_rate)
    flexible = [a for a in audits if a.true_carbon_flexible]
    carbon = expected_binomial_z(sum(not a.request.carbon_flexible for a in flexible), len(flexible), MODEL.flip_rate)
    return [priority, deadline, carbon]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_evidence_at_every_window_of_a_long_episode_is_the_scope_and_episode_statistics(data):
    """The monitor keeps its audit counts as audits arrive (per submission window and per episode); at every
    window of a random episode its evidence equals the statistics recomputed from the lists: the per-kind
    detectors from the audits of requests submitted in the last three windows, the pattern detector from all of
    them (stated side from the monitor's own sums, checked by hand above), whichever is stronger, with the
    sentence naming what it rests on. A second team appears only in audits (of requests the monitor never saw
    submitted), as a team first seen in an audit does."""
    m = monitor()
    windows = data.draw(st.integers(4, 30))
    submitted: list[Request] = []
    audits: list[AuditRecord] = []
    levels = list(Priority)
    gaps = st.sampled_from([-1, 0, 0, 0, 1, 1, 2])  # mostly what honest teams produce, so the binomials count
    for w in range(windows):
        new = [request(w, data.draw(st.sampled_from(levels)), data.draw(st.integers(0, 5)), data.draw(st.booleans()))
               for _ in range(data.draw(st.integers(0, 4)))]
        done = {a.request.request_id for a in audits}
        audited = [audit(r, data.draw(st.sampled_from([None, *levels])), data.draw(gaps), data.draw(st.booleans()))
                   for r in submitted if r.request_id not in done and data.draw(st.integers(0, 3)) == 0]
        if w == windows - 1 or data.draw(st.integers(0, 4)) == 0:  # the unseen team's job, of an earlier window
            unseen = request(data.draw(st.integers(0, w)), data.draw(st.sampled_from(levels)), team="u")
            audited.append(audit(unseen, data.draw(st.sampled_from([None, *levels])), data.draw(gaps)))
        submitted += new
        audits += audited
        flags = m.observe(w, new, audited)
        first = max(0, w - 2)
        for team in m.teams:
            own = [a for a in audits if a.request.team == team]
            scope_audits = [a for a in own if a.request.submitted_window >= first]
            scope = _reference_audit_z(scope_audits)
            scope_sums = m.teams[team].sums(first, w)
            stated = m.stated_z(scope_sums)
            strengths = m.strengths_of(team, w)
            for kind, audit_value in zip(("priority_inflation", "deadline_compression", "carbon_flexibility_gaming"),
                                         scope, strict=True):
                z, basis = strengths[kind]
                assert z == pytest.approx(max(audit_value, stated[kind]), rel=1e-9, abs=1e-12)
                expected = (f"audits of {len(scope_audits)} jobs submitted in windows {first}–{w}"
                            if audit_value > stated[kind] + 1e-9 else
                            f"stated fields of {scope_sums['n']:.0f} requests in windows {first}–{w}")
                if abs(audit_value - stated[kind]) > 1e-9:  # a tie within rounding may go either way
                    assert basis == expected
            pattern_audit = sum(_reference_audit_z(own)) / math.sqrt(3.0)
            total = m.teams[team].sums(0, w)
            pattern_stated = sum(m.stated_z(total).values()) / math.sqrt(3.0) if total["n"] >= 4 else 0.0
            z, basis = strengths["pattern_gaming"]
            assert z == pytest.approx(max(pattern_audit, pattern_stated), rel=1e-9, abs=1e-12)
            if abs(pattern_audit - pattern_stated) > 1e-9:
                assert basis == (f"audits of {len(own)} jobs this episode" if pattern_audit > pattern_stated
                                 else f"stated fields of {total['n']:.0f} requests this episode")
        for flag in flags:  # a flag's evidence quotes its strength and the sentence above
            z, basis = m.strengths_of(flag.team, w)[flag.kind]
            assert flag.evidence.endswith(basis) and f"evidence z = {z:.1f}" in flag.evidence
    assert "u" in m.teams
