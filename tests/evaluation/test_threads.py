"""Local workers share the cores: each spawned worker gets ``cores // workers`` threads for torch and BLAS,
unless the user set the thread variables."""

from __future__ import annotations

import importlib
import os

import pytest

from dcops.evaluation.executor import THREAD_VARIABLES, run_matrix, share_threads
from dcops.evaluation.store import CellStore

REPORTER = """
import os

def report_threads(cell):
    names = {names!r}
    return {{"cell_id": cell.cell_id, "pid": os.getpid(), **{{name: os.environ.get(name) for name in names}}}}
"""


def _reporter(tmp_path, monkeypatch):
    """A cell runner that only reports the thread variables its worker process sees. It lives in a module of its
    own on ``sys.path`` (spawned workers get the parent's path) so that the workers can unpickle it."""
    (tmp_path / "thread_reporter.py").write_text(REPORTER.format(names=THREAD_VARIABLES))
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module("thread_reporter").report_threads


@pytest.fixture
def unset_threads(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("processes", "cores", "share"), [(1, 2, "2"), (2, 2, "1"), (3, 2, "1"), (2, 16, "8"),
                                                           (3, 16, "5")])
def test_each_worker_gets_an_even_share_of_the_cores(unset_threads, processes, cores, share):
    assert share_threads(processes, cores) == {name: share for name in THREAD_VARIABLES}


def test_a_thread_count_the_user_set_is_kept(unset_threads, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    shares = share_threads(2, 16)
    assert shares["OMP_NUM_THREADS"] == "3" and shares["MKL_NUM_THREADS"] == "8"


def test_spawned_workers_see_their_share(tmp_path, tiny_cells, unset_threads, monkeypatch):
    cores = len(os.sched_getaffinity(0))
    rows = run_matrix(tiny_cells, CellStore(tmp_path / "cells.jsonl"), executor="local", workers=2,
                      progress=False, run=_reporter(tmp_path, monkeypatch))
    expected = str(max(1, cores // 2))
    assert len(rows) == len(tiny_cells)
    assert all(row[name] == expected for row in rows.values() for name in THREAD_VARIABLES)
    assert os.getpid() not in {row["pid"] for row in rows.values()}  # measured in the workers, not here
    assert all(os.environ.get(name) is None for name in THREAD_VARIABLES)  # the parent is left alone
