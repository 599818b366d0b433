"""Earliest-deadline-first admission on *stated* deadlines (ties: higher stated priority, then arrival)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.agents.schedulers.base import PRIORITY_LEVEL, GreedyScheduler


@dataclass
class EarliestDeadlineScheduler(GreedyScheduler):
    name: str = "earliest_deadline"

    def key(self, request: dict[str, Any], view: dict[str, Any]) -> tuple[Any, ...]:
        return (request["deadline_window"], -PRIORITY_LEVEL[request["priority"]], request["submitted_window"],
                request["request_id"])
