"""Seed ranges of the queue benchmark. Training and test ranges are disjoint by construction.

- ``TEST_SEEDS``: 1,000,000 .. 1,000,299, the 300 held-out streaming scenarios of ``dcops eval-queue``.
  Nothing is trained, tuned or selected on them.
- Everything else uses seeds below ``TRAIN_SEED_LIMIT`` (1,000,000):
  ``TUNING_SEEDS`` (500,000 ..) to tune the heuristics' look-ahead parameters (ATC's k, COVERT's k),
  ``VALIDATION_SEEDS`` (600,000 ..) to pick the PPO checkpoint, and ``0 .. 499,999`` for PPO episodes and
  imitation data.
"""

from __future__ import annotations

TRAIN_SEED_LIMIT = 1_000_000
TEST_SEED_START = 1_000_000
N_TEST_SEEDS = 300
TUNING_SEED_START = 500_000
VALIDATION_SEED_START = 600_000
EPISODE_SEED_LIMIT = 500_000


def held_out_seeds(n: int = N_TEST_SEEDS) -> list[int]:
    """The first ``n`` held-out test seeds (at most 300)."""
    if not 0 < n <= N_TEST_SEEDS:
        raise ValueError(f"n must be in 1..{N_TEST_SEEDS}, got {n}")
    return list(range(TEST_SEED_START, TEST_SEED_START + n))


def tuning_seeds(n: int = 100) -> list[int]:
    """Training-range seeds used to tune heuristic parameters."""
    return list(range(TUNING_SEED_START, TUNING_SEED_START + n))


def validation_seeds(n: int = 100) -> list[int]:
    """Training-range seeds used to select the learned policy's checkpoint."""
    return list(range(VALIDATION_SEED_START, VALIDATION_SEED_START + n))
