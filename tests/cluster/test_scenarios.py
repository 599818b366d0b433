"""Scenario families: each builds, its overrides apply, explicit arguments win, and bad names are refused."""

from __future__ import annotations

import pytest

import dcops
from dcops.cluster.config import ClusterConfig
from dcops.cluster.scenarios import SCENARIOS, scenario_kwargs


def test_classic_is_the_config_defaults():
    classic = ClusterConfig.from_kwargs(scenario="classic")
    assert classic == ClusterConfig()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_family_builds_with_its_overrides_and_plays_a_window(name):
    env = dcops.parallel_env(scenario=name, n_windows=2)
    for key, value in SCENARIOS[name].overrides.items():
        assert getattr(env.config, key) == value, key
    assert env.config.scenario == name
    _, infos = env.reset(seed=SCENARIOS[name].seeds[0])
    assert len(env.config.team_kinds) == len(env.team_ids)
    assert infos["scheduler"]["view"]["pending"], "a family whose first window has no request is no game"
    env.step({"scheduler": []})


def test_explicit_arguments_override_the_family():
    config = ClusterConfig.from_kwargs(scenario="oversubscribed", max_requests_per_team=2)
    assert config.max_requests_per_team == 2
    assert config.team_kinds == SCENARIOS["oversubscribed"].overrides["team_kinds"]


def test_families_have_disjoint_seeds():
    seen: set[int] = set()
    for family in SCENARIOS.values():
        assert family.seeds and not seen & set(family.seeds), family.name
        seen |= set(family.seeds)


def test_an_unknown_family_is_refused_with_the_field_named():
    with pytest.raises(ValueError, match="scenario"):
        dcops.parallel_env(scenario="nope")
    with pytest.raises(ValueError, match="scenario"):
        scenario_kwargs("nope")
    with pytest.raises(ValueError, match="scenario"):
        ClusterConfig(scenario=3)  # type: ignore[arg-type]


def test_chiller_fault_family_always_trips_a_chiller():
    from dcops.physics.faults import ChillerTrip

    env = dcops.parallel_env(scenario="chiller_fault", n_windows=2)
    for seed in range(5):
        env.reset(seed=seed)
        assert any(isinstance(f, ChillerTrip) for f in env.episode.faults), seed


@pytest.mark.parametrize("name", ["chiller_trip_probability", "fan_failure_probability", "sensor_drift_probability"])
def test_fault_probabilities_are_validated(name):
    with pytest.raises(ValueError, match=name):
        ClusterConfig(**{name: 1.5})
    with pytest.raises(ValueError, match=name):
        ClusterConfig(**{name: float("nan")})
