"""The ladder's summary: paired differences against the best public baseline, payoff shares, rung order."""

from __future__ import annotations

import math

import pytest

from dcops.evaluation.ladder import BOUND, TRUTH, markdown, play_seed, summarise


def _rows():
    rows = []
    scores = {"priority_threshold": (0.20, 0.30), "earliest_deadline": (0.25, 0.27), "carbon_greedy": (0.10, 0.12),
              TRUTH: (0.40, 0.44)}
    for i, seed in enumerate((0, 1)):
        rows.append({"family": "classic", "seed": seed, "rung": BOUND, "throughput_value": 100.0,
                     "fraction_of_bound": 1.0, "incident_windows": 0})
        for rung, values in scores.items():
            row = {"family": "classic", "seed": seed, "rung": rung, "score": values[i], "throughput_value": 50.0,
                   "fraction_of_bound": 0.5, "incident_windows": i}
            if rung != TRUTH:
                row |= {"gaming_payoff": 10.0 * (i + 1), "twin_value": 100.0}
            rows.append(row)
    return rows


def test_the_reference_is_the_best_mean_baseline_and_differences_are_paired():
    summary = summarise(_rows())["classic"]
    by = {e["rung"]: e for e in summary}
    # Means: threshold 0.25, deadline 0.26 -> deadline is the reference.
    assert by[TRUTH]["best_baseline"] == "earliest_deadline"
    assert by[TRUTH]["vs_best"] == pytest.approx(((0.40 - 0.25) + (0.44 - 0.27)) / 2)
    assert by["earliest_deadline"]["vs_best"] == 0.0
    assert by["priority_threshold"]["gaming_payoff"] == pytest.approx(15.0)
    assert by["priority_threshold"]["gaming_payoff_pct"] == pytest.approx(100.0 * 30.0 / 200.0)
    assert "gaming_payoff" not in by[TRUTH]
    assert [e["rung"] for e in summary] == ["priority_threshold", "earliest_deadline", "carbon_greedy", TRUTH, BOUND]
    low, high = by[TRUTH]["vs_best_low"], by[TRUTH]["vs_best_high"]
    assert low < by[TRUTH]["vs_best"] < high and not math.isnan(low)


def test_the_markdown_names_every_rung_and_the_command():
    text = markdown(summarise(_rows()), "dcops eval-cluster --ladder classic --seeds 2")
    assert "dcops eval-cluster --ladder classic --seeds 2" in text
    for rung in ("priority_threshold", "earliest_deadline", "carbon_greedy", TRUTH, BOUND):
        assert f"| {rung} |" in text


def test_a_seed_plays_every_rung_with_paired_honest_twins():
    rows = play_seed("classic", 0, rungs=("accept_all", "priority_threshold"), truth=False, n_windows=3)
    rungs = [r["rung"] for r in rows]
    assert rungs == [BOUND, "accept_all", "priority_threshold"]
    for row in rows[1:]:
        assert row["twin_value"] > 0  # the classic family has two gaming teams, each with an honest twin
        assert row["fraction_of_bound"] <= 1.0 + 1e-9 or row["incident_windows"] > 0
