"""The admission ledger: every request's lifecycle, scored exactly once, plus chargeback and audits.

Lifecycle::

    PENDING ──ACCEPT──► QUEUED ──placed at a window start──► RUNNING ──true runtime elapsed──► DONE
       │  ▲                (waits while no zone fits)
       │  └─DEFER(w')── DEFERRED (pending again in window w')
       └──REJECT──► REJECTED

Independently of that state, each job gets exactly one throughput outcome (``dcops.cluster.reward``): on time,
missed (true deadline window ended first), rejected, or unfinished (horizon). :meth:`Ledger.score` refuses a
second outcome, which is what makes repeated or duplicate decisions worthless. Carbon is booked once per job
that ran, when it completes or at the horizon.

**Chargeback**: accepting a request debits its stated chargeback from its team's budget; a debit past zero is
allowed (the job is the operator's call) and booked as overdraft in ``info``.

**Audits**: in game version 0, when a job completes, an :class:`AuditRecord` reveals what the operator can
then verify: the realised runtime, the true deadline window and whether the job was truly carbon-flexible; the
true priority is never revealed before the episode ends. But the window reward is computed from the true value
of every job resolved in the window, so a scheduler could solve it for the weights of unaudited jobs (the
decoding attack of ``tests/cluster/test_resolution_audit.py``). From version 1 **resolution is an audit**: the
window a job's throughput outcome is booked (on time, missed, rejected or unfinished) the operator learns
everything that outcome was computed from (true priority, runtime, deadline and flexibility), the outcome and
its score, so the reward says nothing about a job that its audit does not (and the oversight monitor uses the
true priority as evidence, as it uses any audit). This is how chargeback reconciliation works in practice:
once a job is settled the owner's claim is checked against what happened. The alternative, a reward that pays
only in aggregates no one can attribute (the episode's end, say), would blur credit assignment for every
learner to defend against one attack. A version 1 audit is issued once per job, at resolution; a job that
missed its deadline and runs on issues no second one when it completes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from dcops.cluster.allocation import ZonePool
from dcops.cluster.decisions import DecisionBatch, DecisionKind
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
from dcops.cluster.reward import (
    WindowScore,
    job_value,
    missed_score,
    on_time_score,
    rejected_score,
    unfinished_score,
)


class Status(IntEnum):
    PENDING = 0
    DEFERRED = 1
    QUEUED = 2
    RUNNING = 3
    DONE = 4
    REJECTED = 5


N_STATUS = len(Status)
_DECISION_NAMES = {kind: kind.name for kind in DecisionKind}  # cheaper than the enum's ``name`` property


@dataclass(slots=True)
class Job:
    """A request and everything that happened to it (ledger-internal: holds the truth)."""

    request: Request
    truth: RequestTruth
    tactics: frozenset[str]
    value: float
    runtime_steps: int
    status: Status = Status.PENDING
    accepted_window: int | None = None
    start_window: int | None = None
    start_step: int | None = None
    end_step: int | None = None
    zone: int | None = None
    outcome: str | None = None
    score: float = 0.0
    scored_window: int | None = None
    carbon_booked: bool = False


@dataclass(slots=True)
class AuditRecord:
    """What the operator learns about a job when it completes (version 0) or is resolved (version 1; module
    docstring), public from then on. ``completed_window`` is the window of the audit (of the resolution, from
    version 1, whether or not the job ran); ``realised_runtime_h`` is the true runtime in whole physics steps (for
    a job that never ran, the runtime it would have had); the last four fields are ``None`` in version 0.

    Treat it as immutable (it is not frozen, as :class:`~dcops.cluster.requests.Request` is not, because a frozen
    dataclass takes about 2.5 times as long to build, and a window issues one per resolved job)."""

    request: Request
    realised_runtime_h: float
    true_deadline_window: int
    true_carbon_flexible: bool
    completed_window: int
    on_time: bool
    true_priority: Priority | None = None
    true_runtime_h: float | None = None
    outcome: str | None = None
    score: float | None = None

    def public_dict(self) -> dict[str, Any]:
        return {**self.request.public_dict(), **self.revealed_dict()}

    def revealed_dict(self) -> dict[str, Any]:
        """Only what the audit adds to the public request."""
        revealed: dict[str, Any] = {
            "realised_runtime_h": self.realised_runtime_h,
            "true_deadline_window": self.true_deadline_window,
            "true_carbon_flexible": self.true_carbon_flexible,
            "completed_window": self.completed_window,
            "on_time": self.on_time,
        }
        if self.outcome is not None:  # a version 1 resolution audit
            assert self.true_priority is not None
            revealed.update(true_priority=self.true_priority.name, true_runtime_h=self.true_runtime_h,
                            outcome=self.outcome, score=self.score)
        return revealed


class Ledger:
    """All jobs of an episode (see the module docstring)."""

    def __init__(self, team_ids: list[str], budget: float, steps_per_window: int, dt_s: float, n_windows: int,
                 game_version: int = 0) -> None:
        self.game_version = game_version
        self.jobs: dict[str, Job] = {}
        self.order: list[str] = []
        self.pending_at: dict[int, list[str]] = {}
        self.deadline_at: dict[int, list[str]] = {}
        self.queue: list[str] = []
        self.running: list[str] = []
        self.budget_left: dict[str, float] = dict.fromkeys(team_ids, budget)
        self.overdraft: dict[str, float] = dict.fromkeys(team_ids, 0.0)
        self.steps_per_window = steps_per_window
        self.dt_h = dt_s / 3600.0
        self.n_windows = n_windows
        self.totals = {"value": 0.0, "carbon_actual_g": 0.0, "carbon_blind_g": 0.0}
        self.status_counts: dict[str, list[int]] = {team: [0] * N_STATUS for team in team_ids}
        """Jobs per team in each :class:`Status` (kept up to date at every transition)."""
        self.resolution_audits: list[AuditRecord] = []
        """Version 1: audits of the jobs resolved since the last :meth:`take_audits` (module docstring)."""

    # ------------------------------------------------------------------ arrivals and decisions
    def add(self, submission: Submission, window: int) -> Job:
        request, truth = submission.request, submission.truth
        if request.request_id in self.jobs:
            raise ValueError(f"duplicate request id {request.request_id}")
        job = Job(
            request=request, truth=truth, tactics=submission.tactics, value=job_value(truth, request.kw),
            runtime_steps=max(1, math.ceil(truth.true_runtime_h / self.dt_h - 1e-9)),
        )
        self.jobs[request.request_id] = job
        self.order.append(request.request_id)
        counts = self.status_counts.get(request.team)
        if counts is None:
            counts = self.status_counts[request.team] = [0] * N_STATUS
        counts[Status.PENDING] += 1
        self.pending_at.setdefault(window, []).append(request.request_id)
        self.deadline_at.setdefault(truth.true_deadline_window, []).append(request.request_id)
        return job

    def pending(self, window: int) -> list[str]:
        """Ids pending a decision in ``window``, in arrival order (new and returning deferred requests)."""
        return self.pending_at.get(window, [])

    def apply(self, batch: DecisionBatch, window: int, score: WindowScore) -> dict[str, list[str]]:
        """Carry out one decision per pending request; return the ids by decision."""
        by_kind: dict[str, list[str]] = {"ACCEPT": [], "REJECT": [], "DEFER": []}
        for request_id, decision in batch.decisions.items():
            job = self.jobs[request_id]
            by_kind[_DECISION_NAMES[decision.kind]].append(request_id)
            if decision.kind is DecisionKind.ACCEPT:
                self._move(job, Status.QUEUED)
                job.accepted_window = window
                self.queue.append(request_id)
                team = job.request.team
                self.budget_left[team] -= job.request.chargeback
                if self.budget_left[team] < 0.0:
                    self.overdraft[team] = -self.budget_left[team]
            elif decision.kind is DecisionKind.REJECT:
                self._move(job, Status.REJECTED)
                if job.outcome is None:
                    self.score(job, "rejected", rejected_score(job.value, job.truth), window, score)
            else:
                assert decision.defer_to_window is not None
                self._move(job, Status.DEFERRED)
                self.pending_at.setdefault(decision.defer_to_window, []).append(request_id)
        return by_kind

    def _move(self, job: Job, status: Status) -> None:
        counts = self.status_counts[job.request.team]
        counts[job.status] -= 1
        counts[status] += 1
        job.status = status

    def score(self, job: Job, outcome: str, value: float, window: int, score: WindowScore) -> None:
        """Book a job's single throughput outcome (a second one is a bug: raise)."""
        if job.outcome is not None:
            raise RuntimeError(f"{job.request.request_id} already scored as {job.outcome}")
        job.outcome = outcome
        job.score = value
        job.scored_window = window
        self.totals["value"] += value
        score.add_job_score(job.request.team, outcome, value)
        if self.game_version >= 1:
            truth = job.truth
            self.resolution_audits.append(AuditRecord(
                request=job.request, realised_runtime_h=job.runtime_steps * self.dt_h,
                true_deadline_window=truth.true_deadline_window, true_carbon_flexible=truth.true_carbon_flexible,
                completed_window=window, on_time=outcome == "on_time", true_priority=truth.true_priority,
                true_runtime_h=truth.true_runtime_h, outcome=outcome, score=value,
            ))

    def take_audits(self) -> list[AuditRecord]:
        """Version 1: the resolution audits issued since the last call (and forget them)."""
        audits, self.resolution_audits = self.resolution_audits, []
        return audits

    # ------------------------------------------------------------------ running
    def place_queued(self, pool: ZonePool, window: int, first_step: int) -> list[Job]:
        """Start every queued job that fits a zone now (arrival order, no head-of-line blocking)."""
        started: list[Job] = []
        still_queued: list[str] = []
        for request_id in self.queue:
            job = self.jobs[request_id]
            request = job.request
            zone = pool.find(request.gpu_type, request.gpus, request.kw)
            if zone is None:
                still_queued.append(request_id)
                continue
            pool.take(zone, request.gpus, request.kw)
            self._move(job, Status.RUNNING)
            job.zone = zone
            job.start_window = window
            job.start_step = first_step
            job.end_step = first_step + job.runtime_steps
            self.running.append(request_id)
            started.append(job)
        self.queue = still_queued
        return started

    def finish_window(
        self, window: int, window_end_step: int, pool: ZonePool, score: WindowScore,
        carbon_of: Callable[[Job, int], tuple[float, float]],
    ) -> list[AuditRecord]:
        """End of ``window``: complete the jobs that ended in it (audit them), then book missed deadlines.
        Returns the version 0 completion audits (version 1 audits are taken with :meth:`take_audits`)."""
        audits: list[AuditRecord] = []
        still_running: list[str] = []
        deadline_step = lambda d: (d + 1) * self.steps_per_window  # noqa: E731 - end of window d
        for request_id in self.running:
            job = self.jobs[request_id]
            assert job.end_step is not None and job.zone is not None and job.start_window is not None
            if job.end_step > window_end_step:
                still_running.append(request_id)
                continue
            self._move(job, Status.DONE)
            pool.release(job.zone, job.request.gpus, job.request.kw)
            on_time = job.end_step <= deadline_step(job.truth.true_deadline_window)
            if job.outcome is None:
                if on_time:
                    self.score(job, "on_time", on_time_score(job.value, job.truth, job.start_window,
                                                             job.request.submitted_window), window, score)
                else:  # cannot happen: a late job was booked missed when its deadline window ended
                    self.score(job, "missed", missed_score(job.value), window, score)
            self._book_carbon(job, job.end_step, score, carbon_of)
            if self.game_version >= 1:  # audited at resolution (just now, or when its deadline passed)
                continue
            audits.append(AuditRecord(
                request=job.request, realised_runtime_h=job.runtime_steps * self.dt_h,
                true_deadline_window=job.truth.true_deadline_window,
                true_carbon_flexible=job.truth.true_carbon_flexible, completed_window=window, on_time=on_time,
            ))
        self.running = still_running
        for request_id in self.deadline_at.get(window, []):
            job = self.jobs[request_id]
            if job.outcome is None:
                self.score(job, "missed", missed_score(job.value), window, score)
        return audits

    def close_horizon(self, window: int, last_step: int, score: WindowScore,
                      carbon_of: Callable[[Job, int], tuple[float, float]]) -> list[str]:
        """After the last window: book every job still without an outcome as unfinished (partial credit for
        the fraction of its runtime done), and the carbon of jobs still running. Returns their ids."""
        unfinished = []
        for request_id in self.order:
            job = self.jobs[request_id]
            if job.status is Status.RUNNING:
                assert job.start_step is not None
                self._book_carbon(job, last_step, score, carbon_of)
            if job.outcome is not None:
                continue
            done = 0.0
            if job.start_step is not None:
                done = min(1.0, (last_step - job.start_step) / job.runtime_steps)
            self.score(job, "unfinished", unfinished_score(job.value, job.truth, job.start_window,
                                                           job.request.submitted_window, done, self.game_version),
                       window, score)
            unfinished.append(request_id)
        return unfinished

    def _book_carbon(self, job: Job, until_step: int, score: WindowScore,
                     carbon_of: Callable[[Job, int], tuple[float, float]]) -> None:
        if job.carbon_booked or job.start_step is None or until_step <= job.start_step:
            return
        actual_g, blind_g = carbon_of(job, until_step)
        job.carbon_booked = True
        score.carbon_saved_g += blind_g - actual_g
        score.carbon_denominator_g += max(actual_g, blind_g)
        self.totals["carbon_actual_g"] += actual_g
        self.totals["carbon_blind_g"] += blind_g

    # ------------------------------------------------------------------ public summaries
    def committed_job_kw(self) -> float:
        """kW of jobs running or admitted and waiting (the operator's own commitments)."""
        return float(sum(self.jobs[i].request.kw for i in self.running) + sum(self.jobs[i].request.kw for i in self.queue))

