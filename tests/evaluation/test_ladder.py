"""The ladder's summary: paired differences against the best public baseline, payoff shares, rung order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.evaluation.ladder import BOUND, TRUTH, markdown, play_seed, summarise


def _rows():
    rows = []
    scores = {"priority_threshold": (0.20, 0.30), "earliest_deadline": (0.25, 0.27), "carbon_greedy": (0.10, 0.12),
              TRUTH: (0.40, 0.44)}
    for i, seed in enumerate((0, 1)):
        rows.append({"family": "classic", "seed": seed, "rung": BOUND, "throughput_value": 100.0,
                     "fraction_of_bound": 1.0, "incident_windows": 0})
        for rung, values in scores.items():
            row = {"family": "classic", "seed": seed, "rung": rung, "score": values[i], "throughput_value": 50.0,
                   "fraction_of_bound": 0.5, "incident_windows": i}
            if rung != TRUTH:
                row |= {"gaming_payoff": 10.0 * (i + 1), "twin_value": 100.0}
            rows.append(row)
    return rows


def test_the_reference_is_the_best_mean_baseline_and_differences_are_paired():
    summary = summarise(_rows())["classic"]
    by = {e["rung"]: e for e in summary}
    # Means: threshold 0.25, deadline 0.26 -> deadline is the reference.
    assert by[TRUTH]["best_baseline"] == "earliest_deadline"
    assert by[TRUTH]["vs_best"] == pytest.approx(((0.40 - 0.25) + (0.44 - 0.27)) / 2)
    assert by["earliest_deadline"]["vs_best"] == 0.0
    assert by["priority_threshold"]["gaming_payoff"] == pytest.approx(15.0)
    assert by["priority_threshold"]["gaming_payoff_pct"] == pytest.approx(100.0 * 30.0 / 200.0)
    assert "gaming_payoff" not in by[TRUTH]
    assert [e["rung"] for e in summary] == ["priority_threshold", "earliest_deadline", "carbon_greedy", TRUTH, BOUND]
    low, high = by[TRUTH]["vs_best_low"], by[TRUTH]["vs_best_high"]
    assert low < by[TRUTH]["vs_best"] < high and not math.isnan(low)


def test_the_markdown_names_every_rung_and_the_command():
    text = markdown(summarise(_rows()), "dcops eval-cluster --ladder classic --seeds 2")
    assert "dcops eval-cluster --ladder classic --seeds 2" in text
    for rung in ("priority_threshold", "earliest_deadline", "carbon_greedy", TRUTH, BOUND):
        assert f"| {rung} |" in text


def test_a_seed_plays_every_rung_with_paired_honest_twins():
    rows = play_seed("classic", 0, rungs=("accept_all", "priority_threshold"), truth=False, n_windows=3)
    rungs = [r["rung"] for r in rows]
    assert rungs == [BOUND, "accept_all", "priority_threshold"]
    for row in rows[1:]:
        assert row["twin_value"] > 0  # the classic family has two gaming teams, each with an honest twin
        assert row["fraction_of_bound"] <= 1.0 + 1e-9 or row["incident_windows"] > 0


def test_the_rl_scheduler_plays_every_family_with_weights_that_read_its_game(monkeypatch):
    """``ppo``'s matrix-trained network reads only four-team games (its global context is sized by the team
    count): it can play ``classic`` and ``chiller_fault``; every family whose own weights ship
    (``ppo_scheduler_<family>.npz``, ``dcops train-scheduler-ppo --family``) plays those, and the six- and
    seven-team families must have them. A family with no
    weights that fit is left out, even when named; where it plays, it is the scheduler through its
    observation, with honest twins like every rung."""
    from importlib import resources

    import dcops.agents.schedulers.learned as learned
    from dcops.agents.schedulers import LearnedScheduler
    from dcops.evaluation.ladder import family_env, family_rungs, run_ladder

    for family, teams in (("classic", 4), ("chiller_fault", 4), ("oversubscribed", 6), ("adversarial", 7)):
        space = family_env(family).observation_space("scheduler")
        assert space["teams"].shape[0] == teams
        assert learned.shipped_policy().fits(space) == (teams == 4)
        policy = learned.family_policy(family)
        assert policy.fits(space) and "ppo" in family_rungs(family)
        own = (resources.files(learned.WEIGHTS_PACKAGE) / learned.family_weights_name(family)).is_file()
        assert own or teams == 4  # the matrix's network cannot stand in for a six- or seven-team family
        assert (policy is learned.shipped_policy()) == (not own)
        assert LearnedScheduler(family=family).policy is policy
    rows = play_seed("adversarial", 0, rungs=("ppo",), truth=False, n_windows=2)
    assert [r["rung"] for r in rows] == [BOUND, "ppo"] and rows[1]["twin_value"] > 0
    rows = play_seed("classic", 0, rungs=("ppo", "priority_threshold"), truth=False, n_windows=3)
    assert [r["rung"] for r in rows] == [BOUND, "ppo", "priority_threshold"]
    assert rows[1]["twin_value"] > 0 and math.isfinite(rows[1]["score"])
    # Without weights of its own, a seven-team family cannot be played by the four-team network.
    monkeypatch.setattr(learned, "family_policy", lambda family: learned.shipped_policy())
    assert "ppo" not in family_rungs("adversarial")
    assert [r["rung"] for r in play_seed("adversarial", 0, rungs=("ppo",), truth=False, n_windows=2)] == [BOUND]
    with pytest.raises(ValueError, match="can play family 'adversarial'"):  # a replay that would play nothing
        run_ladder(["classic", "adversarial"], 1, rungs=["ppo"])


def test_a_ppo_row_names_the_weights_it_was_played_by_and_the_report_says_so(tmp_path):
    """The ``ppo`` rung's network depends on which files ship, so each of its rows records the package-data file
    and the first 12 hex digits of the SHA-256 of its bytes, the CSV reads it back, and the report prints it under
    the family's table. In every family the named file holds exactly the network ``ppo`` plays (read here from the
    file, not through the ladder), whether the family's own weights ship or the matrix's stand in."""
    import csv
    import hashlib
    from importlib import resources

    from dcops.agents.schedulers import LearnedScheduler
    from dcops.agents.schedulers.learned import WEIGHTS_PACKAGE, SlotPolicy, family_weights
    from dcops.cluster.scenarios import SCENARIOS
    from dcops.evaluation.ladder import read_rows

    own = []
    for family in SCENARIOS:
        file, digest = family_weights(family)
        data = (resources.files(WEIGHTS_PACKAGE) / file).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest
        (tmp_path / "w.npz").write_bytes(data)
        from_file = SlotPolicy.load(tmp_path / "w.npz").params
        played = LearnedScheduler(family=family).policy.params
        assert from_file.keys() == played.keys()
        assert all(np.array_equal(from_file[k], played[k]) for k in played)
        own.append(file.endswith(f"_{family}.npz"))
    assert any(own) and not all(own)  # both branches are exercised by what ships
    with pytest.raises(ValueError):
        family_weights("no_such_family")

    rows = play_seed("chiller_fault", 0, rungs=("ppo", "priority_threshold"), truth=False, n_windows=2)
    ppo = next(r for r in rows if r["rung"] == "ppo")
    file, digest = family_weights("chiller_fault")
    assert ppo["weights"] == f"{file} sha256:{digest[:12]}"
    assert "weights" not in next(r for r in rows if r["rung"] == "priority_threshold")
    fields = sorted({k for r in rows for k in r})
    with (tmp_path / "episodes.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    back = read_rows(tmp_path / "episodes.csv")
    assert next(r for r in back if r["rung"] == "ppo")["weights"] == ppo["weights"]
    text = markdown(summarise(back), "dcops eval-cluster --ladder chiller_fault")
    assert f"|\n\n`ppo` played the weights `{ppo['weights']}` (package data" in text and "\n\n\n" not in text

    # A seed whose row carries no record (a report written before the field) is counted, not covered up.
    second = [dict(r, seed=1) for r in rows]
    del next(r for r in second if r["rung"] == "ppo")["weights"]
    entry = next(e for e in summarise(rows + second)["chiller_fault"] if e["rung"] == "ppo")
    assert entry["weights"] == f"{ppo['weights']} (unrecorded on 1 of 2 seeds)"


@pytest.mark.parametrize("family", ["oversubscribed", "adversarial"])
def test_ignoring_oversight_pays_gaming_teams_at_least_a_tenth_of_their_honest_value(family):
    """The depth condition that holds: under priority_threshold, which reads no flag, misreporting wins the
    gaming teams ≥ 10 % more completed value than their honest twins (pooled over 3 fresh seeds; the 40-seed
    ladder reports 40.1 % and 28.7 %)."""
    payoff = twin = 0.0
    for seed in (72000, 72001, 72002):
        (_, row) = play_seed(family, seed, rungs=("priority_threshold",), truth=False)
        payoff += row["gaming_payoff"]
        twin += row["twin_value"]
    assert twin > 0 and payoff / twin >= 0.10, (payoff, twin)


def test_replayed_rungs_replace_their_rows_and_a_changed_bound_is_refused():
    from dcops.evaluation.ladder import merge_rows

    old = _rows()
    replay = {"rung": "carbon_greedy", "throughput_value": 60.0, "fraction_of_bound": 0.6, "incident_windows": 0,
              "gaming_payoff": 0.0, "twin_value": 100.0}
    new = [{"family": "classic", "seed": 0, "rung": BOUND, "throughput_value": 100.0},
           {"family": "classic", "seed": 0, **replay, "score": 0.11},
           {"family": "classic", "seed": 1, "rung": BOUND, "throughput_value": 100.0},
           {"family": "classic", "seed": 1, **replay, "score": 0.5}]
    merged = merge_rows(old, new)
    assert len(merged) == len(old)
    by = {(r["seed"], r["rung"]): r for r in merged}
    assert by[(1, "carbon_greedy")]["score"] == 0.5 and by[(0, "carbon_greedy")]["score"] == 0.11
    assert by[(0, "priority_threshold")]["score"] == 0.20  # rungs not replayed keep their rows
    assert [r["seed"] for r in merged] == sorted(r["seed"] for r in merged)
    with pytest.raises(ValueError, match="bound of classic seed 1 changed"):
        merge_rows(old, [*new[:2], {**new[2], "throughput_value": 101.0}, new[3]])
    with pytest.raises(ValueError, match="not in the report"):
        merge_rows(old, [*new, {**new[2], "seed": 5}])
    # A replay of fewer seeds than the report holds would leave the others' rows of an older run: refused.
    with pytest.raises(ValueError, match="the report has 2 seeds of classic, the replay plays 1: replay with --seeds 2"):
        merge_rows(old, new[2:])


def test_rows_read_back_from_the_csv_as_they_were_written(tmp_path):
    import csv

    from dcops.evaluation.ladder import read_rows

    rows = _rows()
    fields = sorted({k for r in rows for k in r})
    with (tmp_path / "episodes.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    assert read_rows(tmp_path / "episodes.csv") == rows
    assert summarise(read_rows(tmp_path / "episodes.csv")) == summarise(rows)


@pytest.mark.parametrize("family", ["oversubscribed", "adversarial"])
def test_the_searched_scheduler_beats_the_best_baseline_where_demand_exceeds_the_plant(family):
    """On the 40 ladder seeds of the two families where demand exceeds the plant, the public-information search
    policy beats priority_threshold (+0.028 [+0.015, +0.040] and +0.021 [+0.007, +0.035] in the report, short of
    the issue's +0.03; on fresh seeds less, the next test). Guarded at +0.02 on the same seeds, each episode equal
    to the committed report's, so the report is what the code plays."""
    from pathlib import Path

    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.cluster.scenarios import scenario
    from dcops.evaluation.ladder import read_rows
    from dcops.evaluation.play import run_episode

    report = Path(dcops.__file__).resolve().parent / "reports" / "cluster" / "ladder" / "episodes.csv"
    on_file = {(r["seed"], r["rung"]): r["score"] for r in read_rows(report) if r["family"] == family}
    env = dcops.parallel_env(scenario=family)
    deltas = []
    for seed in scenario(family).seeds:
        searched = run_episode(searched_scheduler(family), seed, env=env)["score"]
        threshold = run_episode(PriorityThresholdScheduler(), seed, env=env)["score"]
        assert searched == pytest.approx(on_file[(seed, "searched")], abs=1e-9)
        assert threshold == pytest.approx(on_file[(seed, "priority_threshold")], abs=1e-9)
        deltas.append(searched - threshold)
    assert sum(deltas) / len(deltas) >= 0.02, deltas


@pytest.mark.parametrize("family", ["oversubscribed", "adversarial"])
def test_the_searched_schedulers_lead_holds_on_fresh_seeds_but_is_small(family):
    """The ladder's seeds are few; on 200 seeds of the family that no ladder, search or validation used (the
    RL scheduler's teacher seeds), the searched scheduler still beats priority_threshold (paired 95 % lower
    bound above 0), but its whole interval stays below the issue's +0.03 (on 1000 such seeds, played the same
    way, +0.020 [+0.017, +0.022] and +0.013 [+0.011, +0.015])."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.evaluation.play import run_episode
    from dcops.intervals import t_interval
    from dcops.training.scheduler.search import teacher_seeds

    env = dcops.parallel_env(scenario=family)
    deltas = np.array([run_episode(searched_scheduler(family), seed, env=env)["score"]
                       - run_episode(PriorityThresholdScheduler(), seed, env=env)["score"]
                       for seed in teacher_seeds(family, 200)])
    mean, low, high = t_interval(deltas)
    assert low > 0.0, (mean, low, high)
    assert high < 0.03, (mean, low, high)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_ordered_map_keeps_the_tasks_order_whatever_the_workers(workers):
    from dcops.evaluation.play import ordered_map

    tasks = [-3, 2, -1, 0, -7]
    assert list(ordered_map(abs, tasks, workers)) == [(t, abs(t)) for t in tasks]


def test_a_replay_keeps_the_full_runs_command_and_lists_itself(tmp_path, monkeypatch):
    """`--rungs` merges into the report on file: its header still names the full run that produced it, and
    replayed.txt lists each replay (a later replay of the same rungs supersedes the earlier line)."""
    import argparse

    import dcops.evaluation.ladder as ladder
    from dcops.evaluation.cluster_report import _ladder_run

    def fake_run(families, seeds, progress=None, workers=1, rungs=None):
        rows = [r for r in _rows() if rungs is None or r["rung"] in (BOUND, *rungs)]
        if rungs is not None:
            rows = [dict(r, score=r["score"] + 0.01) if r["rung"] != BOUND else r for r in rows]
        return rows

    monkeypatch.setattr(ladder, "run_ladder", fake_run)

    def run(ladder_arg, rungs):
        _ladder_run(argparse.Namespace(ladder=ladder_arg, seeds=2, workers=1, rungs=rungs, ladder_out=str(tmp_path)))
        return (tmp_path / "README.md").read_text()

    first = run("all", None)
    assert "Produced by `dcops eval-cluster --ladder all --seeds 2`" in first and not (tmp_path / "replayed.txt").exists()
    replay = run("classic", "carbon_greedy")
    assert "Produced by `dcops eval-cluster --ladder all --seeds 2`" in replay
    assert "`dcops eval-cluster --ladder classic --seeds 2 --rungs carbon_greedy`" in replay
    assert "| carbon_greedy | +0.120 ±" in replay  # the replayed rows were merged in (+0.01 on each seed)
    run("classic", "carbon_greedy")
    assert (tmp_path / "replayed.txt").read_text().splitlines() == [
        "dcops eval-cluster --ladder classic --seeds 2 --rungs carbon_greedy"]
    assert "Produced by `dcops eval-cluster --ladder all --seeds 2`" in run("all", None)
    assert not (tmp_path / "replayed.txt").exists()  # a full run supersedes every replay


def test_the_planner_rungs_play_every_family_between_the_public_rungs_and_the_truth_planner():
    """``rolling_planner`` (public) and ``present_truth_planner`` (evaluator-only, told the submitted requests'
    truth) play every family, each with its honest twins, and the report orders them below the truth planner."""
    from dcops.evaluation.ladder import PRESENT_TRUTH, family_rungs

    for family in ("classic", "oversubscribed", "chiller_fault", "adversarial"):
        assert {"rolling_planner", PRESENT_TRUTH} <= set(family_rungs(family))
    rows = play_seed("adversarial", 0, rungs=(PRESENT_TRUTH, "rolling_planner"), truth=False, n_windows=2)
    assert [r["rung"] for r in rows] == [BOUND, PRESENT_TRUTH, "rolling_planner"]  # in the order asked
    assert all(r["twin_value"] > 0 and math.isfinite(r["score"]) for r in rows[1:])
    summary_rows = [dict(r, rung=name) for r in _rows() for name in ((PRESENT_TRUTH, "rolling_planner")
                                                                      if r["rung"] == "carbon_greedy" else (r["rung"],))]
    order = [e["rung"] for e in summarise(summary_rows)["classic"]]
    assert order == ["priority_threshold", "earliest_deadline", "rolling_planner", PRESENT_TRUTH, TRUTH, BOUND]
