"""``dcops eval --game-version 1``: the sound game, episodes keyed by the run's own secret (drawn once, kept
for resuming), so a policy cannot fingerprint a public seed and replay it; version 0 cells are unchanged."""

from __future__ import annotations

import json

import dcops
from dcops.boundary import private_seed
from dcops.cli import main
from dcops.evaluation.cluster_report import run_episode
from dcops.evaluation.matrix import Cell


def _argv(out, *extra):
    return ["eval", "--schedulers", "priority_threshold,hindsight_bound", "--mixes", "one_strategic",
            "--conditions", "normal", "--seeds", "1", "--n-windows", "2", "--out", str(out), "--name", "v1",
            "--serial", "--no-progress", "--reference", "priority_threshold", *extra]


def test_a_version_1_run_draws_its_own_key_keeps_it_when_resumed_and_reports_it(tmp_path):
    assert main(_argv(tmp_path, "--game-version", "1")) == 0
    out = tmp_path / "v1"
    meta = json.loads((out / "run.json").read_text())
    key = meta["seed_key"]
    assert meta["game_version"] == 1 and len(bytes.fromhex(key)) == 16
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    assert all(r["cell_id"].endswith(f"|v1|k{key[:8]}") and r["seed_key"] == key for r in rows)
    assert main(_argv(tmp_path, "--game-version", "1")) == 0  # resumes with the recorded key
    meta = json.loads((out / "run.json").read_text())
    assert meta["seed_key"] == key and [r["cells_computed"] for r in meta["invocations"]] == [2, 0]
    assert f"key `{key}`" in (out / "README.md").read_text()


def test_a_run_interrupted_before_its_report_resumes_with_the_same_key(tmp_path, monkeypatch):
    """The key reaches run.json before the first cell runs: a run killed mid-way finds its cells again."""
    import dcops.evaluation.executor as executor

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(executor, "run_matrix", killed)
    try:
        main(_argv(tmp_path, "--game-version", "1"))
    except KeyboardInterrupt:
        pass
    out = tmp_path / "v1"
    key = json.loads((out / "run.json").read_text())["seed_key"]
    monkeypatch.undo()
    assert main(_argv(tmp_path, "--game-version", "1")) == 0
    meta = json.loads((out / "run.json").read_text())
    assert meta["seed_key"] == key and [r["cells_computed"] for r in meta["invocations"]] == [2]


def test_a_keyed_cell_plays_the_private_seed_not_the_public_one():
    key = "00" * 16
    cell = Cell("priority_threshold", "one_strategic", "normal", 3, 2, 1, key)
    assert cell.env_seed == private_seed(bytes(16), 3) != 3
    env = dcops.parallel_env(n_windows=2, game_version=1)
    from dcops.agents.schedulers import PriorityThresholdScheduler

    played = run_episode(PriorityThresholdScheduler(), cell.env_seed, env=env)["arrivals_key"]
    public = run_episode(PriorityThresholdScheduler(), cell.seed, env=env)["arrivals_key"]
    assert played != public  # replaying the public seed gives another episode


def test_version_0_cells_keep_their_ids_and_columns():
    cell = Cell("priority_threshold", "one_strategic", "normal", 3)
    assert cell.cell_id == "priority_threshold|one_strategic|normal|3|w8"
    assert set(cell.as_dict()) == {"scheduler", "mix", "condition", "seed", "n_windows"}
    assert cell.env_seed == 3


def test_a_seed_key_that_is_not_hex_is_refused(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit, match="--seed-key"):
        main(_argv(tmp_path, "--game-version", "1", "--seed-key", "not-hex"))
