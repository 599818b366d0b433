"""The headroom sweep: its decomposition of the truth planner's lead, checked on hand-made windows."""

from __future__ import annotations

import pytest

import dcops
from dcops.cluster.scenarios import scenario_kwargs
from dcops.evaluation import headroom
from dcops.evaluation.cluster_report import _eval_arguments, _eval_run


def _summary(score: float, windows: list[tuple[float, float]], incidents: int = 0,
             terms: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> dict:
    throughput, thermal, carbon = terms
    return {"score": score, "incident_windows": incidents,
            "windows": [{"value_gained": g, "value_lost": loss, "throughput": throughput, "thermal": thermal,
                         "carbon": carbon} for g, loss in windows]}


def test_the_row_splits_the_score_difference_by_the_reward_weights_of_each_term():
    threshold = _summary(0.0, [(1.0, 0.0)] * 2, terms=(0.2, -0.5, 0.1))
    planner = _summary(0.0, [(1.0, 0.0)] * 2, terms=(0.6, 0.0, -0.1))
    row = headroom.episode_row("x", 1, threshold, planner, scale=1.0)
    assert row["delta_throughput_term"] == pytest.approx(0.5 * 0.4)
    assert row["delta_thermal_term"] == pytest.approx(0.35 * 0.5)
    assert row["delta_carbon_term"] == pytest.approx(0.15 * -0.2)


def test_the_row_splits_the_lead_into_net_value_saturation_and_unavoidable_losses():
    threshold = _summary(0.10, [(500.0, 100.0), (300.0, 300.0)], incidents=1)
    planner = _summary(0.25, [(900.0, 50.0), (1200.0, 150.0)])
    row = headroom.episode_row("x", 7, threshold, planner, scale=1000.0)
    # Net: planner 850 + 1050 = 1900, threshold 400 + 0 = 400; per window (1900 - 400) / 2 = 750, over V = 1000.
    assert row["delta_net_over_v"] == pytest.approx(0.75)
    assert row["saturated_share"] == pytest.approx(0.5)  # 950 <= 1000 < 1350
    assert row["loss_share"] == pytest.approx(200.0 / 2300.0)
    assert row["delta_score"] == pytest.approx(0.15)
    assert (row["incidents_threshold"], row["incidents_planner"]) == (1, 0)


def test_the_summary_pairs_seeds_and_halves_the_net_lead_for_the_unsaturated_ceiling():
    rows = [headroom.episode_row("x", s, _summary(0.1 * s, [(100.0, 0.0)]), _summary(0.1 * s + d, [(100.0 + n, 0.0)]),
                                 scale=100.0)
            for s, d, n in ((1, 0.02, 10.0), (2, 0.04, 30.0))]
    (entry,) = headroom.summarise(rows)
    assert entry["delta_score"] == pytest.approx(0.03)
    assert entry["delta_low"] < 0.03 < entry["delta_high"]
    assert entry["unsaturated_ceiling"] == pytest.approx(0.5 * 0.2)
    text = headroom.markdown([entry], "dcops eval-cluster --headroom x --seeds 2")
    assert "dcops eval-cluster --headroom x --seeds 2" in text and "| `x` |" in text


def test_every_variant_is_a_valid_scenario_that_keeps_the_reward_weights():
    for variant in headroom.VARIANTS:
        env = dcops.parallel_env(scenario=variant.family, **variant.overrides)
        config = env.episode.config
        assert config.scenario == variant.family
        for key, value in variant.overrides.items():
            assert getattr(config, key) == value, (variant.name, key)
        base = scenario_kwargs(variant.family)
        assert "value_scale" not in base or "value_scale" in variant.overrides
    assert len({v.name for v in headroom.VARIANTS}) == len(headroom.VARIANTS)


def test_an_unknown_variant_is_refused_naming_the_flag():
    import argparse

    parser = argparse.ArgumentParser()
    _eval_arguments(parser)
    with pytest.raises(SystemExit, match="--headroom"):
        _eval_run(parser.parse_args(["--headroom", "nope", "--seeds", "1"]))
    with pytest.raises(ValueError, match="variants"):
        headroom.run_sweep(["nope"], 1)


def test_the_terms_add_up_to_the_score_difference_of_two_real_episodes():
    from dcops.agents.schedulers import BASELINES
    from dcops.evaluation.play import run_episode

    env = dcops.parallel_env(scenario="oversubscribed", n_windows=3, cooling="rule")
    first = run_episode(BASELINES["priority_threshold"](), 9000, env=env)
    second = run_episode(BASELINES["accept_all"](), 9000, env=env)
    row = headroom.episode_row("x", 9000, first, second, env.episode.config.throughput_scale)
    split = row["delta_throughput_term"] + row["delta_thermal_term"] + row["delta_carbon_term"]
    penalties = [sum(w["invalid_penalty"] for w in s["windows"]) for s in (first, second)]
    assert penalties == [0.0, 0.0]
    assert row["delta_score"] != 0.0 and split == pytest.approx(row["delta_score"], abs=1e-12)
