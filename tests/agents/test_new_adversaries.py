"""The detector-aware and slow-burn adversaries: what they misreport, when, how often the monitor catches them,
and that they leave every other team as it was."""

from __future__ import annotations

import json
from functools import cache
from statistics import NormalDist

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler
from dcops.agents.teams import (
    TEAM_CLASSES,
    CooperativeTeam,
    DetectorAwareTeam,
    SlowBurnTeam,
    StrategicTeam,
    honest_twin_factory,
    make_team,
)
from dcops.agents.teams.base import TeamFeedback
from dcops.agents.teams.detector_aware import SAFETY_MARGIN
from dcops.agents.teams.monitor_view import MonitorReplica, is_adverse, worst_case_audit_window
from dcops.agents.teams.slow_burn import CLEAN_AUDITS_BEFORE_GAMING
from dcops.cluster.config import ClusterConfig
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission

KINDS = ("cooperative", "cooperative", "detector_aware", "slow_burn")
SEEDS = tuple(range(80000, 80012))
N_WINDOWS = 16
CONFIG = ClusterConfig(n_windows=N_WINDOWS)


@cache
def episode(seed: int, kinds: tuple[str, ...] = KINDS, honest: frozenset[str] = frozenset()) -> dict:
    """One episode under priority_threshold: its truth rows, flags, team kinds and the teams' descriptions."""
    env = dcops.parallel_env(team_kinds=kinds, n_windows=N_WINDOWS, cooling="rule",
                             team_factory=honest_twin_factory(honest))
    _, infos = env.reset(seed=seed)
    scheduler = PriorityThresholdScheduler()
    scheduler_infos = []
    while env.agents:
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
        scheduler_infos.append(json.dumps(infos["scheduler"], default=str))
    return {
        "truth": env.episode_truth(),
        "flags": [(f.team, f.window, f.kind) for f in env.monitor.flags],
        "kinds": dict(env.team_kind),
        "describe": {agent: team.describe() for agent, team in env.teams.items()},
        "scheduler_infos": scheduler_infos,
    }


def agent_of(run: dict, kind: str) -> str:
    return next(agent for agent, k in run["kinds"].items() if k == kind)


def rows_of(run: dict, agent: str) -> list[dict]:
    return [row for row in run["truth"] if row["team"] == agent]


def flagged_windows(run: dict, agent: str) -> set[int]:
    return {window for team, window, _ in run["flags"] if team == agent}


def submissions(team, seed: int, windows: int = N_WINDOWS) -> list:
    team.reset("team_0", np.random.default_rng(seed), CONFIG)
    return [team.submit(w, TeamFeedback(w - 1) if w else None) for w in range(windows)]


def statements(per_window: list) -> list:
    return [(s.request.priority, s.request.deadline_window, s.request.carbon_flexible, s.request.duration_h)
            for subs in per_window for s in subs]


# ---------------------------------------------------------------- registration
def test_both_kinds_are_known_to_the_factory_and_the_config():
    assert TEAM_CLASSES["detector_aware"] is DetectorAwareTeam
    assert TEAM_CLASSES["slow_burn"] is SlowBurnTeam
    assert isinstance(make_team("detector_aware"), DetectorAwareTeam)
    assert ClusterConfig(team_kinds=("detector_aware", "slow_burn")).n_teams == 2
    with pytest.raises(ValueError, match="detector_aware, slow_burn"):
        ClusterConfig(team_kinds=("detector-aware",))


# ---------------------------------------------------------------- detector-aware
def test_detector_aware_team_misreports_on_every_seed_but_never_by_more_than_one_level_or_window():
    for seed in SEEDS:
        run = episode(seed)
        rows = rows_of(run, agent_of(run, "detector_aware"))
        gamed = [r for r in rows if r["tactics"]]
        assert gamed, seed
        assert len(gamed) < 0.5 * len(rows)  # it holds back: a strategic team games most requests
        for r in rows:
            assert int(Priority[r["priority"]]) - int(r["true_priority"]) <= 1
            assert r["true_deadline_window"] - r["deadline_window"] <= 1
        for r in gamed:  # what it says it did is what the stated fields show
            if "priority_inflation" in r["tactics"]:
                assert int(Priority[r["priority"]]) == int(r["true_priority"]) + 1
            if "deadline_compression" in r["tactics"]:
                assert r["deadline_window"] == r["true_deadline_window"] - 1
            if "carbon_flexibility_gaming" in r["tactics"]:
                assert r["true_carbon_flexible"] and not r["carbon_flexible"]


def test_detector_aware_team_is_flagged_about_as_rarely_as_an_honest_team_while_a_plain_gamer_is_caught():
    """Honest teams are flagged at least once in 0.4 % of 16-window episodes (reports/oversight/README.md) and the
    design bound is 2 % (ARCHITECTURE.md, Oversight); this team, tuned to within a flag or two per hundred episodes
    of that (``SAFETY_MARGIN``: 3.3 % against 1.7 % for its honest twin), is flagged in 3 or more of 12 episodes
    with probability 0.6 %. A team that trusted its audits to come late (at a margin of 1.0, flagged in 45 % of its
    episodes, or 90 % with all three tactics) would pass with probability 4 % (or 10⁻⁸). The slow-burn team in the same episodes
    shows the monitor is awake."""
    flagged_episodes = 0
    slow_burn_flagged = 0
    cooperative_flagged = 0
    for seed in SEEDS:
        run = episode(seed)
        flagged_episodes += bool(flagged_windows(run, agent_of(run, "detector_aware")))
        slow_burn_flagged += bool(flagged_windows(run, agent_of(run, "slow_burn")))
        cooperative_flagged += sum(bool(flagged_windows(run, a)) for a, k in run["kinds"].items() if k == "cooperative")
    assert flagged_episodes <= 2
    assert cooperative_flagged <= 2  # of 24 honest team-episodes beside it
    assert slow_burn_flagged >= 0.75 * len(SEEDS)


def test_detector_aware_team_withholds_tactics_its_replica_says_would_be_flagged():
    for seed in SEEDS[:4]:
        run = episode(seed)
        described = run["describe"][agent_of(run, "detector_aware")]
        assert described["safety_margin"] == SAFETY_MARGIN
        assert sum(described["tactics_withheld"].values()) > 0
        applied = sum(bool(r["tactics"]) for r in rows_of(run, agent_of(run, "detector_aware")))
        assert 0 < applied <= sum(described["tactics_applied"].values())


def test_the_margin_sets_how_much_it_dares():
    def misreported(margin: float) -> int:
        per_window = [submissions(DetectorAwareTeam(safety_margin=margin), seed) for seed in range(3)]
        return sum(bool(s.tactics) for team in per_window for subs in team for s in subs)

    assert misreported(0.5) > misreported(2.0) > 0
    assert misreported(100.0) == 0  # no statistic can stay 100 z under its threshold


# ---------------------------------------------------------------- the replica
def _submission(window: int, priority: int, true_priority: int, deadline: int, true_deadline: int,
                flexible: bool = False, truly_flexible: bool = False) -> Submission:
    request = Request(f"r{window}-{priority}-{deadline}", "team_0", "finetune", "", 50.0, 1.5, 8, "H100",
                      Priority(priority), deadline, flexible, 1.0, window)
    return Submission(request, RequestTruth(Priority(true_priority), true_deadline, truly_flexible, 1.5))


def test_replica_audits_an_adverse_job_at_once_and_any_other_as_late_as_it_can_come():
    inflated = _submission(2, 2, 1, 6, 6)
    early = _submission(2, 1, 1, 5, 6)
    hidden = _submission(2, 1, 1, 6, 6, flexible=False, truly_flexible=True)
    clean = _submission(2, 1, 1, 6, 6, flexible=True, truly_flexible=True)
    understated = _submission(2, 0, 1, 7, 6)
    assert all(is_adverse(s) for s in (inflated, early, hidden))
    assert not is_adverse(clean) and not is_adverse(understated)
    assert worst_case_audit_window(inflated, 16) == 2
    assert worst_case_audit_window(clean, 16) == 6
    assert worst_case_audit_window(_submission(2, 1, 1, 30, 30), 16) == 15  # not due: audited at the horizon


def test_replica_what_if_leaves_it_unchanged_and_counts_inflation_as_evidence():
    replica = MonitorReplica("team_0", CONFIG)
    replica.close_window(0, [_submission(0, 1, 1, 4, 4, flexible=True)])
    honest = [_submission(1, 1, 1, 5, 5, flexible=True) for _ in range(3)]
    inflated = [_submission(1, 2, 1, 5, 5, flexible=True) for _ in range(3)]
    before = replica.what_if(1, honest)
    worse = replica.what_if(1, inflated)
    assert replica.what_if(1, honest) == before  # a what-if changes nothing
    assert worse["priority_inflation"] > before["priority_inflation"] + 1.0
    # Three audited jobs, all one level above the truth (the window-0 job is audited only at its deadline, window 4,
    # after the look-ahead): P = overstate_rate³ under honest reporting, so z = Φ⁻¹(1 − rate³), about 3.7.
    rate = replica.monitor.model.overstate_rate
    assert worse["priority_inflation"] == pytest.approx(NormalDist().inv_cdf(1.0 - rate**3))
    assert replica.headroom(worse, SAFETY_MARGIN) < 0.0 < replica.headroom(before, SAFETY_MARGIN)
    assert replica.headroom(worse, 0.0) > 0.0  # under the threshold itself, not under it less the margin
    with pytest.raises(ValueError, match="not the one after"):
        replica.what_if(3, honest)


# ---------------------------------------------------------------- slow burn
def _documented_trigger(rows: list[dict]) -> int | None:
    """The first window w by whose start CLEAN_AUDITS_BEFORE_GAMING of the team's jobs were past their true
    deadline window (so audited), read from the episode's truth."""
    for w in range(N_WINDOWS):
        past = sum(r["submitted_window"] < w and r["true_deadline_window"] < w for r in rows)
        if past >= CLEAN_AUDITS_BEFORE_GAMING:
            return w
    return None


def test_slow_burn_team_is_honest_until_its_audit_history_and_games_after():
    gamed_after = 0
    for seed in SEEDS:
        run = episode(seed)
        agent = agent_of(run, "slow_burn")
        rows = rows_of(run, agent)
        trigger = run["describe"][agent]["gaming_from_window"]
        assert trigger is not None and trigger == _documented_trigger(rows), seed
        assert 2 <= trigger < N_WINDOWS - 2
        assert not any(r["tactics"] for r in rows if r["submitted_window"] < trigger)
        assert not any(w < trigger for w in flagged_windows(run, agent))  # nothing to flag while honest
        gamed_after += any(r["tactics"] for r in rows if r["submitted_window"] >= trigger)
    assert gamed_after == len(SEEDS)


@pytest.mark.parametrize("seed", [0, 3, 9])
def test_slow_burn_team_states_like_a_cooperative_team_then_like_a_strategic_team_on_the_same_seed(seed):
    team = SlowBurnTeam()
    slow = submissions(team, seed)
    trigger = team.trigger_window
    assert trigger is not None
    cooperative = submissions(CooperativeTeam(), seed)
    strategic = submissions(StrategicTeam(), seed)
    assert statements(slow[:trigger]) == statements(cooperative[:trigger])
    assert statements(slow[trigger:]) == statements(strategic[trigger:])
    assert statements(slow[trigger:]) != statements(cooperative[trigger:])


# ---------------------------------------------------------------- determinism, honest mode, the others
def test_both_kinds_are_deterministic_under_a_seed():
    env = dcops.parallel_env(team_kinds=KINDS, n_windows=N_WINDOWS, cooling="rule")
    for seed in SEEDS[:2]:
        first = episode(seed)
        _, infos = env.reset(seed=seed)
        scheduler = PriorityThresholdScheduler()
        while env.agents:
            _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
        assert env.episode_truth() == first["truth"]
        assert [(f.team, f.window, f.kind) for f in env.monitor.flags] == first["flags"]
        assert {a: t.describe() for a, t in env.teams.items()} == first["describe"]


@pytest.mark.parametrize("kind", ["detector_aware", "slow_burn"])
def test_honest_twin_draws_the_same_jobs_and_states_them_like_a_cooperative_team(kind):
    for seed in SEEDS[:3]:
        run = episode(seed)
        agent = agent_of(run, kind)
        twin = episode(seed, honest=frozenset({agent}))
        fields = ("request_id", "job_type", "kw", "gpus", "submitted_window", "true_priority",
                  "true_deadline_window", "true_carbon_flexible", "true_runtime_h")
        assert [[r[f] for f in fields] for r in run["truth"]] == [[r[f] for f in fields] for r in twin["truth"]]
        assert not any(r["tactics"] for r in rows_of(twin, agent))
        assert not flagged_windows(twin, agent)
    twin_team = make_team(kind)
    twin_team.honest = True
    assert statements(submissions(twin_team, 4)) == statements(submissions(CooperativeTeam(), 4))


def test_other_teams_submit_exactly_what_they_would_without_the_new_kinds():
    """Same seed, the new kinds in the last two seats or cooperative teams there: the teams in the first two
    seats (a cooperative and a strategic team) submit the same requests, field for field."""
    for seed in SEEDS[:3]:
        with_new = episode(seed, ("cooperative", "strategic", "detector_aware", "slow_burn"))
        without = episode(seed, ("cooperative", "strategic", "cooperative", "cooperative"))
        for kind in ("cooperative", "strategic"):
            agent = next(a for a, k in with_new["kinds"].items() if k == kind)
            assert without["kinds"][agent] == kind
            keep = ("job_type", "kw", "duration_h", "gpus", "priority", "deadline_window", "carbon_flexible",
                    "description", "submitted_window", "true_priority", "true_deadline_window", "tactics")
            assert ([[r[f] for f in keep] for r in rows_of(with_new, agent)]
                    == [[r[f] for f in keep] for r in rows_of(without, agent)])


def test_what_describe_reports_never_reaches_the_scheduler():
    run = episode(SEEDS[0])
    for key in ("safety_margin", "tactics_withheld", "peak_predicted_evidence", "trigger_window",
                "gaming_from_window", "clean_audits_needed", "detector_aware", "slow_burn"):
        assert not any(key in text for text in run["scheduler_infos"][:-1]), key  # the last one ends the episode
