"""The parametric public-information scheduler: its defaults are priority_threshold, its parameters matter."""

from __future__ import annotations

import math

import pytest

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler
from dcops.agents.schedulers.parametric import ParametricScheduler, searched_scheduler


def _decisions(scheduler, seed, **config):
    env = dcops.parallel_env(**config)
    _, infos = env.reset(seed=seed)
    out = []
    while env.agents:
        decisions = scheduler.decide(infos["scheduler"]["view"])
        out.append(sorted((d["request_id"], d["decision"], d.get("defer_to_window")) for d in decisions))
        _, _, _, _, infos = env.step({"scheduler": decisions})
    return out, infos["scheduler"]["episode"]["score"]


@pytest.mark.parametrize("seed", [0, 7])
def test_its_defaults_are_priority_threshold_decision_for_decision(seed):
    ours, our_score = _decisions(ParametricScheduler(), seed, n_windows=4)
    theirs, their_score = _decisions(PriorityThresholdScheduler(), seed, n_windows=4)
    assert ours == theirs
    assert our_score == their_score


def test_the_parameters_change_the_decisions():
    base, _ = _decisions(ParametricScheduler(), 3, n_windows=3)
    open_door, _ = _decisions(ParametricScheduler(threshold=-1.0), 3, n_windows=3)  # LOW is no longer rejected
    assert base != open_door
    rejected = sum(d[1] == "REJECT" for window in base for d in window)
    assert rejected > sum(d[1] == "REJECT" for window in open_door for d in window)


def test_a_flagged_team_is_discounted():
    view = {
        "window": 0, "n_windows": 4, "window_h": 1.5,
        "teams": {"a": {"flags_so_far": {"priority_inflation": 2}}, "b": {"flags_so_far": {}}},
    }
    request = {"team": "a", "priority": "HIGH", "job_type": "finetune", "duration_h": 1.0, "deadline_window": 3,
               "windows_waited": 0, "carbon_flexible": False}
    scheduler = ParametricScheduler(flag_discount=0.5)
    flagged = scheduler.score(request, view, 1.5)
    honest = scheduler.score({**request, "team": "b"}, view, 1.5)
    assert honest - flagged == pytest.approx(1.0)
    assert honest == pytest.approx(math.log(4.0))


def test_a_sure_gamer_is_read_one_level_lower_with_a_unit_posterior_discount():
    view = {"window": 0, "n_windows": 4, "window_h": 1.5,
            "teams": {"a": {"gaming_posterior": 1.0}, "b": {"gaming_posterior": 0.25}, "c": {}}}
    request = {"team": "a", "priority": "HIGH", "job_type": "finetune", "duration_h": 1.0, "deadline_window": 3,
               "windows_waited": 0, "carbon_flexible": False}
    scheduler = ParametricScheduler(posterior_discount=1.0)
    assert scheduler.score(request, view, 1.5) == pytest.approx(math.log(2.0))  # HIGH read as MEDIUM
    assert scheduler.score({**request, "team": "b"}, view, 1.5) == pytest.approx(math.log(4.0) - 0.25 * math.log(2.0))
    assert scheduler.score({**request, "team": "c"}, view, 1.5) == pytest.approx(math.log(4.0))  # no posterior: none


def test_a_wrong_vector_is_refused_with_the_parameters_named():
    with pytest.raises(ValueError, match="threshold"):
        ParametricScheduler.from_vector([1.0, 2.0])
    vector = [float(i) for i in range(len(ParametricScheduler.PARAMETERS))]
    assert list(ParametricScheduler.from_vector(vector).as_dict().values()) == vector


def test_a_family_without_searched_parameters_says_how_to_make_them():
    with pytest.raises(FileNotFoundError, match="search-scheduler"):
        searched_scheduler("no_such_family")
