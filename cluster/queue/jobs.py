"""Job model and seeded instance generators for the weighted-tardiness queue.

An *instance* is a set of jobs for one machine (or several identical machines), each with an arrival
(release) time, a processing time, a weight and a due date, all in seconds. The objective everywhere in
this package is the total weighted tardiness ``sum_j w_j * max(0, C_j - d_j)`` with ``C_j`` the completion time.

Two generators:

- **Streaming** (:func:`streaming_instance`): Poisson arrivals whose rate makes the utilisation equal to
  ``load`` (0.85 by default) for ``n_machines`` machines. Two job families: *images* (lognormal duration,
  median 25 s, sigma 0.5) and *videos* (lognormal, median 180 s, sigma 0.9: a mean of 270 s and a long right
  tail, the 99th percentile is about 1,500 s). Priorities LOW / MEDIUM / HIGH / CRITICAL carry weights
  1 / 2 / 4 / 8. Due date = arrival + slack factor x processing time, slack factor ~ U(1.5, 6).
- **Static** (:func:`static_instance`): every job released at time 0 (the classic single-machine problem).
  Processing times and weights come from the same families; due dates follow the classic
  Potts and Van Wassenhove rule used by the OR-Library instances: d ~ U(P(1 - TF - RDD/2), P(1 - TF + RDD/2))
  with P the total processing time, TF the tardiness factor and RDD the relative range of due dates.

Seeds: every draw comes from ``numpy.random.default_rng(seed)``, so the same seed gives the same instance.
Seed ranges are fixed in :mod:`dcops.cluster.queue.seeds` (training and test ranges are disjoint).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PRIORITY_NAMES: tuple[str, ...] = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
PRIORITY_WEIGHTS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
FAMILY_NAMES: tuple[str, ...] = ("image", "video")


@dataclass(frozen=True)
class Job:
    """One job as a user sees it (the boundary type of :func:`dcops.cluster.queue.rank.rank`).

    :param job_id: any hashable label, returned untouched.
    :param processing_s: processing time on one machine, seconds, > 0.
    :param weight: importance (e.g. 1 / 2 / 4 / 8 for LOW..CRITICAL), > 0.
    :param due_s: due date, seconds on the same clock as ``arrival_s``.
    :param arrival_s: release time, seconds (0 for a static problem).
    """

    job_id: object
    processing_s: float
    weight: float
    due_s: float
    arrival_s: float = 0.0


@dataclass(frozen=True)
class Instance:
    """A scheduling instance: parallel arrays over jobs, sorted by arrival time (ties keep generation order).

    :param arrival_s: release times, seconds, non-decreasing.
    :param processing_s: processing times, seconds, > 0.
    :param weight: weights, > 0.
    :param due_s: due dates, seconds.
    :param family: 0 for an image job, 1 for a video job (-1 when unknown, e.g. OR-Library data).
    :param n_machines: identical parallel machines, >= 1.
    :param name: a label for reports (e.g. ``"stream-1000000"`` or ``"wt40-001"``).
    """

    arrival_s: np.ndarray
    processing_s: np.ndarray
    weight: np.ndarray
    due_s: np.ndarray
    family: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    n_machines: int = 1
    name: str = ""

    def __post_init__(self) -> None:
        n = len(self.processing_s)
        for name in ("arrival_s", "weight", "due_s"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries, processing_s has {n}")
        if len(self.family) == 0 and n > 0:
            object.__setattr__(self, "family", np.full(n, -1, dtype=np.int8))
        if n and not np.all(self.processing_s > 0):
            raise ValueError("processing_s must be > 0 for every job")
        if n and not np.all(self.weight > 0):
            raise ValueError("weight must be > 0 for every job")
        if n and np.any(np.diff(self.arrival_s) < 0):
            raise ValueError("arrival_s must be sorted (non-decreasing)")
        if self.n_machines < 1:
            raise ValueError("n_machines must be >= 1")

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.processing_s)


@dataclass(frozen=True)
class StreamConfig:
    """Parameters of the streaming generator (defaults: the benchmark's scenario).

    :param n_jobs: jobs per episode; every one runs to completion (the queue drains at the end).
    :param load: target utilisation rho = lambda * E[p] / n_machines, in (0, 1) for a stable queue.
    :param n_machines: identical parallel machines.
    :param image_median_s: median image duration, seconds.
    :param image_sigma: lognormal shape of image durations.
    :param video_median_s: median video duration, seconds.
    :param video_sigma: lognormal shape of video durations (0.9: heavy right tail).
    :param video_share: probability that a job is a video.
    :param priority_probs: probabilities of LOW, MEDIUM, HIGH, CRITICAL.
    :param slack_range: due date = arrival + U(lo, hi) x processing time.
    """

    n_jobs: int = 200
    load: float = 0.85
    n_machines: int = 1
    image_median_s: float = 25.0
    image_sigma: float = 0.5
    video_median_s: float = 180.0
    video_sigma: float = 0.9
    video_share: float = 0.2
    priority_probs: tuple[float, float, float, float] = (0.4, 0.3, 0.2, 0.1)
    slack_range: tuple[float, float] = (1.5, 6.0)

    def mean_processing_s(self) -> float:
        """Expected processing time of one job, seconds (lognormal mean = median * exp(sigma^2 / 2))."""
        image = self.image_median_s * np.exp(self.image_sigma**2 / 2)
        video = self.video_median_s * np.exp(self.video_sigma**2 / 2)
        return float((1 - self.video_share) * image + self.video_share * video)

    def arrival_rate_per_s(self) -> float:
        """Poisson arrival rate, jobs per second, that gives utilisation ``load``."""
        return self.load * self.n_machines / self.mean_processing_s()


def _durations_and_weights(
    rng: np.random.Generator, n: int, config: StreamConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    family = (rng.random(n) < config.video_share).astype(np.int8)
    median = np.where(family == 1, config.video_median_s, config.image_median_s)
    sigma = np.where(family == 1, config.video_sigma, config.image_sigma)
    processing_s = median * np.exp(sigma * rng.standard_normal(n))
    priority = rng.choice(len(PRIORITY_WEIGHTS), size=n, p=np.asarray(config.priority_probs))
    weight = np.asarray(PRIORITY_WEIGHTS)[priority]
    return family, processing_s, weight


def streaming_instance(seed: int, config: StreamConfig | None = None) -> Instance:
    """Draw a streaming instance: Poisson arrivals at utilisation ``config.load``.

    :param seed: the only source of randomness (``numpy.random.default_rng(seed)``).
    :param config: generator parameters; the defaults are the benchmark scenario.
    """
    config = config or StreamConfig()
    if not 0 < config.load:
        raise ValueError("load must be > 0")
    rng = np.random.default_rng(seed)
    n = config.n_jobs
    gaps = rng.exponential(1.0 / config.arrival_rate_per_s(), size=n)
    arrival_s = np.cumsum(gaps) - gaps[0]  # the first job arrives at t = 0
    family, processing_s, weight = _durations_and_weights(rng, n, config)
    slack = rng.uniform(config.slack_range[0], config.slack_range[1], size=n)
    due_s = arrival_s + slack * processing_s
    return Instance(arrival_s, processing_s, weight, due_s, family, config.n_machines, f"stream-{seed}")


TARDINESS_FACTORS: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0)
DUE_DATE_RANGES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0)


def static_instance(
    seed: int,
    n_jobs: int = 50,
    tardiness_factor: float | None = None,
    due_date_range: float | None = None,
    config: StreamConfig | None = None,
) -> Instance:
    """Draw a static instance: all jobs released at 0, one machine.

    :param seed: the only source of randomness.
    :param n_jobs: number of jobs.
    :param tardiness_factor: TF in [0, 1]; drawn from {0.2, ..., 1.0} when None.
    :param due_date_range: RDD in [0, 1]; drawn from {0.2, ..., 1.0} when None.
    :param config: job families and priorities (durations and weights as in streaming mode).
    """
    config = config or StreamConfig()
    rng = np.random.default_rng(seed)
    tf = float(rng.choice(TARDINESS_FACTORS)) if tardiness_factor is None else tardiness_factor
    rdd = float(rng.choice(DUE_DATE_RANGES)) if due_date_range is None else due_date_range
    family, processing_s, weight = _durations_and_weights(rng, n_jobs, config)
    total = float(processing_s.sum())
    due_s = np.maximum(rng.uniform(total * (1 - tf - rdd / 2), total * (1 - tf + rdd / 2), size=n_jobs), 0.0)
    arrival_s = np.zeros(n_jobs)
    return Instance(arrival_s, processing_s, weight, due_s, family, 1, f"static-{seed}")
