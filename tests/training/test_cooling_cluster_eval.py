"""The cluster-plant comparison of cooling controllers (``dcops eval-cooling-cluster``) and PPO as the default."""

from __future__ import annotations

import math

import pytest

import dcops
from dcops.cluster.config import ClusterConfig
from dcops.training.cooling import cluster_eval as cc


def test_ppo_is_the_cluster_default_controller() -> None:
    from dcops.cluster.cooling import TelemetryController

    assert ClusterConfig().cooling == "ppo"
    env = dcops.parallel_env()
    assert isinstance(env.controller, TelemetryController)
    assert type(env.controller.controller).__name__ == "PPOController"


def test_paired_difference_on_known_rows() -> None:
    rows = [{"controller": c, "climate": "x", "seed": s, "cooling_kwh": v}
            for c, s, v in [("a", 0, 90.0), ("a", 1, 80.0), ("b", 0, 100.0), ("b", 1, 100.0)]]
    rel = cc.paired(rows, "cooling_kwh", "a", "b", relative=True)
    assert rel["mean"] == pytest.approx(-15.0)
    assert rel["n"] == 2 and rel["low"] < -15.0 < rel["high"]
    absolute = cc.paired(rows, "cooling_kwh", "a", "b")
    assert absolute["mean"] == pytest.approx(-15.0)
    with pytest.raises(ValueError, match="at least 2 paired"):
        cc.paired(rows[:1] + rows[2:3], "cooling_kwh", "a", "b")


def test_controllers_run_the_same_episodes_and_differ_only_in_cooling() -> None:
    rows = cc.evaluate(seeds=(0, 1), climates=("phoenix",))
    assert len(rows) == 2 * len(cc.CONTROLLERS)
    by = {(r["controller"], r["seed"]): r for r in rows}
    for seed in (0, 1):
        energies = {c: by[(c, seed)]["cooling_kwh"] for c in cc.CONTROLLERS}
        # Same arrivals and scheduler; the controllers really act differently on the plant.
        assert len({round(e, 3) for e in energies.values()}) == len(cc.CONTROLLERS)
        for c in cc.CONTROLLERS:
            r = by[(c, seed)]
            assert math.isfinite(r["score"]) and 0.0 < r["cooling_overhead"] < 1.0
            assert 0.0 <= r["zone_time_above_27_pct"] <= 100.0
    # The documented claim of the default: PPO cools for less than the default rule.
    assert sum(by[("ppo", s)]["cooling_kwh"] for s in (0, 1)) < sum(by[("rule", s)]["cooling_kwh"] for s in (0, 1))
    report = cc.markdown_report(rows, (0, 1), "dcops eval-cooling-cluster --seeds 2")
    assert "| ppo | 2 |" in report and "rule_family_tuned" in report


def test_unknown_controller_is_named() -> None:
    with pytest.raises(ValueError, match="controller must be one of"):
        cc.make_env("bang-bang", "phoenix")
