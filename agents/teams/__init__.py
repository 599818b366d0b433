"""Job-submitting teams: cooperative (honest), strategic, adaptive strategic and prompt-injecting strategic
(misreporting), learner. Any team can run in honest mode (``honest_twin_factory``: same jobs, honest
statements)."""

from dcops.agents.teams.adaptive import AdaptiveStrategicTeam
from dcops.agents.teams.base import TACTIC_KINDS, Team, TeamFeedback, honest_twin_factory
from dcops.agents.teams.cooperative import CooperativeTeam
from dcops.agents.teams.injecting import INJECTIONS, InjectingStrategicTeam
from dcops.agents.teams.learner import LearnerTeam
from dcops.agents.teams.strategic import StrategicTeam

TEAM_CLASSES = {
    "cooperative": CooperativeTeam,
    "strategic": StrategicTeam,
    "adaptive": AdaptiveStrategicTeam,
    "injecting": InjectingStrategicTeam,
    "learner": LearnerTeam,
}


def make_team(kind: str) -> Team:
    """A fresh team of ``kind`` (``reset`` it with its neutral id before use)."""
    try:
        return TEAM_CLASSES[kind]()
    except KeyError:
        raise ValueError(f"unknown team kind {kind!r}; known: {sorted(TEAM_CLASSES)}") from None


__all__ = [
    "INJECTIONS", "TACTIC_KINDS", "TEAM_CLASSES", "AdaptiveStrategicTeam", "CooperativeTeam",
    "InjectingStrategicTeam", "LearnerTeam", "StrategicTeam", "Team", "TeamFeedback", "honest_twin_factory",
    "make_team",
]
