"""Resume: an interrupted run continues from the cells already written; nothing is recomputed, results
equal."""

from __future__ import annotations

import json

from dcops.evaluation.executor import run_matrix
from dcops.evaluation.runner import run_cell
from dcops.evaluation.store import CellStore


class Counting:
    def __init__(self) -> None:
        self.ran: list[str] = []

    def __call__(self, cell):
        self.ran.append(cell.cell_id)
        return run_cell(cell)


def test_interrupted_run_resumes_without_recomputing(tmp_path, tiny_cells, comparable):
    store = CellStore(tmp_path / "cells.jsonl")
    first = Counting()
    partial = run_matrix(tiny_cells, store, executor="serial", progress=False, stop_after=3, run=first)
    assert len(first.ran) == 3 and len(partial) == 3
    second = Counting()
    resumed = run_matrix(tiny_cells, store, executor="serial", progress=False, run=second)
    assert second.ran == [c.cell_id for c in tiny_cells if c.cell_id not in first.ran]
    assert len(second.ran) == 1
    third = Counting()
    again = run_matrix(tiny_cells, store, executor="serial", progress=False, run=third)
    assert third.ran == [] and again == resumed  # complete: nothing reruns, rows read back unchanged
    fresh = run_matrix(tiny_cells, CellStore(tmp_path / "fresh.jsonl"), executor="serial", progress=False)
    assert comparable(resumed) == comparable(fresh)
    assert len(store.path.read_text().splitlines()) == len(tiny_cells)  # append-only, one line per cell


def test_a_torn_last_line_is_dropped_and_its_cell_reruns(tmp_path, tiny_cells, comparable):
    store = CellStore(tmp_path / "cells.jsonl")
    full = run_matrix(tiny_cells, store, executor="serial", progress=False)
    lines = store.path.read_text().splitlines()
    torn = lines[:-1] + [lines[-1][: len(lines[-1]) // 2]]  # killed mid-write
    store.path.write_text("\n".join(torn))
    counter = Counting()
    resumed = run_matrix(tiny_cells, store, executor="serial", progress=False, run=counter)
    assert counter.ran == [json.loads(lines[-1])["cell_id"]]
    assert comparable(resumed) == comparable(full)
    assert all(json.loads(line) for line in store.path.read_text().splitlines())
