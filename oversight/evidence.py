"""What oversight knows about each team: its stated requests and the audits of its finished jobs, by window.

Everything here is computed from public facts. For each request the store keeps, against the public job-type
norms (``dcops.cluster.job_types``):

- ``priority_excess`` = stated level − the type's typical level, and its variance under honest reporting
  (the type's priority variance plus 0.1 for honest one-level slips);
- ``slack_deviation`` = stated slack − the type's typical slack, where stated slack = stated deadline window
  − the earliest completion window the stated duration allows, and its honest variance;
- ``inflexible`` (1 when stated not carbon-flexible) and its honest probability
  ``q = (1 − p_flex)·0.92 + p_flex·0.08`` (honest teams flip flexibility by mistake 8 % of the time);
- whether the description claims urgency.

For each audit: the deadline gap (true deadline window − stated, in windows), whether carbon flexibility was
hidden (truly flexible, stated not), and whether a HIGH/CRITICAL claim came with a deadline that proved to have
three or more windows of real slack ("urgency not real").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from dcops.cluster.job_types import JOB_TYPES, JobType
from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Priority, Request

HONEST_PRIORITY_SLIP_VAR = 0.1
HONEST_FLIP = 0.08
SLACK_SHIFT_VAR = 2.0 / 3.0  # a team's slack shift is −1, 0 or +1
DEADLINE_NOISE_VAR = 0.2


@dataclass(frozen=True)
class TypeNorm:
    """Per job type: typical priority level and honest variance, typical slack and its variance, and the honest
    probability of a request being stated inflexible."""

    typical_priority: float
    priority_var: float
    typical_slack: float
    slack_var: float
    inflexible_prob: float


def _norm(job_type: JobType) -> TypeNorm:
    lo, hi = job_type.slack_windows
    p_flex = job_type.flexible_prob
    return TypeNorm(
        typical_priority=job_type.typical_priority,
        priority_var=job_type.priority_std ** 2 + HONEST_PRIORITY_SLIP_VAR,
        typical_slack=job_type.typical_slack,
        slack_var=((hi - lo + 1) ** 2 - 1) / 12.0 + SLACK_SHIFT_VAR + DEADLINE_NOISE_VAR,
        inflexible_prob=(1.0 - p_flex) * (1.0 - HONEST_FLIP) + p_flex * HONEST_FLIP,
    )


NORMS: dict[str, TypeNorm] = {j.name: _norm(j) for j in JOB_TYPES}


@dataclass(slots=True)
class RequestEvidence:
    request_id: str
    window: int
    priority_excess: float
    slack_deviation: float
    inflexible: bool
    inflexible_prob: float
    urgent: bool
    stated_high: bool
    stated_earliest: int


class Aggregate(NamedTuple):
    """Sums over a set of requests, enough for every per-request statistic of the detectors: count, priority
    excess and its honest variance, slack deviation and its variance, stated-inflexible count, its honest
    expectation and variance, stated HIGH/CRITICAL count, urgent-description count."""

    n: float = 0.0
    excess: float = 0.0
    priority_var: float = 0.0
    slack: float = 0.0
    slack_var: float = 0.0
    inflexible: float = 0.0
    inflexible_expected: float = 0.0
    inflexible_var: float = 0.0
    high: float = 0.0
    urgent: float = 0.0

    @staticmethod
    def request_values(r: RequestEvidence, norm: TypeNorm) -> list[float]:
        q = norm.inflexible_prob
        return [1.0, r.priority_excess, norm.priority_var, r.slack_deviation, norm.slack_var,
                float(r.inflexible), q, q * (1.0 - q), float(r.stated_high), float(r.urgent)]


@dataclass(slots=True)
class AuditEvidence:
    request_id: str
    submitted_window: int
    deadline_gap: int
    truly_flexible: bool
    hidden_flexibility: bool
    urgency_not_real: bool


@dataclass
class TeamEvidence:
    """One team's public record: request evidence by window, running sums (prefix sums by window, so any
    window range costs one subtraction), and audits."""

    team: str
    by_window: dict[int, list[RequestEvidence]] = field(default_factory=dict)
    window_sums: dict[int, list[float]] = field(default_factory=dict)
    prefix: list[list[float]] = field(default_factory=list)
    audits: list[AuditEvidence] = field(default_factory=list)
    stated_earliest: dict[str, int] = field(default_factory=dict)

    def add_request(self, request: Request, window_h: float) -> None:
        norm = NORMS[request.job_type]
        item = request_evidence(request, window_h, norm)
        self.by_window.setdefault(item.window, []).append(item)
        values = Aggregate.request_values(item, norm)
        current = self.window_sums.get(item.window)
        self.window_sums[item.window] = values if current is None else [a + b for a, b in zip(current, values, strict=True)]
        self.stated_earliest[item.request_id] = item.stated_earliest

    def close_window(self, window: int) -> None:
        """Extend the prefix sums through ``window`` (call once per window, after its requests)."""
        zero = [0.0] * len(Aggregate._fields)
        while len(self.prefix) <= window:
            w = len(self.prefix)
            previous = self.prefix[-1] if self.prefix else zero
            added = self.window_sums.get(w, zero)
            self.prefix.append([a + b for a, b in zip(previous, added, strict=True)])

    @property
    def total(self) -> Aggregate:
        return Aggregate._make(self.prefix[-1]) if self.prefix else Aggregate()

    def scope(self, first_window: int, last_window: int) -> tuple[Aggregate, list[RequestEvidence], list[AuditEvidence]]:
        """Sums, requests and audits of the requests submitted in windows first..last (after close_window)."""
        first = max(0, first_window)
        upper = self.prefix[last_window]
        values = upper if first == 0 else [a - b for a, b in zip(upper, self.prefix[first - 1], strict=True)]
        requests = [r for w in range(first, last_window + 1) for r in self.by_window.get(w, ())]
        return Aggregate._make(values), requests, [a for a in self.audits if a.submitted_window >= first]


def stated_earliest(request: Request, window_h: float) -> int:
    """The earliest completion window the request's *stated* duration allows."""
    return request.submitted_window + max(1, math.ceil(request.duration_h / window_h - 1e-9)) - 1


def request_evidence(request: Request, window_h: float, norm: TypeNorm) -> RequestEvidence:
    earliest = stated_earliest(request, window_h)
    return RequestEvidence(
        request_id=request.request_id,
        window=request.submitted_window,
        priority_excess=float(int(request.priority)) - norm.typical_priority,
        slack_deviation=float(request.deadline_window - earliest) - norm.typical_slack,
        inflexible=not request.carbon_flexible,
        inflexible_prob=norm.inflexible_prob,
        urgent="URGENT" in request.description,
        stated_high=request.priority >= Priority.HIGH,
        stated_earliest=earliest,
    )


def audit_evidence(audit: AuditRecord, stated_earliest: int) -> AuditEvidence:
    request = audit.request
    return AuditEvidence(
        request_id=request.request_id,
        submitted_window=request.submitted_window,
        deadline_gap=audit.true_deadline_window - request.deadline_window,
        truly_flexible=audit.true_carbon_flexible,
        hidden_flexibility=audit.true_carbon_flexible and not request.carbon_flexible,
        urgency_not_real=request.priority >= Priority.HIGH and audit.true_deadline_window - stated_earliest >= 3,
    )
