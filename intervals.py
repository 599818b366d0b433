"""The 95 % Student t-interval of a mean: the one helper every report's t-interval goes through.

``t_interval(values)`` is ``scipy.stats.ttest_1samp(values, 0).confidence_interval(0.95)``: the mean ± the
two-sided t quantile with ``n - 1`` degrees of freedom times the standard error ``sd / √n`` (``sd`` with
``ddof=1``). A paired difference is ``t_interval(a - b)``. Two cases scipy leaves to the caller are fixed here:
fewer than two values give no interval (NaN ends), and values without spread give the mean itself at both ends
(scipy would divide zero by zero). Imports only numpy and scipy (the bottom layer: every layer may use it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def t_interval(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values`` (module docstring); ``confidence`` in (0, 1)."""
    from scipy import stats

    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan, math.nan
    if float(x.max()) == float(x.min()):
        return mean, mean, mean
    interval = stats.ttest_1samp(x, 0.0).confidence_interval(confidence)
    return mean, float(interval.low), float(interval.high)
