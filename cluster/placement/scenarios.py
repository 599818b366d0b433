"""Scenario data for the GPU placement task: GPU types, GPUs, jobs, and the four canonical scenarios.

Units used throughout the package:

- time in **ticks** (one decision per tick; tick ``t`` covers the interval ``[t, t+1)``);
- memory in **GB of VRAM**;
- work in **work units**; a GPU of speed ``s`` does ``s`` work units per tick, so a job of work ``w``
  runs ``ceil(w / s)`` ticks (see :func:`run_ticks`);
- money in **cost units**, charged per busy GPU-tick (``cost_per_tick``).

A job's ``deadline`` is the tick by which it must have *completed*: a job started at tick ``t`` on a GPU
where it runs ``d`` ticks completes at tick ``t + d`` and is on time iff ``t + d <= deadline``.

A scenario is plain data (frozen dataclasses, JSON round-trip through :meth:`Scenario.to_dict` /
:meth:`Scenario.from_dict`), so it can be shipped, generated (:mod:`dcops.cluster.placement.generator`)
or sent to a remote agent. :meth:`Scenario.validate` rejects bad data with a message naming the field.

The four canonical scenarios are each built so that optimising one reward term greedily fails:

- ``deadline_crunch``: urgency must win even at a higher cost (earliest-deadline-first wins);
- ``cost_pressure``: fit-for-purpose GPUs, no over-provisioning (plain FIFO on the rack order wins);
- ``wait_for_capacity``: deferring on the first tick for a cheaper GPU is right (the patient
  cheapest-GPU greedy wins);
- ``reserve_large_gpu``: keep the only large-VRAM GPU free for the job that needs it (best-fit VRAM wins).

``tests/cluster/placement`` checks these claims by running the heuristics and the exact optimum.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

MAX_PRIORITY = 3
"""Priorities are integers in ``0..MAX_PRIORITY`` (3 = most important)."""


class ScenarioError(ValueError):
    """A scenario field holds an invalid value; the message names the field."""


@dataclass(frozen=True)
class GpuType:
    """A GPU model: VRAM in GB, speed in work units per tick, price in cost units per busy tick."""

    name: str
    vram_gb: int
    speed: int
    cost_per_tick: float


@dataclass(frozen=True)
class GpuSpec:
    """One GPU of the cluster.

    ``busy_until`` (tick) models capacity held by work outside this queue (another tenant, a warm-up):
    the GPU cannot take a job before that tick. Those ticks are neither charged nor counted as available.
    """

    gpu_id: str
    gpu_type: GpuType
    busy_until: int = 0


@dataclass(frozen=True)
class JobSpec:
    """One inference-style job: VRAM need (GB), work (units), deadline and arrival (ticks), priority 0..3."""

    job_id: str
    vram_gb: int
    work: int
    deadline: int
    priority: int
    arrival: int = 0


def run_ticks(work: int, speed: int) -> int:
    """Ticks a job of ``work`` units runs on a GPU of ``speed`` units per tick: ``ceil(work / speed)``."""
    return -(-work // speed)


@dataclass(frozen=True)
class Scenario:
    """A complete, deterministic placement problem: the cluster, the jobs and the horizon (ticks)."""

    name: str
    horizon: int
    gpus: tuple[GpuSpec, ...]
    jobs: tuple[JobSpec, ...]
    description: str = ""
    tags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        # Accept lists for convenience; store tuples so the scenario stays hashable and immutable.
        object.__setattr__(self, "gpus", tuple(self.gpus))
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "tags", tuple(self.tags))

    def validate(self) -> Scenario:
        """Check every field; return ``self`` or raise :class:`ScenarioError` naming the bad field."""
        if not self.name:
            raise ScenarioError("name: must be a non-empty string")
        if not isinstance(self.horizon, int) or not 1 <= self.horizon <= 100:
            raise ScenarioError(f"horizon: must be an integer in 1..100 ticks, got {self.horizon!r}")
        if not self.gpus:
            raise ScenarioError("gpus: at least one GPU is required")
        if not self.jobs:
            raise ScenarioError("jobs: at least one job is required")
        _unique("gpus", [g.gpu_id for g in self.gpus])
        _unique("jobs", [j.job_id for j in self.jobs])
        for i, gpu in enumerate(self.gpus):
            where = f"gpus[{i}] ({gpu.gpu_id!r})"
            kind = gpu.gpu_type
            if not gpu.gpu_id:
                raise ScenarioError(f"gpus[{i}].gpu_id: must be a non-empty string")
            if kind.vram_gb <= 0:
                raise ScenarioError(f"{where}.gpu_type.vram_gb: must be > 0 GB, got {kind.vram_gb}")
            if kind.speed <= 0:
                raise ScenarioError(f"{where}.gpu_type.speed: must be > 0 work units/tick, got {kind.speed}")
            if kind.cost_per_tick < 0 or not math.isfinite(kind.cost_per_tick):
                raise ScenarioError(f"{where}.gpu_type.cost_per_tick: must be finite and >= 0")
            if not 0 <= gpu.busy_until <= self.horizon:
                raise ScenarioError(f"{where}.busy_until: must be in 0..horizon ({self.horizon})")
        largest = max(g.gpu_type.vram_gb for g in self.gpus)
        for i, job in enumerate(self.jobs):
            where = f"jobs[{i}] ({job.job_id!r})"
            if not job.job_id:
                raise ScenarioError(f"jobs[{i}].job_id: must be a non-empty string")
            if not 0 < job.vram_gb <= largest:
                raise ScenarioError(f"{where}.vram_gb: must be in 1..{largest} GB (largest GPU), got {job.vram_gb}")
            if job.work <= 0:
                raise ScenarioError(f"{where}.work: must be > 0 work units, got {job.work}")
            if not 0 <= job.priority <= MAX_PRIORITY:
                raise ScenarioError(f"{where}.priority: must be in 0..{MAX_PRIORITY}, got {job.priority}")
            if not 0 <= job.arrival < job.deadline:
                raise ScenarioError(f"{where}.arrival: must be >= 0 and before the deadline ({job.deadline})")
            if job.deadline > self.horizon:
                raise ScenarioError(f"{where}.deadline: must be <= horizon ({self.horizon}), got {job.deadline}")
        return self

    def gpu(self, gpu_id: str) -> GpuSpec:
        """The GPU named ``gpu_id`` (``KeyError`` if unknown)."""
        for gpu in self.gpus:
            if gpu.gpu_id == gpu_id:
                return gpu
        raise KeyError(gpu_id)

    def job(self, job_id: str) -> JobSpec:
        """The job named ``job_id`` (``KeyError`` if unknown)."""
        for job in self.jobs:
            if job.job_id == job_id:
                return job
        raise KeyError(job_id)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (inverse of :meth:`from_dict`)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        """Build and validate a scenario from :meth:`to_dict` output (or hand-written JSON)."""
        try:
            gpus = tuple(
                GpuSpec(g["gpu_id"], GpuType(**g["gpu_type"]), int(g.get("busy_until", 0))) for g in data["gpus"]
            )
            jobs = tuple(JobSpec(**j) for j in data["jobs"])
            return cls(
                name=data["name"],
                horizon=int(data["horizon"]),
                gpus=gpus,
                jobs=jobs,
                description=data.get("description", ""),
                tags=tuple(data.get("tags", ())),
            ).validate()
        except KeyError as exc:
            raise ScenarioError(f"missing field {exc.args[0]!r}") from None
        except TypeError as exc:
            raise ScenarioError(f"bad field: {exc}") from None


def _unique(field_name: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i, item in enumerate(ids):
        if item in seen:
            raise ScenarioError(f"{field_name}[{i}]: duplicate id {item!r}")
        seen.add(item)


# --- GPU catalogue ------------------------------------------------------------------------------------------
# Three types, loosely modelled on inference GPUs. Bigger GPUs are faster but cost more per unit of work
# (1.0, 1.25 and 1.33 cost units per work unit), so speed is worth buying only when a deadline needs it.

L4 = GpuType("l4", vram_gb=24, speed=1, cost_per_tick=1.0)
"""Small and cheap: 24 GB, 1 work unit per tick, 1.0 cost unit per tick."""
A100 = GpuType("a100", vram_gb=40, speed=2, cost_per_tick=2.5)
"""Medium: 40 GB, 2 work units per tick, 2.5 cost units per tick."""
H100 = GpuType("h100", vram_gb=80, speed=3, cost_per_tick=4.0)
"""Large and fast: 80 GB, 3 work units per tick, 4.0 cost units per tick."""

GPU_TYPES: tuple[GpuType, ...] = (L4, A100, H100)


# --- the four canonical scenarios ----------------------------------------------------------------------------
def _gpu(gpu_id: str, kind: GpuType, busy_until: int = 0) -> GpuSpec:
    return GpuSpec(gpu_id, kind, busy_until)


def _job(job_id: str, vram_gb: int, work: int, deadline: int, priority: int, arrival: int) -> JobSpec:
    return JobSpec(job_id, vram_gb, work, deadline, priority, arrival)


DEADLINE_CRUNCH = Scenario(
    name="deadline_crunch",
    horizon=12,
    gpus=(_gpu("l4-0", L4), _gpu("l4-1", L4), _gpu("a100-0", A100), _gpu("h100-0", H100)),
    jobs=(
        _job("J1", 16, 3, 12, 0, 0),
        _job("J2", 16, 3, 12, 0, 0),
        _job("J3", 16, 3, 12, 0, 0),
        _job("J4", 16, 3, 12, 0, 0),
        _job("J5", 30, 6, 4, 3, 1),
        _job("J6", 30, 6, 5, 3, 1),
    ),
    description=(
        "Four relaxed batch jobs (16 GB, deadline 12) are queued at tick 0. At tick 1 two priority-3 jobs "
        "(30 GB, 6 work units) arrive with deadlines 4 and 5: only the A100 (3 ticks) or the H100 (2 ticks) "
        "can meet them, and only if they start at once. Serving the queue in arrival order, by VRAM fit or by "
        "cost leaves an urgent job late; earliest-deadline-first pays for the fast GPUs and completes all six."
    ),
    tags=("canonical", "urgency"),
)

COST_PRESSURE = Scenario(
    name="cost_pressure",
    horizon=12,
    gpus=(_gpu("l4-0", L4), _gpu("l4-1", L4), _gpu("a100-0", A100), _gpu("h100-0", H100)),
    jobs=(
        _job("J1", 12, 3, 4, 1, 0),
        _job("J2", 22, 4, 9, 1, 0),
        _job("J3", 16, 4, 7, 1, 1),
        _job("J4", 20, 2, 9, 1, 2),
        _job("J5", 12, 3, 10, 0, 3),
        _job("J6", 24, 5, 12, 0, 4),
        _job("J7", 36, 4, 10, 1, 4),
    ),
    description=(
        "A steady stream of small and medium jobs (12-36 GB) that the two L4s and the A100, listed first in "
        "the rack, serve on time. Rushing every job onto the fastest GPU (EDF) over-provisions the H100; "
        "always waiting for the cheapest GPU leaves the A100 idle while the queue grows; reordering for the "
        "tightest VRAM fit starts J2 before the urgent J1 and misses it. Plain first-come first-served on the "
        "rack order (cheap GPUs first) lands within a few points of the optimum."
    ),
    tags=("canonical", "cost"),
)

WAIT_FOR_CAPACITY = Scenario(
    name="wait_for_capacity",
    horizon=12,
    gpus=(_gpu("a100-0", A100), _gpu("h100-0", H100), _gpu("l4-0", L4, busy_until=1), _gpu("l4-1", L4, busy_until=2)),
    jobs=(
        _job("J1", 20, 7, 10, 1, 0),
        _job("J2", 16, 5, 10, 1, 1),
        _job("J3", 30, 4, 9, 2, 2),
        _job("J4", 12, 3, 11, 0, 3),
        _job("J5", 24, 5, 12, 1, 4),
        _job("J6", 40, 4, 12, 1, 5),
    ),
    description=(
        "At tick 0 only J1 (20 GB, 7 work units, deadline 10) is queued, and both L4s are still held by "
        "outside work (until ticks 1 and 2) while the A100 and the H100 are free. J1 costs 7.0 on an L4, "
        "10.0 on the A100 and 12.0 on the H100: deferring the first tick (1.0 of idle penalty) is right "
        "(the optimum does). Every work-conserving heuristic starts J1 on an "
        "expensive GPU at once; the patient cheapest-GPU greedy waits and wins."
    ),
    tags=("canonical", "patience"),
)

RESERVE_LARGE_GPU = Scenario(
    name="reserve_large_gpu",
    horizon=12,
    gpus=(_gpu("h100-0", H100), _gpu("a100-0", A100), _gpu("l4-0", L4), _gpu("l4-1", L4)),
    jobs=(
        _job("J1", 20, 9, 10, 1, 0),
        _job("J2", 30, 4, 8, 1, 0),
        _job("J3", 16, 4, 9, 1, 1),
        _job("J4", 72, 6, 4, 3, 2),
        _job("J5", 12, 3, 11, 0, 3),
        _job("J6", 70, 6, 12, 2, 5),
        _job("J7", 24, 4, 12, 1, 6),
    ),
    description=(
        "The H100 is the only GPU with more than 40 GB, and it is listed first in the rack. J4 (72 GB, "
        "priority 3) arrives at tick 2 with deadline 4: it must start the moment it arrives, on the H100. "
        "First-fit (FIFO) and fastest-GPU (EDF) placement put small jobs on the H100 and J4 misses; the "
        "cheapest-GPU greedy keeps the H100 free but serves the queue in arrival order and starts J4 a tick "
        "too late. Best-fit VRAM keeps small jobs on small GPUs and starts the tightest fit, J4, first."
    ),
    tags=("canonical", "reservation"),
)

CANONICAL: dict[str, Scenario] = {
    s.name: s.validate() for s in (DEADLINE_CRUNCH, COST_PRESSURE, WAIT_FOR_CAPACITY, RESERVE_LARGE_GPU)
}
"""The four canonical scenarios by name (registered as ``placement/<name>``)."""

CANONICAL_WINNERS: dict[str, str] = {
    "deadline_crunch": "edf",
    "cost_pressure": "fifo",
    "wait_for_capacity": "cheapest",
    "reserve_large_gpu": "best_fit",
}
"""The heuristic each canonical scenario is designed to be won by (checked by the tests)."""
