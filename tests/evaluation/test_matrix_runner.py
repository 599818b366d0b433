"""The matrix runner on a tiny matrix: every cell once, metrics in range, pairs share arrivals, the report."""

from __future__ import annotations

import json
import math

import pytest

from dcops.evaluation import analysis
from dcops.evaluation.executor import run_matrix
from dcops.evaluation.matrix import ALL_MIXES, BOUND, CONDITIONS, MIXES, build_matrix, env_config
from dcops.evaluation.report import write
from dcops.evaluation.store import CellStore


def test_tiny_matrix_runs_every_cell_once_over_local_processes(tmp_path, tiny_cells, comparable):
    rows = run_matrix(
        tiny_cells, CellStore(tmp_path / "cells.jsonl"), executor="local", workers=2, progress=False
    )
    assert set(rows) == {c.cell_id for c in tiny_cells} and len(rows) == 4
    lines = (tmp_path / "cells.jsonl").read_text().splitlines()
    assert len(lines) == 4
    for row in rows.values():
        assert -1.10 <= row["score"] <= 0.65
        assert row["n_twins"] == 1  # one strategic team, one honest twin
        assert 0.0 <= row["strategic_share"] <= 1.0 and row["fair_share"] == 0.25
        assert (
            math.isclose(sum(t["capacity_share"] for t in row["teams"].values()), 1.0)
            or row["strategic_share"] == 0
        )
        assert row["invalid_rate"] == 0.0 and row["pending_decisions"] > 0
        assert sorted(t["kind"] for t in row["teams"].values()) == sorted(MIXES["one_strategic"])
    # the same seed gives the same arrivals whatever the scheduler: the comparison is paired
    for seed in (0, 1):
        keys = {r["arrivals_key"] for r in rows.values() if r["seed"] == seed}
        assert len(keys) == 1
    by_seed = {r["seed"]: r["arrivals_key"] for r in rows.values()}
    assert by_seed[0] != by_seed[1]
    serial = run_matrix(tiny_cells, CellStore(tmp_path / "serial.jsonl"), executor="serial", progress=False)
    assert comparable(serial) == comparable(rows)  # processes change nothing


def test_bound_cell_and_report(tmp_path):
    cells = build_matrix(["reject_all", BOUND], ["honest", "injecting"], ["normal"], [3], n_windows=2)
    assert [c.mix for c in cells if c.scheduler == BOUND] == [ALL_MIXES]  # one bound per (condition, seed)
    rows = run_matrix(cells, CellStore(tmp_path / "cells.jsonl"), executor="serial", progress=False)
    bound = next(r for r in rows.values() if r["scheduler"] == BOUND)
    assert bound["bound_value"] > 0
    assert all(r["arrivals_key"] == bound["arrivals_key"] for r in rows.values())
    meta = {
        "name": "t",
        "command": "dcops eval (test)",
        "versions": {"python": "x", "numpy": "x", "dcops": "x", "git_commit": "x"},
        "schedulers": ["reject_all", BOUND],
        "mixes": ["honest", "injecting"],
        "conditions": ["normal"],
        "seeds": [3],
        "n_windows": 2,
        "executor": "serial",
        "workers": 1,
        "wall_s": 1.0,
    }
    paths = write(rows, meta, tmp_path / "report", reference="reject_all")
    names = {p.name for p in paths}
    assert {
        "README.md",
        "cells.csv",
        "cells.json",
        "score_by_scheduler_mix.png",
        "gaming_payoff.png",
        "carbon_vs_score.png",
    } <= names
    text = (tmp_path / "report" / "README.md").read_text()
    assert "| reject_all |" in text and "hindsight_bound" in text
    assert len(json.loads((tmp_path / "report" / "cells.json").read_text())) == 3
    # reject_all completes nothing: its fraction of the bound is <= 0 (rejected high-value work costs)
    runs, bounds = analysis.split(rows.values())
    runs, mismatches = analysis.with_bound(runs, bounds)
    assert mismatches == 0
    assert all(r["fraction_of_bound"] <= 0.0 and r["value_completed"] == 0.0 for r in runs)


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_every_condition_builds_an_env(condition):
    import dcops

    env = dcops.parallel_env(**env_config("honest", condition, n_windows=1))
    assert env.config.n_windows == 1


def test_bad_matrix_input_names_the_field():
    with pytest.raises(ValueError, match="mix"):
        build_matrix(["reject_all"], ["nope"], ["normal"], [0])
    with pytest.raises(ValueError, match="condition"):
        build_matrix(["reject_all"], ["honest"], ["sunny"], [0])
    with pytest.raises(ValueError, match="duplicate"):
        build_matrix(["reject_all", "reject_all"], ["honest"], ["normal"], [0])
