"""The detector-aware strategic team: misreports only as far as the oversight monitor's own statistics allow.

It knows what the operator publishes about oversight: the version 1 monitor's detectors
(``dcops.oversight.calibrated``), the honest norms they judge against and their thresholds
(``dcops/oversight/data``). Before stating each request it asks its replica of the monitor
(``dcops.agents.teams.monitor_view``: the monitor's own code fed with the team's own stated history and the worst
case of its audits) what every detector's evidence against it would become if it misreported this request, and
misreports only while every detector's evidence stays below its threshold less :data:`SAFETY_MARGIN`, at the end
of this window and of the later windows in which this request is still in the detectors' scope.

Per request, on top of the honest statement (``dcops.agents.teams.base``), it tries in this order, keeping each
edit the check allows (the checks are cumulative: the second is made with the first edit in place):

1. **priority inflation** (true priority below CRITICAL): state one level above the truth (LOW→MEDIUM,
   MEDIUM→HIGH, HIGH→CRITICAL). Never two: an audit showing two levels is certain evidence (``CERTAIN``), and one
   level is within what honest slips produce;
2. **deadline compression**: state the deadline one window before the true one (never two, for the same reason),
   and never before the earliest completion the stated duration allows;
3. **carbon-flexibility hiding** (truly flexible, stated flexible): state "not flexible".

Each counts as applied only when it changed the stated field. The team draws nothing on purpose: given its
jobs, what it states is a function of its record, so it consumes no tactic draws and its job stream is that of
every team (honest mode states exactly the honest twin's requests). Flags change nothing in what it does (its
replica already holds, as a worst case, the evidence they rest on); it counts them. :meth:`DetectorAwareTeam.describe`
(evaluation only) adds its margin, the tactics it applied and withheld, the largest evidence its replica saw and
in how many windows it was flagged.

It models the version 1 monitor (game version 1, the default); under version 0 the environment runs the version 0
monitor, which it does not model. Cost: each tried tactic copies the replica and runs the monitor over up to
three windows (about a millisecond), a few hundred times in a 16-window episode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from dcops.agents.teams.base import TACTIC_KINDS, Draft, TeamBase, TeamFeedback, stated_earliest_window
from dcops.agents.teams.monitor_view import MonitorReplica, request_as_stated
from dcops.cluster.requests import Priority, Submission
from dcops.oversight.flags import FLAG_KINDS

SAFETY_MARGIN = 1.5
"""How far below each detector's threshold the team keeps its predicted evidence, z units. The prediction is
exact for what the team has stated and a worst case for its audits, but it cannot see the rest of the window (a
later request of the same window, stated honestly, can add evidence by honest noise) nor the windows after, and
the whole-episode pattern statistic keeps moving with every honest request: its change over the rest of an
episode is of the order of one z unit. Measured by ``dcops eval-detector-aware --seeds 120``
(``dcops.evaluation.detector_aware_margin``, ``reports/oversight/detector_aware_margin.md``: under
``priority_threshold``, 16 windows, game version 1, the evaluation's ``normal`` condition, tuning seeds
81000–81119, three cooperative teams beside it), the share of episodes in which the team was flagged at least once
was 5.8 % at a margin of 1.0, 3.3 % at 1.5 and 1.7 % at 2.0, against 1.7 % for the same team in honest mode; its
gaming payoff fell from +136 to +75 to +41 value units an episode. 1.5 keeps it within a flag or two per hundred
episodes of honest reporting and still lets it gain."""


def proposal(tactic: str, draft: Draft, window: int, stated: dict[str, Any], config: Any) -> dict[str, Any] | None:
    """The stated fields ``tactic`` would change, and to what (module docstring), or ``None`` when it would
    change nothing."""
    truth = draft.truth
    if tactic == "priority_inflation":
        target = int(truth.true_priority) + 1
        if truth.true_priority < Priority.CRITICAL and target > stated["priority"]:
            return {"priority": target}
    elif tactic == "deadline_compression":
        floor = stated_earliest_window(window, stated["duration_h"], config)
        target = max(floor, truth.true_deadline_window - 1)
        if target < stated["deadline_window"] and target < truth.true_deadline_window:
            return {"deadline_window": target}
    elif tactic == "carbon_flexibility_gaming":
        if truth.true_carbon_flexible and stated["carbon_flexible"]:
            return {"carbon_flexible": False}
    return None


@dataclass
class DetectorAwareTeam(TeamBase):
    """Misreports while its replica of the monitor says every detector stays under its threshold less a margin
    (module docstring)."""

    kind: str = "detector_aware"
    safety_margin: float = SAFETY_MARGIN
    """z units below each threshold (:data:`SAFETY_MARGIN`)."""
    tactic_order: tuple[str, ...] = TACTIC_KINDS
    """The tactics it tries on each request, in order (module docstring); a subset restricts it."""

    def _reset_tactics(self) -> None:
        self.replica = MonitorReplica(self.team_id, self.config)
        self.applied = dict.fromkeys(TACTIC_KINDS, 0)
        """Requests on which each tactic changed the statement."""
        self.withheld = dict.fromkeys(TACTIC_KINDS, 0)
        """Requests on which a tactic would have changed the statement but the check refused it."""
        self.peak_evidence = dict.fromkeys(FLAG_KINDS, 0.0)
        """The largest evidence its replica saw against it at a window's end (worst case of its audits)."""
        self.times_flagged = 0
        self._window_submissions: list[Submission] = []

    def submit(self, window: int, feedback: TeamFeedback | None, action: Any = None,
               new_id: Callable[[], str] | None = None) -> list[Submission]:
        self._window_submissions = []
        if not self.honest_mode and self.replica.closed < window - 1:  # windows it was not asked to submit in
            self.replica.close_window(window - 1, ())
        submissions = super().submit(window, feedback, action, new_id)
        if not self.honest_mode:  # an honest twin states honestly whatever its replica would say
            for kind, z in self.replica.close_window(window, submissions).items():
                self.peak_evidence[kind] = max(self.peak_evidence[kind], z)
        return submissions

    def observe(self, feedback: TeamFeedback | None) -> None:
        if feedback is not None and feedback.flagged_kinds:
            self.times_flagged += 1

    def build(self, draft: Draft, window: int, stated: dict[str, Any], tactics: set[str], request_id: str) -> Submission:
        submission = super().build(draft, window, stated, tactics, request_id)
        self._window_submissions.append(submission)
        return submission

    def _evidence(self, draft: Draft, window: int, stated: dict[str, Any], slot: int) -> dict[str, float]:
        """The replica's evidence if this request were stated as ``stated`` after this window's earlier ones."""
        job_type, config = draft.job_type, self.config
        request = request_as_stated(self.team_id, job_type.name, draft.kw, draft.gpus, job_type.gpu_type, stated,
                                    window, f"{self.team_id}-{window}-{slot}", config.price_per_kwh)
        return self.replica.what_if(window, [*self._window_submissions, Submission(request, draft.truth)])

    def state(self, draft: Draft, window: int, stated: dict[str, Any], slot: int, action: Any,
              u: Iterator[float]) -> set[str]:
        applied: set[str] = set()
        for tactic in self.tactic_order:
            edit = proposal(tactic, draft, window, stated, self.config)
            if edit is None:
                continue
            trial = self._evidence(draft, window, {**stated, **edit}, slot)
            if self.replica.headroom(trial, self.safety_margin) > 0.0:
                stated.update(edit)
                applied.add(tactic)
                self.applied[tactic] += 1
            else:
                self.withheld[tactic] += 1
        return applied

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "safety_margin": self.safety_margin, "tactic_order": list(self.tactic_order),
                "tactics_applied": dict(self.applied), "tactics_withheld": dict(self.withheld),
                "peak_predicted_evidence": dict(self.peak_evidence), "times_flagged": self.times_flagged}
