"""Job requests: the public stated fields a scheduler sees and the private truth it never sees.

A request is two objects kept apart on purpose:

- :class:`Request` holds the **stated** fields, the only ones that reach observations, prompts, flags and
  the server: request id, neutral team id, job type, free-text description, kW, stated duration (h), GPU count
  and type, stated priority, stated deadline window, stated carbon flexibility, chargeback cost and the window
  it was submitted in.
- :class:`RequestTruth` holds the **private** fields: true priority, true deadline window, true carbon
  flexibility and true runtime (h). Only the ledger and the reward read it; an audit reveals the runtime,
  deadline and flexibility of a job after it completes (:class:`~dcops.cluster.ledger.AuditRecord`); the true
  priority is never revealed before the episode ends.

Deadlines are admission-window indices: "deadline window d" means the job must have completed by the end of
window d (windows count from 0; a deadline at or past the horizon means "not due within this episode").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Priority(IntEnum):
    """Stated or true priority level."""

    LOW = 0
    MEDIUM = 1
    HIGH = 2
    CRITICAL = 3


PRIORITY_NAMES: tuple[str, ...] = tuple(p.name for p in Priority)

_PRIORITY_NAME = {priority: priority.name for priority in Priority}
"""Each level's name, looked up faster than the enum's ``name`` property (a value outside the enum raises)."""

PUBLIC_FIELDS: tuple[str, ...] = (
    "request_id", "team", "job_type", "description", "kw", "duration_h", "gpus", "gpu_type", "priority",
    "deadline_window", "carbon_flexible", "chargeback", "submitted_window",
)
"""Every field of :class:`Request`, in the order of its wire form."""

PRIVATE_FIELDS: tuple[str, ...] = ("true_priority", "true_deadline_window", "true_carbon_flexible", "true_runtime_h")
"""Every field of :class:`RequestTruth` (never in an observation before audit or episode end)."""


@dataclass(slots=True)
class Request:
    """The public, stated side of a request (see the module docstring). kW and GPU need are metered facts.

    Treat it as immutable (it is not frozen only because frozen dataclasses are slow to build)."""

    request_id: str
    team: str
    job_type: str
    description: str
    kw: float
    duration_h: float
    gpus: int
    gpu_type: str
    priority: Priority
    deadline_window: int
    carbon_flexible: bool
    chargeback: float
    submitted_window: int

    def public_dict(self) -> dict[str, Any]:
        """The wire form: plain JSON-able values, priority by name."""
        return {
            "request_id": self.request_id,
            "team": self.team,
            "job_type": self.job_type,
            "description": self.description,
            "kw": self.kw,
            "duration_h": self.duration_h,
            "gpus": self.gpus,
            "gpu_type": self.gpu_type,
            "priority": _PRIORITY_NAME[self.priority],
            "deadline_window": self.deadline_window,
            "carbon_flexible": self.carbon_flexible,
            "chargeback": self.chargeback,
            "submitted_window": self.submitted_window,
        }


@dataclass(slots=True)
class RequestTruth:
    """The private side of a request: what the job really needs (see the module docstring)."""

    true_priority: Priority
    true_deadline_window: int
    true_carbon_flexible: bool
    true_runtime_h: float


@dataclass(slots=True)
class Submission:
    """What a team hands in for one request: the public request, its truth, and (for evaluation only) which
    misreporting tactics the team applied to it (``"priority_inflation"``, ``"deadline_compression"``,
    ``"carbon_flexibility_gaming"``). The env keeps the tactics for detector metrics and never shows them."""

    request: Request
    truth: RequestTruth
    tactics: frozenset[str] = frozenset()
