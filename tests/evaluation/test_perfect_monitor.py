"""The perfect oversight monitor (evaluator-only): what it tells a scheduler is the truth about each team, it never
changes the view it was given, and the search plays with it only where asked."""

from __future__ import annotations

import pytest

import dcops
from dcops.agents.teams import GAMING_KINDS
from dcops.evaluation.perfect_monitor import (
    PerfectMonitor,
    TruthHints,
    parse_oracle,
    told_coin,
    with_oracle,
)
from dcops.evaluation.play import run_episode


class Recorder:
    """A scheduler that remembers the posteriors it was shown and defers to priority_threshold."""

    name = "recorder"

    def __init__(self) -> None:
        from dcops.agents.schedulers import PriorityThresholdScheduler

        self.inner = PriorityThresholdScheduler()
        self.seen: list[dict[str, float]] = []

    def decide(self, view):
        self.seen.append({team: stats["gaming_posterior"] for team, stats in view["teams"].items()})
        return self.inner.decide(view)


def _tactic_shares(env, window: int) -> dict[str, float]:
    """Each team's share of the requests it submitted before ``window`` with a misreporting tactic, counted here
    from the ledger."""
    shares = {}
    for team in env.team_kind:
        jobs = [job for job in env.episode.ledger.jobs.values()
                if job.request.team == team and job.request.submitted_window < window]
        shares[team] = sum(1 for job in jobs if job.tactics) / len(jobs) if jobs else 0.0
    return shares


def test_the_kind_oracle_says_one_for_every_gaming_team_and_zero_for_the_honest_ones_from_the_first_window():
    env = dcops.parallel_env(scenario="adversarial")
    recorder = Recorder()
    run_episode(PerfectMonitor(env, recorder, "kind"), 4900, env=env)
    expected = {team: float(kind in GAMING_KINDS) for team, kind in env.team_kind.items()}
    assert sorted(expected.values()) == [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # 2 cooperative, 5 gaming kinds
    assert recorder.seen and all(seen == expected for seen in recorder.seen)


def test_the_record_oracle_is_each_teams_share_of_misreported_submissions_so_far():
    env = dcops.parallel_env(scenario="oversubscribed")
    recorder = Recorder()
    monitor = PerfectMonitor(env, recorder, "record")
    observations, infos = env.reset(seed=2900)
    shares = []
    while env.agents:
        shares.append(_tactic_shares(env, infos["scheduler"]["view"]["window"]))
        observations, _, _, _, infos = env.step({"scheduler": monitor.decide(infos["scheduler"]["view"])})
    assert recorder.seen == shares
    assert all(value == 0.0 for value in recorder.seen[0].values())  # nothing earlier than window 0 to know
    kinds = env.team_kind
    assert all(seen[t] == 0.0 for seen in recorder.seen for t, k in kinds.items() if k == "cooperative")
    assert any(0.0 < seen[t] <= 1.0 for seen in recorder.seen for t, k in kinds.items() if k in GAMING_KINDS)


def test_the_view_the_monitor_was_given_is_left_as_it_was():
    env = dcops.parallel_env(scenario="adversarial")
    _, infos = env.reset(seed=4901)
    view = infos["scheduler"]["view"]
    before = {team: stats["gaming_posterior"] for team, stats in view["teams"].items()}
    PerfectMonitor(env, Recorder(), "kind").decide(view)
    assert {team: stats["gaming_posterior"] for team, stats in view["teams"].items()} == before


def test_an_unknown_oracle_is_refused_by_name():
    with pytest.raises(ValueError, match="oracle: unknown 'psychic'"):
        PerfectMonitor(None, Recorder(), "psychic")


def test_the_oracle_evaluation_plays_the_parametric_scheduler_through_the_perfect_monitor():
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import ParametricScheduler
    from dcops.training.scheduler.search import _evaluate

    parameters = {"posterior_discount": 3.0}  # a sure gamer's stated priority read about three levels lower
    env = dcops.parallel_env(scenario="adversarial")
    seeds = (4902, 4903)
    perfect = _evaluate(("adversarial", seeds, parameters, "classic", "kind"))
    played = [run_episode(PerfectMonitor(env, ParametricScheduler(**parameters), "kind"), s, env=env)["score"]
              for s in seeds]
    real = [run_episode(ParametricScheduler(**parameters), s, env=env)["score"] for s in seeds]
    assert perfect == pytest.approx(sum(played) / 2, abs=1e-12)
    assert perfect != pytest.approx(sum(real) / 2, abs=1e-9)  # the oracle changed the decisions
    baseline = _evaluate(("adversarial", seeds, None, "classic", "kind"))
    assert baseline == pytest.approx(sum(run_episode(PriorityThresholdScheduler(), s, env=env)["score"]
                                         for s in seeds) / 2, abs=1e-12)


def test_a_search_with_a_perfect_monitor_says_so_and_validates_the_shipped_file_with_both_monitors():
    from dcops.training.scheduler.search import cross_entropy_search, data_path

    result = cross_entropy_search("adversarial", iterations=1, population=2, elite=1, n_seeds=1, n_validation=1,
                                  parameter_set="bayes", oracle="kind")
    assert result["oracle"] == "kind"
    validation = result["validation"]
    assert set(validation) >= {"priority_threshold", "searched", "shipped", "shipped_real_monitor"}
    assert validation["shipped"] != validation["shipped_real_monitor"]
    assert str(data_path("adversarial", oracle="kind")).endswith(
        "reports/cluster/information/searched_adversarial_perfect_kind.json")
    for spelled in ("told:0.5", "told:0.50", "told:.5"):  # one share, one file, whatever the spelling
        assert str(data_path("oversubscribed", oracle=spelled)).endswith(
            "reports/cluster/information/searched_oversubscribed_told-0.5.json")
    assert "oracle" not in cross_entropy_search("classic", iterations=1, population=1, elite=1, n_seeds=1)
    with pytest.raises(ValueError, match="oracle: unknown"):
        cross_entropy_search("classic", iterations=1, population=1, elite=1, n_seeds=1, oracle="psychic")


def test_the_command_refuses_an_unknown_oracle_by_name():
    from dcops.cli import main

    with pytest.raises(SystemExit, match="--oracle: unknown 'psychic'"):
        main(["search-scheduler", "--family", "classic", "--oracle", "psychic"])


def test_a_perfect_monitor_lifts_the_searched_scheduler_by_little_and_never_to_the_issues_target():
    """The ceiling of the team channel (``reports/cluster/information/perfect_monitor.md``): on 200 validation
    seeds of ``oversubscribed`` the shipped searched scheduler gains +0.0006 from a monitor that knows which teams
    game, and the class re-tuned with that monitor leads priority_threshold by +0.020, short of the issue's +0.03.
    Told the truth of every pending request instead (the real monitor kept), the same shipped file leads by
    +0.044: the headroom is in each request's truth, not in knowing the team. Guarded on the first 40 of those
    seeds: the monitor's gain below +0.01, the re-tuned lead above 0 and below +0.03, the told lead above +0.03."""
    import json
    from pathlib import Path

    import numpy as np

    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import ParametricScheduler, searched_scheduler
    from dcops.training.scheduler.search import validation_seeds

    retuned = json.loads((Path(__file__).resolve().parents[2] / "reports/cluster/information"
                          / "searched_oversubscribed_perfect_kind.json").read_text())
    assert retuned["oracle"] == "kind"
    env = dcops.parallel_env(scenario="oversubscribed")
    gain, lead, told = [], [], []
    for seed in validation_seeds("oversubscribed", 40):
        base = run_episode(PriorityThresholdScheduler(), seed, env=env)["score"]
        real = run_episode(searched_scheduler("oversubscribed"), seed, env=env)["score"]
        perfect = run_episode(PerfectMonitor(env, searched_scheduler("oversubscribed"), "kind"), seed, env=env)["score"]
        tuned = run_episode(PerfectMonitor(env, ParametricScheduler(**retuned["parameters"]), "kind"), seed,
                            env=env)["score"]
        truth = run_episode(with_oracle(env, searched_scheduler("oversubscribed"), "told:1"), seed, env=env)["score"]
        gain.append(perfect - real)
        lead.append(tuned - base)
        told.append(truth - base)
    assert np.mean(gain) < 0.01, np.mean(gain)
    assert 0.0 < np.mean(lead) < 0.03, np.mean(lead)
    assert np.mean(told) > 0.03, np.mean(told)


class PendingRecorder(Recorder):
    """Also remembers the pending requests it was shown."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[list[dict]] = []

        self.teams: list[dict] = []

    def decide(self, view):
        self.pending.append([dict(r) for r in view["pending"]])
        self.teams.append(view["teams"])
        return super().decide(view)


@pytest.mark.parametrize("text, parsed", [("kind", ("kind", None)), ("record", ("record", None)),
                                          ("told:0.25", ("told", 0.25)), ("told:1", ("told", 1.0))])
def test_oracle_names_parse(text, parsed):
    assert parse_oracle(text) == parsed


@pytest.mark.parametrize("text", ["told:0", "told:1.5", "told:-0.1", "told:half", "told:", "told:nan", "psychic"])
def test_a_malformed_oracle_is_refused_by_name(text):
    with pytest.raises(ValueError, match="oracle: unknown"):
        parse_oracle(text)


def test_the_told_coin_is_fixed_by_the_request_and_spread_evenly_within_and_across_episodes():
    """The coin is a function of the request's public fields: the same request, the same coin; the share told in
    one episode is near the share asked for, and request ``r0001`` is not told in every episode alike."""
    import numpy as np

    env = dcops.parallel_env(scenario="oversubscribed")
    per_episode, first = [], []
    for seed in (2950, 2951, 2952, 2953, 2954, 2955):
        _, infos = env.reset(seed=seed)
        coins = {}
        while env.agents:
            for request in infos["scheduler"]["view"]["pending"]:
                coin = told_coin(request)
                assert 0.0 <= coin < 1.0 and coin == told_coin(dict(request))
                coins[request["request_id"]] = coin
            _, _, _, _, infos = env.step({"scheduler": []})
        values = np.array(list(coins.values()))
        assert len(values) > 100
        per_episode.append(((values < 0.25).mean(), (values < 0.5).mean()))
        first.append(coins["r0001"] < 0.5)
    quarter, half = np.mean(per_episode, axis=0)
    assert abs(quarter - 0.25) < 0.05 and abs(half - 0.5) < 0.05, (quarter, half)
    assert 0 < sum(first) < len(first), first  # r0001 told in some episodes, not in all


@pytest.mark.parametrize("share", [0.5, 1.0])
def test_told_requests_carry_their_truth_and_the_others_their_statement(share):
    from dcops.evaluation.truth_planner import told_request

    env = dcops.parallel_env(scenario="oversubscribed")
    recorder = PendingRecorder()
    hints = with_oracle(env, recorder, f"told:{share}")
    assert isinstance(hints, TruthHints) and hints.share == share
    _, infos = env.reset(seed=2901)
    told = stated = corrected = 0
    while env.agents:
        view = infos["scheduler"]["view"]
        decisions = hints.decide(view)
        for given, original in zip(recorder.pending[-1], view["pending"], strict=True):
            if told_coin(original) < share:
                clean = f"{original['team']}/told"
                assert given == {**told_request(env, original), "team": clean}
                assert recorder.teams[-1][clean]["gaming_posterior"] == 0.0
                assert recorder.teams[-1][clean]["budget_left"] == view["teams"][original["team"]]["budget_left"]
                assert not any(recorder.teams[-1][clean]["flags_so_far"].values())
                told += 1
                corrected += any(given[k] != original[k] for k in original if k != "team")
            else:
                assert given == original
                stated += 1
        _, _, _, _, infos = env.step({"scheduler": decisions})
    assert told > 20 and (stated == 0 if share == 1.0 else stated > 20)
    assert corrected > 0


def test_an_oracles_search_never_writes_the_shipped_file():
    from dcops.agents.schedulers.parametric import searched_path
    from dcops.cli import main

    shipped = searched_path("classic")
    before = shipped.read_bytes()
    with pytest.raises(SystemExit, match="--out: .* is the shipped file"):
        main(["search-scheduler", "--family", "classic", "--oracle", "kind", "--out", str(shipped)])
    assert shipped.read_bytes() == before
