"""The two trivial schedulers: accept everything, reject everything (floor and stress references)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.agents.schedulers.base import accept, reject


@dataclass
class AcceptAllScheduler:
    name: str = "accept_all"

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        return [accept(r["request_id"]) for r in view["pending"]]


@dataclass
class RejectAllScheduler:
    name: str = "reject_all"

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        return [reject(r["request_id"]) for r in view["pending"]]
