"""The ledger's scoring rules against the reward's documented table (``dcops.cluster.reward``), hand-worked.

- Every job gets exactly one throughput outcome, whatever the decisions, including jobs deferred past their
  deadline, rejected after it, or still running when it passes (many seeds, checked against the table).
- On time means complete by the **end** of the true deadline window: a job ending on that window's last step is
  on time, one ending a step later is missed.
- The carbon term rewards running work in a cleaner window than the one it was submitted in, and penalises
  the reverse.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np
import pytest
from numpy.typing import NDArray

from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import RuleFastPath
from dcops.cluster.decisions import resolve_structured
from dcops.cluster.episode import ClusterEpisode
from dcops.cluster.ledger import Ledger, Status
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
from dcops.cluster.reward import OUTCOMES, WindowScore, rejected_score

STEPS = 18  # physics steps per window (defaults: 5 min steps, 1.5 h windows)
DT_S = 300.0
SEEDS = 30


def job(rid: str, true_h: float, deadline: int, window: int = 0, flexible: bool = False, gpus: int = 8,
        kw: float = 20.0, gpu_type: str = "H100", priority: Priority = Priority.MEDIUM) -> Submission:
    request = Request(rid, "team_0", "finetune", "a job", kw, true_h, gpus, gpu_type, priority, deadline, flexible,
                      1.0, window)
    return Submission(request, RequestTruth(priority, deadline, flexible, true_h))


def episode(**config) -> ClusterEpisode:
    ep = ClusterEpisode(ClusterConfig(faults=config.pop("faults", ()), **config), RuleFastPath())
    ep.reset(np.random.default_rng(0), np.random.default_rng(1), ["team_0"])
    return ep


def decide(ep: ClusterEpisode, entries: dict[str, tuple[str, int | None]] | None = None) -> None:
    """Decide every pending request: ``entries`` maps an id to (decision, defer window); the rest ACCEPT."""
    entries = entries or {}
    ids = ep.pending_ids()
    decisions = []
    for rid in ids:
        kind, target = entries.get(rid, ("ACCEPT", None))
        decisions.append({"request_id": rid, "decision": kind, "defer_to_window": target})
    ep.decide(resolve_structured(decisions, ids, ep.window, ep.config.n_windows))


# ---------------------------------------------------------------------------------------------- scored once
def test_the_ledger_refuses_a_second_outcome_for_a_job():
    ledger = Ledger(["team_0"], budget=100.0, steps_per_window=STEPS, dt_s=DT_S, n_windows=8)
    record = ledger.add(job("a", true_h=1.0, deadline=3), window=0)
    score = WindowScore(window=0)
    ledger.score(record, "rejected", -4.0, 0, score)
    with pytest.raises(RuntimeError, match="already scored"):
        ledger.score(record, "missed", -20.0, 3, score)
    assert (record.outcome, record.score, record.scored_window) == ("rejected", -4.0, 0)
    assert score.outcomes == {"on_time": 0, "missed": 0, "rejected": 1, "unfinished": 0}
    assert (score.gain, score.loss, ledger.totals["value"]) == (0.0, 4.0, -4.0)


def expected_outcome(d: int, reject_window: int | None, end_step: int | None, n_windows: int) -> tuple[str, int]:
    """(outcome, window it is booked in) by the reward's table, from the job's true deadline window ``d``, the
    window it was rejected in (if it was), the step its run ended (if it started) and the horizon."""
    if reject_window is not None and reject_window <= d:
        return "rejected", reject_window
    finished = end_step is not None and end_step <= n_windows * STEPS
    if finished and end_step <= (d + 1) * STEPS:  # complete by the end of window d
        return "on_time", math.ceil(end_step / STEPS) - 1
    if d < n_windows:  # the deadline window ended (inside the horizon) first
        return "missed", d
    return "unfinished", n_windows - 1


def play_random_episode(seed: int) -> tuple[ClusterEpisode, dict[str, int]]:
    """Jobs with deadlines inside and past the horizon and runtimes up to four windows; per pending request a
    random ACCEPT, REJECT or DEFER to a random later window (often past its deadline). Returns the episode and
    the window each rejected job was rejected in."""
    rng = np.random.default_rng(seed)
    ep = episode(n_windows=6)
    n = ep.config.n_windows
    rejected_in: dict[str, int] = {}
    count = 0
    for w in range(n):
        arrivals = []
        for _ in range(int(rng.integers(2, 6))):
            steps = int(rng.integers(1, 4 * STEPS + 1))
            deadline = w + int(rng.integers(0, 4)) if rng.random() < 0.8 else n + 1
            arrivals.append(job(f"j{count:03d}", true_h=steps * DT_S / 3600.0, deadline=deadline, window=w,
                                flexible=bool(rng.random() < 0.5), gpus=int(rng.choice([4, 8, 16])),
                                gpu_type=str(rng.choice(["H100", "A100", "L40S"]))))
            count += 1
        ep.submit(arrivals)
        entries: dict[str, tuple[str, int | None]] = {}
        for rid in ep.pending_ids():
            u = rng.random()
            if u < 0.15:
                entries[rid] = ("REJECT", None)
            elif u < 0.5 and w + 1 < n:
                entries[rid] = ("DEFER", int(rng.integers(w + 1, n)))
        decide(ep, entries)
        for rid in ep.pending_ids():
            if ep.ledger.jobs[rid].status is Status.REJECTED:
                rejected_in.setdefault(rid, w)
        ep.run_window()
    return ep, rejected_in


@pytest.mark.parametrize("seed", range(SEEDS))
def test_every_job_is_scored_exactly_once_with_the_outcome_of_the_reward_table(seed):
    ep, rejected_in = play_random_episode(seed)
    ledger, n = ep.ledger, ep.config.n_windows
    assert ep.done
    booked = {k: sum(s.outcomes[k] for s in ep.window_scores) for k in OUTCOMES}
    assert sum(booked.values()) == len(ledger.jobs)  # one outcome each, no more
    for rid, record in ledger.jobs.items():
        outcome, window = expected_outcome(record.truth.true_deadline_window, rejected_in.get(rid), record.end_step, n)
        assert (record.outcome, record.scored_window) == (outcome, window), rid
    for k in OUTCOMES:
        assert booked[k] == sum(r.outcome == k for r in ledger.jobs.values())
    gains = sum(s.gain for s in ep.window_scores)
    losses = sum(s.loss for s in ep.window_scores)
    assert gains - losses == pytest.approx(sum(r.score for r in ledger.jobs.values()), abs=1e-9)
    assert ledger.totals["value"] == pytest.approx(gains - losses, abs=1e-9)


def test_the_random_episodes_include_every_hard_case_of_the_once_only_rule():
    """The seeds above are worth something: between them, jobs finish after their deadline (scored missed while
    running, not again at completion), are rejected after their deadline passed, finish on time, and are cut
    off by the horizon."""
    seen = set()
    for seed in range(SEEDS):
        ep, rejected_in = play_random_episode(seed)
        for rid, record in ep.ledger.jobs.items():
            d = record.truth.true_deadline_window
            if record.end_step is not None and record.end_step > (d + 1) * STEPS and record.status is Status.DONE:
                seen.add("finished after its deadline")
            if rid in rejected_in and rejected_in[rid] > d:
                seen.add("rejected after its deadline")
            seen.add(record.outcome)
    assert seen >= {"finished after its deadline", "rejected after its deadline", *OUTCOMES}


# ---------------------------------------------------------------------------------------------- on time
def test_a_job_ending_on_the_last_step_of_its_deadline_window_is_on_time_and_one_step_later_is_missed():
    """Windows of 18 steps of 5 min. Both jobs start at step 0 with true deadline window 1 (due by the end of
    step 36). ``exact`` runs 3 h = 36 steps: on time, scored ``+v`` (it did not wait) in window 1. ``late``
    runs 37 steps: its deadline window ends first, so it is scored ``−0.5·v`` in window 1 and nothing more when
    it completes in window 2. v = 2 (MEDIUM) · 20 kW · runtime."""
    ep = episode(n_windows=4)
    ep.submit([job("exact", true_h=3.0, deadline=1), job("late", true_h=37 * DT_S / 3600.0, deadline=1),
               job("exact0", true_h=1.5, deadline=0), job("next_window", true_h=1.5, deadline=0)])
    decide(ep, {"next_window": ("DEFER", 1)})
    first = ep.run_window()
    second = (decide(ep), ep.run_window())[1]
    third = (decide(ep), ep.run_window())[1]
    jobs = ep.ledger.jobs
    assert jobs["exact"].end_step == 36 and jobs["late"].end_step == 37
    assert (jobs["exact0"].outcome, jobs["exact0"].scored_window) == ("on_time", 0)  # ends at step 18
    assert jobs["exact0"].score == pytest.approx(2 * 20.0 * 1.5)
    assert (jobs["next_window"].outcome, jobs["next_window"].scored_window) == ("missed", 0)  # runs in window 1
    assert jobs["next_window"].score == pytest.approx(-0.5 * 2 * 20.0 * 1.5)
    assert (jobs["exact"].outcome, jobs["exact"].scored_window) == ("on_time", 1)
    assert jobs["exact"].score == pytest.approx(2 * 20.0 * 3.0)
    assert (jobs["late"].outcome, jobs["late"].scored_window) == ("missed", 1)
    assert jobs["late"].score == pytest.approx(-0.5 * 2 * 20.0 * 37 / 12)
    assert first.score.outcomes == {"on_time": 1, "missed": 1, "rejected": 0, "unfinished": 0}
    assert second.score.outcomes == {"on_time": 1, "missed": 1, "rejected": 0, "unfinished": 0}
    assert third.score.outcomes == {"on_time": 0, "missed": 0, "rejected": 0, "unfinished": 0}
    assert [(a.request.request_id, a.on_time) for a in second.audits] == [("exact", True), ("late", False)]


# ---------------------------------------------------------------------------------------------- carbon
class StepCarbon:
    """A grid at ``first_g`` g/kWh through window 0 and ``later_g`` after it (a carbon source for the config)."""

    def __init__(self, first_g: float, later_g: float) -> None:
        self.first_g, self.later_g = first_g, later_g

    def series(self, start: datetime, elapsed_s: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        return np.where(np.asarray(elapsed_s) < STEPS * DT_S, self.first_g, self.later_g)


@pytest.mark.parametrize(("first_g", "later_g", "expected"), [(500.0, 100.0, 0.8), (100.0, 500.0, -0.8)])
def test_shifting_work_to_a_cleaner_window_earns_a_positive_carbon_term_and_to_a_dirtier_one_a_negative(
        first_g, later_g, expected):
    """One flexible job, submitted in window 0 and deferred to window 1, runs 1 h (12 steps) there. With E its
    metered energy (kW · Σ PUE · Δt), it emitted A = 100·E g on a grid of 100 g/kWh; run carbon-blind at
    submission it would have emitted B = 500·E: R_carbon = (B − A) / max(A, B) = 400/500 = +0.8. With the grid
    reversed, A = 500·E and B = 100·E: R_carbon = −400/500 = −0.8. Window 0 scores no carbon (nothing ran)."""
    ep = episode(n_windows=3, grid_region=StepCarbon(first_g, later_g))
    ep.submit([job("flex", true_h=1.0, deadline=2, flexible=True)])
    decide(ep, {"flex": ("DEFER", 1)})
    first = ep.run_window()
    decide(ep)
    second = ep.run_window()
    record = ep.ledger.jobs["flex"]
    assert record.start_step == STEPS and record.end_step == STEPS + 12 and record.carbon_booked
    assert first.score.carbon == 0.0
    assert second.score.carbon == pytest.approx(expected, abs=1e-12)
    assert second.score.carbon_saved_g == pytest.approx(expected * second.score.carbon_denominator_g, rel=1e-12)
    actual, blind = ep.ledger.totals["carbon_actual_g"], ep.ledger.totals["carbon_blind_g"]
    assert actual / blind == pytest.approx(later_g / first_g, rel=1e-12)


def test_carbon_term_of_the_ledger_has_the_sign_of_the_carbon_saved():
    """The ledger books ``B − A`` per job: 66 kg carbon-blind against 60 kg emitted saves 6 kg (the reward
    docstring's example: R_carbon = 6/66 = +0.091); 60 kg blind against 66 kg emitted costs it."""
    for blind_kg, actual_kg, expected in [(66.0, 60.0, 6.0 / 66.0), (60.0, 66.0, -6.0 / 66.0)]:
        ledger = Ledger(["team_0"], budget=100.0, steps_per_window=STEPS, dt_s=DT_S, n_windows=8)
        record = ledger.add(job("a", true_h=1.0, deadline=5), window=0)
        record.start_step, record.status = 0, Status.RUNNING
        ledger.running.append("a")
        score = WindowScore(window=0)
        ledger.close_horizon(7, 12, score, lambda j, until, a=actual_kg, b=blind_kg: (a * 1000.0, b * 1000.0))
        score.finalise(1658.0)
        assert score.carbon_saved_g == pytest.approx((blind_kg - actual_kg) * 1000.0)
        assert score.carbon == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- bookkeeping
def request(rid: str, team: str = "team_0", chargeback: float = 1.0, true_h: float = 1.0, deadline: int = 5,
            priority: Priority = Priority.HIGH) -> Submission:
    req = Request(rid, team, "finetune", "a job", 20.0, true_h, 8, "H100", priority, deadline, False, chargeback, 0)
    return Submission(req, RequestTruth(priority, deadline, False, true_h))


def apply(ledger: Ledger, window: int, entries: dict[str, tuple[str, int | None]]) -> None:
    """Decide the ids of ``entries`` (decision, defer window) in ``window``."""
    decisions = [{"request_id": rid, "decision": kind, "defer_to_window": target}
                 for rid, (kind, target) in entries.items()]
    ledger.apply(resolve_structured(decisions, list(entries), window, ledger.n_windows), window,
                 WindowScore(window=window))


def test_the_status_counts_follow_every_decision_in_status_order():
    """``status_counts[team]`` holds the jobs per :class:`Status`, in its order (the learner's observation reads
    it so: pending, deferred, queued, running, done, rejected), also for a team named only by a request."""
    ledger = Ledger(["team_0"], budget=100.0, steps_per_window=STEPS, dt_s=DT_S, n_windows=8)
    for rid in ("a", "b", "c"):
        ledger.add(request(rid), window=0)
    assert ledger.status_counts["team_0"] == [3, 0, 0, 0, 0, 0]
    apply(ledger, 0, {"a": ("ACCEPT", None), "b": ("REJECT", None), "c": ("DEFER", 2)})
    assert ledger.status_counts["team_0"] == [0, 1, 1, 0, 0, 1]
    ledger.add(request("x", team="team_9"), window=0)
    assert ledger.status_counts["team_9"] == [1, 0, 0, 0, 0, 0]


def test_an_overdraft_is_booked_only_once_the_budget_is_debited_past_zero():
    """Accepting debits the stated chargeback; a budget still above zero books no overdraft, one debited past it
    books what it is short."""
    ledger = Ledger(["team_0", "team_1"], budget=10.5, steps_per_window=STEPS, dt_s=DT_S, n_windows=8)
    ledger.add(request("a", chargeback=10.0), window=0)
    ledger.add(request("b", chargeback=1.0), window=1)
    assert ledger.overdraft == {"team_0": 0.0, "team_1": 0.0}
    apply(ledger, 0, {"a": ("ACCEPT", None)})
    assert ledger.budget_left["team_0"] == pytest.approx(0.5) and ledger.overdraft["team_0"] == 0.0
    apply(ledger, 1, {"b": ("ACCEPT", None)})
    assert ledger.budget_left["team_0"] == pytest.approx(-0.5) and ledger.overdraft["team_0"] == pytest.approx(0.5)
    assert ledger.overdraft["team_1"] == 0.0


def test_a_version_1_resolution_audit_reveals_the_truth_the_outcome_and_its_score_once():
    """From version 1 a rejection is an audit, that window: the true priority and runtime, the outcome, its score,
    ``on_time`` false (it never ran), and the runtime it would have had in whole 5-min steps (at least one)."""
    ledger = Ledger(["team_0"], budget=100.0, steps_per_window=STEPS, dt_s=DT_S, n_windows=8, game_version=1)
    cases = {"hour": 1.0, "almost": 0.95, "minute": 1 / 60, "instant": 1e-12}  # true runtime, h
    for rid, true_h in cases.items():
        ledger.add(request(rid, true_h=true_h, priority=Priority.HIGH), window=0)
    apply(ledger, 2, dict.fromkeys(cases, ("REJECT", None)))
    audits = {a.request.request_id: a for a in ledger.take_audits()}
    assert set(audits) == set(cases) and ledger.take_audits() == []
    steps = {"hour": 12, "almost": 12, "minute": 1, "instant": 1}
    for rid, audit in audits.items():
        record = ledger.jobs[rid]
        assert (audit.outcome, audit.on_time, audit.completed_window) == ("rejected", False, 2), rid
        assert audit.true_priority is Priority.HIGH and audit.true_runtime_h == cases[rid]
        assert audit.realised_runtime_h == pytest.approx(steps[rid] * DT_S / 3600.0), rid
        assert audit.score == record.score == pytest.approx(rejected_score(record.value, record.truth))
    ledger.add(request("left", true_h=1.0), window=7)
    ledger.close_horizon(7, 8 * STEPS, WindowScore(window=7), lambda j, until: (0.0, 0.0))
    (audit,) = ledger.take_audits()
    assert (audit.request.request_id, audit.outcome, audit.on_time) == ("left", "unfinished", False)


def test_version_0_audits_completions_with_on_time_by_the_deadline_window_and_issues_no_resolution_audits():
    """Version 0: a job is audited when it completes, with its realised runtime and ``on_time`` true if it ended
    by the end of its true deadline window (``exact``: on its last step) and false if later (``late``: one step
    later, audited when it completes in the next window); the true priority is not revealed, and nothing is
    audited at resolution."""
    ep = episode(n_windows=4, game_version=0)
    ep.submit([job("exact", true_h=3.0, deadline=1), job("late", true_h=37 * DT_S / 3600.0, deadline=1)])
    decide(ep)
    results = [ep.run_window()] + [(decide(ep), ep.run_window())[1] for _ in range(2)]
    audits = [[(a.request.request_id, a.on_time, a.completed_window) for a in r.audits] for r in results]
    assert audits == [[], [("exact", True, 1)], [("late", False, 2)]]
    assert all(a.true_priority is None and a.outcome is None for r in results for a in r.audits)
    runtimes = {a.request.request_id: a.realised_runtime_h for r in results for a in r.audits}
    assert runtimes == pytest.approx({"exact": 3.0, "late": 37 * DT_S / 3600.0})  # the true runtime, realised
    assert ep.ledger.jobs["late"].outcome == "missed" and ep.ledger.take_audits() == []


def test_version_1_completions_return_no_completion_audits():
    """``finish_window`` returns the version 0 completion audits only: in version 1 a job's audit is its
    resolution's (``take_audits``)."""
    ep = episode(n_windows=3, game_version=1)
    returned: list = []
    finish_window = ep.ledger.finish_window
    ep.ledger.finish_window = lambda *args: returned.append(finish_window(*args)) or returned[-1]
    ep.submit([job("a", true_h=1.0, deadline=2)])
    decide(ep)
    result = ep.run_window()
    assert [a.request.request_id for a in result.audits] == ["a"] and result.audits[0].outcome == "on_time"
    assert returned == [[]]


def test_committed_job_kw_is_the_power_of_the_jobs_running_and_of_those_admitted_and_waiting():
    ep = episode()
    ep.submit([job("runs", true_h=3.0, deadline=3, gpus=8, kw=20.0),
               job("waits", true_h=3.0, deadline=3, gpus=128, kw=50.0)])  # 128 H100 fit no zone of 96
    decide(ep)
    ep.run_window()
    assert ep.ledger.running == ["runs"] and ep.ledger.queue == ["waits"]
    assert ep.ledger.committed_job_kw() == pytest.approx(20.0 + 50.0)
