"""The trivial schedulers: accept everything, reject everything, decide at random (floor and stress references)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dcops.agents.schedulers.base import accept, defer, reject


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


@dataclass
class RandomScheduler:
    """The floor of the skill ladder: each pending request ACCEPT, REJECT or DEFER (to the next window, where
    one exists) with equal chance, from its own seeded stream (``seed``: the same episode, the same answers)."""

    name: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        decisions = []
        can_defer = view["window"] + 1 < view["n_windows"]
        for request in view["pending"]:
            choice = int(self._rng.integers(3 if can_defer else 2))
            rid = request["request_id"]
            decisions.append(accept(rid) if choice == 0 else reject(rid) if choice == 1 else
                             defer(rid, view["window"] + 1))
        return decisions
