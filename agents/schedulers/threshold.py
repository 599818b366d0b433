"""The classic baseline: a priority-weighted threshold on *stated* priority.

Requests stated below the threshold (default MEDIUM) are rejected outright; the others are taken in order of
stated priority weight per kW·h of stated work (ties: earliest submitted), accepted while power and a zone
allow, deferred while their stated deadline allows, rejected otherwise. It believes what teams state, which is
exactly what strategic teams exploit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.agents.schedulers.base import PRIORITY_LEVEL, PRIORITY_WEIGHT, GreedyScheduler


@dataclass
class PriorityThresholdScheduler(GreedyScheduler):
    name: str = "priority_threshold"
    threshold: str = "MEDIUM"

    def eligible(self, request: dict[str, Any], view: dict[str, Any]) -> bool:
        return PRIORITY_LEVEL[request["priority"]] >= PRIORITY_LEVEL[self.threshold]

    def key(self, request: dict[str, Any], view: dict[str, Any]) -> tuple[Any, ...]:
        weight = PRIORITY_WEIGHT[request["priority"]]
        return (-weight, request["submitted_window"], request["request_id"])
