"""The cross-entropy search: its seeds are out of the ladder's sample, it is deterministic, it keeps the best."""

from __future__ import annotations

import json

import pytest

from dcops.cluster.scenarios import SCENARIOS
from dcops.training.scheduler.search import cross_entropy_search, search_seeds, validation_seeds


@pytest.mark.parametrize("family", sorted(SCENARIOS))
def test_search_and_validation_seeds_never_meet_each_other_or_any_ladder_seeds(family):
    seeds = search_seeds(family, 40)
    checked = validation_seeds(family, 200)
    assert len(set(seeds)) == 40 and len(set(checked)) == 200
    assert not set(seeds) & set(checked)
    assert not set(seeds) & set(SCENARIOS[family].seeds)
    for other in SCENARIOS.values():
        assert not set(seeds) & set(other.seeds)
        assert not set(checked) & set(other.seeds)


def test_a_tiny_search_is_deterministic_and_never_reports_worse_than_its_start():
    first = cross_entropy_search("classic", iterations=1, population=3, elite=1, n_seeds=1)
    again = cross_entropy_search("classic", iterations=1, population=3, elite=1, n_seeds=1)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert first["search_score"] >= first["start_score"]
    assert first["history"][0]["best_so_far"] == first["search_score"]
    assert set(first["parameters"]) == {"stated", "type_prior", "flag_discount", "deadline_gap_discount",
                                        "tight_bonus", "wait_bonus", "carbon_shift", "posterior_discount", "threshold",
                                        "margin"}


def test_the_extended_set_searches_fourteen_parameters_and_validation_scores_three_schedulers_out_of_sample():
    from dcops.agents.schedulers.parametric import ParametricScheduler

    result = cross_entropy_search("classic", iterations=1, population=2, elite=1, n_seeds=1,
                                  parameter_set="extended", n_validation=1)
    assert tuple(result["parameters"]) == ParametricScheduler.PARAMETERS[:14]
    assert len(result["parameters"]) == 14 and result["parameter_set"] == "extended"
    validation = result["validation"]
    assert validation["seeds"] == list(validation_seeds("classic", 1))
    assert not set(validation["seeds"]) & set(result["search_seeds"])
    for key in ("priority_threshold", "searched", "shipped"):  # classic ships parameters
        assert -1.1 <= validation[key] <= 0.65
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.evaluation.play import run_episode

    env = dcops.parallel_env(scenario="classic")
    seed = validation["seeds"][0]
    assert validation["priority_threshold"] == run_episode(PriorityThresholdScheduler(), seed, env=env)["score"]
    assert validation["shipped"] == run_episode(searched_scheduler("classic"), seed, env=env)["score"]
    assert validation["searched"] == run_episode(ParametricScheduler(**result["parameters"]), seed, env=env)["score"]


def test_search_seeds_that_would_meet_the_validation_seeds_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        cross_entropy_search("classic", iterations=1, population=1, elite=1, n_seeds=201, n_validation=1)


def test_an_unknown_parameter_set_is_refused_by_name():
    with pytest.raises(ValueError, match="parameters"):
        cross_entropy_search("classic", iterations=1, population=1, elite=1, n_seeds=1, parameter_set="all")


def test_a_search_under_another_catalogue_plays_and_validates_on_it():
    """``catalogue=`` plays every candidate and the validation under that public job catalogue, and says so."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.evaluation.play import run_episode

    result = cross_entropy_search("classic", iterations=1, population=2, elite=1, n_seeds=1, n_validation=1,
                                  catalogue="triage")
    assert result["catalogue"] == "triage"
    seed = result["validation"]["seeds"][0]
    triage = run_episode(PriorityThresholdScheduler(), seed, env=dcops.parallel_env(catalogue="triage"))["score"]
    classic = run_episode(PriorityThresholdScheduler(), seed, env=dcops.parallel_env())["score"]
    assert result["validation"]["priority_threshold"] == triage != classic
    assert "catalogue" not in cross_entropy_search("classic", iterations=1, population=1, elite=1, n_seeds=1)


def test_the_command_refuses_an_unknown_catalogue_by_name(capsys):
    from dcops.cli import main

    with pytest.raises(SystemExit, match="--catalogue: unknown 'nope'"):
        main(["search-scheduler", "--family", "classic", "--catalogue", "nope"])
