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


def test_the_posterior_mix_reads_a_sure_gamer_at_its_job_type_norm():
    """``posterior_mix`` m: the stated weight becomes (1 − m·p)·W(stated) + m·p·W̄(type), an interaction of the
    team posterior p with the public catalogue norm that the additive terms cannot express."""
    from dcops.agents.schedulers.parametric import type_weights

    view = {"window": 0, "n_windows": 4, "window_h": 1.5,
            "teams": {"a": {"gaming_posterior": 1.0}, "b": {"gaming_posterior": 0.5}, "c": {}}}
    request = {"team": "a", "priority": "CRITICAL", "job_type": "hparam_sweep", "duration_h": 1.0,
               "deadline_window": 3, "windows_waited": 0, "carbon_flexible": False}
    norm = type_weights("classic")["hparam_sweep"]  # 60 % LOW, 40 % MEDIUM: 1.4
    assert norm == pytest.approx(1.4)
    scheduler = ParametricScheduler(posterior_mix=1.0)
    assert scheduler.score(request, view, 1.5) == pytest.approx(math.log(norm))  # the stated CRITICAL is ignored
    assert scheduler.score({**request, "team": "b"}, view, 1.5) == pytest.approx(math.log(0.5 * 8.0 + 0.5 * norm))
    assert scheduler.score({**request, "team": "c"}, view, 1.5) == pytest.approx(math.log(8.0))
    assert ParametricScheduler(posterior_mix=0.0).score(request, view, 1.5) == pytest.approx(math.log(8.0))
    assert ParametricScheduler(posterior_mix=3.0).score(request, view, 1.5) == pytest.approx(math.log(norm))  # m ≤ 1
    assert "posterior_mix" in ParametricScheduler.PARAMETER_SETS["bayes"]
    assert "posterior_mix" not in ParametricScheduler.PARAMETER_SETS["extended"]


def test_a_wrong_vector_is_refused_with_the_parameters_named():
    with pytest.raises(ValueError, match="threshold"):
        ParametricScheduler.from_vector([1.0, 2.0])
    vector = [float(i) for i in range(len(ParametricScheduler.PARAMETERS))]
    assert list(ParametricScheduler.from_vector(vector).as_dict().values()) == vector


def test_a_family_without_searched_parameters_says_how_to_make_them():
    with pytest.raises(FileNotFoundError, match="search-scheduler"):
        searched_scheduler("no_such_family")


def _view(committed_kw: float) -> dict:
    """A one-zone view whose planning budget is (900 · 0.97 / 1.3 − 100) ≈ 571.5 kW of jobs."""
    return {"window": 0, "n_windows": 4, "window_h": 1.5, "teams": {}, "queued": [],
            "power_cap_kw": 900.0, "carbon_forecast_g_per_kwh": [400.0] * 4,
            "plant": {"planning_pue": 1.3, "cooling_capacity_kw": 10_000.0, "base_load_kw": 100.0,
                      "committed_job_kw": committed_kw},
            "zones": [{"gpu_type": "H100", "gpus_free": 512, "job_kw_free": 2_000.0}]}


def _request(rid: str, priority: str, kw: float, hours: float = 1.0, deadline: int = 0) -> dict:
    return {"request_id": rid, "team": "a", "priority": priority, "job_type": "finetune", "kw": kw, "gpus": 8,
            "gpu_type": "H100", "duration_h": hours, "deadline_window": deadline, "windows_waited": 0,
            "carbon_flexible": False, "submitted_window": 0}


def test_the_reserve_keeps_low_scoring_work_out_of_the_last_of_the_budget():
    budget = 900.0 * 0.97 / 1.3 - 100.0
    view = {**_view(committed_kw=budget - 150.0), "pending": [_request("low", "MEDIUM", 100.0),
                                                             _request("high", "HIGH", 40.0)]}
    plain = {d["request_id"]: d["decision"] for d in ParametricScheduler().decide(view)}
    assert plain == {"low": "ACCEPT", "high": "ACCEPT"}  # 140 kW of the 150 kW left
    # 20 % of the budget (114 kW) held back for requests scoring at least log 4 (HIGH): the HIGH request goes
    # first and the MEDIUM one would then leave 10 kW free, so it is refused (its deadline is now: rejected); the HIGH one still takes its place.
    guarded = ParametricScheduler(reserve=0.2, reserve_level=math.log(4.0) - 1e-9)
    decided = {d["request_id"]: d["decision"] for d in guarded.decide(view)}
    assert decided == {"low": "REJECT", "high": "ACCEPT"}
    # Far from the budget's end the reserve does not bind.
    roomy = {**view, "plant": {**view["plant"], "committed_job_kw": 0.0}}
    assert {d["request_id"]: d["decision"] for d in guarded.decide(roomy)} == plain


def test_size_and_length_terms_score_the_stated_energy_and_the_windows_held():
    view = {"window": 0, "n_windows": 4, "window_h": 1.5, "teams": {}}
    scheduler = ParametricScheduler(stated=0.0, size_bonus=1.0, length_penalty=0.5)
    short = scheduler.score(_request("a", "LOW", 100.0, hours=1.0), view, 1.5)  # 100 kWh, one window
    long = scheduler.score(_request("b", "LOW", 50.0, hours=4.0), view, 1.5)  # 200 kWh, three windows
    assert short == pytest.approx(0.0)
    assert long == pytest.approx(math.log(2.0) - 0.5 * 2)


@pytest.mark.parametrize("family", ["classic", "oversubscribed", "chiller_fault", "adversarial"])
def test_the_shipped_ten_parameter_files_load_without_the_extended_terms(family):
    import json

    from dcops.agents.schedulers.parametric import searched_path

    on_file = json.loads(searched_path(family).read_text())["parameters"]
    assert tuple(on_file) == ParametricScheduler.PARAMETER_SETS["base"]
    scheduler = searched_scheduler(family)
    assert scheduler.as_dict() == {**on_file, "size_bonus": 0.0, "length_penalty": 0.0, "reserve": 0.0,
                                   "reserve_level": 0.0, "posterior_mix": 0.0}
