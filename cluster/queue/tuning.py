"""Tune the look-ahead parameter k of ATC and COVERT on training seeds (never on the held-out test seeds).

The criterion is the mean total weighted tardiness over the tuning scenarios; the grid is coarse on
purpose (the objective is flat near its minimum, and a finer grid would only fit the tuning seeds' noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dcops.cluster.queue.heuristics import make_rule
from dcops.cluster.queue.jobs import StreamConfig, streaming_instance
from dcops.cluster.queue.seeds import TEST_SEED_START
from dcops.cluster.queue.simulator import simulate

K_GRIDS: dict[str, tuple[float, ...]] = {
    "atc": (0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0),
    "covert": (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0),
}


@dataclass(frozen=True)
class TuningResult:
    """Outcome of a grid search.

    :param rule: "atc" or "covert".
    :param best_k: the k with the lowest mean weighted tardiness.
    :param grid: the k values tried.
    :param mean_weighted_tardiness: mean over the tuning scenarios, one per k.
    :param n_scenarios: number of tuning scenarios.
    """

    rule: str
    best_k: float
    grid: tuple[float, ...]
    mean_weighted_tardiness: tuple[float, ...]
    n_scenarios: int


def tune_parameter(
    rule: str,
    seeds: Sequence[int],
    config: StreamConfig | None = None,
    grid: Sequence[float] | None = None,
) -> TuningResult:
    """Grid-search k for ``rule`` on the streaming scenarios of training ``seeds``.

    :raises ValueError: if any seed lies in the held-out test range.
    """
    if any(s >= TEST_SEED_START for s in seeds):
        raise ValueError("tuning on held-out test seeds is not allowed")
    instances = [streaming_instance(s, config) for s in seeds]
    grid = tuple(grid if grid is not None else K_GRIDS[rule])
    means = tuple(
        float(np.mean([simulate(inst, make_rule(rule, k)).weighted_tardiness for inst in instances]))
        for k in grid
    )
    best = grid[int(np.argmin(means))]
    return TuningResult(rule, float(best), grid, means, len(instances))
