"""The oversight-aware baseline: it reads the team posterior, and without one it is priority_threshold."""

from __future__ import annotations

import dcops
from dcops.agents.schedulers import OversightAwareScheduler, PriorityThresholdScheduler


def _view(posterior_a: float) -> dict:
    request = {"priority": "HIGH", "duration_h": 1.0, "deadline_window": 3, "windows_waited": 0, "kw": 10.0,
               "gpus": 8, "gpu_type": "H100", "carbon_flexible": False, "job_type": "finetune"}
    return {
        "window": 0, "n_windows": 4, "window_h": 1.5, "power_cap_kw": 900.0,
        "plant": {"planning_pue": 1.3, "cooling_capacity_kw": 1e4, "base_load_kw": 250.0, "committed_job_kw": 0.0},
        "zones": [{"gpu_type": "H100", "gpus_free": 8, "job_kw_free": 10.0}], "queued": [],
        "teams": {"a": {"gaming_posterior": posterior_a}, "b": {"gaming_posterior": 0.0}},
        "pending": [{**request, "request_id": "r1", "team": "a", "submitted_window": 0},
                    {**request, "request_id": "r2", "team": "b", "submitted_window": 0}],
    }


def test_a_suspected_team_loses_its_place_to_a_trusted_one():
    # Room for one job and two HIGH requests: the trusted team's goes first unless the other team is trusted too
    # (then the earlier id wins the tie, as in priority_threshold).
    suspected = {d["request_id"]: d["decision"] for d in OversightAwareScheduler().decide(_view(0.99))}
    trusted = {d["request_id"]: d["decision"] for d in OversightAwareScheduler().decide(_view(0.0))}
    assert suspected == {"r2": "ACCEPT", "r1": "DEFER"}
    assert trusted == {"r1": "ACCEPT", "r2": "DEFER"}


def test_without_a_posterior_it_is_priority_threshold():
    for game_version in (0, 1):
        env = dcops.parallel_env(n_windows=3, game_version=game_version, structured_view=True)
        _, infos = env.reset(seed=11)
        while env.agents:
            view = infos["scheduler"]["view"]
            bare = {**view, "teams": {t: {k: v for k, v in x.items() if k != "gaming_posterior"}
                                      for t, x in view["teams"].items()}}
            assert OversightAwareScheduler().decide(bare) == PriorityThresholdScheduler().decide(bare)
            _, _, _, _, infos = env.step({"scheduler": PriorityThresholdScheduler().decide(view)})


def test_the_v1_view_carries_a_probability_per_team_and_v0_none():
    env = dcops.parallel_env(n_windows=2)
    _, infos = env.reset(seed=2)
    posteriors = [t["gaming_posterior"] for t in infos["scheduler"]["view"]["teams"].values()]
    assert len(posteriors) == env.config.n_teams and all(0.0 <= p <= 1.0 for p in posteriors)
    v0 = dcops.parallel_env(n_windows=2, game_version=0)
    _, infos = v0.reset(seed=2)
    assert all("gaming_posterior" not in t for t in infos["scheduler"]["view"]["teams"].values())
