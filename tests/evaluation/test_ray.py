"""``--ray``: the executor spreads cells over a local Ray (slow to start: one test, about 20-40 s here)."""

from __future__ import annotations

import pytest

from dcops.evaluation.executor import run_matrix
from dcops.evaluation.matrix import build_matrix
from dcops.evaluation.store import CellStore


def test_ray_executor_runs_a_two_cell_matrix_like_the_serial_one(tmp_path, comparable, ray_tmpdir):
    ray = pytest.importorskip("ray")
    cells = build_matrix(["priority_threshold", "reject_all"], ["adaptive"], ["normal"], [5], n_windows=2)
    try:
        rows = run_matrix(cells, CellStore(tmp_path / "ray.jsonl"), executor="ray", workers=2, progress=False)
    finally:
        ray.shutdown()
    serial = run_matrix(cells, CellStore(tmp_path / "serial.jsonl"), executor="serial", progress=False)
    assert len(rows) == 2
    assert comparable(rows) == comparable(serial)
    assert len((tmp_path / "ray.jsonl").read_text().splitlines()) == 2
