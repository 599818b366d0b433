"""Teams: honest with honest noise, strategic with per-episode tactics, adaptive to flags, learner by
action."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.agents.teams import (
    INJECTIONS,
    AdaptiveStrategicTeam,
    CooperativeTeam,
    InjectingStrategicTeam,
    LearnerTeam,
    StrategicTeam,
    TeamFeedback,
    honest_twin_factory,
    make_team,
)
from dcops.cluster.config import ClusterConfig

CONFIG = ClusterConfig()
CONFIG_V0 = ClusterConfig(game_version=0)


def submissions(team, seed: int, windows: int = 8, feedback=None, config=CONFIG) -> list:
    team.reset("team_0", np.random.default_rng(seed), config)
    out = []
    for w in range(windows):
        out.append(team.submit(w, feedback(w) if feedback else None))
    return out


def flat(windows: list) -> list:
    return [s for window in windows for s in window]


@pytest.mark.parametrize("kind", ["cooperative", "strategic", "adaptive", "injecting", "learner"])
def test_every_team_submits_in_every_window_including_the_last(kind):
    per_window = submissions(make_team(kind), seed=1)
    assert all(1 <= len(w) <= CONFIG.max_requests_per_team for w in per_window)
    assert all(s.request.submitted_window == w for w, subs in enumerate(per_window) for s in subs)


@pytest.mark.parametrize("kind", ["cooperative", "strategic", "adaptive"])
def test_teams_draw_from_at_least_eight_job_archetypes_with_seeded_variation(kind):
    subs = flat([flat(submissions(make_team(kind), seed=s)) for s in range(12)])
    assert len({s.request.job_type for s in subs}) >= 8
    kws = [s.request.kw for s in subs if s.request.job_type == "finetune"]
    assert len(set(np.round(kws, 6))) > 5
    a = [s.request.kw for s in flat(submissions(make_team(kind), seed=3))]
    b = [s.request.kw for s in flat(submissions(make_team(kind), seed=3))]
    c = [s.request.kw for s in flat(submissions(make_team(kind), seed=4))]
    assert a == b and a != c


def test_cooperative_team_never_applies_a_tactic_but_its_estimates_are_sometimes_off():
    subs = flat([flat(submissions(CooperativeTeam(), seed=s)) for s in range(20)])
    assert all(not s.tactics for s in subs)
    off_priority = np.mean([int(s.request.priority) != int(s.truth.true_priority) for s in subs])
    off_duration = np.mean([abs(s.request.duration_h - s.truth.true_runtime_h) > 0.25 for s in subs])
    assert 0.03 < off_priority < 0.2
    assert off_duration > 0.1
    ups = sum(int(s.request.priority) > int(s.truth.true_priority) for s in subs)
    downs = sum(int(s.request.priority) < int(s.truth.true_priority) for s in subs)
    assert downs > 0.4 * ups  # honest errors go both ways


def test_strategic_team_inflates_priority_and_compresses_deadlines_more_than_an_honest_one():
    honest = flat([flat(submissions(CooperativeTeam(), seed=s)) for s in range(20)])
    strategic = flat([flat(submissions(StrategicTeam(), seed=s)) for s in range(20)])

    def inflation(subs):
        return np.mean([int(s.request.priority) - int(s.truth.true_priority) for s in subs])

    def compression(subs):
        return np.mean([s.truth.true_deadline_window - s.request.deadline_window for s in subs])

    def hidden(subs):
        return np.mean([s.truth.true_carbon_flexible and not s.request.carbon_flexible for s in subs])

    assert inflation(strategic) > inflation(honest) + 0.3
    assert compression(strategic) > compression(honest) + 0.3
    assert hidden(strategic) > hidden(honest) + 0.1
    assert all(s.tactics for s in strategic if int(s.request.priority) > int(s.truth.true_priority) + 1)


def test_strategic_tactics_are_drawn_per_episode_not_fixed():
    intensities = set()
    for seed in range(12):
        team = StrategicTeam()
        team.reset("team_0", np.random.default_rng(seed), CONFIG)
        intensities.add(tuple(round(v, 3) for v in team.base_intensity.values()))
        assert any(v > 0 for v in team.base_intensity.values())
    assert len(intensities) == 12
    actives = {tuple(v > 0 for v in i) for i in intensities}
    assert len(actives) > 1


def test_adaptive_team_backs_off_a_flagged_tactic_shifts_and_returns_when_unwatched():
    team = AdaptiveStrategicTeam()
    team.reset("team_0", np.random.default_rng(5), CONFIG)
    flagged = max(team.base_intensity, key=team.base_intensity.get)
    base = dict(team.base_intensity)
    team.observe(TeamFeedback(0, frozenset({flagged})))
    assert team.intensity[flagged] == pytest.approx(0.15 * base[flagged])
    others = [t for t in base if t != flagged]
    assert max(team.intensity[t] for t in others) >= 0.6  # shifted to another tactic
    for w in range(1, 5):
        team.observe(TeamFeedback(w))
    assert team.intensity == pytest.approx(base)


def test_adaptive_team_misreports_less_while_flagged_than_while_unwatched():
    def rate(flag_every_window: bool) -> float:
        applied = []
        for seed in range(30):
            team = AdaptiveStrategicTeam()
            per_window = submissions(
                team,
                seed,
                feedback=lambda w: TeamFeedback(
                    w, frozenset({"pattern_gaming"} if flag_every_window else set())
                ),
            )
            applied += [bool(s.tactics) for s in flat(per_window[1:])]
        return float(np.mean(applied))

    assert rate(True) < rate(False) - 0.2


def test_learner_team_misreports_exactly_as_its_action_says():
    team = LearnerTeam()
    team.reset("team_0", np.random.default_rng(0), CONFIG)
    honest = team.submit(0, None, action=np.zeros(12, dtype=np.int64))
    assert all(not s.tactics for s in honest)
    action = np.tile([3, 0, 0], 4)
    inflated = team.submit(1, None, action=action)
    for s in inflated:
        assert int(s.request.priority) == 3 or int(s.truth.true_priority) == 3
    assert team.submit(2, None, action="garbage")  # a malformed action means honest statements, no crash


# ---------------------------------------------------------------- honest mode, separate streams, injection
def truth_rows(per_window: list) -> list:
    return [
        (s.request.request_id, s.request.job_type, s.request.kw, s.request.gpus, s.truth)
        for s in flat(per_window)
    ]


def statements(per_window: list) -> list:
    return [
        (
            s.request.priority,
            s.request.deadline_window,
            s.request.carbon_flexible,
            s.request.duration_h,
            s.request.description,
        )
        for s in flat(per_window)
    ]


@pytest.mark.parametrize("kind", ["strategic", "adaptive", "injecting"])
@pytest.mark.parametrize("seed", [0, 7, 23])
def test_honest_twin_draws_the_same_jobs_and_states_them_like_a_cooperative_team(kind, seed):
    def flags(w):  # an adaptive team reacts to flags: its tactic draws change, its jobs must not
        return TeamFeedback(w, frozenset({"pattern_gaming"} if w % 2 else set()))

    gaming = submissions(make_team(kind), seed, feedback=flags)
    twin_team = make_team(kind)
    twin_team.honest = True
    twin = submissions(twin_team, seed, feedback=flags)
    cooperative = submissions(CooperativeTeam(), seed)
    assert truth_rows(gaming) == truth_rows(twin) == truth_rows(cooperative)
    assert statements(twin) == statements(cooperative)
    assert all(not s.tactics for s in flat(twin))
    assert statements(gaming) != statements(twin)  # the gaming team does misreport on these seeds


def test_a_cooperative_team_and_its_honest_twin_are_identical():
    for seed in range(5):
        twin = CooperativeTeam(honest=True)
        assert statements(submissions(CooperativeTeam(), seed)) == statements(submissions(twin, seed))
        assert truth_rows(submissions(CooperativeTeam(), seed)) == truth_rows(submissions(twin, seed))


def test_honest_twin_factory_makes_only_the_named_ids_honest():
    factory = honest_twin_factory({"team_1"})
    a, b = factory("strategic"), factory("strategic")
    a.reset("team_0", np.random.default_rng(3), CONFIG)
    b.reset("team_1", np.random.default_rng(3), CONFIG)
    assert not a.honest_mode and b.honest_mode
    with pytest.raises(TypeError, match="honest mode"):
        honest_twin_factory({"team_0"}, factory=lambda kind: object())("strategic")


def test_injecting_team_writes_an_injection_naming_its_own_request_into_every_description():
    """Version 0: every description carries one (version 1 puts them on a share: ``test_descriptions``)."""
    team = make_team("injecting")
    assert isinstance(team, InjectingStrategicTeam)
    subs = flat([flat(submissions(make_team("injecting"), seed=s, config=CONFIG_V0)) for s in range(10)])
    used = set()
    for s in subs:
        texts = [
            i
            for i, (_, template) in enumerate(INJECTIONS)
            if template.format(request_id=s.request.request_id) in s.request.description
        ]
        assert len(texts) == 1, s.request.description
        used |= set(texts)
        if "{request_id}" in INJECTIONS[texts[0]][1]:
            assert s.request.request_id in s.request.description
        assert "URGENT" not in s.request.description.replace("URGENT, blocking a launch: ", "", 1)
    assert used == set(range(len(INJECTIONS)))  # every documented kind is drawn
    # it games like a strategic team on top
    assert np.mean([int(s.request.priority) - int(s.truth.true_priority) for s in subs]) > 0.3


def test_injecting_team_uses_the_env_request_ids_when_given():
    team = make_team("injecting")
    team.reset("team_0", np.random.default_rng(0), CONFIG)
    ids = iter(f"r{i:04d}" for i in range(1, 100))
    for s in team.submit(0, None, new_id=lambda: next(ids)):
        assert s.request.request_id.startswith("r0")
        assert "team_0-" not in s.request.description


@pytest.mark.parametrize("seed", [0, 5, 11])
@pytest.mark.parametrize("game_version", [0, 1])
def test_injecting_team_misreports_exactly_like_a_strategic_team_and_only_adds_text(seed, game_version):
    """Same jobs, same statements; the text gains an injection on every request in version 0 and on some
    (not all) in version 1, and is otherwise the strategic team's."""
    config = ClusterConfig(game_version=game_version)
    injecting = flat(submissions(make_team("injecting"), seed, config=config))
    strategic = flat(submissions(make_team("strategic"), seed, config=config))
    assert len(injecting) == len(strategic)
    injected = 0
    for a, b in zip(injecting, strategic, strict=True):
        assert a.truth == b.truth and a.tactics == b.tactics
        fields = ("priority", "deadline_window", "carbon_flexible", "duration_h", "kw", "gpus", "request_id")
        assert all(getattr(a.request, f) == getattr(b.request, f) for f in fields)
        if a.request.description != b.request.description:
            assert a.request.description.startswith(b.request.description + " ")
            injected += 1
    assert injected == len(injecting) if game_version == 0 else 0 < injected < len(injecting)
