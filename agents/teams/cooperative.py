"""The cooperative team: honest, with the realistic estimation noise of ``dcops.agents.teams.base``."""

from __future__ import annotations

from dataclasses import dataclass

from dcops.agents.teams.base import TeamBase


@dataclass
class CooperativeTeam(TeamBase):
    """States its true needs, give or take honest estimation error; never misreports on purpose."""

    kind: str = "cooperative"
