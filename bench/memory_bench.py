"""Memory per environment: bytes a further environment takes once built and reset (tracemalloc).

Measured as the growth of traced Python/numpy allocations over ``count`` more environments, divided by
``count``, after one warm-up environment (so caches shared by all environments — weather tables, policy
weights, imported modules — are not charged to each). Episode state held between steps is included.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any


def bytes_per_instance(build: Callable[[], Any], count: int = 16) -> float:
    """Traced bytes per instance of ``build()`` beyond the first."""
    keep = [build()]  # warm-up: shared caches
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        keep.extend(build() for _ in range(count))
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del keep
    return (after - before) / count


def run_memory_bench() -> dict[str, float]:
    """Memory per environment, kB: a cooling env, a cluster env, and per episode of a 64-wide cooling vector env."""
    import dcops

    def cooling() -> Any:
        env = dcops.make_env("cooling/cascading_chiller_failure")
        env.reset(seed=0)
        return env

    def cluster() -> Any:
        env = dcops.parallel_env(structured_view=False)
        env.reset(seed=0)
        return env

    def vector() -> Any:
        env = dcops.make_vec_env("cooling/cascading_chiller_failure", 64)
        env.reset(seed=0)
        return env

    return {
        "memory_kb_per_cooling_env": bytes_per_instance(cooling) / 1024.0,
        "memory_kb_per_cluster_env": bytes_per_instance(cluster, count=8) / 1024.0,
        "memory_kb_per_cooling_vector_episode": bytes_per_instance(vector, count=2) / 64.0 / 1024.0,
    }
