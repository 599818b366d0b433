"""Where a cluster vector window's time goes (``dcops.bench.vector_bench.cluster_window_shares``): every part is
reached and timed exclusive of the others, from the compiled path and from the batched array path, and the timed
calls are restored after."""

from __future__ import annotations

import pytest

from dcops.bench.vector_bench import PHYSICS, cluster_window_shares, window_parts
from dcops.physics.compiled_plant import JIT_ENV


def _originals() -> list[object]:
    return [vars(owner)[name] for targets in window_parts().values() for owner, name in targets]


@pytest.mark.parametrize("jit", ["1", "0"])
def test_every_part_of_a_window_takes_a_share_and_none_is_counted_twice(monkeypatch, jit):
    monkeypatch.setenv(JIT_ENV, jit)  # "0": every episode goes through the batched array step
    before = _originals()
    # Two episodes of two windows over 6 vector steps: resets (next-step autoreset) happen during the timing.
    shares = cluster_window_shares(2, steps=6, cooling="rule", n_windows=2)
    assert _originals() == before  # every wrapped call restored (by identity)
    assert list(shares) == [*window_parts(), "the rest"]
    assert PHYSICS in shares
    parts = {part: share for part, share in shares.items() if part != "the rest"}
    # Every part's calls were reached (a renamed or bypassed call would leave its share at 0) ...
    assert all(0.0 < share < 1.0 for share in parts.values()), parts
    # ... and nested calls were not counted twice (the parts would add up to more than the whole).
    assert 0.0 <= shares["the rest"] < 1.0, shares
