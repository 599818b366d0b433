"""The detector-aware margin sweep: its twin is the honest baseline, its summary pairs seeds."""

from __future__ import annotations

import pytest

from dcops.evaluation import detector_aware_margin as sweep


def test_a_margin_no_evidence_can_reach_makes_the_team_its_honest_twin():
    twin = sweep.play_seed(None, sweep.SEEDS_FROM)
    unreachable = sweep.play_seed(1e9, sweep.SEEDS_FROM)  # every tactic refused: it states honestly
    assert unreachable["value"] == pytest.approx(twin["value"]) and unreachable["flagged"] == twin["flagged"]
    bold = sweep.play_seed(0.0, sweep.SEEDS_FROM)
    assert bold["value"] != pytest.approx(twin["value"])  # with no margin it does misreport, and it shows


def test_the_summary_pairs_each_margin_with_the_twin_of_the_same_seed():
    rows = [{"margin": None, "seed": 1, "flagged": 0, "value": 100.0},
            {"margin": None, "seed": 2, "flagged": 1, "value": 50.0},
            {"margin": 1.0, "seed": 1, "flagged": 2, "value": 130.0},
            {"margin": 1.0, "seed": 2, "flagged": 0, "value": 60.0}]
    twin, one = sweep.summarise(rows)
    assert twin == {"margin": None, "episodes": 2, "flagged_share": 0.5}
    assert one["payoff"] == pytest.approx(20.0) and one["flagged_share"] == 0.5
    assert one["payoff_low"] < 20.0 < one["payoff_high"]
    assert "| 1 | 2 | 50.0 % | +20 [" in sweep.markdown([twin, one], "cmd")


def test_a_negative_margin_is_refused_naming_the_flag():
    with pytest.raises(ValueError, match="margins"):
        sweep.run([-1.0], 2)
