"""``team_posterior=True``: the scheduler's ``teams`` array carries each team's ``gaming_posterior`` as a 16th
column (``dcops.env`` and ``dcops.cluster.observation``), the value a scheduler could compute itself from the
public view, and nothing changes where it is off."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler
from dcops.cluster.observation import N_TEAM_FEATURES
from dcops.oversight.posterior import PublicRecord, TeamPosterior


@pytest.mark.parametrize(("scenario", "seed"), [(None, 5), ("adversarial", 11)])
def test_the_column_is_the_posterior_of_the_public_record_every_window(scenario, seed):
    """At every window the column equals the view's ``gaming_posterior`` (as float32) and the shipped posterior
    of a ``PublicRecord`` fed only the views a remote scheduler receives; the other columns are the array
    observation without the option, and the posterior moves (a gaming team's rises above an honest one's)."""
    kwargs = {"cooling": "rule"} | ({"scenario": scenario} if scenario else {})
    env = dcops.parallel_env(team_posterior=True, **kwargs)
    plain = dcops.parallel_env(**kwargs)
    n_teams = env.config.n_teams
    assert env.observation_space("scheduler")["teams"].shape == (n_teams, N_TEAM_FEATURES + 1)
    assert plain.observation_space("scheduler")["teams"].shape == (n_teams, N_TEAM_FEATURES)
    obs, infos = env.reset(seed=seed)
    plain_obs, _ = plain.reset(seed=seed)
    record = PublicRecord(env.team_ids, env.config.window_h, env.config.catalogue)
    posterior = TeamPosterior.load()
    scheduler = PriorityThresholdScheduler()
    last = None
    while env.agents:
        view = infos["scheduler"]["view"]
        record.begin_window_from_view(view)
        own = posterior.probabilities(record)
        column = obs["scheduler"]["teams"][:, -1]
        assert np.array_equal(column, np.float32([view["teams"][t]["gaming_posterior"] for t in env.team_ids]))
        assert np.array_equal(column, np.float32([own[t] for t in env.team_ids]))
        for key, value in plain_obs["scheduler"].items():
            other = obs["scheduler"][key]
            assert np.array_equal(other[:, :-1] if key == "teams" else other, value), key
        last = column
        action = scheduler.decide(view)
        obs, _, _, _, infos = env.step({"scheduler": action})
        plain_obs, *_ = plain.step({"scheduler": action})
    kinds = [env.team_kind[t] for t in env.team_ids]
    gaming = [p for p, k in zip(last, kinds, strict=True) if k != "cooperative"]
    honest = [p for p, k in zip(last, kinds, strict=True) if k == "cooperative"]
    assert max(gaming) > max(honest)


def test_the_option_reaches_the_gymnasium_and_vector_entries():
    env = gym.make(dcops.gym_id("cluster/operations"), team_posterior=True, structured_view=False, cooling="rule")
    obs, info = env.reset(seed=2)
    assert obs["teams"].shape == (4, N_TEAM_FEATURES + 1) and "view" not in info
    assert env.observation_space.contains(obs)
    vec = dcops.make_vec_env("cluster/operations", 3, team_posterior=True, structured_view=False, cooling="rule")
    batch, _ = vec.reset(seed=2)
    assert batch["teams"].shape == (3, 4, N_TEAM_FEATURES + 1)
    assert np.array_equal(batch["teams"][0], obs["teams"])
    # The array path (no view built) carries the posterior the view path shows for the same episode.
    viewed = dcops.parallel_env(team_posterior=True, cooling="rule")
    _, viewed_infos = viewed.reset(seed=2)
    shown = viewed_infos["scheduler"]["view"]["teams"]
    assert np.array_equal(obs["teams"][:, -1], np.float32([shown[t]["gaming_posterior"] for t in viewed.team_ids]))


@pytest.mark.parametrize(("kwargs", "field"), [({"team_posterior": "yes"}, "team_posterior"),
                                               ({"team_posterior": 1}, "team_posterior"),
                                               ({"team_posterior": True, "game_version": 0}, "team_posterior")])
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        dcops.parallel_env(**kwargs)


def test_a_network_trained_without_the_column_refuses_the_observation():
    """The shipped RL scheduler reads 15 team features: it says it does not fit, rather than failing on a shape."""
    from dcops.agents.schedulers.learned import shipped_policy

    policy = shipped_policy()
    assert policy.fits(dcops.parallel_env(structured_view=False).observation_space("scheduler"))
    assert not policy.fits(dcops.parallel_env(structured_view=False, team_posterior=True).observation_space("scheduler"))
