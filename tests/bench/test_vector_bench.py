"""The physics share of a cluster vector window (``dcops.bench.vector_bench.cluster_physics_share``): a share of
the wall time, from the compiled path and from the batched array path, with the timed calls restored after."""

from __future__ import annotations

import pytest

from dcops import vector_env
from dcops.bench.vector_bench import cluster_physics_share
from dcops.cluster.episode import ClusterEpisode
from dcops.physics.compiled_plant import JIT_ENV


@pytest.mark.parametrize("jit", ["1", "0"])
def test_the_physics_share_is_a_share_and_the_timed_calls_are_restored(monkeypatch, jit):
    monkeypatch.setenv(JIT_ENV, jit)  # "0": every episode goes through the batched array step
    compiled, batched = ClusterEpisode.step_compiled, vector_env._step_batched
    share = cluster_physics_share(2, steps=4, cooling="rule", n_windows=2)
    assert 0.0 < share < 1.0
    assert ClusterEpisode.step_compiled is compiled and vector_env._step_batched is batched
