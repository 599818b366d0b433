"""Reader for the OR-Library single-machine weighted tardiness instances (Beasley; wt40, wt50, wt100).

File format (``wtNN.txt``): a stream of whitespace-separated integers; for every instance, n processing
times, then n weights, then n due dates. ``wtoptNN.txt`` holds the optimal (or best known) total weighted
tardiness of each instance, one per line, in the same order. All jobs are released at time 0.

The data are not part of this repository: they live in the ``shared/data/orlib-wt`` folder beside it
(:func:`default_orlib_dir`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dcops.cluster.queue.jobs import Instance


@dataclass(frozen=True)
class OrlibSet:
    """One OR-Library file with its optimal values.

    :param n_jobs: jobs per instance (40, 50 or 100).
    :param instances: the static instances, in file order.
    :param optimum: optimal total weighted tardiness of each instance.
    """

    n_jobs: int
    instances: list[Instance]
    optimum: np.ndarray


def default_orlib_dir() -> Path:
    """``shared/data/orlib-wt`` beside the repository root (the folder holding this package's tree)."""
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "orlib-wt"


def _read_ints(path: Path) -> np.ndarray:
    return np.asarray(path.read_text().split(), dtype=np.int64)


def read_orlib(n_jobs: int, directory: Path | None = None) -> OrlibSet:
    """Read ``wt{n_jobs}.txt`` and ``wtopt{n_jobs}.txt`` from ``directory``.

    :raises FileNotFoundError: when the files are missing.
    :raises ValueError: when the file lengths do not match ``n_jobs`` and the number of optimal values.
    """
    directory = Path(directory) if directory is not None else default_orlib_dir()
    values = _read_ints(directory / f"wt{n_jobs}.txt")
    optimum = _read_ints(directory / f"wtopt{n_jobs}.txt").astype(np.float64)
    per_instance = 3 * n_jobs
    if len(values) % per_instance:
        raise ValueError(f"wt{n_jobs}.txt holds {len(values)} numbers, not a multiple of 3 x {n_jobs}")
    blocks = values.reshape(-1, 3, n_jobs).astype(np.float64)
    if len(blocks) != len(optimum):
        raise ValueError(
            f"wt{n_jobs}.txt has {len(blocks)} instances but wtopt{n_jobs}.txt {len(optimum)} values"
        )
    instances = [
        Instance(
            arrival_s=np.zeros(n_jobs),
            processing_s=block[0],
            weight=block[1],
            due_s=block[2],
            n_machines=1,
            name=f"wt{n_jobs}-{i + 1:03d}",
        )
        for i, block in enumerate(blocks)
    ]
    return OrlibSet(n_jobs, instances, optimum)


def summed_gap(values: np.ndarray, optimum: np.ndarray) -> float:
    """Summed relative gap ``(sum(values) - sum(optimum)) / sum(optimum)``, the figure the literature reports."""
    return float((np.sum(values) - np.sum(optimum)) / np.sum(optimum))
