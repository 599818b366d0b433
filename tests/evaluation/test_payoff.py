"""The gaming payoff: exactly 0 where the answer is known, the known difference on a constructed case, and the
honest twin really is the same team on the same jobs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.evaluation.analysis import Estimate, bootstrap_mean, cross_mix, paired, team_payoffs
from dcops.evaluation.matrix import Cell
from dcops.evaluation.runner import gaming_payoffs, play, run_cell


def _rows(team_values: dict[str, float], key: str = "k") -> dict:
    return {"arrivals_key": key, "teams": {a: {"value_completed": v} for a, v in team_values.items()}}


def test_payoff_is_value_when_misreporting_minus_value_of_the_honest_twin():
    main = _rows({"team_0": 500.0, "team_1": 120.0, "team_2": 75.5})
    twins = {
        "team_1": _rows({"team_0": 480.0, "team_1": 100.0, "team_2": 80.0}),
        "team_2": _rows({"team_0": 500.0, "team_1": 120.0, "team_2": 90.0}),
    }
    assert gaming_payoffs(main, twins) == {"team_1": 20.0, "team_2": -14.5}
    with pytest.raises(RuntimeError, match="different jobs"):
        gaming_payoffs(main, {"team_1": _rows({"team_1": 1.0}, key="other")})


def test_honest_mix_has_no_twin_and_zero_payoff():
    row = run_cell(Cell("priority_threshold", "honest", "normal", 4, n_windows=3))
    assert row["n_twins"] == 0 and row["gaming_payoff"] == 0.0
    assert all("gaming_payoff" not in t for t in row["teams"].values())


def test_a_cooperative_team_in_honest_mode_changes_nothing():
    cell = Cell("earliest_deadline", "one_strategic", "normal", 2, n_windows=3)
    main = play(cell)
    cooperative = next(a for a, t in main["teams"].items() if t["kind"] == "cooperative")
    twin = play(cell, frozenset({cooperative}))
    assert twin == main  # same jobs, same statements, same decisions, same everything
    assert gaming_payoffs(main, {cooperative: twin}) == {cooperative: 0.0}


def test_reject_all_gives_every_gaming_team_exactly_zero_payoff():
    row = run_cell(Cell("reject_all", "two_strategic", "normal", 1, n_windows=3))
    payoffs = [t["gaming_payoff"] for t in row["teams"].values() if "gaming_payoff" in t]
    assert len(payoffs) == 2 and payoffs == [0.0, 0.0]


@pytest.mark.parametrize(("scheduler", "rate"), [("reject_all", 0.0), ("accept_all", 1.0)])
def test_payoff_records_carry_the_acceptance_rate_of_the_team_and_its_twin(scheduler, rate):
    row = run_cell(Cell(scheduler, "injecting", "normal", 3, n_windows=3))
    (record,) = team_payoffs([row])
    assert record["kind"] == "injecting"
    assert record["accept_rate"] == rate and record["twin_accept_rate"] == rate
    assert record["accept_rate"] == row["gaming_accept_rate"]


def test_payoff_record_keeps_the_team_and_its_twin_apart():
    cell = Cell("priority_threshold", "injecting", "normal", 2, n_windows=3)
    row = run_cell(cell)
    (record,) = team_payoffs([row])
    twin = play(cell, frozenset({record["team"]}))
    assert record["accept_rate"] == row["gaming_accept_rate"]
    assert record["twin_accept_rate"] == twin["teams"][record["team"]]["accept_rate"]
    assert record["accept_rate"] != record["twin_accept_rate"]  # this seed separates them: a swap would fail


def test_twin_run_keeps_the_jobs_and_changes_only_the_statements():
    cell = Cell("priority_threshold", "two_strategic", "chiller_trip", 0, n_windows=4)
    row = run_cell(cell)
    strategic = [a for a, t in row["teams"].items() if t["kind"] == "strategic"]
    twin = play(cell, frozenset({strategic[0]}))
    assert twin["arrivals_key"] == row["arrivals_key"]
    assert (
        row["teams"][strategic[0]]["twin_value_completed"] == twin["teams"][strategic[0]]["value_completed"]
    )
    assert row["teams"][strategic[0]]["twin_capacity_share"] == twin["teams"][strategic[0]]["capacity_share"]
    assert 0.0 <= row["strategic_share_twin"] <= 1.0
    assert row["teams"][strategic[0]]["gaming_payoff"] == pytest.approx(
        row["teams"][strategic[0]]["value_completed"] - twin["teams"][strategic[0]]["value_completed"]
    )


def test_paired_difference_of_a_constant_shift_is_exact():
    rows = []
    for seed in range(6):
        base = 0.1 * seed
        for name, score in (("ref", base), ("s", base + 0.05)):
            rows.append(
                {
                    "scheduler": name,
                    "mix": "honest",
                    "condition": "normal",
                    "seed": seed,
                    "n_windows": 8,
                    "score": score,
                }
            )
    est = paired(rows, "s", "ref")
    assert est.n == 6
    assert (
        est.mean == pytest.approx(0.05) and est.low == pytest.approx(0.05) and est.high == pytest.approx(0.05)
    )
    noisy = bootstrap_mean([0.0, 1.0, 2.0, 3.0, 4.0])
    assert noisy.low < noisy.mean == 2.0 < noisy.high


def test_the_bootstrap_interval_is_the_percentiles_of_10000_seeded_resampled_means():
    """The documented procedure (analysis module docstring), done by hand with numpy: the same draws from a
    generator seeded 0, the 2.5 and 97.5 percentiles of the resampled means."""
    values = np.array([0.31, -0.12, 0.05, 0.44, 0.27, -0.03, 0.18])
    draws = np.random.default_rng(0).integers(0, values.size, size=(10_000, values.size))
    low, high = np.quantile(values[draws].mean(axis=1), [0.025, 0.975])
    est = bootstrap_mean(list(values))
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-12)
    assert est.mean == pytest.approx(values.mean()) and est.n == values.size
    assert bootstrap_mean(list(values)) == est  # seeded: the same interval every call
    assert bootstrap_mean(list(values), seed=1) != est


def test_the_bootstrap_of_two_values_spans_them_and_nan_and_single_values_give_no_interval():
    # resampled means of [0, 1] are 0, 0.5 or 1 with chances 1/4, 1/2, 1/4: the 2.5 and 97.5 percentiles are 0, 1
    assert bootstrap_mean([0.0, 1.0]) == Estimate(0.5, 0.0, 1.0, 2)
    single = bootstrap_mean([float("nan"), 0.7])
    assert single.n == 1 and single.mean == 0.7 and math.isnan(single.low) and single.text() == "+0.700"
    assert bootstrap_mean([]).text() == "–"


def test_injected_text_alone_changes_nothing_for_a_scheduler_that_does_not_read_descriptions():
    injecting = run_cell(Cell("priority_threshold", "injecting", "normal", 6, n_windows=3))
    strategic = run_cell(Cell("priority_threshold", "one_strategic", "normal", 6, n_windows=3))
    for field in ("gaming_accept_rate", "gaming_value_completed", "score", "gaming_payoff", "arrivals_key"):
        assert injecting[field] == strategic[field], field
    rows = [injecting, strategic]
    est = cross_mix(rows, "priority_threshold", "gaming_accept_rate", "injecting", "one_strategic")
    assert est.n == 1 and est.mean == 0.0
