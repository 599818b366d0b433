"""The slow-burn strategic team: honest until it has a clean audit history, then games like a strategic team.

It builds a reputation first. It states every request honestly until at least :data:`CLEAN_AUDITS_BEFORE_GAMING`
of its jobs are certainly audited, and from then on misreports exactly as a
:class:`~dcops.agents.teams.strategic.StrategicTeam` does (``apply_tactics``, with per-episode tactics and
intensities drawn at reset the same way).

"Certainly audited" is what the team can know without seeing its audits (a team is told only its flags): in game
version 1 a job is audited when its outcome is booked, and that is at the latest the end of its true deadline
window (``dcops.cluster.ledger``). So at the start of window w it counts its jobs whose true deadline window is
before w; all of them were stated honestly, so their audits are clean of tactics. (Some of its jobs are audited
earlier, a rejection at once; the count does not include them, so the team waits at least as long as it needs
to.) With two or three requests a window and deadlines of a few windows, 6 audits take four to nine windows
(6.5 on average over seeds 80000–80039; the count depends on the team's jobs alone, never on the scheduler): a
16-window episode has its first 40 % honest. (In game version 0 only completed jobs are audited, so there the
count is of jobs past their deadline, audited or not.)

The tactic stream is a strategic team's: the same set-up draws at reset and the same block of draws every window
whether it games or not, so from its first gaming window on, its statements are, request for request, those of a
strategic team on the same seed (the description wording of version 1 aside, whose draws depend on what was
stated before). In honest mode (``dcops.agents.teams.base``) it never games.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from dcops.agents.teams.base import Draft, TeamFeedback
from dcops.agents.teams.strategic import StrategicTeam
from dcops.cluster.requests import Submission

CLEAN_AUDITS_BEFORE_GAMING = 6
"""Jobs certainly audited (all stated honestly) before the team starts to misreport (module docstring)."""


@dataclass
class SlowBurnTeam(StrategicTeam):
    """Honest until :data:`CLEAN_AUDITS_BEFORE_GAMING` of its jobs are certainly audited, strategic after."""

    kind: str = "slow_burn"
    clean_audits_needed: int = CLEAN_AUDITS_BEFORE_GAMING

    def _reset_tactics(self) -> None:
        super()._reset_tactics()
        self.trigger_window: int | None = None
        """The first window the audit history was long enough (gaming from then on, unless in honest mode)."""
        self.clean_audits = 0

    def submit(self, window: int, feedback: TeamFeedback | None, action: Any = None,
               new_id: Callable[[], str] | None = None) -> list[Submission]:
        if self.trigger_window is None:
            self.clean_audits = sum(s.truth.true_deadline_window < window for s in self.history)
            if self.clean_audits >= self.clean_audits_needed:
                self.trigger_window = window
        return super().submit(window, feedback, action, new_id)

    def state(self, draft: Draft, window: int, stated: dict[str, Any], slot: int, action: Any,
              u: Iterator[float]) -> set[str]:
        if self.trigger_window is None:
            return set()
        return super().state(draft, window, stated, slot, action, u)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "clean_audits_needed": self.clean_audits_needed,
                "trigger_window": self.trigger_window,
                "gaming_from_window": None if self.honest_mode else self.trigger_window}
