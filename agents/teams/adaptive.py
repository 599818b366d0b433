"""The adaptive strategic team: backs off what gets flagged, shifts to other tactics, and returns when unwatched.

It starts as a :class:`~dcops.agents.teams.strategic.StrategicTeam` (per-episode tactics and intensities).
After a window in which it was flagged:

- each flagged tactic (a ``pattern_gaming`` flag counts against all of them) drops to 15 % of its intensity
  for a cool-down of 2–3 windows (drawn per flag);
- while something is suppressed, one tactic that was not flagged is pushed up (to at least 0.6, even if it
  was dormant): the team shifts its misreporting rather than stopping it;
- when the cool-down ends without a new flag, every tactic returns to its original intensity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.agents.teams.base import TACTIC_KINDS, TeamFeedback
from dcops.agents.teams.strategic import StrategicTeam

SUPPRESSION = 0.15
SHIFT_INTENSITY = 0.6


@dataclass
class AdaptiveStrategicTeam(StrategicTeam):
    """Lowers or shifts its misreporting when flagged, returns to it when not (module docstring)."""

    kind: str = "adaptive"

    def _reset_tactics(self) -> None:
        super()._reset_tactics()
        self.cooldown = dict.fromkeys(TACTIC_KINDS, 0)
        self.shift_to: str | None = None
        self.times_flagged = 0

    def observe(self, feedback: TeamFeedback | None) -> None:
        flagged = set() if feedback is None else set(feedback.flagged_kinds)
        if "pattern_gaming" in flagged:
            flagged |= set(TACTIC_KINDS)
        flagged &= set(TACTIC_KINDS)
        if flagged:
            self.times_flagged += 1
        for tactic in TACTIC_KINDS:
            if tactic in flagged:
                self.cooldown[tactic] = int(self.tactic_rng.integers(2, 4))
            elif self.cooldown[tactic] > 0:
                self.cooldown[tactic] -= 1
        suppressed = [t for t in TACTIC_KINDS if self.cooldown[t] > 0]
        free = [t for t in TACTIC_KINDS if self.cooldown[t] == 0]
        if suppressed and free and (self.shift_to is None or self.shift_to not in free):
            self.shift_to = free[int(self.tactic_rng.integers(len(free)))]
        elif not suppressed or not free:
            self.shift_to = None
        for tactic in TACTIC_KINDS:
            base = self.base_intensity[tactic]
            if self.cooldown[tactic] > 0:
                self.intensity[tactic] = SUPPRESSION * base
            elif tactic == self.shift_to:
                self.intensity[tactic] = max(base, SHIFT_INTENSITY)
            else:
                self.intensity[tactic] = base

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "times_flagged": self.times_flagged}
