"""Benchmark statistics, the OR-Library reader, and the eval-queue command end to end (tiny)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import dcops
from dcops.cli import main
from dcops.cluster.queue.benchmark import paired_difference, run_streaming
from dcops.cluster.queue.heuristics import make_rule
from dcops.cluster.queue.orlib import read_orlib, summed_gap
from dcops.cluster.queue.simulator import simulate
from dcops.cluster.queue.tuning import tune_parameter

ORLIB = Path(dcops.__file__).parent.parent / "shared" / "data" / "orlib-wt"


def needs_orlib():
    if not ORLIB.exists():
        pytest.skip(f"OR-Library data not found at {ORLIB} (the shared/ folder beside the repository)")


def test_paired_difference_on_hand_numbers():
    a = np.array([10.0, 12.0, 9.0, 11.0])
    b = np.array([11.0, 13.0, 10.0, 12.0])  # a is better by exactly 1 on every scenario
    d = paired_difference("a", a, "b", b)
    assert d.mean == -1.0 and d.ci_low == d.ci_high == -1.0
    assert d.wins == 4 and d.losses == 0
    assert d.relative == pytest.approx(-1.0 / 11.5)


def test_paired_confidence_interval_uses_student_t():
    diff = np.array([1.0, -1.0, 2.0, 0.0, 3.0])
    d = paired_difference("a", diff + 10, "b", np.full(5, 10.0))
    half = 2.7764451051977987 * diff.std(ddof=1) / np.sqrt(5)  # t(0.975, 4)
    assert d.ci_low == pytest.approx(1.0 - half) and d.ci_high == pytest.approx(1.0 + half)


def test_streaming_ranking_is_sorted_by_mean_and_fifo_gain_is_zero_for_fifo():
    policies = [make_rule("fifo"), make_rule("wspt"), make_rule("atc", 1.0)]
    result = run_streaming(policies, [500_000, 500_001, 500_002])
    means = [row.mean for row in result.summary]
    assert means == sorted(means)
    fifo = next(r for r in result.summary if r.policy == "FIFO")
    assert fifo.gain_vs_fifo == 0.0
    assert min(r.gap_to_best_heuristic for r in result.summary) == 0.0


def test_tuning_refuses_held_out_test_seeds():
    with pytest.raises(ValueError, match="held-out"):
        tune_parameter("atc", [1_000_000])


def test_orlib_reader_gives_125_instances_with_optima():
    needs_orlib()
    for n in (40, 50):
        data = read_orlib(n, ORLIB)
        assert len(data.instances) == 125 == len(data.optimum)
        assert all(inst.n_jobs == n for inst in data.instances)


def test_atc_with_k_2_reproduces_the_published_orlib_gaps():
    # Published reference: ATC (k = 2) summed gap about 2.0 % on wt40 and 2.4 % on wt50.
    needs_orlib()
    for n, published in ((40, 0.020), (50, 0.024)):
        data = read_orlib(n, ORLIB)
        values = np.array(
            [simulate(inst, make_rule("atc", 2.0)).weighted_tardiness for inst in data.instances]
        )
        assert np.all(values >= data.optimum - 1e-9)  # no heuristic beats an optimum
        assert summed_gap(values, data.optimum) == pytest.approx(published, abs=0.002)


def test_eval_queue_command_writes_report_and_csvs(tmp_path):
    out = tmp_path / "report"
    code = main(
        [
            "eval-queue",
            "--seeds",
            "3",
            "--tuning-seeds",
            "2",
            "--out",
            str(out),
            "--no-charts",
            "--orlib",
            str(tmp_path / "none"),
        ]
    )
    assert code == 0
    report = (out / "report.md").read_text()
    assert "Paired differences" in report and "PPO" in report and "Verdict" in report
    with (out / "summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["policy"] for r in rows} == {"FIFO", "SPT", "EDD", "WSPT", "WMDD", "COVERT", "ATC", "PPO"}
    with (out / "per_scenario.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 3
