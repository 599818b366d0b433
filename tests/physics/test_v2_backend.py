"""Plant v2's two backends pick the same double, sign of zero included (``dcops.physics.v2.backend``'s docstring):
the float ``maximum``, ``minimum`` and ``clip`` against numpy's on every ordering, tie and signed zero."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dcops.physics.v2.backend import ARRAYS, FLOATS

VALUES = (-1.5, -0.0, 0.0, 0.25, 1.0)


def _bits(x: float) -> tuple[float, float]:
    return float(x), math.copysign(1.0, float(x))  # the value and its sign, so −0.0 and 0.0 differ


@pytest.mark.parametrize(("a", "b"), list(itertools.product(VALUES, repeat=2)))
def test_maximum_and_minimum_pick_numpys_operand(a, b):
    assert _bits(FLOATS.maximum(a, b)) == _bits(np.maximum(a, b))
    assert _bits(FLOATS.minimum(a, b)) == _bits(np.minimum(a, b))
    assert _bits(FLOATS.maximum(a, b)) == _bits(ARRAYS.maximum(np.array([a]), np.array([b]))[0])


@pytest.mark.parametrize(("x", "lo", "hi"), [(x, lo, hi) for x, lo, hi in itertools.product(VALUES, repeat=3)
                                             if lo <= hi])
def test_clip_is_numpys_minimum_of_maximum(x, lo, hi):
    assert _bits(FLOATS.clip(x, lo, hi)) == _bits(ARRAYS.clip(np.array([x]), lo, hi)[0])
    assert _bits(FLOATS.clip(x, lo, hi)) == _bits(np.minimum(np.maximum(x, lo), hi))


def test_the_other_functions_agree():
    for x in (0.3, 2.0, 7.5):
        assert FLOATS.exp(x) == pytest.approx(float(ARRAYS.exp(x)), rel=1e-15)
        assert FLOATS.expm1(-x) == pytest.approx(float(ARRAYS.expm1(-x)), rel=1e-15)
        assert (FLOATS.log(x), FLOATS.sqrt(x), FLOATS.floor(x)) == (float(np.log(x)), float(np.sqrt(x)),
                                                                      float(np.floor(x)))
    assert FLOATS.where(True, 1.0, 2.0) == 1.0 and FLOATS.where(False, 1.0, 2.0) == 2.0
    assert FLOATS.any(0.0) is False and FLOATS.any(3.0) is True and bool(ARRAYS.any(np.array([0.0, 1.0])))
    assert (FLOATS.name, ARRAYS.name) == ("floats", "arrays")
