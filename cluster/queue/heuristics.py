"""Dispatching rules for total weighted tardiness: FIFO, SPT, EDD, WSPT, ATC, WMDD and COVERT.

Every rule is a priority index over the waiting jobs at decision time t (seconds); the highest index runs
next, ties go to the earliest arrival (see :mod:`dcops.cluster.queue.simulator`). Notation: p processing time,
w weight, d due date, r arrival, all of the waiting job; ``slack = max(0, d - p - t)``.

============  ======================================================  ==========================================
rule          index (higher runs first)                               reference
============  ======================================================  ==========================================
FIFO          -r                                                      first come, first served
SPT           -p                                                      shortest processing time
EDD           -d                                                      earliest due date
WSPT          w / p                                                   Smith (1956), optimal when all are late
ATC(k)        (w / p) * exp(-slack / (k * p_bar))                     Vepsalainen and Morton (1987)
WMDD          -max(p, d - t) / w                                      Kanet and Li (2004)
COVERT(k)     (w / p) * max(0, 1 - slack / (k * p))                   Carroll (1965)
============  ======================================================  ==========================================

``p_bar`` is the mean processing time of the waiting jobs. ATC is evaluated in log space,
``log(w / p) - slack / (k * p_bar)``, which orders jobs identically and never underflows to a tie of zeros.
The look-ahead parameters k of ATC and COVERT are tuned on training seeds only
(:func:`dcops.cluster.queue.tuning.tune_parameter`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dcops.cluster.queue.simulator import QueueState


def fifo_index(state: QueueState) -> np.ndarray:
    """First in, first out: the earliest arrival first."""
    return -state.arrival_s


def spt_index(state: QueueState) -> np.ndarray:
    """Shortest processing time first."""
    return -state.processing_s


def edd_index(state: QueueState) -> np.ndarray:
    """Earliest due date first."""
    return -state.due_s


def wspt_index(state: QueueState) -> np.ndarray:
    """Weighted shortest processing time: largest w / p first."""
    return state.weight / state.processing_s


def atc_log_index(state: QueueState, k: float) -> np.ndarray:
    """Apparent tardiness cost, log of ``(w/p) * exp(-max(0, d - p - t) / (k * p_bar))``."""
    if k <= 0:
        raise ValueError(f"ATC look-ahead k must be > 0, got {k}")
    p = state.processing_s
    slack = np.maximum(state.due_s - p - state.now_s, 0.0)
    return np.log(state.weight / p) - slack / (k * float64_mean(p))


def float64_mean(values: np.ndarray) -> float:
    """``float(np.mean(values))``, to the same bits. For a non-empty 1-D float64 array that is ``np.add.reduce``
    over the count (``np.mean``'s own sum, then a float64 division), without ``np.mean``'s Python wrapper, a third
    of a small queue's ATC scoring (every admission window dispatches its queue by ATC); any other array (another
    dtype, whose mean ``np.mean`` takes in its own precision, or another shape) goes to ``np.mean`` itself."""
    if values.ndim == 1 and values.dtype == np.float64 and values.shape[0]:
        return float(np.add.reduce(values)) / values.shape[0]
    return float(np.mean(values))


def wmdd_index(state: QueueState) -> np.ndarray:
    """Weighted modified due date: smallest ``max(p, d - t) / w`` first."""
    return -np.maximum(state.processing_s, state.due_s - state.now_s) / state.weight


def covert_index(state: QueueState, k: float) -> np.ndarray:
    """Cost over time: ``(w/p) * max(0, 1 - max(0, d - p - t) / (k * p))``."""
    if k <= 0:
        raise ValueError(f"COVERT look-ahead k must be > 0, got {k}")
    p = state.processing_s
    slack = np.maximum(state.due_s - p - state.now_s, 0.0)
    return state.weight / p * np.maximum(1.0 - slack / (k * p), 0.0)


@dataclass(frozen=True)
class IndexPolicy:
    """A dispatching rule as a :class:`~dcops.cluster.queue.simulator.Policy`.

    :param name: label used in reports (e.g. ``"ATC"``).
    :param index: the priority index function.
    :param k: look-ahead parameter for ATC and COVERT, None for parameter-free rules.
    """

    name: str
    index: Callable[..., np.ndarray]
    k: float | None = None

    def scores(self, state: QueueState) -> np.ndarray:
        """Priority index of every waiting job (higher runs first)."""
        return self.index(state) if self.k is None else self.index(state, self.k)


# Defaults before tuning: the literature's usual values (ATC k = 2 for static instances).
DEFAULT_K: dict[str, float] = {"atc": 2.0, "covert": 2.0}
RULES: dict[str, tuple[str, Callable[..., np.ndarray]]] = {
    "fifo": ("FIFO", fifo_index),
    "spt": ("SPT", spt_index),
    "edd": ("EDD", edd_index),
    "wspt": ("WSPT", wspt_index),
    "atc": ("ATC", atc_log_index),
    "wmdd": ("WMDD", wmdd_index),
    "covert": ("COVERT", covert_index),
}


def make_rule(name: str, k: float | None = None) -> IndexPolicy:
    """Build the rule ``name`` (one of :data:`RULES`, case-insensitive); ``k`` only for ATC and COVERT."""
    key = name.lower()
    if key not in RULES:
        raise ValueError(f"unknown rule {name!r}; known rules: {', '.join(RULES)}")
    label, index = RULES[key]
    if key in DEFAULT_K:
        return IndexPolicy(label, index, float(DEFAULT_K[key] if k is None else k))
    if k is not None:
        raise ValueError(f"rule {label} takes no look-ahead parameter k")
    return IndexPolicy(label, index)
