"""Job-submitting teams: cooperative (honest), strategic and adaptive strategic (misreporting), learner."""

from dcops.agents.teams.adaptive import AdaptiveStrategicTeam
from dcops.agents.teams.base import TACTIC_KINDS, Team, TeamFeedback
from dcops.agents.teams.cooperative import CooperativeTeam
from dcops.agents.teams.learner import LearnerTeam
from dcops.agents.teams.strategic import StrategicTeam

TEAM_CLASSES = {
    "cooperative": CooperativeTeam,
    "strategic": StrategicTeam,
    "adaptive": AdaptiveStrategicTeam,
    "learner": LearnerTeam,
}


def make_team(kind: str) -> Team:
    """A fresh team of ``kind`` (``reset`` it with its neutral id before use)."""
    try:
        return TEAM_CLASSES[kind]()
    except KeyError:
        raise ValueError(f"unknown team kind {kind!r}; known: {sorted(TEAM_CLASSES)}") from None


__all__ = [
    "TACTIC_KINDS", "TEAM_CLASSES", "AdaptiveStrategicTeam", "CooperativeTeam", "LearnerTeam", "StrategicTeam",
    "Team", "TeamFeedback", "make_team",
]
