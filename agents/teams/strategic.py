"""The strategic team: misreports to get its jobs admitted first, with tactics drawn per episode.

At reset the team draws its tactics (no archetype fixes them): each of priority inflation, deadline
compression and carbon-flexibility hiding is active with probability 0.7 (at least one always is), each with
its own intensity U(0.5, 0.9), the chance it is applied to an eligible request. Per request, on top of the
honest statement (``dcops.agents.teams.base``):

- **priority inflation** (eligible: true priority below CRITICAL): state 1 level higher (probability 0.6) or
  2 levels (0.4), capped at CRITICAL;
- **deadline compression** (eligible: a true deadline later than the earliest completion the stated duration
  allows): state a deadline 1–3 windows earlier than the true one, never earlier than that earliest window;
- **carbon-flexibility hiding** (eligible: truly flexible): state "not flexible".

Whenever it inflates or compresses, the description claims urgency ("URGENT, blocking a launch") with
probability 0.5. A tactic counts as applied (for detector metrics) only when it changed the stated field.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dcops.agents.teams.base import TACTIC_KINDS, Draft, TeamBase, stated_earliest_window


@dataclass
class StrategicTeam(TeamBase):
    """Inflates priority, compresses deadlines and hides carbon flexibility (module docstring)."""

    kind: str = "strategic"
    TACTIC_DRAWS_PER_REQUEST = 8

    def _reset_tactics(self) -> None:
        rng = self.tactic_rng
        active = {t: bool(rng.random() < 0.7) for t in TACTIC_KINDS}
        if not any(active.values()):
            active[TACTIC_KINDS[int(rng.integers(len(TACTIC_KINDS)))]] = True
        self.base_intensity = {t: (float(rng.uniform(0.5, 0.9)) if active[t] else 0.0) for t in TACTIC_KINDS}
        self.intensity = dict(self.base_intensity)

    def state(self, draft: Draft, window: int, stated: dict[str, Any], slot: int, action: Any,
              u: Iterator[float]) -> set[str]:
        return apply_tactics(u, draft, window, stated, self.intensity, self.config)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "tactic_intensity": dict(self.base_intensity)}


def apply_tactics(u: Iterator[float], draft: Draft, window: int, stated: dict[str, Any],
                  intensity: dict[str, float], config: Any) -> set[str]:
    """Apply each tactic with its intensity (module docstring); edit ``stated``; return those applied.
    ``u`` yields uniform draws (the team's per-window tactic block; at most 6 per request)."""
    applied: set[str] = set()
    truth = draft.truth
    if intensity["priority_inflation"] > 0 and next(u) < intensity["priority_inflation"]:
        levels = 1 if next(u) < 0.6 else 2
        inflated = min(3, int(truth.true_priority) + levels)
        if inflated > stated["priority"]:
            stated["priority"] = inflated
            applied.add("priority_inflation")
    if intensity["deadline_compression"] > 0 and next(u) < intensity["deadline_compression"]:
        floor = stated_earliest_window(window, stated["duration_h"], config)
        compressed = max(floor, truth.true_deadline_window - 1 - int(3 * next(u)))
        if compressed < stated["deadline_window"] and compressed < truth.true_deadline_window:
            stated["deadline_window"] = compressed
            applied.add("deadline_compression")
    if intensity["carbon_flexibility_gaming"] > 0 and truth.true_carbon_flexible and stated["carbon_flexible"]:
        if next(u) < intensity["carbon_flexibility_gaming"]:
            stated["carbon_flexible"] = False
            applied.add("carbon_flexibility_gaming")
    if applied & {"priority_inflation", "deadline_compression"} and next(u) < 0.5:
        stated["urgent"] = True
    return applied
