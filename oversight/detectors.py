"""The four detectors. Each reads one team's public evidence (``dcops.oversight.evidence``) and may raise a flag.

Scope: the three per-request detectors judge the requests a team submitted in the last ``scope_windows``
windows (default 3: this one and the two before) and the audits of those requests received so far, so a team
that stops misreporting stops being flagged. The pattern detector looks at the team's whole episode.

- **Priority inflation**: ``z = Σ excess / √Σ var`` over the scope (excess = stated − typical priority level of
  the job type). Flag when at least 3 requests, z ≥ 2.3 and the mean excess ≥ 0.35 level; with audit support
  (a HIGH/CRITICAL claim whose real deadline had ≥ 3 windows of slack) z ≥ 1.8 suffices.
- **Deadline compression**: audits first: an honest estimate is at most one window early, so any audited
  deadline that proved 2+ windows later than stated is flagged; so is a count of 1-window-early audits (at
  least 2) that would happen with probability < 0.05 under the honest 20 % rate. Before audits: the stated
  slack against the job-type norm, ``z = Σ deviation / √Σ var ≤ −3`` with a mean deviation of at most −1.75
  windows, over at least 4 requests (an honest team's own habits shift its slack by up to a window, so the
  pre-audit test is strict).
- **Carbon-flexibility gaming**: stated-inflexible count against its honest expectation (sum of Bernoulli
  q_j): ``z = (k − Σq) / √Σq(1−q) ≥ 2.3`` over at least 3 requests; or audits showing hidden flexibility at a
  rate with probability < 0.05 under the honest 8 % flip rate (at least 2 cases).
- **Pattern gaming** (team level): over the whole episode, the same three statistics; flag when two or more
  exceed 1.5, or their positive parts sum to 5 or more (consistent, many-sided misreporting that each
  per-kind detector may find too weak on its own).

Each z is 0 over a scope without requests (no evidence). Severity: ``high`` for strong evidence (z ≥ 4, or two
or more 2-window audit gaps, or hidden flexibility with p < 0.001), ``medium`` for z ≥ 3 (and for one 2-window
gap, or hidden flexibility with p ≥ 0.001), otherwise ``low``; for pattern gaming the z is the sum of the
positive parts less 1. Confidence is the one-sided normal (or binomial) probability that an honest team would
NOT show evidence this strong, clipped to [0.5, 0.999]; for pattern gaming, Φ(sum / √3) (three unit normals).

A flag names at most 8 of the requests it rests on, in submission order: those stated more than half a level
above their norm (priority); the audits 2+ windows late, or else the 1-window-early ones, or else the requests
whose stated slack is more than a window tighter than the norm (deadline); the audits that found hidden
flexibility, or else the requests stated inflexible whose job type is usually flexible, q < 0.5 (carbon); none
(pattern). Its evidence sentence gives the numbers behind it (scope windows, mean excess, mean audit gap, mean
slack, counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dcops.oversight.evidence import Aggregate, AuditEvidence, RequestEvidence, TeamEvidence
from dcops.oversight.flags import Flag


def normal_confidence(z: float) -> float:
    """Φ(z) clipped to [0.5, 0.999]."""
    return min(0.999, max(0.5, 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))))


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    return float(sum(math.comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(k, n + 1)))


def _severity(z: float) -> str:
    return "high" if z >= 4.0 else "medium" if z >= 3.0 else "low"


def priority_z(agg: Aggregate) -> float:
    return agg.excess / math.sqrt(agg.priority_var) if agg.n > 0 else 0.0


def slack_z(agg: Aggregate) -> float:
    return agg.slack / math.sqrt(agg.slack_var) if agg.n > 0 else 0.0


def inflexible_z(agg: Aggregate) -> float:
    if agg.n <= 0:
        return 0.0
    return (agg.inflexible - agg.inflexible_expected) / math.sqrt(max(agg.inflexible_var, 1e-9))


@dataclass(frozen=True)
class DetectorSettings:
    scope_windows: int = 3
    priority_z: float = 2.3
    priority_z_with_audit: float = 1.8
    priority_min_excess: float = 0.35
    slack_z: float = -3.0
    slack_min_mean: float = -1.75
    carbon_z: float = 2.3
    audit_p: float = 0.05
    honest_early_rate: float = 0.2
    honest_flip_rate: float = 0.08
    pattern_single: float = 1.5
    pattern_sum: float = 5.0


def detect_priority_inflation(team: str, window: int, agg: Aggregate, requests: list[RequestEvidence],
                              audits: list[AuditEvidence], s: DetectorSettings) -> Flag | None:
    if agg.n < 3:
        return None
    z = priority_z(agg)
    mean_excess = agg.excess / agg.n
    not_real = [a.request_id for a in audits if a.urgency_not_real]
    threshold = s.priority_z_with_audit if not_real else s.priority_z
    if z < threshold or mean_excess < s.priority_min_excess:
        return None
    evidence = (f"{agg.high:.0f} of {agg.n:.0f} requests in windows {max(0, window - s.scope_windows + 1)}–{window} "
                f"stated HIGH/CRITICAL; stated priority is {mean_excess:+.2f} levels above the job-type norm "
                f"on average (z = {z:.1f})")
    if agg.urgent:
        evidence += f"; {agg.urgent:.0f} descriptions claim urgency"
    if not_real:
        evidence += f"; audits of {len(not_real)} high-priority jobs found 3+ windows of real deadline slack"
    ids = tuple(r.request_id for r in requests if r.priority_excess > 0.5)[:8]
    return Flag(team, "priority_inflation", window, _severity(z), normal_confidence(z), evidence, ids)


def detect_deadline_compression(team: str, window: int, agg: Aggregate, requests: list[RequestEvidence],
                                audits: list[AuditEvidence], s: DetectorSettings) -> Flag | None:
    far = [a for a in audits if a.deadline_gap >= 2]
    if far:
        confidence = 0.999 if len(far) >= 2 else 0.97
        evidence = (f"audits of {len(far)} finished jobs found real deadlines 2+ windows later than stated "
                    f"(mean gap {sum(a.deadline_gap for a in far) / len(far):.1f} windows); honest estimates are at "
                    f"most one window early")
        return Flag(team, "deadline_compression", window, "high" if len(far) >= 2 else "medium", confidence,
                    evidence, tuple(a.request_id for a in far)[:8])
    early = [a for a in audits if a.deadline_gap >= 1]
    if len(early) >= 2:
        p = binomial_tail(len(early), len(audits), s.honest_early_rate)
        if p < s.audit_p:
            evidence = (f"{len(early)} of {len(audits)} audited jobs had real deadlines a window later than "
                        f"stated (p = {p:.3f} for honest estimation error)")
            return Flag(team, "deadline_compression", window, "low", min(0.999, 1.0 - p), evidence,
                        tuple(a.request_id for a in early)[:8])
    if agg.n >= 4:
        z = slack_z(agg)
        if z <= s.slack_z and agg.slack / agg.n <= s.slack_min_mean:
            evidence = (f"stated deadlines leave {agg.slack / agg.n:+.2f} windows of slack against the job-type norm "
                        f"over {agg.n:.0f} requests (z = {z:.1f}); no audit contradicts them yet")
            ids = tuple(r.request_id for r in requests if r.slack_deviation < -1.0)[:8]
            return Flag(team, "deadline_compression", window, _severity(-z), normal_confidence(-z), evidence, ids)
    return None


def detect_carbon_gaming(team: str, window: int, agg: Aggregate, requests: list[RequestEvidence],
                         audits: list[AuditEvidence], s: DetectorSettings) -> Flag | None:
    flexible_audits = [a for a in audits if a.truly_flexible]
    hidden = [a for a in flexible_audits if a.hidden_flexibility]
    if len(hidden) >= 2:
        p = binomial_tail(len(hidden), len(flexible_audits), s.honest_flip_rate)
        if p < s.audit_p:
            evidence = (f"audits found {len(hidden)} of {len(flexible_audits)} finished carbon-flexible jobs had "
                        f"been stated inflexible (p = {p:.3f} for honest mistakes)")
            return Flag(team, "carbon_flexibility_gaming", window, "high" if p < 0.001 else "medium",
                        min(0.999, 1.0 - p), evidence, tuple(a.request_id for a in hidden)[:8])
    if agg.n < 3:
        return None
    z = inflexible_z(agg)
    if z < s.carbon_z:
        return None
    evidence = (f"{agg.inflexible:.0f} of {agg.n:.0f} requests stated not carbon-flexible where job-type norms expect "
                f"{agg.inflexible_expected:.1f} (z = {z:.1f})")
    ids = tuple(r.request_id for r in requests if r.inflexible and r.inflexible_prob < 0.5)[:8]
    return Flag(team, "carbon_flexibility_gaming", window, _severity(z), normal_confidence(z), evidence, ids)


def detect_pattern_gaming(team: str, window: int, store: TeamEvidence, s: DetectorSettings) -> Flag | None:
    agg = store.total
    if agg.n < 4:
        return None
    zs = {"priority": priority_z(agg), "deadline slack": -slack_z(agg), "carbon flexibility": inflexible_z(agg)}
    strong = [name for name, z in zs.items() if z >= s.pattern_single]
    total = sum(max(0.0, z) for z in zs.values())
    if len(strong) < 2 and total < s.pattern_sum:
        return None
    audit_hits = sum(a.deadline_gap >= 2 or a.hidden_flexibility or a.urgency_not_real for a in store.audits)
    parts = ", ".join(f"{name} z = {z:.1f}" for name, z in zs.items())
    evidence = (f"over {agg.n:.0f} requests this episode the team's statements lean the same way on several "
                f"fields ({parts})")
    if audit_hits:
        evidence += f"; {audit_hits} audits contradicted its statements"
    return Flag(team, "pattern_gaming", window, _severity(total - 1.0), normal_confidence(total / math.sqrt(3.0)),
                evidence, ())
