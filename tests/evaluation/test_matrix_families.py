"""Scenario families in the evaluation matrix (``dcops eval --families``): each family's cells play its own
episodes (its teams, its plant) with the family's own ``ppo`` weights and searched parameters, the truth planner
is a row with every metric of a policy's, and bad names are refused naming the field."""

from __future__ import annotations

import pytest

from dcops.evaluation.executor import run_matrix
from dcops.evaluation.matrix import (
    ALL_MIXES,
    BOUND,
    TRUTH,
    build_matrix,
    env_config,
    family_condition,
    family_of,
    mix_kinds,
)
from dcops.evaluation.store import CellStore


def test_a_family_is_a_condition_and_a_mix_of_its_own():
    cells = build_matrix(["priority_threshold", BOUND], [], [], [0, 1], families=["oversubscribed", "classic"],
                         digests={("priority_threshold", "classic"): "ab" * 32})
    conditions = {c.condition for c in cells}
    assert conditions == {"family:oversubscribed", "family:classic"}
    assert all(c.mix == c.condition for c in cells if c.scheduler != BOUND)  # never crossed with another mix
    assert sorted((c.condition, c.seed) for c in cells if c.scheduler == BOUND) == [
        ("family:classic", 0), ("family:classic", 1), ("family:oversubscribed", 0), ("family:oversubscribed", 1)]
    assert all(c.mix == ALL_MIXES for c in cells if c.scheduler == BOUND)
    # a family's own digest keys that family's cells only
    digests = {(c.condition, c.policy_digest) for c in cells if c.scheduler == "priority_threshold"}
    assert digests == {("family:classic", "ab" * 32), ("family:oversubscribed", "")}
    # families and the ordinary matrix together: the mixes cross the conditions, the families stand alone
    both = build_matrix(["accept_all"], ["honest", "injecting"], ["normal"], [0], families=["adversarial"])
    assert sorted((c.mix, c.condition) for c in both) == [
        ("family:adversarial", "family:adversarial"), ("honest", "normal"), ("injecting", "normal")]
    assert family_of("family:chiller_fault") == "chiller_fault" and family_of("normal") is None
    assert mix_kinds("family:adversarial") == ("cooperative", "cooperative", "strategic", "adaptive", "injecting",
                                               "detector_aware", "slow_burn")


def test_bad_family_input_names_the_field():
    with pytest.raises(ValueError, match="scenario: unknown 'crowded'"):
        build_matrix(["accept_all"], [], [], [0], families=["crowded"])
    with pytest.raises(ValueError, match="duplicate"):
        build_matrix(["accept_all"], [], [], [0], families=["classic", "classic"])
    with pytest.raises(ValueError, match="mix and condition or a family"):
        build_matrix(["accept_all"], [], [], [0])
    with pytest.raises(ValueError, match="mix: a family condition plays its own teams"):
        env_config("honest", "family:classic")


def test_a_family_cell_plays_the_family_episode():
    """The cell's env is the family's own (what the skill ladder plays): the same arrivals on the same seed."""
    import dcops
    from dcops.agents.schedulers import RejectAllScheduler
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.runner import make_env

    cell = build_matrix(["reject_all"], [], [], [7], n_windows=3, game_version=1, families=["oversubscribed"])[0]
    env = make_env(cell)
    ours = run_episode(RejectAllScheduler(), 7, env=env)["arrivals_key"]
    assert env.config.n_windows == 3 and env.config.game_version == 1 and len(env.teams) == 6
    assert sorted(t.kind for t in env.teams.values()) == sorted(mix_kinds(family_condition("oversubscribed")))
    ladder = dcops.parallel_env(scenario="oversubscribed", n_windows=3, game_version=1)
    theirs = run_episode(RejectAllScheduler(), 7, env=ladder)["arrivals_key"]
    assert ours == theirs
    other = build_matrix(["reject_all"], ["honest"], ["oversubscribed"], [7], n_windows=3, game_version=1)[0]
    assert run_episode(RejectAllScheduler(), 7, env=make_env(other))["arrivals_key"] != ours  # not the 4-team condition


def test_family_dependent_schedulers_play_the_family_files():
    from dcops.agents.schedulers.learned import family_weights
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.evaluation.policies import make_policy, policy_digest

    ppo = make_policy("ppo", family="oversubscribed")
    assert ppo.family == "oversubscribed"
    assert family_weights("oversubscribed")[0].endswith("ppo_scheduler_oversubscribed.npz")
    # where a family has no weights of its own, it plays the matrix's network: the same digest
    assert policy_digest("ppo", "classic") == policy_digest("ppo")
    assert policy_digest("ppo", "oversubscribed") not in ("", policy_digest("ppo"))
    searched = make_policy("searched", family="adversarial")
    assert searched.as_dict() == searched_scheduler("adversarial").as_dict()
    assert make_policy("searched").as_dict() == searched_scheduler("classic").as_dict()
    assert policy_digest("searched", "adversarial") != policy_digest("searched", "classic") == policy_digest("searched")
    with pytest.raises(ValueError, match="evaluator-only"):
        make_policy(TRUTH)


def test_searched_in_a_family_cell_plays_that_familys_parameters():
    """Through the runner (not only make_policy): the cell's score is the family's searched scheduler's on the
    same episode, and not classic's."""
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.runner import make_env, run_cell

    cell = build_matrix(["searched"], [], [], [1], n_windows=4, game_version=1, families=["oversubscribed"])[0]
    row = run_cell(cell)
    env = make_env(cell)
    own = run_episode(searched_scheduler("oversubscribed"), cell.env_seed, env=env)["score"]
    classic = run_episode(searched_scheduler("classic"), cell.env_seed, env=env)["score"]
    assert row["score"] == own
    assert own != classic  # so the test could tell the two files apart


def test_truth_planner_row_has_every_metric_but_the_payoff(tmp_path):
    """The truth planner's row comes from replaying its kept plan; it must out-score the public baseline on a
    family where truth matters, carry no gaming payoff (its twins are not played) and pass through the report."""
    from dcops.evaluation.report import write

    cells = build_matrix(["priority_threshold", TRUTH, BOUND], [], [], [0], n_windows=3,
                         families=["oversubscribed"])
    rows = run_matrix(cells, CellStore(tmp_path / "cells.jsonl"), executor="serial", progress=False)
    by = {r["scheduler"]: r for r in rows.values()}
    truth, public = by[TRUTH], by["priority_threshold"]
    assert truth["arrivals_key"] == public["arrivals_key"] == by[BOUND]["arrivals_key"]
    assert truth["gaming_payoff"] is None and truth["n_twins"] == 0
    assert public["n_twins"] == 3 and isinstance(public["gaming_payoff"], float)
    assert truth["score"] > public["score"]
    assert truth["throughput_value"] <= by[BOUND]["bound_value"] + 1e-6
    assert truth["invalid_rate"] == 0.0 and -1.10 <= truth["score"] <= 0.65
    meta = {"name": "t", "command": "dcops eval (test)",
            "versions": {"python": "x", "numpy": "x", "dcops": "x", "git_commit": "x"},
            "schedulers": ["priority_threshold", TRUTH, BOUND], "mixes": ["family:oversubscribed"],
            "conditions": ["family:oversubscribed"], "families": ["oversubscribed"], "seeds": [0], "n_windows": 3,
            "executor": "serial", "workers": 1, "wall_s": 1.0}
    write(rows, meta, tmp_path / "report", reference="priority_threshold")
    text = (tmp_path / "report" / "README.md").read_text()
    assert "× 1 scenario family with its own teams ×" in text and "| truth_planner |" in text
    assert "`family:oversubscribed` = cooperative, cooperative, cooperative, strategic, strategic, adaptive" in text
    best = text.split("## Against each family's best public baseline")[1].split("\n## ")[0]
    assert "| best public baseline | `priority_threshold` |" in best and "| truth_planner | +" in best
    headline = next(line for line in text.splitlines() if line.startswith("| truth_planner |")).split(" | ")
    assert headline[4] == "–" and headline[1] == f"{truth['score']:+.3f}"  # no payoff shown, not a made-up 0
