"""Run the cells of a matrix: serially, over local processes, or over Ray; resume from the cell store.

Every executor skips the cells already in the store (``dcops.evaluation.store``), runs the rest with
``dcops.evaluation.runner.run_cell`` and appends each row to the store as soon as its cell finishes (in
completion order; the report sorts). ``stop_after`` stops after that many *new* cells (what an interruption
looks like, used by the resume test). The result is every row of the matrix, by cell id, whoever computed it.

- ``serial``: in this process (``workers`` ignored);
- ``local``: a ``ProcessPoolExecutor`` of ``workers`` processes (spawned, so each imports ``dcops`` afresh),
  each with an even share of the cores for its math libraries (:func:`share_threads`);
- ``ray``: one Ray task per cell; ``ray.init(address)`` (``None``: a local Ray with ``workers`` CPUs) unless
  Ray is already initialised. Ray is imported only here (the ``marl`` extra installs it).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from dcops.evaluation.matrix import Cell
from dcops.evaluation.store import CellStore

EXECUTORS = ("serial", "local", "ray")


def run_matrix(
    cells: Sequence[Cell],
    store: CellStore,
    executor: str = "local",
    workers: int = 2,
    progress: bool = True,
    stop_after: int | None = None,
    ray_address: str | None = None,
    run: Callable[[Cell], dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run every cell not yet in ``store``; return all rows of ``cells`` by id (module docstring). ``run``
    replaces ``run_cell`` (tests count calls with it; it must be picklable for ``local`` and ``ray``)."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor: must be one of {EXECUTORS}, got {executor!r}")
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    ids = [c.cell_id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError("cells: duplicate cell ids")
    store.repair()
    done = store.load()
    todo = [c for c in cells if c.cell_id not in done]
    if stop_after is not None:
        todo = todo[:stop_after]
    if run is None:
        from dcops.evaluation.runner import run_cell as run
    bar = _bar(len(cells), len(cells) - len([c for c in cells if c.cell_id not in done]), progress)
    try:
        if executor == "serial" or not todo:
            rows: Iterable[dict[str, Any]] = (run(cell) for cell in todo)
        elif executor == "local":
            rows = _local(todo, workers, run)
        else:
            rows = _ray(todo, workers, run, ray_address)
        for row in rows:
            store.append(row)
            done[row["cell_id"]] = row
            bar.update(1)
    finally:
        bar.close()
    return {cid: done[cid] for cid in ids if cid in done}


def _bar(total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc="cells", unit="cell", disable=not enabled, smoothing=0.05)


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
"""The thread-count variables that torch (OpenMP), MKL and OpenBLAS read when they are first imported."""


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def share_threads(processes: int, cores: int | None = None) -> dict[str, str]:
    """The thread variables for one of ``processes`` worker processes: ``cores // processes`` (at least 1) each,
    so that the workers together do not ask for more threads than there are cores. Variables the user set are
    kept. Why: every torch process otherwise starts one thread per core, and two LLM cells with two threads each
    on the 2-core machine ran 3.5 times slower each, not 2 times (a GRPO step: 340 s against 94 s)."""
    share = str(max(1, (cores or _cores()) // max(1, processes)))
    return {name: os.environ.get(name, share) for name in THREAD_VARIABLES}


def _set_environment(variables: dict[str, str]) -> None:
    """Pool initializer: runs in each spawned worker before it imports torch or numpy's BLAS."""
    os.environ.update(variables)


def _local(
    cells: Sequence[Cell], workers: int, run: Callable[[Cell], dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    context = multiprocessing.get_context("spawn")
    processes = min(workers, len(cells))
    with ProcessPoolExecutor(max_workers=processes, mp_context=context, initializer=_set_environment,
                             initargs=(share_threads(processes),)) as pool:
        pending: set[Future[dict[str, Any]]] = {pool.submit(run, cell) for cell in cells}
        complete = False
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
            complete = True
        finally:
            for future in pending:
                future.cancel()
            if not complete:
                _terminate_workers(pool)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's worker processes now. On an error or an interruption (Ctrl-C, or SIGTERM, which
    ``dcops eval`` turns into ``SystemExit``) the pool would otherwise wait for the running cells, an LLM cell
    takes many minutes, and a killed parent leaves them running as orphans. Python 3.11 has no public call for
    this (3.14 adds ``terminate_workers``), hence the private ``_processes``."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _ray(
    cells: Sequence[Cell], workers: int, run: Callable[[Cell], dict[str, Any]], address: str | None
) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError as error:
        raise RuntimeError("--ray needs Ray: install the 'marl' extra (pip install 'dcops[marl]')") from error
    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(run)
    pending = [remote.remote(cell) for cell in cells]
    try:
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            yield ray.get(finished[0])
    finally:
        for ref in pending:
            ray.cancel(ref)
