"""Two numeric backends for plant v2's equations: Python floats (one plant) and numpy arrays (batches).

An equation in ``dcops.physics.v2`` takes a backend ``xp`` as its first argument and uses only ``+ − × ÷``,
comparisons and the backend's functions below, so the same source runs on floats or on arrays of any shape.
Why two: a single plant has a handful of zones, and numpy's fixed cost per call (about 0.5 µs) on 4-element
arrays is most of a step; the float backend does the same operations on Python floats several times faster,
while batches of plants need numpy. IEEE-754 arithmetic gives the same double either way (the float ``maximum``,
``minimum`` and ``clip`` pick what numpy's pick for finite inputs, down to the sign of a zero: on a tie numpy
returns the second operand); ``exp``/``expm1`` come from ``math`` or numpy and may differ in the last bit, so the
backends agree to rounding, not bit for bit.

Backend functions: ``maximum(a, b)``, ``minimum(a, b)``, ``clip(x, lo, hi)``, ``where(cond, a, b)`` (both branches are evaluated),
``exp``, ``expm1``, ``log``, ``sqrt``, ``floor``, ``any`` (whether any element is true, for shortcuts that give
the same result).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np


def _where_float(cond: Any, a: Any, b: Any) -> Any:
    return a if cond else b


def _max_float(a: float, b: float) -> float:
    return a if a > b else b  # faster than the builtin max for two floats; a tie gives b, as np.maximum does


def _min_float(a: float, b: float) -> float:
    return a if a < b else b  # a tie gives b, as np.minimum does


def _clip_float(x: float, lo: float, hi: float) -> float:
    held = x if x > lo else lo  # np.minimum(np.maximum(x, lo), hi), ties (and signed zeros) included
    return held if held < hi else hi


def _clip_array(x: Any, lo: Any, hi: Any) -> Any:
    return np.minimum(np.maximum(x, lo), hi)  # np.clip is slower on small arrays


FLOATS = SimpleNamespace(
    name="floats", maximum=_max_float, minimum=_min_float, clip=_clip_float, any=bool, where=_where_float,
    exp=math.exp, expm1=math.expm1, log=math.log, sqrt=math.sqrt, floor=lambda x: float(math.floor(x)),
)
"""Python floats: one plant, zone by zone."""

ARRAYS = SimpleNamespace(
    name="arrays", maximum=np.maximum, minimum=np.minimum, clip=_clip_array, any=np.any, where=np.where,
    exp=np.exp, expm1=np.expm1, log=np.log, sqrt=np.sqrt, floor=np.floor,
)
"""numpy arrays (any shape, broadcasting as numpy does)."""

