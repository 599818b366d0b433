"""The truth-knowing planner: an evaluator-only scheduler that plays an episode knowing everything.

It answers "how much is knowing the truth worth in this game?", the top rung of the skill ladder below the
hindsight bound. It never reads a policy's view for truth: it reads the episode's private truth through the
evaluator API (``env.episode`` and ``env.episode_truth()`` after an episode), so it can only exist in the
evaluation layer, never behind the server or a policy's observation.

How it plays a seed (every step deterministic, so the same seed gives the same figure):

1. **Probe.** Play the episode once with ``priority_threshold`` to realise the arrivals (request ids, true
   priority, deadline, flexibility and runtime, and the fault and weather timeline, which do not depend on the
   scheduler).
2. **Plan.** Solve the hindsight MILP of :mod:`dcops.cluster.hindsight` on those arrivals under a job-power
   budget per window, giving a start window per request worth running.
3. **Follow.** Replay the seed with :class:`PlanFollower`: ACCEPT a request in its planned window, DEFER it to
   that window before, REJECT requests the plan does not run.
4. **Repair and re-plan.** Where the followed run had a thermal incident, that window's budget is cut by
   :data:`REPAIR_CUT` and the plan is re-solved, on the arrivals of the run just followed (teams that react to
   flags, ``adaptive``, can submit differently when the scheduler changes); ``passes`` plans per start.

**What it plans for.** The hindsight MILP maximises the episode's throughput *value*, but the score pays a
window's value only up to the scale V (``dcops.cluster.reward``: ``(G − L)/max(V, G + L)``), so where demand
exceeds the plant the value optimum wastes value in saturated windows and books losses where they weigh most.
So the planner also plans for the score: :func:`~dcops.cluster.hindsight.hindsight_bound` with
``objective="score"`` maximises a concave lower bound of every window's throughput term. It plays both
objectives (:data:`OBJECTIVES`) from both start budgets and keeps the best run.

The MILP's budget is the one choice the planner makes with hindsight. It starts from each of two: the
electrical budget of game version 1 (``electrical_job_power_budget``: the cap less the electrical floor, as if
cooling drew nothing) times :data:`ELECTRICAL_START`, and the physics probe budget of version 0
(``job_power_budget``: what the rule-controlled plant carries without an incident). Of every run it plays it
keeps the one with the best episode score: an omniscient planner would know which run is best, so choosing it
is part of knowing everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

ELECTRICAL_START = 0.8
"""The electrical start budget, as a fraction of the version 1 budget (cooling draws the rest of the cap)."""
REPAIR_CUT = 0.9
"""Factor on a window's budget after a followed run had an incident in it."""
PASSES = 4
"""Plans followed from each start budget and objective."""
OBJECTIVES = ("value", "score")
"""What the plans maximise (module docstring); the planner plays each from each start budget."""


@dataclass
class PlanFollower:
    """Follow a fixed plan: ``starts`` maps request id to the window it should start in; ``planned_score``, where
    known, is the score the plan made when it was found (a replay on the same seed must give it again)."""

    starts: dict[str, int]
    name: str = "truth_planner"
    planned_score: float | None = None

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        window = view["window"]
        decisions = []
        for request in view["pending"]:
            rid = request["request_id"]
            start = self.starts.get(rid)
            if start is None or start < window:
                decisions.append({"request_id": rid, "decision": "REJECT"})
            elif start == window:
                decisions.append({"request_id": rid, "decision": "ACCEPT"})
            else:
                decisions.append({"request_id": rid, "decision": "DEFER", "defer_to_window": start})
        return decisions


@dataclass
class TruthPlannerResult:
    """The best run's episode summary (as ``run_episode`` returns it), which start it came from, every run, and
    the best run's plan (request id -> planned start window; :class:`PlanFollower` replays it on the same seed) and
    the objective it was planned for (``"value"`` or ``"score"``)."""

    summary: dict[str, Any]
    start: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    starts: dict[str, int] = field(default_factory=dict)
    objective: str = "value"


def play_truth_planner(env: Any, seed: int, passes: int = PASSES,
                       starts: tuple[str, ...] = ("electrical", "probe"),
                       objectives: tuple[str, ...] = OBJECTIVES) -> TruthPlannerResult:
    """Play ``seed`` on ``env`` (a ``dcops.parallel_env``) as the truth-knowing planner (module docstring)."""
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.cluster.hindsight import OBJECTIVES as KNOWN
    from dcops.cluster.hindsight import electrical_job_power_budget, hindsight_bound, job_power_budget
    from dcops.evaluation.play import run_episode

    unknown = [o for o in objectives if o not in KNOWN]
    if unknown:
        raise ValueError(f"objectives: unknown {unknown}; known: {list(KNOWN)}")
    best: TruthPlannerResult | None = None
    runs: list[dict[str, Any]] = []
    for start, objective in [(s, o) for o in objectives for s in starts]:
        # Every start plans from the probe's arrivals, so the starts are compared on the same footing.
        run_episode(PriorityThresholdScheduler(), seed, env=env)
        if start == "electrical":
            budget = ELECTRICAL_START * electrical_job_power_budget(env.episode)
        elif start == "probe":
            budget = job_power_budget(env.episode)
        else:
            raise ValueError(f"starts: unknown start budget {start!r}; use 'electrical' or 'probe'")
        budget = np.array(budget, dtype=np.float64)
        for _ in range(passes):
            plan = hindsight_bound(env.episode, budget_kw=budget, objective=objective)
            summary = run_episode(PlanFollower(plan.starts), seed, env=env)
            incidents = [bool(w["incident"]) for w in summary["windows"]]
            runs.append({"start": start, "objective": objective, "score": summary["score"],
                         "incident_windows": int(sum(incidents))})
            if best is None or summary["score"] > best.summary["score"]:
                best = TruthPlannerResult(summary, start, starts=dict(plan.starts), objective=objective)
            if not any(incidents):
                break
            budget = np.where(incidents, REPAIR_CUT * budget, budget)
    if best is None:
        raise ValueError("starts, objectives: name at least one start budget and one objective")
    best.runs = runs
    return best


PRESENT_TRUTH_FIELDS = ("priority", "deadline", "flexibility", "runtime")
"""What :class:`PresentTruthPlanner` may be told of the submitted requests: each names one stated field of the
public view (``priority``, ``deadline_window``, ``carbon_flexible``, ``duration_h``) that it replaces by the
request's truth."""


def told_request(env: Any, request: dict[str, Any], fields: tuple[str, ...] = PRESENT_TRUTH_FIELDS) -> dict[str, Any]:
    """A copy of the pending ``request`` (its public view) with the stated fields named in ``fields``
    (:data:`PRESENT_TRUTH_FIELDS`) replaced by the request's truth, read through the evaluator API (``env.episode``'s
    ledger, where the episode keeps it)."""
    truth = env.episode.ledger.jobs[request["request_id"]].truth
    told = dict(request)
    if "priority" in fields:
        told["priority"] = truth.true_priority.name
    if "deadline" in fields:
        told["deadline_window"] = truth.true_deadline_window
    if "flexibility" in fields:
        told["carbon_flexible"] = truth.true_carbon_flexible
    if "runtime" in fields:
        told["duration_h"] = truth.true_runtime_h
    return told


@dataclass
class PresentTruthPlanner:
    """The rolling planner (``dcops.agents.schedulers.planner``) told the truth of the requests already submitted,
    and nothing of the future: the evaluator-only rung between ``rolling_planner`` and ``truth_planner``.

    Every window it reads, for each pending request, the private truth of the fields named in ``fields`` through
    the evaluator API (``env.episode``'s ledger, where the episode keeps it) and gives the planner a copy of the
    view with those fields replaced; where the priority is told, every team's ``gaming_posterior`` is set to 0
    (there is nothing left to discount). Arrivals of later windows stay unknown until they are submitted, as for
    every public scheduler. So ``present_truth_planner − rolling_planner`` is what the stated fields hide from
    this planner. ``truth_planner − present_truth_planner`` is what knowing the future adds *together with* the
    truth planner's other advantages: its budget chosen in hindsight, its repair of incident windows and its best
    of several runs on the same seed. It exists only in the evaluation layer, with the environment in hand."""

    env: Any
    fields: tuple[str, ...] = PRESENT_TRUTH_FIELDS
    name: str = "present_truth_planner"
    planner: Any = None

    def __post_init__(self) -> None:
        from dcops.agents.schedulers.planner import RollingPlanner

        unknown = [f for f in self.fields if f not in PRESENT_TRUTH_FIELDS]
        if unknown:
            raise ValueError(f"fields: unknown {unknown}; known: {list(PRESENT_TRUTH_FIELDS)}")
        if self.planner is None:
            self.planner = RollingPlanner(name=self.name)

    def told(self, request: dict[str, Any]) -> dict[str, Any]:
        """``request`` with the fields of :attr:`fields` replaced by its truth."""
        return told_request(self.env, request, self.fields)

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        from dcops.agents.schedulers.base import window_hours, windows_needed

        teams = view.get("teams", {})
        if "priority" in self.fields:
            teams = {team: {**stats, "gaming_posterior": 0.0} for team, stats in teams.items()}
        running = view["running"]
        if "runtime" in self.fields:  # a running job holds its power until its true end
            jobs, window_h = self.env.episode.ledger.jobs, window_hours(view)
            running = [{**job, "stated_end_window": job["started_window"] - 1 + windows_needed(
                {"duration_h": jobs[job["request_id"]].truth.true_runtime_h}, window_h)} for job in running]
        return self.planner.decide({**view, "pending": [self.told(r) for r in view["pending"]], "teams": teams,
                                    "running": running})
