"""Job-submitting teams: cooperative (honest), strategic, adaptive strategic, prompt-injecting strategic,
detector-aware strategic and slow-burn strategic (misreporting), learner. Any team can run in honest mode
(``honest_twin_factory``: same jobs, honest statements)."""

from dcops.agents.teams.adaptive import AdaptiveStrategicTeam
from dcops.agents.teams.base import TACTIC_KINDS, Team, TeamFeedback
from dcops.agents.teams.cooperative import CooperativeTeam
from dcops.agents.teams.detector_aware import DetectorAwareTeam
from dcops.agents.teams.factory import GAMING_KINDS, TEAM_CLASSES, honest_twin_factory, make_team
from dcops.agents.teams.injecting import INJECTIONS, InjectingStrategicTeam
from dcops.agents.teams.learner import LearnerTeam
from dcops.agents.teams.slow_burn import SlowBurnTeam
from dcops.agents.teams.strategic import StrategicTeam

__all__ = [
    "GAMING_KINDS", "INJECTIONS", "TACTIC_KINDS", "TEAM_CLASSES", "AdaptiveStrategicTeam", "CooperativeTeam", "DetectorAwareTeam",
    "InjectingStrategicTeam", "LearnerTeam", "SlowBurnTeam", "StrategicTeam", "Team", "TeamFeedback",
    "honest_twin_factory", "make_team",
]
