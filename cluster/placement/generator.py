"""Seeded generator of new scenarios in the canonical family.

``generate_scenario(seed)`` draws, with its own ``numpy.random.Generator`` (never the global RNG), a cluster
of one GPU of each catalogue type plus up to ``max_gpus - 3`` extra L4/A100s in a shuffled rack order,
some of them reserved by outside work for the first 1..3 ticks, and ``min_jobs..max_jobs`` jobs (small,
medium or large VRAM, 1..8 work units, priority 0..3) arriving over the first half of the horizon, each with
a deadline reachable from its arrival on at least one GPU that fits it. The same seed always gives the same
scenario.

The default bounds (6-10 jobs, 3-4 GPUs, 10-16 ticks) keep the exact optimum fast: at most about ten
thousand DP states and well under a second per scenario (see :mod:`dcops.cluster.placement.optimum`). Seeds ``0..99`` are the evaluation set of ``dcops eval-placement``;
the linear policy trains on seeds from ``TRAIN_SEED_START`` upwards, which never overlap them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dcops.cluster.placement.scenarios import A100, GPU_TYPES, L4, GpuSpec, JobSpec, Scenario, run_ticks

EVAL_SEEDS = range(0, 100)
"""Seeds of the generated evaluation scenarios (``dcops eval-placement --generated N`` uses the first N)."""
TRAIN_SEED_START = 1_000_000
"""Training scenarios use seeds ``TRAIN_SEED_START + i``: disjoint from :data:`EVAL_SEEDS`."""


@dataclass(frozen=True)
class GeneratorConfig:
    """Bounds of generated scenarios (ticks, job counts, GPU counts)."""

    min_jobs: int = 6
    max_jobs: int = 10
    max_gpus: int = 4
    min_horizon: int = 10
    max_horizon: int = 16
    reserve_probability: float = 0.3

    def __post_init__(self) -> None:
        if not 1 <= self.min_jobs <= self.max_jobs:
            raise ValueError("min_jobs/max_jobs: need 1 <= min_jobs <= max_jobs")
        if self.max_gpus < len(GPU_TYPES):
            raise ValueError(f"max_gpus: must be >= {len(GPU_TYPES)} (one GPU of each type)")
        if not 4 <= self.min_horizon <= self.max_horizon:
            raise ValueError("min_horizon/max_horizon: need 4 <= min_horizon <= max_horizon")


def generate_scenario(seed: int, config: GeneratorConfig | None = None) -> Scenario:
    """A new scenario drawn from ``numpy.random.default_rng(seed)``; named ``generated_<seed>``."""
    return _draw(np.random.default_rng(seed), f"generated_{seed}", config or GeneratorConfig())


def draw_scenario(rng: np.random.Generator, name: str = "generated", config: GeneratorConfig | None = None) -> Scenario:
    """A new scenario drawn from the caller's generator (used by the Gymnasium wrapper)."""
    return _draw(rng, name, config or GeneratorConfig())


def _draw(rng: np.random.Generator, name: str, cfg: GeneratorConfig) -> Scenario:
    horizon = int(rng.integers(cfg.min_horizon, cfg.max_horizon + 1))
    kinds = list(GPU_TYPES)
    n_extra = int(rng.integers(0, cfg.max_gpus - len(GPU_TYPES) + 1))
    kinds += [(L4, A100)[int(rng.integers(0, 2))] for _ in range(n_extra)]
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    counts: dict[str, int] = {}
    gpus = []
    for kind in kinds:
        index = counts.get(kind.name, 0)
        counts[kind.name] = index + 1
        busy = int(rng.integers(1, 4)) if rng.random() < cfg.reserve_probability else 0
        gpus.append(GpuSpec(f"{kind.name}-{index}", kind, busy))

    n_jobs = int(rng.integers(cfg.min_jobs, cfg.max_jobs + 1))
    arrivals = np.sort(rng.integers(0, horizon // 2 + 1, size=n_jobs))
    jobs = []
    for i, arrival in enumerate(arrivals):
        size = rng.choice(3, p=[0.55, 0.3, 0.15])
        vram = int(rng.integers(*((8, 25), (25, 41), (41, 81))[size]))
        work = int(rng.integers(1, 9))
        priority = int(rng.integers(0, 4))
        fits = [g for g in gpus if g.gpu_type.vram_gb >= vram]
        fastest = min(run_ticks(work, g.gpu_type.speed) for g in fits)
        slowest = max(run_ticks(work, g.gpu_type.speed) for g in fits)
        earliest = int(arrival) + fastest
        if earliest > horizon:  # too late to fit in the episode: shrink the work so it just can
            work = max(1, (horizon - int(arrival)) * max(g.gpu_type.speed for g in fits))
            earliest = int(arrival) + min(run_ticks(work, g.gpu_type.speed) for g in fits)
        deadline = min(horizon, earliest + int(rng.integers(0, slowest + 3)))
        jobs.append(JobSpec(f"J{i + 1}", vram, work, deadline, priority, int(arrival)))
    return Scenario(
        name=name,
        horizon=horizon,
        gpus=tuple(gpus),
        jobs=tuple(jobs),
        description="Generated scenario in the canonical family.",
        tags=("generated",),
    ).validate()
