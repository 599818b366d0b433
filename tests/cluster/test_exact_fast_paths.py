"""Fast paths of the cluster window that must give exactly what the plain numpy or object code gave (#28's speed
work changed no bit of any trajectory): a window's IT rows, ATC's mean processing time, and the structured view's
request wire forms made at the first view."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dcops
from dcops.cluster.episode import window_it_rows
from dcops.cluster.queue.heuristics import float64_mean

_KW = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=True)


def _numpy_it_rows(base: list[float], running: list[tuple[int, int, float]], first: int, steps: int) -> np.ndarray:
    """The former form: the base tiled, then a numpy slice add per running job, in running order."""
    it = np.tile(np.asarray(base, dtype=np.float64), (steps, 1))
    for end_step, zone, kw in running:
        steps_left = end_step - first
        if steps_left > 0:
            it[: min(steps_left, steps), zone] += kw
    return it


@settings(max_examples=400, deadline=None)
@given(data=st.data(), n_zones=st.integers(1, 5), steps=st.integers(1, 20), first=st.integers(0, 200))
def test_window_it_rows_are_the_numpy_slice_adds_bit_for_bit(data, n_zones, steps, first):
    base = data.draw(st.lists(st.one_of(_KW, st.just(-0.0)), min_size=n_zones, max_size=n_zones))
    # Jobs ending before, inside and after the window (steps_left <= 0, < steps, = steps, > steps), zones repeated.
    running = data.draw(st.lists(st.tuples(st.integers(first - 3, first + steps + 3), st.integers(0, n_zones - 1),
                                           _KW), max_size=14))
    fast, plain = window_it_rows(base, running, first, steps), _numpy_it_rows(base, running, first, steps)
    assert fast.shape == plain.shape == (steps, n_zones)
    assert fast.dtype == np.float64 and fast.flags.c_contiguous
    assert fast.tobytes() == plain.tobytes()  # bits, -0.0 included


@settings(max_examples=400, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=300))
def test_float64_mean_is_numpy_s_mean_bit_for_bit(values):
    array = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):  # overflow to inf warns in both
        expected, got = float(np.mean(array)), float64_mean(array)
    assert (math.isnan(got) and math.isnan(expected)) or np.float64(got).tobytes() == np.float64(expected).tobytes()


@pytest.mark.parametrize("array", [np.array([1.5, 2.25, 3.0], dtype=np.float32), np.array([2**62] * 3),
                                   np.array(7.0), np.array([[1.0, 2.0], [3.0, 5.0]])],
                         ids=["float32", "int64 past 2**53", "0-d", "2-d"])
def test_float64_mean_leaves_other_arrays_to_numpy(array):
    """Another dtype's mean is taken in that dtype's own precision (float32) or in float64 (integers), and other
    shapes are numpy's to handle: those go to ``np.mean`` itself."""
    assert float64_mean(array) == float(np.mean(array))


def test_the_view_s_requests_and_audits_are_their_wire_forms():
    """The wire forms are made at the first structured view and kept: every pending item and every audit of a
    whole episode's views carries exactly ``Request.public_dict()`` (plus the view's own keys)."""
    env = dcops.parallel_env(structured_view=True, cooling="rule")
    infos = env.reset(seed=11)[1]
    rng = np.random.default_rng(0)
    checked = {"pending": 0, "audits": 0}
    while env.agents:
        view = infos["scheduler"]["view"]
        jobs = env.episode.ledger.jobs
        for item in view["pending"]:
            public = {k: v for k, v in item.items() if k not in ("slot", "windows_waited", "fits_now")}
            assert public == jobs[item["request_id"]].request.public_dict()
            checked["pending"] += 1
        for item in view["audits"]:
            request = jobs[item["request_id"]].request
            assert {k: item[k] for k in request.public_dict()} == request.public_dict()
            checked["audits"] += 1
        codes = rng.integers(0, 3, env.action_space("scheduler").shape)
        infos = env.step({"scheduler": codes})[4]
    assert checked["pending"] > 20 and checked["audits"] > 5, checked
