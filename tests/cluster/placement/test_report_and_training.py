"""The evaluation report, the CLI sub-commands, the trainer and the example script."""

from __future__ import annotations

import argparse
import csv
import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from dcops.cluster.placement.evaluate import GENERATED_LABEL, evaluate, normalised_score, write_report
from dcops.cluster.placement.features import N_FEATURES
from dcops.cluster.placement.linear import LinearPolicy, load_weights
from dcops.cluster.placement.scenarios import CANONICAL
from dcops.training.placement import commands
from dcops.training.placement.linear import TrainConfig, train, train_and_save, training_set

REPO = Path(__file__).resolve().parents[3]


def test_the_normalised_score_is_one_at_the_optimum_zero_for_doing_nothing_and_undefined_without_a_gap():
    assert normalised_score(50.0, -80.0, 50.0) == 1.0
    assert normalised_score(-80.0, -80.0, 50.0) == 0.0
    assert normalised_score(-15.0, -80.0, 50.0) == pytest.approx(0.5)
    assert normalised_score(-100.0, -80.0, 50.0) < 0
    assert normalised_score(3.0, 3.0, 3.0) is None


@pytest.fixture(scope="module")
def small_report():
    return evaluate(n_generated=3)


def test_the_report_has_one_row_per_policy_and_scenario_with_optimum_1_and_reference_0(small_report):
    names = [*CANONICAL, GENERATED_LABEL]
    assert {(r.scenario, r.policy) for r in small_report.rows} == {
        (s, p) for s in names for p in small_report.policies
    }
    for row in small_report.rows:
        if row.policy == "optimum":
            assert row.score == pytest.approx(1.0)
        if row.policy == "always_defer":
            assert row.score == pytest.approx(0.0) and row.completed == 0
        assert 0.0 <= row.allocation <= 1.0
        if row.score is not None:
            assert row.score <= 1.0 + 1e-9


def test_the_report_writes_markdown_csv_and_a_png(small_report, tmp_path):
    paths = write_report(small_report, tmp_path)
    assert [p.name for p in paths] == ["README.md", "results.csv", "scores.png"]
    text = (tmp_path / "README.md").read_text()
    for name in CANONICAL:
        assert f"placement/{name}" in text
    assert "Each canonical scenario is won by a different heuristic" in text
    with (tmp_path / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(small_report.rows) and set(rows[0]) >= {"reward", "allocation", "cost", "score"}
    assert (tmp_path / "scores.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_eval_placement_command_writes_the_report(tmp_path, capsys):
    command = next(c for c in commands.COMMANDS if c.name == "eval-placement")
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(["--out", str(tmp_path / "out"), "--generated", "2", "--no-plot"])
    assert command.run(args) == 0
    assert (tmp_path / "out" / "results.csv").exists() and not (tmp_path / "out" / "scores.png").exists()
    assert "Mean over 2 generated scenarios" in capsys.readouterr().out


def test_both_subcommands_are_declared():
    assert {c.name for c in commands.COMMANDS} == {"eval-placement", "train-placement"}


def test_training_is_deterministic_and_reports_the_score_of_the_weights_it_returns(tmp_path):
    cfg = TrainConfig(seed=3, iterations=2, population=4, elite=2, n_scenarios=3)
    w1, info1 = train(cfg)
    w2, info2 = train(cfg)
    assert w1.shape == (N_FEATURES,) and np.array_equal(w1, w2)
    assert info1["training_score"] == info2["training_score"]
    assert training_set(3).score(LinearPolicy(w1)) == pytest.approx(info1["training_score"])
    npz, meta = train_and_save(cfg, out=tmp_path)
    assert np.array_equal(load_weights(npz), w1)
    assert json.loads(meta.read_text())["config"]["seed"] == 3


def test_training_scenarios_never_reuse_evaluation_seeds():
    names = {s.name for s in training_set(5).scenarios}
    assert all(int(n.split("_")[1]) >= 1_000_000 for n in names)


def test_the_example_runs_a_custom_policy_on_every_canonical_scenario(capsys):
    runpy.run_path(str(REPO / "examples" / "custom_placement_policy.py"), run_name="__main__")
    out = capsys.readouterr().out
    for name in CANONICAL:
        assert name in out
    assert "invalid 0" in out
