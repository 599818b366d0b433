"""Teams by kind: the kinds the environments know, a fresh team of one, and the honest-twin factory.

Above every team module (each imports only team modules below it: ``base``, ``strategic``, ``monitor_view``), so
the package's ``__init__`` and the environments import this one and no team module imports the package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from dcops.agents.teams.adaptive import AdaptiveStrategicTeam
from dcops.agents.teams.base import Team
from dcops.agents.teams.cooperative import CooperativeTeam
from dcops.agents.teams.detector_aware import DetectorAwareTeam
from dcops.agents.teams.injecting import InjectingStrategicTeam
from dcops.agents.teams.learner import LearnerTeam
from dcops.agents.teams.slow_burn import SlowBurnTeam
from dcops.agents.teams.strategic import StrategicTeam

TEAM_CLASSES = {
    "cooperative": CooperativeTeam,
    "strategic": StrategicTeam,
    "adaptive": AdaptiveStrategicTeam,
    "injecting": InjectingStrategicTeam,
    "learner": LearnerTeam,
    "detector_aware": DetectorAwareTeam,
    "slow_burn": SlowBurnTeam,
}

GAMING_KINDS = frozenset({"strategic", "adaptive", "injecting", "detector_aware", "slow_burn"})
"""Team kinds that misreport on purpose (the evaluations give each an honest twin for its gaming payoff)."""


def make_team(kind: str) -> Team:
    """A fresh team of ``kind`` (``reset`` it with its neutral id before use)."""
    try:
        return TEAM_CLASSES[kind]()
    except KeyError:
        raise ValueError(f"unknown team kind {kind!r}; known: {sorted(TEAM_CLASSES)}") from None


def honest_twin_factory(honest_agents: Iterable[str], factory: Callable[[str], Any] | None = None,
                        ) -> Callable[[str], Any]:
    """A ``team_factory`` for ``dcops.parallel_env``: teams as ``factory`` (default ``make_team``) makes them,
    except that those that get a neutral id in ``honest_agents`` run in honest mode (``teams.base``'s docstring). The
    env seeds the id-to-kind shuffle independently of the teams, so on the same seed the ids name the same
    teams."""
    agents = frozenset(honest_agents)

    def make(kind: str) -> Any:
        team = make_team(kind) if factory is None else factory(kind)
        if not hasattr(team, "honest_agents"):
            raise TypeError(f"team kind {kind!r} ({type(team).__name__}) has no honest mode")
        team.honest_agents = agents
        return team

    return make
