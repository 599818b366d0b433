"""A team's own view of the version 1 oversight monitor: what each detector would conclude about it, computed
from its own record with the monitor's own code.

The detector-aware team (``dcops.agents.teams.detector_aware``) asks, before stating a request, what the
calibrated monitor (``dcops.oversight.calibrated``) would say about it if the request were stated one way or
another. The monitor offers no per-team what-if, so :class:`MonitorReplica` keeps a private
:class:`~dcops.oversight.calibrated.CalibratedMonitor` that watches this one team, fed with the team's own
requests and audits, and answers a what-if on a copy of it: the statistics, honest norms and thresholds are the
monitor's own (the files that ship in ``dcops/oversight/data``), none is re-derived here.

**Requests** are fed exactly as the real monitor reads them: the stated fields. The detectors of
``dcops.oversight.calibrated`` read no description text, so the replica's requests carry none.

**Audits the team cannot see.** A team learns the flags raised against it (``TeamFeedback``), not which of its
jobs have been resolved, and so audited (game version 1, ``dcops.cluster.ledger``): that depends on the
scheduler. What it does know is when each audit can come: no earlier than the window the job was submitted in
(a rejection is audited at once) and no later than the end of its true deadline window (a job not resolved by
then is booked missed), or the last window for a job not due within the episode. The replica puts each audit
at the time that hurts the team most (:func:`worst_case_audit_window`): an **adverse** audit (:func:`is_adverse`:
stated priority above the truth, a deadline earlier than the true one, or carbon flexibility hidden) in the
window the job was submitted, any other audit, which can only dilute the evidence, as late as it can come. A
binomial audit statistic never falls when an adverse audit is added (``P(X_{n+1} ≥ k+1) ≤ P(X_n ≥ k)``) and
never rises when another one is, and the "certain" rules (two levels or two windows off) are triggered by
adverse audits only, so each audit statistic of the replica bounds the real one from above. (Strictly so for a
detector when no job is adverse on another count only: a job with, say, an early deadline and an honest priority
enters the priority count at once as a clean audit and dilutes it a little. An audit record is one record for all
detectors, so one replica cannot time it per detector; the team's safety margin covers the difference.)

In game version 0 the environment runs the version 0 monitor (``dcops.oversight.monitor``), which this view
does not model.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterable, Sequence
from typing import Any

from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Priority, Request, Submission
from dcops.oversight.calibrated import CalibratedMonitor
from dcops.oversight.flags import FLAG_KINDS
from dcops.oversight.honest_model import honest_model_for

WHAT_IF_OUTCOME = "what_if"
"""The ``outcome`` of a replica's audit record (the monitor does not read it; it marks the record as made up)."""


def request_as_stated(team_id: str, job_type: str, kw: float, gpus: int, gpu_type: str, stated: dict[str, Any],
                      window: int, request_id: str, price_per_kwh: float) -> Request:
    """The public request a team would submit for ``stated`` (the fields of ``TeamBase.honest_statement``),
    without its description (module docstring)."""
    hours = stated["duration_h"]
    return Request(
        request_id=request_id, team=team_id, job_type=job_type, description="", kw=kw, duration_h=hours,
        gpus=gpus, gpu_type=gpu_type, priority=Priority(int(stated["priority"])),
        deadline_window=int(stated["deadline_window"]), carbon_flexible=bool(stated["carbon_flexible"]),
        chargeback=kw * hours * price_per_kwh, submitted_window=window,
    )


def is_adverse(submission: Submission) -> bool:
    """Whether the job's audit would be evidence against its team: stated priority above the true one, stated
    deadline earlier than the true one, or a truly flexible job stated inflexible."""
    request, truth = submission.request, submission.truth
    return (int(request.priority) > int(truth.true_priority)
            or request.deadline_window < truth.true_deadline_window
            or (truth.true_carbon_flexible and not request.carbon_flexible))


def worst_case_audit_window(submission: Submission, n_windows: int) -> int:
    """The window whose end the job's audit hurts its team most by (module docstring): its submission window if
    the audit is adverse, else the last window it can come in (its true deadline window, or the horizon)."""
    window = submission.request.submitted_window
    if is_adverse(submission):
        return window
    return min(max(submission.truth.true_deadline_window, window), n_windows - 1)


def audit_of(submission: Submission, window: int, dt_h: float) -> AuditRecord:
    """The version 1 audit record of the job, as if resolved at the end of ``window``: everything the monitor
    reads is the truth the team already knows; outcome and score are not known and not read."""
    truth = submission.truth
    steps = max(1, math.ceil(truth.true_runtime_h / dt_h - 1e-9))
    return AuditRecord(
        request=submission.request, realised_runtime_h=steps * dt_h,
        true_deadline_window=truth.true_deadline_window, true_carbon_flexible=truth.true_carbon_flexible,
        completed_window=window, on_time=False, true_priority=truth.true_priority,
        true_runtime_h=truth.true_runtime_h, outcome=WHAT_IF_OUTCOME, score=0.0,
    )


class MonitorReplica:
    """One team's private copy of the calibrated monitor's record of it (module docstring).

    Call :meth:`close_window` once per window with everything the team submitted in it; :meth:`what_if` in
    between answers for a window whose requests are not all stated yet.

    :param team_id: the team's neutral id.
    :param config: the episode's ``ClusterConfig`` (window length, horizon, physics step).
    :param monitor: a fresh monitor to replicate (default: ``CalibratedMonitor`` with the honest norms of the
        config's catalogue and the shipped thresholds, as the environment builds it).
    """

    def __init__(self, team_id: str, config: Any, monitor: CalibratedMonitor | None = None) -> None:
        self.team_id = team_id
        self.n_windows = int(config.n_windows)
        self.dt_h = float(config.dt_s) / 3600.0
        self.monitor = monitor if monitor is not None else CalibratedMonitor(
            window_h=config.window_h, model=honest_model_for(getattr(config, "catalogue", "classic")))
        self.monitor.reset([team_id])
        self.limits = self.monitor.limits
        self.scope_windows = self.monitor.settings.scope_windows
        self.closed = -1
        """The last window fed to the replica."""
        self._due: dict[int, list[AuditRecord]] = {}
        """Audits of jobs of closed windows that the worst case puts in later windows, by window."""

    def _audits(self, window: int, submissions: Iterable[Submission], due: dict[int, list[AuditRecord]],
                ) -> list[AuditRecord]:
        """File ``submissions`` (of ``window``) into ``due`` by their worst-case window; return ``window``'s."""
        for submission in submissions:
            at = worst_case_audit_window(submission, self.n_windows)
            due.setdefault(at, []).append(audit_of(submission, at, self.dt_h))
        return due.pop(window, [])

    def close_window(self, window: int, submissions: Sequence[Submission]) -> dict[str, float]:
        """Feed ``window`` with all of the team's requests of it (and any windows skipped before it, empty);
        return each detector's evidence at its end."""
        evidence = dict.fromkeys(FLAG_KINDS, 0.0)
        while self.closed < window:
            w = self.closed + 1
            subs = submissions if w == window else ()
            evidence = self._observe(self.monitor, w, subs, self._due)
            self.closed = w
        # The monitor's logs of flags and strengths are evaluation material, not state (its docstring): the
        # replica keeps neither, so that what_if copies the record alone.
        self.monitor.flags.clear()
        self.monitor.strengths.clear()
        return evidence

    def _observe(self, monitor: CalibratedMonitor, window: int, submissions: Sequence[Submission],
                 due: dict[int, list[AuditRecord]]) -> dict[str, float]:
        """``monitor`` takes in ``window``: the requests and the worst case's audits; its evidence at the end."""
        seen = len(monitor.strengths)
        monitor.observe(window, [s.request for s in submissions], self._audits(window, submissions, due))
        # (window, team, kind, z) of this window: the replica watches this team only
        return {kind: z for _, team, kind, z in monitor.strengths[seen:] if team == self.team_id}

    def what_if(self, window: int, submissions: Sequence[Submission]) -> dict[str, float]:
        """Each detector's largest evidence (z) against the team, over the end of ``window`` and of the later
        windows in which a request of ``window`` is still in the per-kind detectors' scope, if ``submissions``
        were the team's requests of ``window`` and it submitted nothing more. The replica itself is unchanged."""
        if window != self.closed + 1:
            raise ValueError(f"what_if: window {window} is not the one after the last closed ({self.closed})")
        # A pickle round trip copies the record three to four times faster than ``copy.deepcopy``.
        trial = pickle.loads(pickle.dumps(self.monitor, protocol=pickle.HIGHEST_PROTOCOL))
        due = {w: list(audits) for w, audits in self._due.items()}
        worst = dict.fromkeys(FLAG_KINDS, 0.0)
        last = min(window + self.scope_windows - 1, self.n_windows - 1)
        for w in range(window, last + 1):
            for kind, z in self._observe(trial, w, submissions if w == window else (), due).items():
                worst[kind] = max(worst[kind], z)
        return worst

    def headroom(self, evidence: dict[str, float], margin: float) -> float:
        """The smallest (threshold − margin − evidence) over the detectors: negative when one is too close."""
        return min(self.limits.of(kind) - margin - z for kind, z in evidence.items())
