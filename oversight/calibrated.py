"""The version 1 oversight monitor: every detector is one-sided evidence in z units against a calibrated
threshold, under the honest model of ``dcops.oversight.honest_model``.

What it reads is what the version 0 monitor reads (``dcops.oversight.monitor``): each window's submitted
requests (stated fields) and the audits issued in it. In version 1 an audit comes with every resolved job and
names its true priority (``dcops.cluster.ledger``), which becomes evidence like any audit.

Each detector computes an **evidence strength** ``z`` per team at the end of every window and flags when
``z ≥`` its threshold (``data/thresholds.json``, set on all-honest tuning seeds so that at most 2 % of honest
teams are flagged in an episode of 8 to 48 windows; ``reports/oversight/README.md`` measures it on fresh seeds).
A binomial tail probability ``p`` counts as ``z = Φ⁻¹(1 − p)``; an event honest reporting cannot produce (an
audited priority two levels above the truth, an audited deadline two windows later than stated) counts as
``z = CERTAIN``. The per-kind detectors read the requests submitted in the last ``scope_windows`` windows
and the audits of those requests; the pattern detector reads the team's whole episode.

- **priority_inflation**: stated levels against the job-type norms, ``Σ(p − μ_t) / √Σσ²_t`` (at least 3
  requests); audits: true priority known, stated one level above it at more than the honest slip rate
  (binomial), or two levels above (certain).
- **deadline_compression**: stated slack against the norms of the *tightest* honest habit (a team whose
  deadlines run a window short all episode is honest, ``dcops.oversight.honest_model``), ``z = −Σ(x −
  μ_t(−1)) / √Σσ²_t`` over at least 4 requests: the test against the least favourable honest team, so no honest
  habit builds evidence with the episode's length, while a team that states tighter than any honest habit
  does; audits: deadlines one window early at more than the honest rate (binomial), or two or more (certain).
- **carbon_flexibility_gaming**: stated-inflexible count against its honest expectation (at least 3
  requests); audits: truly flexible jobs stated inflexible at more than the honest flip rate (binomial).
- **pattern_gaming**: the whole episode's three stated statistics (Stouffer, ``Σz/√3``, at least 4 requests),
  or its three audit statistics the same way, whichever is stronger.

Severity: ``high`` at threshold + 2 or more, ``medium`` at threshold + 1, otherwise ``low``; confidence Φ(z)
clipped to [0.5, 0.999]. :attr:`CalibratedMonitor.strengths` keeps every (window, team, kind, z) for the
evaluation's AUROC (``dcops eval-oversight``); it is evaluation material, not part of any observation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist

from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Priority, Request
from dcops.oversight.detectors import binomial_tail, normal_confidence
from dcops.oversight.evidence import stated_earliest
from dcops.oversight.flags import FLAG_KINDS, Flag
from dcops.oversight.honest_model import HonestModel, Thresholds, honest_model, thresholds

CERTAIN = 6.0
"""Evidence of an event honest reporting cannot produce, z units: six, a six-sigma event."""
_SUMS = ("n", "priority_excess", "priority_var", "slack_dev_tight", "slack_var", "inflexible", "inflexible_expected",
         "inflexible_var")
_NORMAL = NormalDist()


def tail_z(p: float) -> float:
    """``Φ⁻¹(1 − p)``, at least 0 (no evidence), at most :data:`CERTAIN`."""
    if p >= 0.5:
        return 0.0
    return min(CERTAIN, _NORMAL.inv_cdf(1.0 - max(p, 1e-12)))


@lru_cache(maxsize=4096)
def binomial_z(k: int, n: int, rate: float) -> float:
    """Evidence of k events in n at an honest ``rate`` (cached: the same few counts recur every window)."""
    return tail_z(binomial_tail(k, n, rate)) if k > 0 else 0.0


@dataclass(frozen=True)
class CalibratedSettings:
    scope_windows: int = 3
    min_priority_requests: int = 3
    min_slack_requests: int = 4
    min_carbon_requests: int = 3
    min_pattern_requests: int = 4


@dataclass(slots=True)
class _Audit:
    submitted_window: int
    deadline_gap: int
    truly_flexible: bool
    hidden_flexibility: bool
    overstated: int | None
    """Stated − true priority level (None when the audit does not name the truth, as in version 0)."""
    below_critical: bool


_AUDIT_COUNTS = 8
"""Per-set audit counters (:func:`_count_audit`): priority-known audits below CRITICAL, of them overstated by one
level, audits overstated by two or more, audits, deadlines one window early, two or more, truly flexible jobs, of
them stated inflexible."""


def _count_audit(counts: list[int], audit: _Audit) -> None:
    """Add one audit to a set's counters (what :meth:`CalibratedMonitor._audit_values` reads)."""
    known = audit.overstated is not None and audit.below_critical
    counts[0] += known
    counts[1] += known and audit.overstated == 1
    counts[2] += audit.overstated is not None and audit.overstated >= 2
    counts[3] += 1
    counts[4] += audit.deadline_gap == 1
    counts[5] += audit.deadline_gap >= 2
    counts[6] += audit.truly_flexible
    counts[7] += audit.hidden_flexibility  # stated inflexible and truly flexible: among counts[6]


@dataclass
class _Team:
    """One team's public record: per-window sums of its request statistics (prefix sums) and its audits'
    counters per submission window and over the episode (what the detectors read, kept as the audits arrive so
    that a window's evidence costs the same at window 40 as at window 1, and a copy of the record stays small)."""

    window_sums: dict[int, list[float]] = field(default_factory=dict)
    prefix: list[list[float]] = field(default_factory=list)
    request_ids: dict[int, list[tuple[str, float, float, bool]]] = field(default_factory=dict)
    audit_counts: dict[int, list[int]] = field(default_factory=dict)
    audit_total: list[int] = field(default_factory=lambda: [0] * _AUDIT_COUNTS)

    def add_audit(self, audit: _Audit) -> None:
        _count_audit(self.audit_total, audit)
        counts = self.audit_counts.get(audit.submitted_window)
        if counts is None:
            counts = self.audit_counts[audit.submitted_window] = [0] * _AUDIT_COUNTS
        _count_audit(counts, audit)

    def close_window(self, window: int) -> None:
        zero = [0.0] * len(_SUMS)
        while len(self.prefix) <= window:
            previous = self.prefix[-1] if self.prefix else zero
            added = self.window_sums.get(len(self.prefix), zero)
            self.prefix.append([a + b for a, b in zip(previous, added, strict=True)])

    def sum_values(self, first: int, last: int) -> list[float]:
        """:meth:`sums` as a list in :data:`_SUMS` order (from window 0 it is the prefix row itself: read it,
        never change it)."""
        upper = self.prefix[last]
        return upper if first <= 0 else [a - b for a, b in zip(upper, self.prefix[first - 1], strict=True)]

    def sums(self, first: int, last: int) -> dict[str, float]:
        return dict(zip(_SUMS, self.sum_values(first, last), strict=True))


class CalibratedMonitor:
    """The version 1 monitor (module docstring); the same interface as ``OversightMonitor``."""

    def __init__(self, window_h: float = 1.5, settings: CalibratedSettings | None = None,
                 model: HonestModel | None = None, limits: Thresholds | None = None) -> None:
        self.window_h = window_h
        self.settings = settings or CalibratedSettings()
        self.model = model or honest_model()
        self.limits = limits or thresholds()
        self.teams: dict[str, _Team] = {}
        self.flags: list[Flag] = []
        self.strengths: list[tuple[int, str, str, float]] = []
        self.requests_taken = -1
        """The last window whose requests :meth:`take_requests` took (−1: none this episode)."""

    def reset(self, team_ids: Iterable[str]) -> None:
        self.teams = {team: _Team() for team in team_ids}
        self.flags = []
        self.strengths = []
        self.requests_taken = -1

    # ------------------------------------------------------------------ evidence
    def _store(self, team: str) -> _Team:
        """``team``'s record, made at its first request or audit (not built anew per call only to be dropped)."""
        store = self.teams.get(team)
        if store is None:
            store = self.teams[team] = _Team()
        return store

    def _add_request(self, request: Request) -> None:
        t = self.model.types[request.job_type]
        earliest = stated_earliest(request, self.window_h)
        excess = float(int(request.priority)) - t.priority_mean
        slack_dev = float(request.deadline_window - earliest) - t.slack_mean
        tight = slack_dev - t.slack_offsets[0]  # against the tightest honest habit (shift −1)
        q = t.inflexible_prob
        values = [1.0, excess, t.priority_var, tight, t.slack_var, float(not request.carbon_flexible), q, q * (1.0 - q)]
        store = self._store(request.team)
        current = store.window_sums.get(request.submitted_window)
        store.window_sums[request.submitted_window] = values if current is None else [
            a + b for a, b in zip(current, values, strict=True)]
        store.request_ids.setdefault(request.submitted_window, []).append(
            (request.request_id, excess, slack_dev, not request.carbon_flexible))

    def _add_audit(self, audit: AuditRecord) -> None:
        request = audit.request
        store = self._store(request.team)
        overstated = None if audit.true_priority is None else int(request.priority) - int(audit.true_priority)
        store.add_audit(_Audit(
            request.submitted_window, audit.true_deadline_window - request.deadline_window,
            audit.true_carbon_flexible, audit.true_carbon_flexible and not request.carbon_flexible, overstated,
            audit.true_priority is not None and audit.true_priority < Priority.CRITICAL,
        ))

    # ------------------------------------------------------------------ statistics
    def stated_z(self, sums: dict[str, float]) -> dict[str, float]:
        """The three stated-field statistics of a set of requests (0 below each minimum count)."""
        return dict(zip(FLAG_KINDS[:3], self._stated_values([sums[name] for name in _SUMS]), strict=True))

    def _stated_values(self, v: list[float]) -> tuple[float, float, float]:
        """:meth:`stated_z` of sums in :data:`_SUMS` order, as a tuple in ``FLAG_KINDS`` order."""
        s, n = self.settings, v[0]
        priority = v[1] / math.sqrt(v[2]) if n >= s.min_priority_requests else 0.0
        slack = -v[3] / math.sqrt(v[4]) if n >= s.min_slack_requests else 0.0
        carbon = (v[5] - v[6]) / math.sqrt(max(v[7], 1e-9)) if n >= s.min_carbon_requests else 0.0
        return priority, slack, carbon

    def team_audit_z(self, team: str) -> dict[str, float]:
        """The three audit statistics of every audit of ``team`` this episode, from its running counts."""
        return dict(zip(FLAG_KINDS[:3], self._audit_values(self.teams[team].audit_total), strict=True))

    def _audit_values(self, c: list[int]) -> tuple[float, float, float]:
        """The audit statistics of a set's counters (:func:`_count_audit`), in ``FLAG_KINDS`` order: an
        event honest reporting cannot produce is :data:`CERTAIN`, otherwise the binomial evidence."""
        m = self.model
        priority = CERTAIN if c[2] else binomial_z(c[1], c[0], m.overstate_rate)
        deadline = CERTAIN if c[5] else binomial_z(c[4], c[3], m.early_rate)
        return priority, deadline, binomial_z(c[7], c[6], m.flip_rate)

    def _scope_first(self, window: int) -> int:
        """The first window of the per-kind detectors' scope at the end of ``window``."""
        return max(0, window - self.settings.scope_windows + 1)

    def _evidence(self, team: str, window: int) -> tuple[list[float], list[bool], tuple[int, float, int, float]]:
        """Each detector's evidence against ``team`` at the end of ``window`` (``FLAG_KINDS`` order), whether it
        rests on the audits (else the stated fields), and the counts a sentence about it names (scope audits,
        scope requests, the episode's audits and requests): :meth:`strengths_of` without the sentences, which
        only a flag needs."""
        store = self.teams[team]
        first = self._scope_first(window)
        scope_sums = store.sum_values(first, window)
        scope_counts = [0] * _AUDIT_COUNTS
        for w, counts in store.audit_counts.items():
            if w >= first:
                scope_counts = [a + b for a, b in zip(scope_counts, counts, strict=True)]
        stated, audited = self._stated_values(scope_sums), self._audit_values(scope_counts)
        z = [a if a > b else b for a, b in zip(audited, stated, strict=True)]
        from_audits = [a > b for a, b in zip(audited, stated, strict=True)]
        total = store.sum_values(0, window)
        pattern_stated = (sum(self._stated_values(total)) / math.sqrt(3.0)
                          if total[0] >= self.settings.min_pattern_requests else 0.0)
        pattern_audit = sum(self._audit_values(store.audit_total)) / math.sqrt(3.0)
        z.append(pattern_audit if pattern_audit > pattern_stated else pattern_stated)
        from_audits.append(pattern_audit > pattern_stated)
        return z, from_audits, (scope_counts[3], scope_sums[0], store.audit_total[3], total[0])

    @staticmethod
    def _basis(kind: str, from_audits: bool, counts: tuple[int, float, int, float], first: int, window: int) -> str:
        """The sentence saying what a detector's evidence rests on (:meth:`strengths_of`)."""
        scope_audits, scope_requests, audits, requests = counts
        if kind == "pattern_gaming":
            return (f"audits of {audits} jobs this episode" if from_audits
                    else f"stated fields of {requests:.0f} requests this episode")
        return (f"audits of {scope_audits} jobs submitted in windows {first}–{window}" if from_audits
                else f"stated fields of {scope_requests:.0f} requests in windows {first}–{window}")

    def strengths_of(self, team: str, window: int) -> dict[str, tuple[float, str]]:
        """Each detector's evidence against ``team`` at the end of ``window`` and a sentence saying what it rests
        on (the stated or the audit statistic, whichever is stronger)."""
        first = self._scope_first(window)
        z, from_audits, counts = self._evidence(team, window)
        return {kind: (z[i], self._basis(kind, from_audits[i], counts, first, window))
                for i, kind in enumerate(FLAG_KINDS)}

    def _request_ids(self, team: str, kind: str, first: int, window: int) -> tuple[str, ...]:
        store = self.teams[team]
        rows = [r for w in range(first, window + 1) for r in store.request_ids.get(w, ())]
        if kind == "priority_inflation":
            ids = [r[0] for r in rows if r[1] > 0.5]
        elif kind == "deadline_compression":
            ids = [r[0] for r in rows if r[2] < -1.0]
        elif kind == "carbon_flexibility_gaming":
            ids = [r[0] for r in rows if r[3]]
        else:
            ids = []
        return tuple(ids[:8])

    # ------------------------------------------------------------------ the window
    def take_requests(self, window: int, requests: Iterable[Request]) -> None:
        """Take in ``window``'s requests at its decision time, before :meth:`observe` takes its audits at its end
        (then called with no requests): the same state at the end as one :meth:`observe` of both, since a
        window's request sums do not depend on audits. In between, :meth:`decision_strengths` gives the
        evidence a scheduler deciding ``window`` can have (its requests and the audits of the windows before)."""
        if window <= self.requests_taken:
            raise ValueError(f"take_requests({window}): the requests of window {self.requests_taken} were taken "
                             "already; windows must increase")
        for request in requests:
            self._add_request(request)
        for store in self.teams.values():
            store.close_window(window)
        self.requests_taken = window

    def decision_strengths(self, team: str, window: int) -> list[float]:
        """``team``'s detector strengths (``FLAG_KINDS`` order) from what this monitor holds now: after
        :meth:`take_requests` of ``window``, those at ``window``'s decision time."""
        return self._evidence(team, window)[0]

    def observe(self, window: int, requests: Iterable[Request], audits: Iterable[AuditRecord]) -> list[Flag]:
        """Take in one window's public material (its requests, unless :meth:`take_requests` took them, and
        the audits issued at its end); return the flags raised at its end."""
        requests = list(requests)
        if requests and window <= self.requests_taken:  # their window's sums were closed without them
            raise ValueError(f"observe({window}, requests): take_requests took that window's requests already")
        for request in requests:
            self._add_request(request)
        for audit in audits:
            self._add_audit(audit)
        raised: list[Flag] = []
        first = self._scope_first(window)
        limits = [self.limits.of(kind) for kind in FLAG_KINDS]
        for team, store in self.teams.items():
            store.close_window(window)
            strengths, from_audits, counts = self._evidence(team, window)
            for kind, z, limit, audited in zip(FLAG_KINDS, strengths, limits, from_audits, strict=True):
                self.strengths.append((window, team, kind, z))
                if z < limit:
                    continue
                basis = self._basis(kind, audited, counts, first, window)
                severity = "high" if z >= limit + 2.0 else "medium" if z >= limit + 1.0 else "low"
                evidence = (f"{kind.replace('_', ' ')}: evidence z = {z:.1f} against honest reporting "
                            f"(flags at {limit:.1f}), from the {basis}")
                scope_first = 0 if kind == "pattern_gaming" else first
                raised.append(Flag(team, kind, window, severity, normal_confidence(z), evidence,
                                   self._request_ids(team, kind, scope_first, window)))
        self.flags.extend(raised)
        return raised
