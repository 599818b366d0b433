"""The structured observation of the placement task (JSON-serialisable dataclasses).

One :class:`PlacementObservation` is what every policy sees before its decision at tick ``tick``: the GPUs,
the pending / running / completed / missed jobs (jobs that have not arrived yet are *not* shown), the
cumulative metrics, the action history, the list of feasible placements, and a :class:`Dashboard` of text
lines written for people and language-model prompts. ``to_dict()`` gives plain JSON types.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class GpuView:
    """One GPU now. ``state`` is ``"free"``, ``"busy"`` (running ``job_id``) or ``"reserved"`` (outside work);
    ``free_at`` is the tick from which it can take a job (``<= tick`` when free)."""

    gpu_id: str
    gpu_type: str
    vram_gb: int
    speed: int
    cost_per_tick: float
    state: str
    free_at: int
    job_id: str | None = None


@dataclass(frozen=True)
class JobView:
    """One visible job. ``status`` is ``"pending"``, ``"running"``, ``"completed"`` or ``"missed"``.

    For a running job ``gpu_id``/``start``/``end`` give the placement (``end`` = completion tick); for a
    finished one ``finished_at`` is the tick it completed or was dropped at its deadline.
    """

    job_id: str
    vram_gb: int
    work: int
    deadline: int
    priority: int
    arrival: int
    status: str
    gpu_id: str | None = None
    start: int | None = None
    end: int | None = None
    finished_at: int | None = None


@dataclass(frozen=True)
class FeasiblePlacement:
    """A placement that is valid now: it would complete at tick ``end`` and cost ``cost`` units in total
    (``on_time`` iff ``end <= deadline``; a late job is stopped at its deadline and costs less)."""

    job_id: str
    gpu_id: str
    end: int
    cost: float
    on_time: bool


@dataclass(frozen=True)
class Metrics:
    """Cumulative figures since reset. Reward terms are signed contributions (penalties are <= 0)."""

    ticks: int
    total_reward: float
    completion_reward: float
    priority_bonus: float
    miss_penalty: float
    invalid_penalty: float
    idle_penalty: float
    cost_penalty: float
    completed: int
    missed: int
    invalid: int
    total_cost: float
    busy_gpu_ticks: int
    available_gpu_ticks: int

    @property
    def allocation(self) -> float:
        """Busy GPU-ticks over available GPU-ticks (0 before the first tick)."""
        return self.busy_gpu_ticks / self.available_gpu_ticks if self.available_gpu_ticks else 0.0


@dataclass(frozen=True)
class ActionRecord:
    """One past decision as logged: what was asked, with which rationale, whether it was valid and why not."""

    tick: int
    action: str
    job_id: str | None
    gpu_id: str | None
    rationale: str
    valid: bool
    reason: str | None
    reward: float


@dataclass(frozen=True)
class Dashboard:
    """Text for people and language models: a one-line summary, an action hint listing the feasible actions,
    one status line per GPU, one per visible queued or running job, and the last decision with its rationale
    (and why it was invalid, if it was)."""

    summary: str
    action_hint: str
    gpu_lines: tuple[str, ...]
    queue_lines: tuple[str, ...]
    last_action: str = ""

    def text(self) -> str:
        """The dashboard as one block of text (what ``render()`` returns)."""
        parts = [self.summary, "GPUs:", *("  " + line for line in self.gpu_lines), "Queue:"]
        parts += ["  " + line for line in self.queue_lines] or ["  (empty)"]
        if self.last_action:
            parts.append(self.last_action)
        parts.append(self.action_hint)
        return "\n".join(parts)


@dataclass(frozen=True)
class PlacementObservation:
    """Everything a policy may use to decide at ``tick`` (see the module docstring)."""

    scenario: str
    tick: int
    horizon: int
    done: bool
    gpus: tuple[GpuView, ...]
    pending: tuple[JobView, ...]
    running: tuple[JobView, ...]
    completed: tuple[JobView, ...]
    missed: tuple[JobView, ...]
    metrics: Metrics
    history: tuple[ActionRecord, ...]
    feasible: tuple[FeasiblePlacement, ...]
    dashboard: Dashboard

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (tuples become lists once dumped); includes ``metrics.allocation``."""
        data = asdict(self)
        data["metrics"]["allocation"] = self.metrics.allocation
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlacementObservation:
        """Rebuild the observation from :meth:`to_dict`'s output (e.g. the ``state`` of the server's placement
        observation), so a policy written against this class runs unchanged over HTTP."""
        metrics = {k: v for k, v in data["metrics"].items() if k != "allocation"}
        dashboard = dict(data["dashboard"])
        dashboard["gpu_lines"] = tuple(dashboard["gpu_lines"])
        dashboard["queue_lines"] = tuple(dashboard["queue_lines"])
        return cls(
            scenario=data["scenario"], tick=int(data["tick"]), horizon=int(data["horizon"]), done=bool(data["done"]),
            gpus=tuple(GpuView(**g) for g in data["gpus"]),
            pending=tuple(JobView(**j) for j in data["pending"]),
            running=tuple(JobView(**j) for j in data["running"]),
            completed=tuple(JobView(**j) for j in data["completed"]),
            missed=tuple(JobView(**j) for j in data["missed"]),
            metrics=Metrics(**metrics),
            history=tuple(ActionRecord(**a) for a in data["history"]),
            feasible=tuple(FeasiblePlacement(**f) for f in data["feasible"]),
            dashboard=Dashboard(**dashboard),
        )

    def gpu(self, gpu_id: str) -> GpuView:
        """The GPU view named ``gpu_id`` (``KeyError`` if unknown)."""
        for gpu in self.gpus:
            if gpu.gpu_id == gpu_id:
                return gpu
        raise KeyError(gpu_id)
