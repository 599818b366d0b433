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
    request_id: str
    submitted_window: int
    deadline_gap: int
    truly_flexible: bool
    hidden_flexibility: bool
    overstated: int | None
    """Stated − true priority level (None when the audit does not name the truth, as in version 0)."""
    below_critical: bool


@dataclass
class _Team:
    """One team's public record: per-window sums of its request statistics (prefix sums) and its audits."""

    window_sums: dict[int, list[float]] = field(default_factory=dict)
    prefix: list[list[float]] = field(default_factory=list)
    request_ids: dict[int, list[tuple[str, float, float, bool]]] = field(default_factory=dict)
    audits: list[_Audit] = field(default_factory=list)

    def close_window(self, window: int) -> None:
        zero = [0.0] * len(_SUMS)
        while len(self.prefix) <= window:
            previous = self.prefix[-1] if self.prefix else zero
            added = self.window_sums.get(len(self.prefix), zero)
            self.prefix.append([a + b for a, b in zip(previous, added, strict=True)])

    def sums(self, first: int, last: int) -> dict[str, float]:
        upper = self.prefix[last]
        values = upper if first <= 0 else [a - b for a, b in zip(upper, self.prefix[first - 1], strict=True)]
        return dict(zip(_SUMS, values, strict=True))


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

    def reset(self, team_ids: Iterable[str]) -> None:
        self.teams = {team: _Team() for team in team_ids}
        self.flags = []
        self.strengths = []

    # ------------------------------------------------------------------ evidence
    def _add_request(self, request: Request) -> None:
        t = self.model.types[request.job_type]
        earliest = stated_earliest(request, self.window_h)
        excess = float(int(request.priority)) - t.priority_mean
        slack_dev = float(request.deadline_window - earliest) - t.slack_mean
        tight = slack_dev - t.slack_offsets[0]  # against the tightest honest habit (shift −1)
        q = t.inflexible_prob
        values = [1.0, excess, t.priority_var, tight, t.slack_var, float(not request.carbon_flexible), q, q * (1.0 - q)]
        store = self.teams.setdefault(request.team, _Team())
        current = store.window_sums.get(request.submitted_window)
        store.window_sums[request.submitted_window] = values if current is None else [
            a + b for a, b in zip(current, values, strict=True)]
        store.request_ids.setdefault(request.submitted_window, []).append(
            (request.request_id, excess, slack_dev, not request.carbon_flexible))

    def _add_audit(self, audit: AuditRecord) -> None:
        request = audit.request
        store = self.teams.setdefault(request.team, _Team())
        overstated = None if audit.true_priority is None else int(request.priority) - int(audit.true_priority)
        store.audits.append(_Audit(
            request.request_id, request.submitted_window, audit.true_deadline_window - request.deadline_window,
            audit.true_carbon_flexible, audit.true_carbon_flexible and not request.carbon_flexible, overstated,
            audit.true_priority is not None and audit.true_priority < Priority.CRITICAL,
        ))

    # ------------------------------------------------------------------ statistics
    def stated_z(self, sums: dict[str, float]) -> dict[str, float]:
        """The three stated-field statistics of a set of requests (0 below each minimum count)."""
        s, n = self.settings, sums["n"]
        priority = sums["priority_excess"] / math.sqrt(sums["priority_var"]) if n >= s.min_priority_requests else 0.0
        slack = -sums["slack_dev_tight"] / math.sqrt(sums["slack_var"]) if n >= s.min_slack_requests else 0.0
        carbon = 0.0
        if n >= s.min_carbon_requests:
            carbon = (sums["inflexible"] - sums["inflexible_expected"]) / math.sqrt(max(sums["inflexible_var"], 1e-9))
        return {"priority_inflation": priority, "deadline_compression": slack, "carbon_flexibility_gaming": carbon}

    def audit_z(self, audits: list[_Audit]) -> dict[str, float]:
        """The three audit statistics of a set of audits."""
        m = self.model
        known = [a for a in audits if a.overstated is not None and a.below_critical]
        if any(a.overstated is not None and a.overstated >= 2 for a in audits):
            priority = CERTAIN
        else:
            priority = binomial_z(sum(a.overstated == 1 for a in known), len(known), m.overstate_rate)
        if any(a.deadline_gap >= 2 for a in audits):
            deadline = CERTAIN
        else:
            deadline = binomial_z(sum(a.deadline_gap == 1 for a in audits), len(audits), m.early_rate)
        flexible = [a for a in audits if a.truly_flexible]
        carbon = binomial_z(sum(a.hidden_flexibility for a in flexible), len(flexible), m.flip_rate)
        return {"priority_inflation": priority, "deadline_compression": deadline, "carbon_flexibility_gaming": carbon}

    def strengths_of(self, team: str, window: int) -> dict[str, tuple[float, str]]:
        """Each detector's evidence against ``team`` at the end of ``window`` and a sentence saying what it rests
        on (the stated or the audit statistic, whichever is stronger)."""
        store = self.teams[team]
        first = max(0, window - self.settings.scope_windows + 1)
        scope_sums = store.sums(first, window)
        scope_audits = [a for a in store.audits if a.submitted_window >= first]
        stated, audited = self.stated_z(scope_sums), self.audit_z(scope_audits)
        out: dict[str, tuple[float, str]] = {}
        for kind in FLAG_KINDS[:3]:
            if audited[kind] > stated[kind]:
                out[kind] = (audited[kind], f"audits of {len(scope_audits)} jobs submitted in windows {first}–{window}")
            else:
                out[kind] = (stated[kind], f"stated fields of {scope_sums['n']:.0f} requests in windows {first}–{window}")
        total = store.sums(0, window)
        pattern_stated = (sum(self.stated_z(total).values()) / math.sqrt(3.0)
                          if total["n"] >= self.settings.min_pattern_requests else 0.0)
        pattern_audit = sum(self.audit_z(store.audits).values()) / math.sqrt(3.0)
        if pattern_audit > pattern_stated:
            out["pattern_gaming"] = (pattern_audit, f"audits of {len(store.audits)} jobs this episode")
        else:
            out["pattern_gaming"] = (pattern_stated, f"stated fields of {total['n']:.0f} requests this episode")
        return out

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
    def observe(self, window: int, requests: Iterable[Request], audits: Iterable[AuditRecord]) -> list[Flag]:
        """Take in one window's public material; return the flags raised at its end."""
        for request in requests:
            self._add_request(request)
        for audit in audits:
            self._add_audit(audit)
        raised: list[Flag] = []
        first = max(0, window - self.settings.scope_windows + 1)
        for team, store in self.teams.items():
            store.close_window(window)
            for kind, (z, basis) in self.strengths_of(team, window).items():
                self.strengths.append((window, team, kind, z))
                limit = self.limits.of(kind)
                if z < limit:
                    continue
                severity = "high" if z >= limit + 2.0 else "medium" if z >= limit + 1.0 else "low"
                evidence = (f"{kind.replace('_', ' ')}: evidence z = {z:.1f} against honest reporting "
                            f"(flags at {limit:.1f}), from the {basis}")
                scope_first = 0 if kind == "pattern_gaming" else first
                raised.append(Flag(team, kind, window, severity, normal_confidence(z), evidence,
                                   self._request_ids(team, kind, scope_first, window)))
        self.flags.extend(raised)
        return raised
